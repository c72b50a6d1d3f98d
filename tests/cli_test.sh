#!/usr/bin/env bash
# The clothlab-cli contract: commands, outputs, exit codes (0 ok, 2 bad input, 3 diverged) and
# that bad input writes nothing. Usage: cli_test.sh PATH/TO/clothlab-cli
set -uo pipefail
cli=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; fi
}
expect_exit() {  # expect_exit CODE MESSAGE-REGEX -- ARGS...
  local code=$1 pattern=$2
  shift 3
  "$cli" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$code" ]; then
    echo "  '$*': exit $got, expected $code; stderr: $(head -c 300 "$work/err")"
    return 1
  fi
  if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$work/err"; then
    echo "  '$*': stderr does not match /$pattern/: $(head -c 300 "$work/err")"
    return 1
  fi
  return 0
}

# scenes
"$cli" scenes >"$work/scenes"
check "scenes lists the paper's scenes" grep -q "^hanging	" "$work/scenes"
check "scenes lists sphere-drop" grep -q "^sphere-drop	" "$work/scenes"
check "scenes lists tablecloth" grep -q "^tablecloth	" "$work/scenes"
check "scenes lists the skirt" grep -q "^skirt	" "$work/scenes"

# info on an OBJ and on a scene
printf 'v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n' >"$work/quad.obj"
"$cli" info "$work/quad.obj" >"$work/info.json"
for key in vertices triangles edges boundary_edges boundary_loops components non_manifold_edges \
           degenerate_triangles particles constraints boundary_constraints; do
  check "info has $key" grep -q "\"$key\"" "$work/info.json"
done
check "info counts a quad" grep -q '"triangles": 2' "$work/info.json"
check "info particles = edges for impulse-nc" grep -q '"particles": 5' "$work/info.json"
# The quad lies in z = 0, so opened as written it stands on edge: info and run warn of it; the
# same quad in y = 0 lies flat and gets no warning.
check "info warns of a cloth standing on edge" grep -q 'quad.obj: the cloth stands on edge' "$work/info.json"
check "run warns of it too" bash -c "'$cli' run '$work/quad.obj' --steps 1 --quiet 2>&1 | grep -q 'warning: .*quad.obj: the cloth stands on edge'"
printf 'v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 2 3 4\n' >"$work/flatquad.obj"
check "a cloth lying flat gets no such warning" bash -c "'$cli' info '$work/flatquad.obj' | grep -q '\"warnings\": \\[\\]'"
# A garment: info counts its stitches, with no warning whichever solver sews it; a malformed stitch is
# refused naming its line, and run writes nothing then.
"$cli" info pillow >"$work/pillow.json"
check "info counts the pillowcase's stitches" python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['stitches']['count'] == 80" "$work/pillow.json"
check "info has no warning for a garment under strain-limit-remesh, which sews too" bash -c "'$cli' info pillow --solver strain-limit-remesh | grep -q '\"warnings\": \\[\\]'"
check "run sews the pillowcase under xpbd" "$cli" run pillow --steps 5 --quiet --stats "$work/pillow.jsonl"
check "its stats carry the widest stitch" grep -q '"max_stitch_gap"' "$work/pillow.jsonl"
# A bare OBJ's cloth lands on the ground below it, as in the viewer: half its diagonal (0.71 m)
# down, reached after about 0.38 s; its last steps touch the ground and have stopped falling.
"$cli" run "$work/flatquad.obj" --steps 300 --dt 0.005 --quiet --stats "$work/flatquad_stats.jsonl"
check "run lands an OBJ's cloth on the ground below it" python3 - "$work/flatquad_stats.jsonl" <<'PY'
import json, sys
last = [json.loads(line) for line in open(sys.argv[1])][-1]
assert last["contacts"] == 4 and last["max_speed"] < 0.05, last
PY
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nstitch 2 3 0 2.5\n' >"$work/badstitch.obj"
check "a stitch beyond its edge is refused naming the line" expect_exit 2 "badstitch.obj: line 7: stitch position '2.5'" -- run "$work/badstitch.obj" --steps 2 --out "$work/badstitch_frames"
check "the refused run wrote nothing" test ! -e "$work/badstitch_frames"
# A file name that is not UTF-8 (Latin-1) is printed with a replacement character: JSON cannot
# hold its bytes (info threw and aborted).
cp "$work/quad.obj" "$work/caf"$'\xe9'".obj"
"$cli" info "$work/caf"$'\xe9'".obj" >"$work/info_latin1.json"
check "info on a Latin-1 file name exits 0 with JSON" python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$work/info_latin1.json"
check "compare --json on a Latin-1 file name" "$cli" compare "$work/caf"$'\xe9'".obj" --solvers xpbd --steps 2 --json "$work/cmp_latin1.json"
"$cli" info hanging --solver conforming >"$work/info2.json"
check "info --solver conforming" grep -q '"solver": "conforming"' "$work/info2.json"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nf 1 2 3\nf 2 1 4\nf 1 2 5\n' >"$work/fan.obj"
"$cli" info "$work/fan.obj" >"$work/fan.json"
check "info reports non-manifold edges" grep -q '"non_manifold_edges": 1' "$work/fan.json"
# info names the flat rest state mls-isometry would use, or why there is none
check "info: a flat quad's rest state is a plane fit" grep -q '"from": "a plane fit"' "$work/info.json"
"$cli" info ckv-cylinder >"$work/tube.json"
check "info: a tube's rest state wraps" grep -q '"period_m": 0.94' "$work/tube.json"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\nf 1 4 2\n' >"$work/corner.obj"
"$cli" info "$work/corner.obj" >"$work/corner.json"
check "info: a curved mesh without texture coordinates has none, and says why" \
  grep -q '"error": "the mesh is curved.*has no texture coordinates' "$work/corner.json"
