#!/usr/bin/env bash
# GUI test of the clothlab viewer in a real X window (Xvfb) driven by real X input (xdotool):
#   drag the cloth (the grabbed point follows the cursor; Esc lets go and does not quit), Ctrl+click
#   pins a vertex (it stays), K keeps a moment and the panel goes back to it, a pin's drag and C's
#   clear are undone and redone, a panel slider reaches the simulation (Ctrl+Z takes its drag
#   back, and the panel's next edit keeps that; a checkbox clicked twice is undone click by click),
#   a jelly ball added in the panel falls and squashes on the ground (and is
#   saved with the scene), an OBJ opens through the Open field (a bad one leaves an error and the
#   scene running), the panel's placement lays a standing OBJ flat (undone and redone; it refuses a
#   scale of 0), a
#   typed wind and the air reach the simulation, a screenshot (P) is not blank, T prints checks on
#   the cloth and takes them off, "this scene, all
#   solvers" compares the opened OBJ in five panes, in compare mode the panes frame the whole cloth
#   and one drag moves the same material point in every pane (a pane given another mesh or solver
#   restarts the others with it, in step; a bad file opened there leaves the comparison running, a
#   good one replaces it), an obstacle moved in the panel into where the cloth rests makes Save
#   refuse (Ctrl+Z takes the move back, and Save writes it), a grab on a scene whose steps take
#   seconds shows at once (and Save clicked there just before Ctrl+Q is still written), a large
#   scene's load gives way to another scene or to its give-up button and does not hold up quitting,
#   nor does a large scene's first step, and with sphere-drop running the window keeps redrawing
#   (frame rate measured), at the full rate while the mouse moves and at 30 a second once left
#   alone; paused and left alone it draws 10 a second; the pillowcase's seams close as it runs; a
#   missing file or an unknown solver on the command line opens the window with the error shown;
#   two --obstacle OBJs and a third opened in the panel stand apart under the cloth.
# Usage: gui_test.sh CLOTHLAB_BINARY OUT_DIR
# Exit 0 all passed, 1 a check failed, 77 skipped (no Xvfb/xdotool: run scripts/setup.sh).
set -uo pipefail
APP=$(readlink -f "$1")
OUT=$(readlink -m "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$OUT" && mkdir -p "$OUT"
for tool in Xvfb xdotool convert python3; do
  command -v $tool > /dev/null || { echo "SKIP: $tool not installed (scripts/setup.sh installs it)"; exit 77; }
done

pass=0 fail=0
check() {  # check NAME COMMAND...
  if "${@:2}"; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi
}

# A private X server on a free display; the recent-files list stays inside the test folder.
source "$HERE/private_xvfb.sh"
start_private_xvfb "$OUT"
APP_PID=
cleanup() { [ -n "$APP_PID" ] && kill $APP_PID 2> /dev/null; kill $XVFB_PID 2> /dev/null; wait 2> /dev/null; }
trap cleanup EXIT

start_app() {  # start_app NAME ARGS...
  local name=$1; shift
  (cd "$OUT" && exec "$APP" "$@" --layout --log "$OUT/$name.jsonl") > "$OUT/$name.out" 2>&1 &
  APP_PID=$!
  for _ in $(seq 300); do grep -q '^READY' "$OUT/$name.out" 2> /dev/null && break; sleep 0.1; done
  grep -q '^READY' "$OUT/$name.out" || { echo "FAIL $name did not start:"; cat "$OUT/$name.out"; exit 1; }
  WID=$(xdotool search --sync --onlyvisible --name '^ClothLab$' | head -n1)
  sleep 1
}
# a_thread_at_lowest_priority: a ClothLab thread of the app runs at nice 19 (a given-up load's).
# Mesa's shader-cache thread runs at 19 too, under another name ("clothla:disk$0").
a_thread_at_lowest_priority() {
  python3 -c "
import glob, sys
def read(f):
    try:
        return open(f).read()
    except OSError:  # the thread ended since the folder was listed
        return ''
stats = [read(f) for f in glob.glob('/proc/$APP_PID/task/*/stat')]
nice = [int(t.rsplit(')', 1)[1].split()[16]) for t in stats if '(clothlab)' in t]
print('nice values of the clothlab threads:', sorted(nice))
sys.exit(0 if nice.count(19) >= 1 else 1)"
}
# layout NAME FILE -> "x y" of the centre of the last LAYOUT rectangle printed for NAME
layout() { grep "^LAYOUT $1 " "$2" | tail -n1 | awk '{print int(($3+$5)/2), int(($4+$6)/2)}'; }
# open_typed APP_OUT PATH: type PATH into the panel's Open field (replacing what is there) and
# press Open; APP_OUT is the app's output, where the field's layout is printed. The panel is
# scrolled to the field first (click_panel may have scrolled it out of sight).
open_typed() {
  local px py ox oy
  scroll_panel_to open_path "$1"
  read -r px py <<< "$(layout open_path "$1")"
  read -r ox oy <<< "$(layout open_button "$1")"
  xdotool mousemove --window "$WID" "$px" "$py" sleep 0.3 click 1 sleep 0.2 keydown ctrl+a sleep 0.2 keyup ctrl+a sleep 0.2 type --delay 20 "$2"
  sleep 0.3
  xdotool mousemove --window "$WID" "$ox" "$oy" sleep 0.3 click 1
}
# wait_until COMMAND...: waits (up to 20 s) until COMMAND succeeds; fails if it never does. While
# a drag holds the button down it keeps the button down until the drag's check can pass: a grabbed
# point closes on the cursor in simulated time, and on a busy host the scene steps slower than
# real time (under two busy loops on two cores, 1.5 s after the first drag's last move the point
# had come 0.28 m of the target's 0.415, its gap 0.166 m, short of what its check asks).
wait_until() {
  local end=$((SECONDS + 20))
  until "$@" > /dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}
# snapshot_after LOG LINE PATTERN: whether a snapshot logged after line LINE of LOG matches PATTERN.
snapshot_after() { tail -n +"$(($2 + 1))" "$1" | grep '"event":"snapshot"' | grep -q -- "$3"; }
# wait_for_snapshot LOG LINE PATTERN: waits (up to 20 s) until snapshot_after; a check after it
# then sees that step, however slowly the scene steps.
wait_for_snapshot() { wait_until snapshot_after "$@" || echo "no snapshot matching $3 within 20 s"; }

# scroll_panel_to NAME APP_OUT [BELOW]: scrolls the panel (wheel over it) until the widget NAME
# lies between the panel's title bar and the window's top BELOW pixels (700 unless given): down
# while it lies below, up while it lies above, scrolled out of sight.
scroll_panel_to() {
  local x y wheel
  for _ in $(seq 20); do
    read -r x y <<< "$(layout "$1" "$2")"
    [ -n "$y" ] && [ "$y" -ge 30 ] && [ "$y" -lt "${3:-700}" ] && return 0
    wheel=5
    [ -n "$y" ] && [ "$y" -lt 30 ] && wheel=4
    xdotool mousemove --window "$WID" 150 300 sleep 0.1 click --repeat 2 --delay 20 $wheel
    sleep 0.3
  done
}
# click_panel NAME APP_OUT: scrolls the panel to the widget NAME and clicks it.
click_panel() {
  local x y
  scroll_panel_to "$1" "$2"
  read -r x y <<< "$(layout "$1" "$2")"
  xdotool mousemove --window "$WID" "$x" "$y" sleep 0.3 click 1
}
stop_app() {
  xdotool mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+q 2> /dev/null
  for _ in $(seq 50); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.1; done
  kill $APP_PID 2> /dev/null
  wait $APP_PID 2> /dev/null
  APP_PID=
}

# ---- hanging: drag, pin, slider, open, screenshot --------------------------------------------
start_app hanging hanging --paused   # the cloth holds still while the test aims at it
LOG="$OUT/hanging.jsonl"

# 1. Drag the cloth: press on its centre, resume (Space) with the button held, move 160 px right
#    and 64 px up in steps, hold, release.
read -r cx cy <<< "$(layout cloth_center "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$cx" "$cy" sleep 0.3 mousedown 1 sleep 0.3 key space sleep 0.3
for i in 1 2 3 4 5 6 7 8; do
  xdotool mousemove --window "$WID" $((cx + 20 * i)) $((cy - 8 * i)) sleep 0.1
done
sleep 1.5
wait_until python3 "$HERE/check_log.py" grab "$LOG"
xdotool mouseup 1
sleep 0.5
check "drag: grab started on the cloth" grep -q '"event":"grab_start"' "$LOG"
check "drag: the grabbed point followed the cursor" python3 "$HERE/check_log.py" grab "$LOG"
check "drag: released" grep -q '"event":"grab_release"' "$LOG"

# 1b. Esc during a drag lets go (the button still held), and does not quit. Aimed while paused,
#     as above.
xdotool key space sleep 0.5
read -r cx cy <<< "$(layout cloth_center "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$cx" "$cy" sleep 0.3 mousedown 1 sleep 0.3 key space sleep 0.3
xdotool mousemove --window "$WID" $((cx + 40)) $((cy - 16)) sleep 0.5 key Escape sleep 0.5
xdotool mousemove --window "$WID" $((cx + 80)) $((cy - 32)) sleep 0.3 mouseup 1 sleep 0.3
esc_released() { grep '"event":"grab_release"' "$LOG" | grep -q '"by":"escape"'; }
check "drag: Esc lets go of the grab" esc_released
check "drag: Esc does not quit" kill -0 $APP_PID

# 2. Ctrl+click pins the vertex under the cursor (aimed while paused); it must then stay at its
#    target while the cloth moves again. The drag leaves the cloth tumbling, and paused at the
#    wrong moment it can be folded edge-on under the probe, where a click rightly finds no cloth
#    (seen once in CI: "orbit_start ... no cloth under the cursor"); then it runs on a moment
#    and the click is aimed again, up to three times.
xdotool key space
sleep 0.5
for attempt in 1 2 3; do
  read -r lx ly <<< "$(layout cloth_lower "$OUT/hanging.out")"
  xdotool mousemove --window "$WID" "$lx" "$ly" sleep 0.3 keydown ctrl sleep 0.2 click 1 sleep 0.2 keyup ctrl sleep 0.3
  grep -q '"event":"pin_add"' "$LOG" && break
  echo "pin: attempt $attempt found no cloth at $lx $ly; running on a moment and aiming again"
  xdotool key space sleep 0.4 key space sleep 0.5
done
xdotool key space
sleep 2
check "pin: Ctrl+click added a pin" grep -q '"event":"pin_add"' "$LOG"
check "pin: the pinned vertex stays at its target" python3 "$HERE/check_log.py" pin "$LOG"
# 2b. K keeps the moment; once the simulation has run well past it, the panel's "back to"
#     button goes back to it: the cloth runs on from the moment's time, keeping the pin. The wait
#     follows the log, not the clock: on a loaded CI host the hanging cloth once ran 0.18 s of
#     simulated time in 2.5 s of wall time.
xdotool mousemove --window "$WID" 900 700 sleep 0.2 key k
sleep 1
for _ in $(seq 60); do python3 "$HERE/check_log.py" moment_passed "$LOG" && break; sleep 0.5; done
click_panel back_to_moment "$OUT/hanging.out"
sleep 1
check "moment: K kept it, and the panel's button went back to it, pins kept" \
  python3 "$HERE/check_log.py" moment_back "$LOG"

# 3. Drag the density slider to the right: the new density must reach the simulation.
read -r sx sy <<< "$(layout sim.density "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 mousedown 1 sleep 0.3 \
  mousemove --window "$WID" $((sx + 40)) "$sy" sleep 0.3 mousemove --window "$WID" $((sx + 60)) "$sy" sleep 0.3 mouseup 1
sleep 1
check "slider: density changed in the simulation" python3 "$HERE/check_log.py" density "$LOG"
# Ctrl+Z takes the whole drag back; the sub-steps dragged next must keep the density it put back.
xdotool mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+z sleep 1
read -r ux uy <<< "$(layout sim.substeps "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$ux" "$uy" sleep 0.3 mousedown 1 sleep 0.3 \
  mousemove --window "$WID" $((ux + 30)) "$uy" sleep 0.3 mouseup 1
sleep 1
check "slider: sub-steps changed in the simulation" python3 "$HERE/check_log.py" substeps "$LOG"
check "undo: Ctrl+Z puts the dragged density back, and the next edit keeps it" \
  python3 "$HERE/check_log.py" density_undone "$LOG"
# The density dragged again, for the saved scene below.
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 mousedown 1 sleep 0.3 \
  mousemove --window "$WID" $((sx + 60)) "$sy" sleep 0.3 mouseup 1
sleep 1
# A checkbox clicked twice within a second is two edits (a drag's frames are one): two Ctrl+Z
# take back the two clicks, not the density's drag before them.
read -r cx cy <<< "$(layout sim.self_collision "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$cx" "$cy" sleep 0.2 click 1 sleep 0.3 click 1 sleep 0.3 \
  mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+z sleep 0.5 key ctrl+z sleep 0.5
check "undo: a checkbox clicked twice is undone click by click" python3 -c "
import json, sys
undone = [json.loads(l).get('edit') for l in open('$LOG') if '\"event\":\"undo\"' in l]
print('undone:', undone)
sys.exit(0 if undone[-2:] == ['self_collision', 'self_collision'] else 1)"
# The bending's rest shape, a choice: "loaded" (the second item) reaches the simulation, and
# Ctrl+Z puts "flat" back.
# The scene then takes 58 sub-steps a step (60 to 120 ms alone, several times that beside other
# tests on two cores): the undo waits for a step that ran with the choice, and the check for one
# after the undo.
read -r bx by <<< "$(layout sim.bending_rest "$OUT/hanging.out")"
mark=$(wc -l <"$LOG")
xdotool mousemove --window "$WID" "$bx" "$by" sleep 0.3 click 1 sleep 0.5 \
  mousemove --window "$WID" "$bx" $((by + 24 + 17)) sleep 0.3 click 1 sleep 1
wait_for_snapshot "$LOG" "$mark" '"bending_rest":"loaded"'
mark=$(wc -l <"$LOG")
xdotool mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+z sleep 1
wait_for_snapshot "$LOG" "$mark" '"bending_rest":"flat"'
check "choice: the bending's rest shape reaches the simulation and is undone" \
  python3 "$HERE/check_log.py" bending_rest "$LOG"

# 3a. A value typed past a slider's range (Ctrl+click, type, Enter) is clamped to the slider's:
#     gravity's y typed as -5000 runs at -50. Sent as typed, the simulation refused it, and the
#     panel's copy then failed every later edit of the simulation's parameters.
scroll_panel_to sim.gravity "$OUT/hanging.out"   # at the window's bottom edge, or below it
read -r gx gy <<< "$(layout sim.gravity "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$gx" "$gy" sleep 0.3 keydown ctrl sleep 0.2 click 1 sleep 0.2 keyup ctrl sleep 0.3 \
  type --delay 20 -- "-5000"
xdotool sleep 0.2 key Return
sleep 1
check "slider: a gravity typed past the range runs clamped to it" python3 "$HERE/check_log.py" gravity "$LOG"

# 3a'. The Jellies section's "add a jelly ball": a ball under the cloth falls to the ground,
#      touches it and squashes, while the cloth runs on; Save scene below writes it.
click_panel jellies_header "$OUT/hanging.out"
sleep 1
click_panel jelly_add "$OUT/hanging.out"
# The scene steps at a tenth of real time here: up to 30 s for the ball to reach the ground.
for _ in $(seq 60); do python3 "$HERE/check_log.py" jelly "$LOG" > /dev/null && break; sleep 0.5; done
check "jelly: the added ball fell, touched the ground and squashed" python3 "$HERE/check_log.py" jelly "$LOG"
click_panel jellies_header "$OUT/hanging.out"   # closed again
xdotool mousemove --window "$WID" 150 300 sleep 0.2 click --repeat 30 --delay 20 4   # the panel back at its top
sleep 0.5

# 3b. Save the scene and export the surface (panel buttons; files land in the app's folder).
read -r vx vy <<< "$(layout save_scene "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$vx" "$vy" sleep 0.3 click 1 sleep 0.5
read -r ex ey <<< "$(layout export_obj "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$ex" "$ey" sleep 0.3 click 1 sleep 1
check "save: the saved scene has the new density, the pin and the jelly" python3 -c "
import json, sys
s = json.load(open('$OUT/scene.json'))
pins = [p for p in s.get('pins', []) if 'vertex' in p]
print('saved density', s['simulation']['density'], 'pins', len(pins), 'jellies', len(s.get('jellies', [])))
sys.exit(0 if abs(s['simulation']['density'] - 0.1) > 1e-6 and s['simulation']['substeps'] > 1 and len(pins) >= 3
         and len(s.get('jellies', [])) == 1 else 1)"
if [ -x "$(dirname "$APP")/clothlab-cli" ]; then
  check "save: the saved scene loads again" "$(dirname "$APP")/clothlab-cli" info "$OUT/scene.json"
fi
check "export: the surface OBJ has every vertex" test "$(grep -c '^v ' "$OUT/surface.obj" 2> /dev/null)" = 558
check "save: the written scene heads the recent files" \
  test "$(head -n1 "$XDG_CONFIG_HOME/clothlab/recent.txt" | xargs -d '\n' basename)" = scene.json

# 3c. Paused, the pin is dragged 60 px aside: the log records the moved pin without a step (it
#     recorded snapshots only for a new step or a changed number of pins). Last in this scene:
#     the pin pulled out of the cloth's reach makes the steps slow.
xdotool key space
sleep 0.5
read -r px py <<< "$(layout pin_last "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$px" "$py" sleep 0.3 mousedown 1 sleep 0.2
for i in 1 2 3; do
  xdotool mousemove --window "$WID" $((px + 20 * i)) "$py" sleep 0.2
done
xdotool mouseup 1 sleep 0.5
check "pin: a pin dragged while paused is logged" python3 "$HERE/check_log.py" pin_dragged_paused "$LOG"

# 3d. Undo and redo, still paused: Ctrl+Z puts the dragged pin back, the panel's Redo button
#     drags it again, Ctrl+Z and Ctrl+Shift+Z once more; C clears every pin, Ctrl+Z puts
#     them back, Ctrl+Y clears them again, and Ctrl+Z brings them back for the rest of the test.
xdotool mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+z sleep 0.5
click_panel redo "$OUT/hanging.out"
sleep 0.5
xdotool mousemove --window "$WID" 900 700 sleep 0.2 key ctrl+z sleep 0.5 key ctrl+shift+z sleep 0.5
check "undo: Ctrl+Z undoes the drag, the panel's redo and Ctrl+Shift+Z redo it" \
  python3 "$HERE/check_log.py" pin_undo_redo "$LOG"
xdotool key c sleep 0.5 key ctrl+z sleep 0.5 key ctrl+y sleep 0.5 key ctrl+z sleep 0.5
check "undo: C's clear undone, redone and undone again" \
  python3 "$HERE/check_log.py" pins_cleared_undone "$LOG"
xdotool key space
sleep 0.5

# 4. Open an OBJ through the panel's Open field (the mesh becomes the cloth).
python3 - "$OUT/flag.obj" << 'PY'
import sys
n = 12
with open(sys.argv[1], "w") as f:
    for j in range(n):
        for i in range(n):
            f.write(f"v {i/(n-1)*0.8:.6f} {1.2 - j/(n-1)*0.6:.6f} 0\n")
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i + 1
            f.write(f"f {a} {a+1} {a+n}\nf {a+1} {a+n+1} {a+n}\n")
PY
open_typed "$OUT/hanging.out" "$OUT/flag.obj"
sleep 3
check "open: the OBJ became the cloth (144 vertices)" grep -q '"event":"scene".*"name":"flag".*"vertices":144' "$LOG"

# 5. A bad file in the Open field: an error in the panel, the current scene keeps running.
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n' > "$OUT/bad.obj"
open_typed "$OUT/hanging.out" "$OUT/bad.obj"   # the field as laid out now (the panel grew a message box)
sleep 2
check "bad file: the error names the file and line" grep -q '"event":"error".*bad.obj: line 4: face index 7 is out of range' "$LOG"
check "bad file: the flag scene kept running" python3 "$HERE/check_log.py" running "$LOG" flag

# 5b. The flag, written in the x-y plane, stands on edge: the panel's placement lays it flat about
#     its centre; a scale of 0 typed there is refused, naming it, while the flag runs on.
scroll_panel_to placement_node "$OUT/hanging.out"   # below the window's edge
read -r nx ny <<< "$(layout placement_node "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$nx" "$ny" sleep 0.3 click 1
sleep 1
scroll_panel_to placement_lay_flat "$OUT/hanging.out"
read -r fx fy <<< "$(layout placement_lay_flat "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$fx" "$fy" sleep 0.3 click 1
sleep 3
check "placement: lay flat laid the standing flag level about its centre" \
  python3 "$HERE/check_log.py" laid_flat "$LOG" flag
read -r sx sy <<< "$(layout placement_scale "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 click 1 sleep 0.2 keydown ctrl+a sleep 0.2 keyup ctrl+a \
  sleep 0.2 type --delay 20 "0"
read -r ax ay <<< "$(layout placement_apply "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$ax" "$ay" sleep 0.3 click 1
sleep 2
check "placement: a scale of 0 is refused, naming it" \
  grep -q '"event":"error".*placement: scale must be between 1e-06 and 1e+06, got 0' "$LOG"
check "placement: the flag kept running" python3 "$HERE/check_log.py" running "$LOG" flag
# Ctrl+Z passes the refused placement by and undoes the lay flat: the flag stands up again, as
# it stood; Ctrl+Y lays it flat again.
xdotool mousemove --window "$WID" 900 400 sleep 0.3 key ctrl+z
sleep 2
xdotool key ctrl+y
sleep 2
check "placement: one Ctrl+Z undoes the lay flat (not the refused scale), standing the flag up as before; Ctrl+Y lays it flat" \
  python3 "$HERE/check_log.py" lay_flat_undone "$LOG" flag
# 5c. The wind's first field typed as 5 m/s (Ctrl+click, type, Enter) and the "air" button: both
#     reach the simulation.
scroll_panel_to sim.air "$OUT/hanging.out"
x0=$(grep "^LAYOUT sim.wind " "$OUT/hanging.out" | tail -n1 | awk '{print $3}')
read -r wx wy <<< "$(layout sim.wind "$OUT/hanging.out")"
xdotool mousemove --window "$WID" $((x0 + 25)) "$wy" sleep 0.3 keydown ctrl sleep 0.2 click 1 sleep 0.2 keyup ctrl \
  sleep 0.3 key ctrl+a sleep 0.2 type --delay 20 "5"
xdotool sleep 0.2 key Return sleep 0.5
read -r ax ay <<< "$(layout sim.air "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$ax" "$ay" sleep 0.3 click 1
sleep 1
check "wind: the typed wind and the air button reach the simulation" python3 "$HERE/check_log.py" wind "$LOG"
scroll_panel_to placement_node "$OUT/hanging.out"
read -r nx ny <<< "$(layout placement_node "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$nx" "$ny" sleep 0.3 click 1   # closed again
xdotool mousemove --window "$WID" 150 300 sleep 0.2 click --repeat 30 --delay 20 4   # the panel back at its top
sleep 0.5
# 5d. The fifth solver, picked from the Solver section's combo (its fifth entry), runs the flag.
read -r sx sy <<< "$(layout solver_combo "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 click 1 sleep 0.5 mousemove --window "$WID" "$sx" $((sy + 24 + 4 * 17)) sleep 0.3 click 1
sleep 3
check "solver: strain-limit-remesh picked in the panel runs the scene" python3 "$HERE/check_log.py" solver_runs "$LOG" strain-limit-remesh

# 6. Screenshot key (P, pointer over the scene): a PNG that is not blank. T prints checks on the
#    cloth for it and takes them off after.
xdotool mousemove --window "$WID" 900 400 sleep 0.3 key t sleep 0.3 key p
sleep 1
xdotool key t sleep 0.3
check "pattern: T prints checks on the cloth and T again takes them off" python3 -c "
import json, sys
shown = [json.loads(l)['pattern'] for l in open('$LOG') if '\"event\":\"pattern\"' in l]
print('patterns:', shown)
sys.exit(0 if shown[-2:] == ['checks', 'none'] else 1)"
SHOT=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e['event']=='screenshot': print(e['path'])" "$LOG" | tail -n1)
[ -n "$SHOT" ] && [ "${SHOT#/}" = "$SHOT" ] && SHOT="$OUT/$SHOT"
colours() { convert "$1" -format '%k' info: 2> /dev/null || echo 0; }
check "screenshot: written" test -s "$SHOT"
check "screenshot: not blank (>= 100 colours)" test "$(colours "$SHOT")" -ge 100
import -window "$WID" "$OUT/window.png" 2> /dev/null

# 7. "this scene, all solvers" on the opened OBJ (no built-in scene of that name): five panes,
#    one per solver, run the flag as it stands.
#    The header is clicked straight after a move from the 3D view onto it, within one frame: the
#    press must not also start an orbit (the viewer once asked ImGui, which had not yet seen the
#    cursor over its panel).
read -r hx hy <<< "$(layout compare_header "$OUT/hanging.out")"
eval "$(xdotool getwindowgeometry --shell "$WID")"   # X, Y: the window's origin on the screen
# (Screen coordinates: moves relative to the window did not show the race.)
xdotool mousemove $((X + 900)) $((Y + 400)) sleep 0.5 mousemove $((X + hx)) $((Y + hy)) click 1 sleep 0.5
check "a click that lands on the panel with the move starts no orbit" python3 -c "
import json, sys
starts = [e for e in map(json.loads, open('$LOG')) if e['event'] == 'orbit_start' and e['x'] < 360]
print('orbits started on the panel:', starts)
sys.exit(1 if starts else 0)"
read -r tx ty <<< "$(layout compare_this_scene "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$tx" "$ty" sleep 0.3 click 1
sleep 3
all_solvers=impulse-nc,conforming,mls-isometry,xpbd,strain-limit-remesh
check "compare this scene: five panes run the opened OBJ" \
  python3 "$HERE/check_log.py" compared "$LOG" 1 "$all_solvers"
check "compare this scene: the panes are the flag's" \
  grep -q '"event":"compare_start".*"scene":"flag","solver":"xpbd"' "$LOG"
# Restarting that comparison builds its panes again on a thread, as the first time.
read -r rx ry <<< "$(layout compare_start "$OUT/hanging.out")"
xdotool mousemove --window "$WID" "$rx" "$ry" sleep 0.3 click 1
sleep 3
check "compare this scene: Restart builds the five panes again" \
  python3 "$HERE/check_log.py" compared "$LOG" 2 "$all_solvers"
check "compare this scene: both were built while the scene ran on" \
  test "$(grep -c '"event":"info".*building the panes' "$LOG")" = 2
stop_app

# ---- a curved cloth in all solvers: the two that need a flat rest state are left out, saying why --
python3 - "$OUT/dome.obj" << 'PY'
import math, sys
n = 10
with open(sys.argv[1], "w") as f:   # a dome without texture coordinates: no flat rest state (it does not unfold)
    for j in range(n):
        for i in range(n):
            x, z = 0.6 * i / (n - 1) - 0.3, 0.6 * j / (n - 1) - 0.3
            f.write(f"v {x:.6f} {1.1 - 2 * (x * x + z * z):.6f} {z:.6f}\n")
    for j in range(n - 1):
        for i in range(n - 1):
            a = j * n + i + 1
            f.write(f"f {a} {a+1} {a+n}\nf {a+1} {a+n+1} {a+n}\n")
PY
start_app dome "$OUT/dome.obj"
LOG="$OUT/dome.jsonl"
read -r hx hy <<< "$(layout compare_header "$OUT/dome.out")"
xdotool mousemove --window "$WID" "$hx" "$hy" sleep 0.3 click 1 sleep 0.5
read -r tx ty <<< "$(layout compare_this_scene "$OUT/dome.out")"
xdotool mousemove --window "$WID" "$tx" "$ty" sleep 0.3 click 1
sleep 3
check "compare a curved cloth: the other three solvers run it" \
  python3 "$HERE/check_log.py" compared "$LOG" 1 impulse-nc,conforming,xpbd
check "compare a curved cloth: the panel says why mls-isometry is left out" \
  grep -q '"event":"warning".*compare: left out mls-isometry: .*dome.obj: mls-isometry needs the flat rest state' "$LOG"
check "compare a curved cloth: the panel says why strain-limit-remesh is left out" \
  grep -q '"event":"warning".*compare: left out strain-limit-remesh: .*strain-limit-remesh needs the cloth.s flat rest state' "$LOG"
stop_app

# ---- a scene opened just before "this scene, all solvers": the load wins, not the comparison ------
# The panes of `hanging` are built in a fraction of a second, the 60 000-triangle disk in about
# two; starting the panes used to drop the single runner and the load with it.
echo '{"name": "disk", "cloth": {"generator": {"type": "irregular-disk", "radius": 0.5, "triangles": 60000, "seed": 1},
  "transform": {"rotate_deg": [-90, 0, 0], "translate": [0, 1, 0]}}}' > "$OUT/disk.json"
