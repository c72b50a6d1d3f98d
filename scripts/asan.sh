#!/usr/bin/env bash
# Every test but the GUI one under AddressSanitizer (with its leak check) and
# UndefinedBehaviorSanitizer, in their own build folder: memory errors, leaks and undefined
# behaviour fail the test that caused them.
# Usage: scripts/asan.sh        (after scripts/setup.sh; on 2 cores about 20 minutes to build and
#                                20 to run; not part of CI)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOTHLAB_BUILD_VIEWER=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
  -DCMAKE_C_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
cmake --build build-asan -j"$(nproc)"
cd build-asan
ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1 ${UBSAN_OPTIONS:-}" \
  ctest -j"$(nproc)" -E '^viewer_gui$' --timeout 1500 --output-on-failure