# a tube without texture coordinates is unfolded: unrolled, its coordinates wrap with its girth
awk 'BEGIN { n = 12; for (j = 0; j < 3; j++) for (i = 0; i < n; i++) { a = 2 * 3.141592653589793 * i / n;
  printf "v %.9f %.9f %.9f\n", cos(a), 0.3 * j, sin(a) }
  for (j = 0; j < 2; j++) for (i = 0; i < n; i++) { a = j * n + i + 1; b = j * n + (i + 1) % n + 1;
  printf "f %d %d %d\nf %d %d %d\n", a, b, a + n, b, b + n, a + n } }' >"$work/ring.obj"
"$cli" info "$work/ring.obj" >"$work/ring.json"
check "info: a tube without texture coordinates is unfolded" grep -q '"from": "the rest mesh unfolded"' "$work/ring.json"
check "info: the unrolled tube wraps with the girth of its 12-gon (6.2117 m)" grep -q '"period_m": 6.211' "$work/ring.json"
# a flat square and the same tube: a cloth in two pieces, the second (from triangle 2) closing round
{ printf 'v 5 0 0\nv 6 0 0\nv 6 1 0\nv 5 1 0\n'; grep '^v ' "$work/ring.obj"; printf 'f 1 2 3\nf 1 3 4\n'
  awk '/^f / { printf "f %d %d %d\n", $2 + 4, $3 + 4, $4 + 4 }' "$work/ring.obj"; } >"$work/pieces.obj"
"$cli" info "$work/pieces.obj" >"$work/pieces.json"
check "info: a tube among pieces wraps round its own piece, from triangle 2" \
  python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['flat_rest_state']; sys.exit(not (abs(f['period_m'] - 6.2117) < 1e-3 and f['wrap_piece_triangle'] == 2))" "$work/pieces.json"
# and a second tube beside it (two sleeves): each closes round its own piece, the second from
# triangle 50
{ grep '^v ' "$work/pieces.obj"; awk '/^v / { printf "v %.9f %.9f %.9f\n", $2 + 5, $3, $4 }' "$work/ring.obj"
  grep '^f ' "$work/pieces.obj"; awk '/^f / { printf "f %d %d %d\n", $2 + 40, $3 + 40, $4 + 40 }' "$work/ring.obj"; } >"$work/sleeves.obj"
"$cli" info "$work/sleeves.obj" >"$work/sleeves.json"
check "info: two tubes among pieces each wrap round their own piece, from triangles 2 and 50" \
  python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['flat_rest_state']; o = f['other_wraps']; sys.exit(not (f['wrap_piece_triangle'] == 2 and len(o) == 1 and abs(o[0]['period_m'] - 6.2117) < 1e-3 and o[0]['wrap_piece_triangle'] == 50))" "$work/sleeves.json"
check "info: a mesh that cannot be simulated has none, and says why" \
  grep -q '"error": ".*fan.obj: non-manifold mesh' "$work/fan.json"

# run: stats lines with the contract's keys, frames every K steps
"$cli" run hanging --steps 40 --every 10 --stats "$work/stats.jsonl" --out "$work/frames" --quiet
check "run exits 0" test $? -eq 0
check "run writes one stats line per step" test "$(wc -l <"$work/stats.jsonl")" -eq 40
for key in step t ms_total ms_factor ms_position ms_velocity ms_collision position_iterations \
           max_position_error max_edge_strain particles constraints boundary_constraints pinned; do
  check "stats has $key" grep -q "\"$key\"" <(head -1 "$work/stats.jsonl")