start_app race hanging
LOG="$OUT/race.jsonl"
read -r hx hy <<< "$(layout compare_header "$OUT/race.out")"
xdotool mousemove --window "$WID" "$hx" "$hy" sleep 0.3 click 1 sleep 0.5
open_typed "$OUT/race.out" "$OUT/disk.json"
sleep 0.15   # the panel grows a progress line: the button is where it is laid out now
read -r tx ty <<< "$(layout compare_this_scene "$OUT/race.out")"
xdotool mousemove --window "$WID" "$tx" "$ty" click 1
for _ in $(seq 100); do grep -q '"loaded disk' "$LOG" && break; sleep 0.2; done
check "a load under way: the comparison is not started, saying why" \
  grep -q '"event":"info".*compare hanging: not started, .*disk.json is loading' "$LOG"
check "a load under way: the opened scene runs" grep -q '"event":"info","message":"loaded disk' "$LOG"
# The panel's Compare button starts the chosen preset. It shared its ImGui ID with the "Compare"
# header above it, which took the click: the button did nothing.
sleep 0.5
read -r cx cy <<< "$(layout compare_start "$OUT/race.out")"
xdotool mousemove --window "$WID" "$cx" "$cy" sleep 0.3 click 1
for _ in $(seq 50); do grep -q '"event":"compare_start"' "$LOG" && break; sleep 0.2; done
sleep 1.5
check "the Compare button starts the preset" \
  python3 "$HERE/check_log.py" compared "$LOG" 1 conforming,impulse-nc,mls-isometry
