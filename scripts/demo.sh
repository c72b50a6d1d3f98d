#!/usr/bin/env bash
# One command: install dependencies, build, and run the headless demo (writes an OBJ sequence).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
out=${1:-out/demo}
./build/clothlab-cli run hanging --steps 2000 --every 20 --out "$out"
echo "demo: OBJ frames written to $(cd "$out" && pwd)/frame_*.obj"