done
check "run writes frames 0..4" test -f "$work/frames/frame_00004.obj" -a ! -f "$work/frames/frame_00005.obj"
check "frames hold no NaN" bash -c "! grep -qi nan '$work'/frames/*.obj"
check "frames carry the flat rest state as texture coordinates" grep -q '^f [0-9]*/[0-9]* ' "$work/frames/frame_00004.obj"
# --out-fine: strain-limit-remesh's adaptive mesh, which refines the swinging sheet's folds; a
# solver without one writes the cloth's own vertices
"$cli" run hanging --solver strain-limit-remesh --steps 120 --every 120 --out "$work/fine" --out-fine --quiet
check "run --out-fine exits 0" test $? -eq 0
check "--out-fine frames start as the cloth and gain the nodes the remesher adds" \
  test "$(grep -c '^v ' "$work/fine/frame_00001.obj")" -gt "$(grep -c '^v ' "$work/fine/frame_00000.obj")"
check "--out-fine frames carry texture coordinates" grep -q '^f [0-9]*/[0-9]* ' "$work/fine/frame_00001.obj"
"$cli" run hanging --solver xpbd --steps 2 --every 2 --out "$work/fine_xpbd" --out-fine --quiet
check "--out-fine without a finer mesh writes the cloth" \
  test "$(grep -c '^v ' "$work/fine_xpbd/frame_00001.obj")" -eq "$(grep -c '^v ' "$work/frames/frame_00000.obj")"
check "--out-fine needs --out" expect_exit 2 "out-fine" -- run hanging --steps 1 --out-fine
"$cli" run hanging --steps 5 --dt 0.0005 --tol 1e-5 --density 0.2 --bending 1e-5 --solver conforming \
  --stats "$work/overrides.jsonl" --quiet
check "run accepts overrides" test "$(wc -l <"$work/overrides.jsonl")" -eq 5
check "dt override reaches the run" grep -q '"t":0.0025' "$work/overrides.jsonl"
check "run takes --bending-rest" "$cli" run hanging --steps 3 --bending-rest loaded --quiet
"$cli" run hanging --steps 300 --air-density 1.2 --wind 0,0,8 --out "$work/windy" --every 300 --quiet
"$cli" run hanging --steps 300 --out "$work/calm" --every 300 --quiet
mean_z() { awk '/^v /{z+=$4; n++} END {print z/n}' "$1"; }
check "--wind and --air-density blow the cloth downwind" \
  awk -v w="$(mean_z "$work/windy/frame_00001.obj")" -v c="$(mean_z "$work/calm/frame_00001.obj")" \
  'BEGIN {exit !(w > c + 0.05)}'
check "--wind takes three numbers" expect_exit 2 "--wind: give three numbers X,Y,Z" -- run hanging --wind 1,2
check "--wind within its range" expect_exit 2 "--wind: 500 is outside the valid range \\[-100, 100\\] m/s" -- \
  run hanging --wind 0,0,500
check "--air-density within its range" expect_exit 2 "--air-density: must be between 0 and 10" -- \
  run hanging --air-density 20
# Sleep: a flat sheet dropped on its ground falls asleep once it lies still, and is not stepped.
awk 'BEGIN {for (j = 0; j < 5; ++j) for (i = 0; i < 5; ++i) print "v", 0.1 * i, 1, 0.1 * j;
  for (j = 0; j < 4; ++j) for (i = 0; i < 4; ++i) {a = j * 5 + i + 1;
    print "f", a, a + 5, a + 1; print "f", a + 1, a + 5, a + 6}}' >"$work/sheet.obj"
"$cli" run "$work/sheet.obj" --solver xpbd --dt 0.005 --steps 400 --stats "$work/sleep.jsonl" \
  >"$work/sleep.txt"
check "a sheet lying still falls asleep" grep -q 'steps asleep at rest (first from t = ' "$work/sleep.txt"
check "asleep steps say so in the stats" grep -q '"asleep":true' "$work/sleep.jsonl"
check "the first steps are taken" bash -c "head -1 '$work/sleep.jsonl' | grep -vq asleep"
"$cli" run "$work/sheet.obj" --solver xpbd --dt 0.005 --steps 400 --sleep-speed 0 \
  --stats "$work/awake.jsonl" >"$work/awake.txt"
check "--sleep-speed 0 steps every step" bash -c "! grep -q asleep '$work/awake.jsonl' '$work/awake.txt'"
check "--sleep-speed within its range" expect_exit 2 "--sleep-speed: must be between 0 and 0.1 m/s" -- \
  run hanging --sleep-speed 1
# --param: a solver parameter over the scene's (the keys of a scene file's "solver" object).
"$cli" run cantilever-coarse --solver impulse-nc --steps 40 --out "$work/cr" --every 40 --quiet
"$cli" run cantilever-coarse --solver impulse-nc --steps 40 --param bending_model=surface \
  --param nonconforming_stiffness=3 --out "$work/surf" --every 40 --quiet