stop_app

# ---- compare mode: a drag in one pane drives the same material point in every pane -------------
start_app compare --compare pinned-corners --paused
LOG="$OUT/compare.jsonl"
# Framed for the panes as they are once the panel is drawn (its width is known only after the
# first frame, which narrows the panes).
check "compare: pane 1 frames the whole cloth" python3 "$HERE/check_log.py" inside "$OUT/compare.out" pane1 cloth_box
# Each pane's labels (solver, setup, metrics) wrap to fit the pane: three panes in the default
# 1280 px window clipped them before.
labels_fit() {
  for i in 1 2 3; do python3 "$HERE/check_log.py" inside "$OUT/compare.out" "pane$i" "pane${i}_label" || return 1; done
}
check "compare: every pane's labels fit inside it" labels_fit
read -r cx cy <<< "$(layout cloth_center "$OUT/compare.out")"    # aimed in pane 1 (active)
read -r p1x _ <<< "$(grep '^LAYOUT pane1 ' "$OUT/compare.out" | tail -n1 | awk '{print $3, $4}')"
read -r p2x _ <<< "$(grep '^LAYOUT pane2 ' "$OUT/compare.out" | tail -n1 | awk '{print $3, $4}')"
dx=$((p2x - p1x))   # the same point in pane 2: one camera, one mesh
xdotool mousemove --window "$WID" $((cx + dx)) "$cy" sleep 0.3 mousedown 1 sleep 0.3 key space sleep 0.3
for i in 1 2 3 4 5 6 7 8; do
  xdotool mousemove --window "$WID" $((cx + dx + 6 * i)) $((cy - 10 * i)) sleep 0.1
