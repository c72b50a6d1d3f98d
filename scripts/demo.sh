#!/usr/bin/env bash
# One command: install dependencies, build, and run the viewer (clothlab) on the `hanging` scene.
# Arguments go to clothlab, e.g. scripts/demo.sh sphere-drop, or scripts/demo.sh path/to/cloth.obj.
# Without a display (no DISPLAY/WAYLAND_DISPLAY: a server or CI box) it runs the viewer for
# 10 s in a virtual X server (Xvfb), saves a screenshot, and runs the headless CLI demo that writes
# an OBJ frame sequence, printing where both are.
set -euo pipefail
# Paths are made absolute before the cd below, so that a path relative to where the command was
# typed names the file it meant.
source "$(dirname "$0")/absolute_paths.sh"
absolute_paths "$@"
[ ${#ARGS[@]} -gt 0 ] || ARGS=(hanging)
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/clothlab "${ARGS[@]}"
fi
mkdir -p out
echo "demo: no display; running the viewer in Xvfb for 10 s"
xvfb-run -a -s '-screen 0 1280x800x24' ./build/clothlab "${ARGS[@]}" --seconds 10 \
  --screenshot out/demo.png > out/demo-viewer.log 2>&1
./build/clothlab-cli run hanging --steps 2000 --every 20 --out out/demo
echo "demo: viewer screenshot $(pwd)/out/demo.png"
echo "demo: OBJ frames written to $(pwd)/out/demo/frame_*.obj"
