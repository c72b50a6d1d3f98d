#!/usr/bin/env bash
# Runs the tests (all but the GUI test) once per floating-point variant this machine can play:
# each of OpenBLAS's kernel sets (OPENBLAS_CORETYPE) and glibc's maths without FMA, AVX2 and
# AVX-512 (GLIBC_TUNABLES). Scenes that swing, crumple or crush are chaotic, and another
# machine's kernels take them elsewhere; a test that passes here under every variant is less
# likely to fail on a CI machine of another CPU. Usage: scripts/kernels.sh (after a build in
# build/; 2 to 3 minutes per variant on 2 cores, 8 variants; not part of CI).
set -uo pipefail
cd "$(dirname "$0")/../build" || { echo "kernels.sh: build/ not found; run scripts/build.sh first" >&2; exit 2; }
no_simd_maths="glibc.cpu.hwcaps=-AVX512F,-AVX512DQ,-AVX512VL,-AVX512BW,-AVX2,-FMA,-BMI2"
failed=0
for variant in Cooperlake SkylakeX Haswell Zen Sandybridge Nehalem \
               Haswell:no-simd-maths Sandybridge:no-simd-maths; do
  core=${variant%%:*}
  tunables=""
  [[ $variant == *:no-simd-maths ]] && tunables=$no_simd_maths
  log=$(mktemp)
  if GLIBC_TUNABLES=$tunables OPENBLAS_CORETYPE=$core ctest -j "$(nproc)" -E viewer_gui > "$log" 2>&1; then
    echo "$variant: $(grep 'tests passed' "$log")"
  else
    failed=1
    echo "$variant: $(grep 'tests passed' "$log")"
    grep -E '\((Failed|SEGFAULT|Timeout|Exception)' "$log" | sed 's/^/    /'
  fi
  rm -f "$log"
done
exit $failed