done
sleep 1.5
wait_until python3 "$HERE/check_log.py" mirror "$LOG" 3
xdotool mouseup 1
sleep 0.5
check "compare: the click made pane 2 active" grep -q '"event":"pane_active".*"pane":1' "$LOG"
check "compare: one drag moved the same point in all 3 panes" python3 "$HERE/check_log.py" mirror "$LOG" 3
# The active pane (2) gets another mesh variant from the "pane scene" combo: its second entry,
# cantilever-fine (entries are 17 px apart, the first 24 px below the combo's centre).
read -r qx qy <<< "$(layout compare_pane_scene "$OUT/compare.out")"
xdotool mousemove --window "$WID" "$qx" "$qy" sleep 0.3 click 1 sleep 0.5 mousemove --window "$WID" "$qx" $((qy + 24 + 17)) sleep 0.3 click 1
sleep 2
check "compare: pane 2 now runs cantilever-fine" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
rebuilt = [e for e in log if e['event'] == 'pane_rebuilt']
later = [e for e in log if e['event'] == 'pane' and e['pane'] == 1 and e['scene'] == 'cantilever-fine']
others = [e for e in log if e['event'] == 'pane' and e['pane'] == 0][-1]
print('rebuilt:', rebuilt[-1] if rebuilt else None, '; snapshots of the new pane:', len(later), '; pane 1 still runs', others['scene'])
sys.exit(0 if rebuilt and rebuilt[-1]['pane'] == 1 and len(later) >= 3 and others['scene'] == 'corners-coarse' else 1)"
# With the panes in step (the default) the other panes start again from rest with the new one.
restarted_in_step() {  # restarted_in_step N: the N-th restart of pane 2's companions is logged and they started again
  python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
at = [i for i, e in enumerate(log) if e['event'] == 'panes_restarted' and e['pane'] == 1]
def steps(pane, lo, hi): return [e['step'] for e in log[lo:hi] if e['event'] == 'pane' and e['pane'] == pane]
ok = len(at) == $1 and all(steps(p, 0, at[-1]) and steps(p, at[-1], len(log)) and
                           min(steps(p, at[-1], len(log))) < steps(p, 0, at[-1])[-1] for p in (0, 2))
print('restarts logged at lines', at, '; pane 0 steps before/after the last:',
      steps(0, 0, at[-1])[-1:] if at else None, steps(0, at[-1], len(log))[:3] if at else None)
sys.exit(0 if ok else 1)"
}
check "compare: the other panes restarted with it, in step" restarted_in_step 1
# The same for another solver in the active pane: the Solver section's combo, its fourth entry
# (xpbd), the combo scrolled high enough for its list to open below it.
scroll_panel_to solver_combo "$OUT/compare.out" 560
read -r sx sy <<< "$(layout solver_combo "$OUT/compare.out")"
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 click 1 sleep 0.5 mousemove --window "$WID" "$sx" $((sy + 24 + 3 * 17)) sleep 0.3 click 1
sleep 2
check "compare: pane 2 switched to xpbd" grep -q '"event":"solver","id":"xpbd","pane":1' "$LOG"
check "compare: the other panes restarted with the new solver, in step" restarted_in_step 2
# "metrics: mean over the last 2 s": the labels and the table show each metric's mean over the
# samples of the last 2 s of simulated time; the log carries them with their range, which must be
# that of the values logged over the same span.
scroll_panel_to compare_metrics_mean "$OUT/compare.out"
read -r mx my <<< "$(layout compare_metrics_mean "$OUT/compare.out")"
xdotool mousemove --window "$WID" "$mx" "$my" sleep 0.3 click 1
sleep 3
check "compare: the metrics' means over the last 2 s" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
on = [i for i, e in enumerate(log) if e['event'] == 'metrics_mean' and e['on']]
if not on:
    sys.exit('the checkbox was not logged as ticked')