check "--param reaches the solver" test -f "$work/surf/frame_00001.obj" -a -f "$work/cr/frame_00001.obj"
check "--param changes the run" bash -c "! cmp -s '$work/cr/frame_00001.obj' '$work/surf/frame_00001.obj'"
check "--param: not KEY=VALUE" expect_exit 2 "--param: solver parameter 'bending_model': expected KEY=VALUE" -- \
  run hanging --param bending_model
check "--param: a value the solver refuses is named" expect_exit 2 "--param: .*bending_model.*hinge" -- \
  run hanging --param bending_model=hinge
check "--param: an unknown key is named" expect_exit 2 "--param: .*magic" -- run hanging --param magic=1
# --obstacle: an OBJ in its own units (an octahedron 20 units across, centred 50 units up) is
# scaled to 60% of the cloth and put under it, as the viewer's --obstacle does: the hanging cloth
# falls onto it, where without it nothing touches.
printf 'v 0 60 0\nv 0 40 0\nv 10 50 0\nv -10 50 0\nv 0 50 10\nv 0 50 -10\nf 1 3 5\nf 1 5 4\nf 1 4 6\nf 1 6 3\nf 2 5 3\nf 2 4 5\nf 2 6 4\nf 2 3 6\n' >"$work/octahedron.obj"
"$cli" run hanging --solver xpbd --steps 300 --stats "$work/plain.jsonl" --quiet
"$cli" run hanging --solver xpbd --steps 300 --obstacle "$work/octahedron.obj" --stats "$work/octa.jsonl" --quiet
most_contacts() { python3 -c "import json,sys; print(max(json.loads(l)['contacts'] for l in open(sys.argv[1])))" "$1"; }
check "without --obstacle the hanging cloth touches nothing" test "$(most_contacts "$work/plain.jsonl")" -eq 0
check "--obstacle puts the OBJ under the cloth, which lands on it" test "$(most_contacts "$work/octa.jsonl")" -gt 0
check "--obstacle: a missing file is named" expect_exit 2 "--obstacle: .*nosuch.obj" -- \
  run hanging --obstacle "$work/nosuch.obj" --stats "$work/none-obstacle.jsonl"
check "--obstacle: bad input writes nothing" test ! -e "$work/none-obstacle.jsonl"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n' >"$work/badface.obj"
check "--obstacle: a malformed OBJ is named with its line" expect_exit 2 "--obstacle: .*badface.obj.*line 4" -- \
  run hanging --obstacle "$work/badface.obj"
"$cli" compare hanging --solvers xpbd,impulse-nc --steps 300 --json "$work/plain-compare.json" >/dev/null 2>&1
"$cli" compare hanging --solvers xpbd,impulse-nc --steps 300 --obstacle "$work/octahedron.obj" \
  --json "$work/octa-compare.json" >/dev/null 2>&1
check "compare --obstacle puts it under every solver's cloth" python3 -c "
import json,sys
tips=lambda f:[s['values']['tip_height'] for s in json.load(open(f))['solvers']]
plain,octa=tips('$work/plain-compare.json'),tips('$work/octa-compare.json')
sys.exit(0 if len(octa)==2 and all(o>p+0.05 for o,p in zip(octa,plain)) else 1)"
check "compare --obstacle: a missing file is named with the pane" expect_exit 2 "xpbd@hanging: --obstacle: .*nosuch.obj" -- \
  compare hanging --solvers xpbd --obstacle "$work/nosuch.obj"
"$cli" run hanging --steps 2 --dt 0.002 --substeps 4 --stats "$work/substeps.jsonl" --quiet
check "substeps reach the run" grep -q '"substeps":4' "$work/substeps.jsonl"
check "a sub-stepped step advances dt" grep -q '"t":0.004' "$work/substeps.jsonl"
"$cli" run hanging --steps 2 --max-substeps 8 --stats "$work/adaptive.jsonl" --quiet
check "adaptive sub-steps are reported" grep -q '"adaptive_retries":' "$work/adaptive.jsonl"
"$cli" run hanging --steps 3 >"$work/summary" 2>&1
check "run prints a one-line summary" grep -q "hanging: impulse-nc, 3 steps" "$work/summary"
check "a run within the tolerance adds no note" test "$(grep -c 'note:' "$work/summary")" = 0
# Steps too long for the tolerance: the run says how many, and what would hold it.
check "steps above the tolerance are noted with --max-substeps" expect_exit 0 \
  "note: 3 of 3 steps ended above the solver's tolerance; --max-substeps N" -- run hanging --steps 3 --dt 0.05

