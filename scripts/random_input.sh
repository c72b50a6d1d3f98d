#!/usr/bin/env bash
# Random input to the viewer in a private Xvfb (xdotool): drags over the cloth and the panel,
# Ctrl+clicks, orbits, wheel turns, panel clicks, odd values typed into whatever field has the
# focus, and the viewer's keys (Esc, undo and redo, and keeping and going back to a moment among
# them). Fails when the viewer stops before the end, or when a snapshot it drew carried a NaN.
# Usage: scripts/random_input.sh CLOTHLAB_BINARY OUT_DIR SEED SECONDS [SCENE AND VIEWER ARGS...]
#   e.g. scripts/random_input.sh build/clothlab /tmp/ri 1 150 hanging --compare pinned-corners
#   (a build from scripts/asan.sh reports memory errors in OUT_DIR/app.out; not part of CI)
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,8p' "$0"; exit 2; }
APP=$(readlink -f "$1"); OUT=$(readlink -m "$2"); SEED=$3; SECONDS_TO_RUN=$4; shift 4
for tool in Xvfb xdotool shuf; do
  command -v $tool > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs it)"; exit 2; }
done
# The viewer runs in OUT: paths are made absolute first, so that a relative one names its file.
source "$(dirname "$0")/absolute_paths.sh"
absolute_paths "$@"
rm -rf "$OUT" && mkdir -p "$OUT"
source "$(dirname "$0")/../tests/gui/private_xvfb.sh"
start_private_xvfb "$OUT"   # the recent-files list stays inside OUT
(cd "$OUT" && exec "$APP" "${ARGS[@]}" --log "$OUT/log.jsonl") > "$OUT/app.out" 2>&1 &
APP_PID=$!
trap 'kill $APP_PID $XVFB_PID 2> /dev/null' EXIT
for _ in $(seq 300); do grep -q '^READY' "$OUT/app.out" 2> /dev/null && break; sleep 0.1; done
grep -q '^READY' "$OUT/app.out" || { echo "FAIL: the viewer did not start"; cat "$OUT/app.out"; exit 1; }
xdotool search --sync --onlyvisible --name '^ClothLab$' > /dev/null

RANDOM=$SEED
end=$((SECONDS + SECONDS_TO_RUN))
actions=0
panel() { echo $((RANDOM % 370)) $((RANDOM % 760)); }   # a point over the panel
while [ $SECONDS -lt $end ] && kill -0 $APP_PID 2> /dev/null; do
  x=$((RANDOM % 1280)); y=$((RANDOM % 760)); x2=$((RANDOM % 1280)); y2=$((RANDOM % 760))
  case $((RANDOM % 16)) in
    0|1|2|3) xdotool mousemove $x $y mousedown 1 sleep 0.1 mousemove $(((x + x2) / 2)) $(((y + y2) / 2)) \
               sleep 0.1 mousemove $x2 $y2 sleep 0.1 mouseup 1 ;;
    4|5) xdotool mousemove $(panel) click 1 ;;
    6) xdotool keydown ctrl mousemove $x $y click 1 keyup ctrl ;;
    7) xdotool mousemove $x $y mousedown 3 sleep 0.1 mousemove $x2 $y2 mouseup 3 ;;
    8) xdotool mousemove $x $y click $((4 + RANDOM % 2)) ;;
    # ctrl+z listed twice: undo is pressed more often than redo; b (back to the kept moment) more
    # often than k (keep it).
    9) xdotool key "$(shuf -n1 -e -- space r p o c f w h t n 1 2 Escape Return Tab F1 Up Down Delete BackSpace ctrl+z ctrl+z ctrl+y ctrl+shift+z k b b)" ;;
    10|11) xdotool mousemove $(panel) mousedown 1 sleep 0.05 mousemove $(panel) sleep 0.05 mouseup 1 ;;
    12) xdotool mousemove $(panel) click --repeat 2 1 ;;
    13) xdotool mousemove $(panel) click 1 sleep 0.1 type -- "$(shuf -n1 -e -- 0 -1 1e9 nan inf abc 1e-9 100)"
        xdotool key Return ;;
    *) sleep 0.2 ;;
  esac
  actions=$((actions + 1))
  sleep 0.$((RANDOM % 4))
done
alive=0; kill -0 $APP_PID 2> /dev/null && alive=1
# Each drawn snapshot is logged with the cloth's statistics; the JSON writer turns a NaN into null.
nans=$(grep '"event":"snapshot"' "$OUT/log.jsonl" | grep -c -E 'null|NaN|nan[],}]')
echo "seed $SEED: $actions actions; viewer running at the end: $([ $alive = 1 ] && echo yes || echo no);" \
  "snapshots with a NaN: $nans"
[ $alive = 1 ] && [ "$nans" = 0 ] || { echo "FAIL: see $OUT/app.out and $OUT/log.jsonl"; exit 1; }