ok = True
checked = 0
for pane in (0, 1, 2):
    events = [e for e in log[on[-1]:] if e['event'] == 'pane' and e['pane'] == pane and 'sag' in e.get('means', {})]
    if not events:
        continue
    last = events[-1]
    m = last['means']['sag']
    # The window ends at the newest sample ('to'); later events repeat its values. Only the
    # pane's run since it last started again from rest counts: an earlier run (before a solver
    # switch restarted the panes) covered the same times with other values.
    runs = [e for e in log if e['event'] == 'pane' and e['pane'] == pane and 'sag' in e]
    since = max([k for k in range(1, len(runs)) if runs[k]['t'] < runs[k - 1]['t']], default=0)
    logged = [e['sag'] for e in runs[since:] if m['from'] <= e['t'] <= last['t']]
    good = (m['samples'] >= 2 and m['to'] - m['from'] <= 2.0 + 1e-9 and m['to'] <= last['t'] and m['lowest'] <= m['mean'] <= m['highest']
            and m['lowest'] == min(logged) and m['highest'] == max(logged))
    print('pane', pane, 'sag mean', m, 'logged from', len(logged), 'events:', min(logged), max(logged), 'ok' if good else 'BAD')
    ok = ok and good
    checked += 1
sys.exit(0 if ok and checked >= 2 else 1)"
xdotool mousemove --window "$WID" 900 300 sleep 0.2 key p
sleep 1
import -window "$WID" "$OUT/compare.png" 2> /dev/null
check "compare: the window shows the panes (>= 100 colours)" test "$(colours "$OUT/compare.png")" -ge 100
# A large scene opened while comparing has the load's bar too: its "give up" drops the load, the
# panes run on, and the load's thread ends its stage at the lowest priority.
echo '{"cloth": {"generator": {"type": "irregular-disk", "radius": 0.5, "triangles": 400000, "seed": 1}}}' > "$OUT/bigdisk.json"
open_typed "$OUT/compare.out" "$OUT/bigdisk.json"
sleep 1
scroll_panel_to give_up_load "$OUT/compare.out"   # above the Open field: scrolled up if need be
read -r gx gy <<< "$(layout give_up_load "$OUT/compare.out")"
xdotool mousemove --window "$WID" "$gx" "$gy" sleep 0.3 click 1 sleep 0.5
check "compare: the give-up button drops a load opened while comparing" \
  grep -q '"event":"info","message":"gave up the load of .*bigdisk.json"' "$LOG"