# bad input: message naming the problem, exit 2, nothing written
check "missing scene file" expect_exit 2 "missing.json: file not found" -- run "$work/missing.json" --out "$work/none1" --stats "$work/none1.jsonl"
check "unknown built-in scene" expect_exit 2 "no such built-in scene" -- run nosuchscene
mkdir -p "$work/folder.json"
check "a folder as the scene" expect_exit 2 "folder.json: is a directory, not a scene file" -- run "$work/folder.json"
check "a folder as info's scene" expect_exit 2 "is a directory, not a scene file" -- info "$work/"
check "tolerance flag NaN reads nan" expect_exit 2 "--tol: solver.tolerance: nan is outside" -- run hanging --tol nan
printf '{"cloth": {"generator": {"type": "grid", "columns": "x"}}}' >"$work/badtype.json"
check "scene key of the wrong type" expect_exit 2 "cloth.generator.columns: expected an integer" -- run "$work/badtype.json" --out "$work/none2"
printf '{"cloth": {"generator": {"type": "grid"}}, "solver": {"id": "magic"}}' >"$work/badsolver.json"
check "unknown solver in scene" expect_exit 2 "unknown solver 'magic'" -- run "$work/badsolver.json"
check "unknown solver flag" expect_exit 2 "unknown solver 'magic'" -- run hanging --solver magic
printf '{"cloth": {"generator": {"type": "grid"}}, "simulation": {"density": -1}}' >"$work/baddensity.json"
check "negative density in scene" expect_exit 2 "simulation.density" -- run "$work/baddensity.json"
check "zero density flag" expect_exit 2 "density" -- run hanging --density 0
printf '{"cloth": {"generator": {"type": "grid"}, "transform": {"rotate_deg": [-90, 0, 0]}},
 "obstacles": [{"type": "sphere", "center": [0, 0.1, 0], "radius": 0.3}]}' >"$work/inside.json"
check "a cloth started inside an obstacle" expect_exit 2 "inside.json: obstacles\[0\] \(sphere\): [0-9]+ cloth vertices start inside it" \
  -- run "$work/inside.json" --out "$work/none5"
check "zero time step flag" expect_exit 2 "dt" -- run hanging --dt 0
check "time step flag out of range names the flag" expect_exit 2 "--dt: must be between 1e-05 and 0.1 s, got 0.5" -- run hanging --dt 0.5
check "bending flag out of range names the flag" expect_exit 2 "--bending: must be between 0 and 10 N m" -- run hanging --bending 1e9
check "bending rest flag names its values" expect_exit 2 "--bending-rest: must be flat or loaded, got 'round'" -- run hanging --bending-rest round
check "tolerance flag out of range names the flag" expect_exit 2 "--tol: solver.tolerance: 1e-15 is outside" -- run hanging --tol 1e-15 --stats "$work/none4.jsonl"
check "tolerance flag out of range writes nothing" test ! -e "$work/none4.jsonl"
check "zero substeps flag" expect_exit 2 "substeps: must be between 1 and 100" -- run hanging --substeps 0 --stats "$work/none3.jsonl"
check "zero substeps flag writes nothing" test ! -e "$work/none3.jsonl"
check "too many adaptive substeps" expect_exit 2 "max-substeps: must be between 1 and 256" -- run hanging --max-substeps 300
printf '{"cloth": {"generator": {"type": "grid"}}, "simulation": {"substeps": 2.5}}' >"$work/badsubsteps.json"
check "fractional substeps in scene" expect_exit 2 "simulation.substeps: expected an integer" -- run "$work/badsubsteps.json"
printf '{"cloth": ' >"$work/broken.json"
check "invalid JSON" expect_exit 2 "broken.json: invalid JSON" -- run "$work/broken.json"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n' >"$work/range.obj"
check "face index out of range (OBJ)" expect_exit 2 "range.obj: line 4" -- run "$work/range.obj" --out "$work/none3"
printf 'v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n' >"$work/nan.obj"
check "non-finite coordinate (OBJ)" expect_exit 2 "nan.obj: line 2" -- info "$work/nan.obj"
: >"$work/empty.obj"
check "empty mesh" expect_exit 2 "empty.obj: empty mesh" -- run "$work/empty.obj"
check "non-manifold mesh" expect_exit 2 "fan.obj: non-manifold" -- run "$work/fan.obj"
check "unknown flag" expect_exit 2 "" -- run hanging --frobnicate
check "nothing written on bad input" test ! -e "$work/none1" -a ! -e "$work/none1.jsonl" -a ! -e "$work/none2" -a ! -e "$work/none3" -a ! -e "$work/none5"

# divergence: exit 3 at the failing step, frames before it are clean
cat >"$work/diverge.json" <<'JSON'
{"cloth": {"generator": {"type": "grid", "columns": 8, "rows": 8},
           "transform": {"rotate_deg": [-90, 0, 0]}},
 "pins": [{"preset": "top-corners"}],
 "solver": {"id": "impulse-nc", "max_speed": 1.0}}
JSON
check "divergence exits 3" expect_exit 3 "diverged at step [0-9]+" -- run "$work/diverge.json" --steps 2000 --out "$work/dframes" --every 50
check "no NaN frame after divergence" bash -c "! grep -qi nan '$work'/dframes/*.obj"

