#!/usr/bin/env bash
# The simulation-thread tests (tests/test_sim_runner.cpp: pacing, edits, loads, and a stress test
# of concurrent edits, drags and snapshot reads; tests/test_edit_history.cpp: edits recorded for
# undo on that thread) and the tests of work a step offers to a second thread (sim/alongside.h:
# the helpers, the impulse step's forces, the self-collision search, the two-thread solves) under
# ThreadSanitizer, in their own build folder.
# Usage: scripts/tsan.sh        (after scripts/setup.sh; on 2 cores about 25 minutes to build)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOTHLAB_BUILD_VIEWER=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" > /dev/null
cmake --build build-tsan -j"$(nproc)" --target clothlab_viewer_tests clothlab_tests
# halt_on_error: the first race fails the run; second_deadlock_stack for readable reports.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
./build-tsan/clothlab_viewer_tests --gtest_filter='SimRunner.*:EditHistory.*'
./build-tsan/clothlab_tests --gtest_filter='Alongside.*:ImpulseSolver.Forces*:SelfCollision.TheEdgeSearchOnASecondThread*:SelfCollision.HeldPairs*:SupernodalSolve.*:SpdSolver.LargeFactorsSolveTheSameWithAndWithoutASecondThread'