check "compare: the given-up load's thread runs at the lowest priority" a_thread_at_lowest_priority
# A bad file in the Open field leaves the comparison running with the error (it used to end the
# comparison before reading the file); a good one then replaces it.
open_typed "$OUT/compare.out" "$OUT/bad.obj"
sleep 2
check "compare: a bad file leaves the comparison running" python3 "$HERE/check_log.py" compare_kept "$LOG" "bad.obj: line 4"
open_typed "$OUT/compare.out" "$OUT/flag.obj"
sleep 3
check "compare: a good file then ends it" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
at = max(i for i, e in enumerate(log) if e['event'] == 'open')
stop = [e for e in log[at:] if e['event'] == 'compare_stop']
flag = [e for e in log[at:] if e['event'] == 'scene' and e['name'] == 'flag']
print('after the last open: compare_stop', len(stop), '; scene events of the flag', len(flag))
sys.exit(0 if stop and flag else 1)"
stop_app

# ---- sphere-drop: an obstacle moved by the panel; a scene that would not load is not saved -----
start_app obstacle sphere-drop --paused
LOG="$OUT/obstacle.jsonl"
saved_before=$(md5sum < "$OUT/scene.json")
# Open the Obstacles section, scroll the panel down to it, and type the sphere's centre height
# (the position's second field) as 0.55 m: through the sheet's rest position at 0.6 m.
scroll_panel_to obstacles_header "$OUT/obstacle.out"
read -r hx hy <<< "$(layout obstacles_header "$OUT/obstacle.out")"
xdotool mousemove --window "$WID" "$hx" "$hy" sleep 0.3 click 1 sleep 0.5
scroll_panel_to obstacle_position "$OUT/obstacle.out"
read -r px py <<< "$(layout obstacle_position "$OUT/obstacle.out")"
x0=$(grep "^LAYOUT obstacle_position " "$OUT/obstacle.out" | tail -n1 | awk '{print $3}')
xdotool mousemove --window "$WID" $((x0 + 110)) "$py" sleep 0.3 keydown ctrl click 1 keyup ctrl sleep 0.3 \
  key ctrl+a sleep 0.2 type --delay 30 "0.55"
xdotool key Return sleep 0.8
xdotool mousemove --window "$WID" 150 300 sleep 0.2 click --repeat 30 --delay 20 4   # the panel back at its top
sleep 0.5
read -r vx vy <<< "$(layout save_scene "$OUT/obstacle.out")"
xdotool mousemove --window "$WID" "$vx" "$vy" sleep 0.3 click 1 sleep 1
check "obstacle: the panel moved the sphere up to 0.55 m" python3 -c "
import json, sys
moves = [json.loads(l) for l in open('$LOG') if '\"obstacle_move\"' in l]
y = 0.3 + sum(m['delta'][1] for m in moves)
print('moves', len(moves), '; the sphere now at y =', round(y, 3))
sys.exit(0 if moves and abs(y - 0.55) < 1e-9 else 1)"
check "obstacle: Save refuses a scene whose cloth would start inside it" \
  grep -q '"event":"error".*not saved, it would not load: obstacles\[0\] (sphere)' "$LOG"
check "obstacle: the earlier scene.json is left as it was" test "$(md5sum < "$OUT/scene.json")" = "$saved_before"
check "obstacle: a refused save is not added to the recent files" \
  test "$(head -n1 "$XDG_CONFIG_HOME/clothlab/recent.txt" | xargs -d '\n' basename)" = flag.obj