# bench: runs, prints the configuration and the ratio
"$cli" bench hanging --steps 3 --json "$work/bench.json" >"$work/bench.txt" 2>&1
check "bench exits 0" test $? -eq 0
check "bench prints BLAS configuration" grep -q "BLAS:" "$work/bench.txt"
check "bench prints the Eigen ratio" grep -q "Eigen SimplicialLDLT / CHOLMOD total" "$work/bench.txt"
check "bench writes JSON" grep -q '"ms_factor"' "$work/bench.json"
# A --json path that cannot be written is refused before the runs (it was found only after them).
check "bench refuses an unwritable --json before running" expect_exit 2 "nonexistent/b.json: cannot write" -- bench hanging --steps 3 --json "$work/nonexistent/b.json"
check "bench printed no table for it" bash -c "! grep -q 'ms_factor\|asm+fact' '$work/out'"
check "bench runs the impulse solver as the paper steps too" grep -q "auto: eigen-simplicial-ldlt, 1 per step" "$work/bench.txt"
check "bench's JSON says which row took one factorization per step" grep -q '"one_factorization_per_step": true' "$work/bench.json"
# A scene with jellies: their share of the step, next to the figures.
"$cli" bench jelly-drop --steps 3 --json "$work/bench_jelly.json" >"$work/bench_jelly.txt" 2>&1
check "bench says what the jellies took" grep -qE "jelly-drop +3 jellies: [0-9.]+ ms of the step \(median; mean [0-9.]+\), [0-9]+ of 3 steps built a section again" "$work/bench_jelly.txt"
check "bench's JSON has the jellies' time" grep -q '"ms_jellies"' "$work/bench_jelly.json"
check "bench prints no jelly line without jellies" bash -c "! grep -q 'jellies:' '$work/bench.txt'"
# bench names the factorization a solver used, or that none ran: strain-limit-remesh factorizes
# only once a step stretches the cloth past its limits (a hanging 8 x 8 grid: from step 4 or so)
cat >"$work/slr.json" <<'JSON'
{"cloth": {"generator": {"type": "grid", "columns": 8, "rows": 8}},
 "pins": [{"preset": "top-corners"}],
 "solver": {"id": "strain-limit-remesh"}}
JSON
check "bench says no factorization ran in steps without one" bash -c "'$cli' bench '$work/slr.json' --steps 2 | grep -q 'strain-limit-remesh none ran'"
check "bench names the factorization once one ran" bash -c "'$cli' bench '$work/slr.json' --steps 30 | grep -q 'strain-limit-remesh cholmod-supernodal'"
# bench on a sheet that lands on the ground: the steps on it are counted and timed on their own
cat >"$work/land.json" <<'JSON'
{"cloth": {"generator": {"type": "grid", "columns": 8, "rows": 8},
           "transform": {"rotate_deg": [-90, 0, 0], "translate": [0, 0.02, 0]}},
 "simulation": {"dt": 0.002, "thickness": 0.004},
 "obstacles": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0], "friction": 0.5}],
 "solver": {"id": "impulse-nc"}}
JSON
"$cli" bench "$work/land.json" --steps 80 --json "$work/land-bench.json" >"$work/land-bench.txt" 2>&1
check "bench on a landing sheet exits 0" test $? -eq 0
check "bench prints the contact steps" grep -Eq "[0-9]+ of 80 steps touched an obstacle: median [0-9.]+ ms per step" "$work/land-bench.txt"
check "bench JSON counts and times the contact steps" python3 - "$work/land-bench.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    assert 0 < r["contact_steps"] < r["steps"] == 80, r  # it falls first, then lies on the ground
    assert r["contact_ms_total"] > 0, r
    assert 0 <= r["contact_steps_above_tolerance"] <= r["contact_steps"], r
    assert r["contact_steps_above_tolerance"] <= r["steps_above_tolerance"] <= r["steps"], r
    assert r["contact_max_error"] <= r["max_position_error"], r
    # impulse-nc counts its factorizations: at least the step's own in the steps on the ground;
    # while it falls freely only the first step's (skip_idle_factorization), or, as the paper
    # steps, one in every step
    assert r["contact_factorizations_per_step"] >= 1, r
    falling = r["factorizations_per_step"] * r["steps"] - r["contact_factorizations_per_step"] * r["contact_steps"]
    expected = r["steps"] - r["contact_steps"] if r["one_factorization_per_step"] else 1
    assert abs(falling - expected) < 1e-6, (falling, r)
    assert r["local_factorizations_per_step"] >= 0 and r["contact_local_factorizations_per_step"] >= 0, r
PY
check "bench prints the factorizations per step" grep -Eq "factorizations per step: [0-9.]+ of the whole matrix and [0-9.]+ local \\([0-9.]+ and [0-9.]+ over the steps that touched an obstacle\\)" "$work/land-bench.txt"