# Ctrl+Z takes the typed move back in one step (the field's edits as typed are one record): the
# sphere is back where it was, and Save writes the scene again.
xdotool mousemove --window "$WID" 900 600 sleep 0.2 key ctrl+z sleep 0.8
read -r vx vy <<< "$(layout save_scene "$OUT/obstacle.out")"   # below the refusal's message now
xdotool mousemove --window "$WID" "$vx" "$vy" sleep 0.3 click 1 sleep 1
check "undo: Ctrl+Z took the sphere's move back in one step, and Save writes the scene" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
undos = [e['edit'] for e in log if e['event'] == 'undo']
spheres = [o for o in json.load(open('$OUT/scene.json'))['obstacles'] if o['type'] == 'sphere']
print('undone:', undos, '; the saved sphere at', spheres and spheres[0]['center'])
sys.exit(0 if undos == ['move obstacle 1'] and spheres and abs(spheres[0]['center'][1] - 0.3) < 1e-9 else 1)"
# A section opened at the panel's bottom edge scrolls into view: Statistics closed, the panel
# scrolled to its end (the header then at the bottom edge), Statistics opened again.
xdotool mousemove --window "$WID" 150 300 sleep 0.2 click --repeat 40 --delay 20 5 sleep 0.5
read -r sx sy <<< "$(layout stats_header "$OUT/obstacle.out")"
xdotool mousemove --window "$WID" "$sx" "$sy" sleep 0.3 click 1 sleep 0.5   # closed
xdotool mousemove --window "$WID" 150 300 sleep 0.2 click --repeat 40 --delay 20 5 sleep 0.5
read -r sx closed_y <<< "$(layout stats_header "$OUT/obstacle.out")"
xdotool mousemove --window "$WID" "$sx" "$closed_y" sleep 0.3 click 1 sleep 1   # open again
read -r sx open_y <<< "$(layout stats_header "$OUT/obstacle.out")"
check "a section opened at the panel's bottom edge scrolls up into view" \
  bash -c "echo 'Statistics header at y = $closed_y closed, $open_y opened'; test $((closed_y - open_y)) -ge 150"
stop_app

# ---- ckv-cylinder-fine: a click does not wait out a step of seconds ----------------------------
start_app cylinder ckv-cylinder-fine
LOG="$OUT/cylinder.jsonl"
# From its sixth step on, a step takes seconds (mls-isometry on 15120 vertices: 3 to 7 s here).
for _ in $(seq 900); do grep -q '"event":"snapshot".*"step":6,' "$LOG" 2> /dev/null && break; sleep 0.1; done
read -r cx cy <<< "$(layout cloth_center "$OUT/cylinder.out")"
# The release comes about 1 s after the grab, well inside one step: held 2.5 s, it met the end
# of a 2.5 s step (OpenBLAS's Haswell kernels), and was shown with the next step's snapshot.
xdotool mousemove --window "$WID" "$cx" "$cy" sleep 0.3 mousedown 1 sleep 0.5
xdotool mousemove --window "$WID" $((cx + 30)) $((cy - 15)) sleep 0.5 mouseup 1 sleep 2
check "slow steps: a grab and its release show at once" python3 "$HERE/check_log.py" clicks "$LOG"
# Save scene clicked and Ctrl+Q pressed at once, while a step of seconds runs: the save gives the
# step up, and the quit came first and dropped it, so no file was written.
read -r vx vy <<< "$(layout save_scene "$OUT/cylinder.out")"
xdotool mousemove --window "$WID" "$vx" "$vy" sleep 0.3 click 1 key ctrl+q
for _ in $(seq 50); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.1; done
check "slow steps: Save then Ctrl+Q at once still writes the scene" grep -q '"name": "ckv-cylinder-fine"' "$OUT/scene.json"
stop_app

# ---- a large scene's load: given up for another scene, by its button, and by quitting --------
# Opening another scene while one loaded was refused ("cannot load ... while ... is loading") for
# as long as the load took (26 s for a 600 000-triangle disk); now the newer load wins. The
# panel's "give up" button drops a load. The quit waited for the load in the destructor, with
# the closed window on screen; now it ends the process at once and logs what it left unfinished.
start_app bigload hanging
LOG="$OUT/bigload.jsonl"
open_typed "$OUT/bigload.out" "$OUT/bigdisk.json"
sleep 1
open_typed "$OUT/bigload.out" ckv-corners
sleep 2
check "load: another scene opened while one loads replaces that load" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
given = [i for i, e in enumerate(log) if e['event'] == 'info' and 'bigdisk.json was given up for ckv-corners' in e['message']]
scene = [i for i, e in enumerate(log) if e['event'] == 'scene' and e['name'] == 'ckv-corners']
print('given up at line', given, '; ckv-corners running from line', scene)
sys.exit(0 if given and scene and scene[0] > given[0] else 1)"
open_typed "$OUT/bigload.out" "$OUT/bigdisk.json"
sleep 1
read -r gx gy <<< "$(layout give_up_load "$OUT/bigload.out")"
xdotool mousemove --window "$WID" "$gx" "$gy" sleep 0.3 click 1 sleep 0.5
check "load: the give-up button drops the load" grep -q '"event":"info","message":"gave up the load of .*bigdisk.json"' "$LOG"
# Its thread runs on to the end of its stage, at the lowest priority beside the scene (as may the
# one given up above).
check "load: the given-up load's thread runs at the lowest priority" a_thread_at_lowest_priority
check "load: the scene that ran goes on" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$LOG')]
at = max(i for i, e in enumerate(log) if e['event'] == 'load_given_up')
steps = [e['step'] for e in log[at:] if e['event'] == 'snapshot' and e['scene'] == 'ckv-corners']
print('ckv-corners snapshots after the give-up:', len(steps), steps[:1], steps[-1:])
sys.exit(0 if len(steps) >= 3 and steps[-1] > steps[0] else 1)"
open_typed "$OUT/bigload.out" "$OUT/bigdisk.json"
sleep 1
xdotool mousemove --window "$WID" 900 700 key ctrl+q
quit_at=$(date +%s%N)
for _ in $(seq 300); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.05; done
quit_ms=$((($(date +%s%N) - quit_at) / 1000000))
echo "the process ended ${quit_ms} ms after Ctrl+Q"
check "quit while loading: the process ends within 3 s" test "$quit_ms" -lt 3000
check "quit while loading: the log names the load left unfinished" \
  grep -q '"event":"quit".*"left_unfinished":\["the load of [^"]*bigdisk.json"' "$LOG"
stop_app

# ---- quitting during a step that cannot be given up part-way ------------------------------------
# The first step of a 100 000-triangle disk orders its 300 000-row system (seconds, with no point
# where the solver can stop); the quit waited for it (29 s for 200 000 triangles). It now waits
# half a second for the simulation thread, then ends the process.
echo '{"name": "disk100k", "cloth": {"generator": {"type": "irregular-disk", "radius": 0.5, "triangles": 100000, "seed": 1}}}' > "$OUT/disk100k.json"
start_app firststep hanging
open_typed "$OUT/firststep.out" "$OUT/disk100k.json"
for _ in $(seq 600); do grep -q '"event":"scene","name":"disk100k"' "$OUT/firststep.jsonl" && break; sleep 0.05; done
# The panel shows the step running once it has taken a second ("step 1: 2 s so far"), so that
# a simulation held at step 0 does not look stuck.
sleep 2
check "a slow first step shows in the panel as running" grep -q '^LAYOUT step_running ' "$OUT/firststep.out"
xdotool mousemove --window "$WID" 900 700 key ctrl+q
quit_at=$(date +%s%N)
for _ in $(seq 600); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.05; done
quit_ms=$((($(date +%s%N) - quit_at) / 1000000))
echo "the process ended ${quit_ms} ms after Ctrl+Q; $(grep '"event":"quit"' "$OUT/firststep.jsonl")"
check "quit during a large scene's first step: the process ends within 2.5 s" test "$quit_ms" -lt 2500
stop_app