# compare: the pinned-corners preset (CKV19's test: an irregular mesh held by two adjacent corners
# at their rest distance). The table holds every metric for every solver; the locked conforming
# mesh sags less than half as much as either locking-free solver (measured here after 6 s:
# conforming 0.00001, impulse-nc 0.0056, mls-isometry 0.0075 m) and hangs flat (bending energy
# 1e-6 J against 4e-4 J).
"$cli" compare pinned-corners --steps 1200 --json "$work/cmp.json" --csv "$work/cmp.csv" --out "$work/cmp" >"$work/cmp.txt" 2>&1
check "compare exits 0" test $? -eq 0
check "compare prints the table" grep -q "^sag \[m\]" "$work/cmp.txt"
check "compare JSON holds every metric for every solver" python3 - "$work/cmp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = [m["key"] for m in d["metrics"]]
assert keys == ["sag", "tip_height", "bending_energy", "max_edge_strain", "residual", "max_distance_increase", "max_stitch_gap", "ms_per_step"], keys
assert [s["solver"] for s in d["solvers"]] == ["conforming", "impulse-nc", "mls-isometry"]
for s in d["solvers"]:
    for k in keys:
        # A cloth without stitches has no stitch gap (null).
        assert isinstance(s["values"][k], float) or (k == "max_stitch_gap" and s["values"][k] is None), (s["solver"], k, s["values"][k])
sag = {s["solver"]: s["values"]["sag"] for s in d["solvers"]}
print("  pinned-corners sag:", sag)
assert sag["conforming"] < 0.5 * sag["impulse-nc"] and sag["conforming"] < 0.5 * sag["mls-isometry"], sag
energy = {s["solver"]: s["values"]["bending_energy"] for s in d["solvers"]}
print("  pinned-corners bending energy:", energy)
assert energy["conforming"] < 0.1 * min(energy["impulse-nc"], energy["mls-isometry"]), energy
PY
check "compare CSV has a row per solver" test "$(wc -l <"$work/cmp.csv")" -eq 4
check "compare writes the final surfaces" test -f "$work/cmp/mls-isometry_corners-coarse.obj"
# Two solvers factorizing at once must not disturb each other (Debian's serial OpenBLAS has no
# locks; sim/linear/runtime.h lockBlas): the parallel run repeats the serial one bit for bit.
"$cli" compare pinned-corners --steps 1200 --jobs 1 --json "$work/serial.json" >/dev/null 2>&1
"$cli" compare pinned-corners --steps 1200 --jobs 3 --json "$work/parallel.json" >/dev/null 2>&1
check "compare in parallel gives the serial results" python3 -c "
import json,sys
a=json.load(open('$work/serial.json'));b=json.load(open('$work/parallel.json'))
strip=lambda d:[{k:v for k,v in s['values'].items() if k!='ms_per_step'} for s in d['solvers']]
sys.exit(0 if strip(a)==strip(b) else 1)"
check "compare: unknown solver named" expect_exit 2 "entry 2: unknown solver 'magic'" -- compare hanging --solvers conforming,magic --json "$work/none3.json"
check "compare: bad input writes nothing" test ! -e "$work/none3.json"
check "compare: an unknown scene after @ is named with its entry" expect_exit 2 \
  "entry 2: nosuch: no such built-in scene" -- compare hanging --solvers conforming,xpbd@nosuch
check "compare: preset or solvers required" expect_exit 2 "give --solvers" -- compare hanging
# One solver beside itself with another parameter (ID:KEY=VALUE).
"$cli" compare cantilever-coarse --solvers impulse-nc,impulse-nc:bending_model=surface --steps 40 \
  --json "$work/bm.json" --out "$work/bm" >"$work/bm.txt" 2>&1
check "compare runs one solver beside itself with another parameter" python3 -c "
import json,sys
d=json.load(open('$work/bm.json'))['solvers']
sys.exit(0 if [s['params'] for s in d]==[{},{'bending_model':'surface'}] and d[0]['values']['bending_energy']!=d[1]['values']['bending_energy'] else 1)"
check "compare labels the pane with its parameters" grep -q "impulse-nc:bending_model=surface@cantilever-coarse" "$work/bm.txt"
check "compare writes each pane's surface" \
  test -f "$work/bm/impulse-nc_bending_model_surface_cantilever-coarse.obj" -a -f "$work/bm/impulse-nc_cantilever-coarse.obj"
check "compare: a parameter the solver refuses is named with its entry" \
  expect_exit 2 "entry 2: solver.bending_model: 'hinge' is not one of" -- compare hanging --solvers xpbd,impulse-nc:bending_model=hinge
check "compare: a parameter not KEY=VALUE is named with its entry" \
  expect_exit 2 "entry 2: solver parameter 'tolerance': expected KEY=VALUE" -- compare hanging --solvers xpbd,impulse-nc:tolerance
# --average: the metrics' means over the last N steps are the means of the values measured after
# each of those steps (runs of 58, 59 and 60 steps against one of 60 averaged over 3), with their
# range; --average 1 is the plain measurement.
for n in 58 59 60; do
  "$cli" compare hanging --solvers xpbd,impulse-nc --steps $n --jobs 1 --json "$work/avg$n.json" >/dev/null 2>&1
done
"$cli" compare hanging --solvers xpbd,impulse-nc --steps 60 --average 3 --jobs 1 --json "$work/avg.json" >"$work/avg.txt" 2>&1
check "compare --average exits 0 and says over how many steps" grep -Eq "^averaged over +the last 3 steps +the last 3 steps$" "$work/avg.txt"
check "compare --average: means and ranges of the steps averaged" python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
runs = [json.load(open(f"{work}/avg{n}.json"))["solvers"] for n in (58, 59, 60)]
avg = json.load(open(f"{work}/avg.json"))["solvers"]
ok = True
for i, pane in enumerate(avg):
    if pane["averaged_steps"] != 3 or runs[2][i]["averaged_steps"] != 1:
        ok = False
    for key, mean in pane["values"].items():
        if key == "ms_per_step" or mean is None:
            continue
        values = [r[i]["values"][key] for r in runs]
        low, high = pane["ranges"][key]
        if abs(mean - sum(values) / 3) > 1e-12 * max(1.0, abs(mean)) or low != min(values) or high != max(values):
            print(pane["solver"], key, mean, values, low, high)
            ok = False
    # The sheet falls: its sag changes from step to step.
    if not pane["ranges"]["sag"][0] < pane["ranges"]["sag"][1]:
        ok = False
sys.exit(0 if ok else 1)
PY
"$cli" compare hanging --solvers xpbd --steps 60 --average 1 --json "$work/avg1.json" >/dev/null 2>&1
check "compare --average 1 is the last step's measurement" python3 -c "
import json,sys
a=json.load(open('$work/avg1.json'))['solvers'][0]['values'];b=json.load(open('$work/avg60.json'))['solvers'][0]['values']
sys.exit(0 if {k:v for k,v in a.items() if k!='ms_per_step'}=={k:v for k,v in b.items() if k!='ms_per_step'} else 1)"
check "compare: --average beyond the steps named" expect_exit 2 "--average 61: more than the 60 steps of xpbd@hanging" -- \
  compare hanging --solvers xpbd --steps 60 --average 61 --json "$work/none4.json"
check "compare: --average beyond the steps writes nothing" test ! -e "$work/none4.json"
check "compare: --average 0 refused" expect_exit 2 "--average: must be at least 1" -- compare hanging --solvers xpbd --average 0
# Column headers keep the whole label: these two share their first 22 characters.
"$cli" compare cantilever-coarse --solvers conforming@cantilever-coarse,conforming@cantilever-medium --steps 2 >"$work/labels.txt" 2>&1
check "compare: long pane labels are printed whole" grep -Eq "^metric \[unit\] +conforming@cantilever-coarse +conforming@cantilever-medium$" "$work/labels.txt"

# Jellies: jelly-drop runs and lists its jellies; a bad jelly or an open jelly surface is refused
# naming the key.
"$cli" run jelly-drop --steps 150 >"$work/jelly.txt" 2>&1
check "run: jelly-drop lists its three jellies" test "$(grep -c '^  jelly [123]: ' "$work/jelly.txt")" -eq 3
check "run: jelly-drop's spinning cigar still turns after 0.3 s" \
  grep -Eq '^  jelly 3: .* spinning at ([1-9]|0\.[1-9])[0-9.]* rad/s' "$work/jelly.txt"
check "run: jelly-drop's jellies squashed" grep -Eq 'the jellies squashed by up to [1-9][0-9.]* mm' "$work/jelly.txt"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
base = {"cloth": {"generator": {"type": "grid", "width": 1, "height": 1, "columns": 5, "rows": 5}},
        "obstacles": [{"type": "plane"}]}
json.dump(dict(base, jellies=[{"generator": {"type": "ellipsoid"}, "poisson": 0.7}]), open(w + "/badjelly.json", "w"))
json.dump(dict(base, jellies=[{"obj": "quad.obj"}]), open(w + "/openjelly.json", "w"))
PY
check "run: a jelly's Poisson ratio out of range is named" expect_exit 2 "jellies\[0\]\.poisson: 0.7 is outside the valid range" -- \
  run "$work/badjelly.json" --steps 1
check "run: an open jelly surface is refused, saying so" expect_exit 2 "jellies\[0\]: the jelly's surface must be closed" -- \
  run "$work/openjelly.json" --steps 1

echo "cli_contract: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