# ---- sphere-drop: the window keeps redrawing while slow steps run -----------------------------
start_app sphere sphere-drop --screenshot "$OUT/sphere.png" --seconds 17
# Orbit and wiggle the mouse for about 9 s (real input), as a user would; then leave it alone:
# the simulation runs far behind real time, so the window then draws 30 frames a second.
xdotool mousemove --window "$WID" 900 300 sleep 0.2 mousedown 3
for i in $(seq 40); do xdotool mousemove --window "$WID" $((900 + (i % 10) * 8)) $((300 + (i % 7) * 5)) sleep 0.2; done
xdotool mouseup 3
for _ in $(seq 100); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.2; done
wait $APP_PID 2> /dev/null; sphere_rc=$?; APP_PID=
# At least 15 frames a second, or on a slow host (13.7 seen) at least 1.3 frames per step.
check "sphere-drop: frame rate while stepping" python3 "$HERE/check_log.py" fps "$OUT/sphere.jsonl" 15 1.3
check "sphere-drop: the full frame rate while the mouse moves, 30 a second once left alone" \
  python3 "$HERE/check_log.py" paced "$OUT/sphere.jsonl" 7 30
check "sphere-drop: final screenshot not blank" test "$(colours "$OUT/sphere.png")" -ge 100
check "sphere-drop: exit status 0 with the screenshot written" test "$sphere_rc" = 0
# Paused and left alone (nothing runs, nothing touched), the window draws 10 frames a second.
start_app idle hanging --paused --seconds 4
for _ in $(seq 100); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.1; done
wait $APP_PID 2> /dev/null; APP_PID=
check "paused and left alone: 10 frames a second" python3 "$HERE/check_log.py" idle "$OUT/idle.jsonl" 10
# The pillowcase sews in the window: its widest stitch closes while it runs, the open seams drawn.
start_app pillow pillow --seconds 6 --screenshot "$OUT/pillow.png"
for _ in $(seq 150); do kill -0 $APP_PID 2> /dev/null || break; sleep 0.1; done
wait $APP_PID 2> /dev/null; APP_PID=
check "pillow: the seams close as the window runs" python3 "$HERE/check_log.py" sewing "$OUT/pillow.jsonl"
check "pillow: screenshot not blank" test "$(colours "$OUT/pillow.png")" -ge 100
# A screenshot that could not be written is refused before the window opens (exit 2), naming it.
"$APP" hanging --frames 3 --screenshot "$OUT/sphere.png/x.png" > "$OUT/noshot.out" 2>&1; noshot_rc=$?
check "--screenshot where no PNG can be written: exit 2 and the path named" \
  test "$noshot_rc" = 2 -a "$(grep -c "sphere.png/x.png: cannot write the PNG" "$OUT/noshot.out")" = 1
# So is a pattern the viewer does not know, naming the option and the ones it knows.
"$APP" hanging --frames 3 --pattern dots > "$OUT/nopattern.out" 2>&1; nopattern_rc=$?
check "--pattern dots: exit 2, naming --pattern and the patterns" \
  test "$nopattern_rc" = 2 -a "$(grep -c -- "--pattern: dots not in {none,checks,lines}" "$OUT/nopattern.out")" = 1
# A scene on the command line that cannot run opens the window all the same, with the error in
# the panel and the exit status 2: a missing file shows the hanging scene instead, and a solver
# that cannot run the scene leaves the scene under its own solver.
"$APP" "$OUT/missing.obj" --seconds 4 --log "$OUT/missing.jsonl" > "$OUT/missing.out" 2>&1; missing_rc=$?
check "a missing file on the command line: exit 2, the error in the panel names it" \
  test "$missing_rc" = 2 -a "$(grep -c '"event":"error".*missing.obj: file not found' "$OUT/missing.jsonl")" = 1
check "a missing file on the command line: the hanging scene runs" \
  python3 "$HERE/check_log.py" running "$OUT/missing.jsonl" hanging
"$APP" hanging --solver nope --frames 10 --log "$OUT/nosolver.jsonl" > "$OUT/nosolver.out" 2>&1; nosolver_rc=$?
check "--solver nope: exit 2, the error names the solver, the scene runs under its own" \
  test "$nosolver_rc" = 2 -a "$(grep -c '"event":"error".*unknown solver .nope.*running it under impulse-nc' "$OUT/nosolver.jsonl")" = 1 \
  -a "$(grep -c '"event":"start","scene":"hanging","solver":"impulse-nc"' "$OUT/nosolver.jsonl")" = 1
# In a small window the panel starts folded to its title bar, so the cloth is seen; at the size
# above it starts open.
"$APP" hanging --frames 20 --width 500 --height 400 --layout > "$OUT/small.out" 2>&1
check "a 500 x 400 window: the panel starts collapsed" \
  test "$(grep '^LAYOUT panel ' "$OUT/small.out" | tail -n1 | awk '{print $6 - $4}')" -lt 40
check "a 1280 x 800 window: the panel starts open" \
  test "$(grep '^LAYOUT panel ' "$OUT/hanging.out" | head -n1 | awk '{print $6 - $4}')" -gt 400

# ---- obstacles from the command line and from the panel -----------------------------------------
# Two --obstacle OBJs stand side by side under the cloth, not inside each other; a third opened
# from the panel as an obstacle ("an .obj is": its second entry) goes beside them. Save scene
# writes where they stand.
printf 'v 0 60 0\nv 0 40 0\nv 10 50 0\nv -10 50 0\nv 0 50 10\nv 0 50 -10\nf 1 3 5\nf 1 5 4\nf 1 4 6\nf 1 6 3\nf 2 5 3\nf 2 4 5\nf 2 6 4\nf 2 3 6\n' >"$OUT/octa.obj"
start_app obstacles hanging --paused --obstacle "$OUT/octa.obj" --obstacle "$OUT/octa.obj"
LOG="$OUT/obstacles.jsonl"
scroll_panel_to obj_as "$OUT/obstacles.out" 560
read -r ax ay <<< "$(layout obj_as "$OUT/obstacles.out")"
xdotool mousemove --window "$WID" "$ax" "$ay" sleep 0.3 click 1 sleep 0.5 mousemove --window "$WID" "$ax" $((ay + 24 + 17)) sleep 0.3 click 1
sleep 0.5
open_typed "$OUT/obstacles.out" "$OUT/octa.obj"
sleep 1
click_panel save_scene "$OUT/obstacles.out"
sleep 1
check "obstacles: two from the command line and one from the panel stand apart under the cloth" python3 -c "
import json, sys
added = [json.loads(l) for l in open('$LOG') if '\"obstacle_added\"' in l]
octa = [(0, 60, 0), (0, 40, 0), (10, 50, 0), (-10, 50, 0), (0, 50, 10), (0, 50, -10)]
boxes = []
for o in json.load(open('$OUT/scene.json'))['obstacles']:
    if o['type'] != 'mesh':
        continue
    t = o['transform']
    p = [[t['scale'] * v[d] + t['translate'][d] for d in range(3)] for v in octa]
    boxes.append([[min(q[d] for q in p) for d in range(3)], [max(q[d] for q in p) for d in range(3)]])
apart = [max(max(b[0][d] - a[1][d], a[0][d] - b[1][d]) for d in range(3))
         for i, a in enumerate(boxes) for b in boxes[i + 1:]]
print('added:', len(added), '; mesh obstacles saved:', len(boxes), '; gaps between them [m]:', [round(g, 4) for g in apart])
sys.exit(0 if len(added) == 3 and len(boxes) == 3 and min(apart) >= 0.0199 else 1)"
stop_app

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
