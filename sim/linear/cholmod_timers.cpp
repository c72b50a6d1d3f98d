// Skips the statistics timers inside Debian's CHOLMOD.
//
// CHOLMOD is built without NTIMER, so its supernodal factorization reads the clock twice around
// every BLAS call (per supernode update) to add up CPU_GEMM_TIME, CPU_SYRK_TIME and the like in
// cholmod_common. Those sums are statistics only; ClothLab never reads them. On these VMs a clock
// read costs far more than on bare metal (profile of `tablecloth`: 6.7% of the whole run in
// SuiteSparse_time). Defining SuiteSparse_time in the executable interposes it for libcholmod, as
// omp_inline.cpp does for GOMP_parallel; it returns 0, so the statistics stay 0.
// CLOTHLAB_CHOLMOD_TIMERS=1 forwards to the real clock (for comparison in benchmarks).
#include <dlfcn.h>

#include "sim/linear/env_flag.h"

namespace {
bool forwardTimers() {
  static const bool forward = clothlab::environmentFlagIsOne("CLOTHLAB_CHOLMOD_TIMERS");
  return forward;
}
}  // namespace

extern "C" {

double SuiteSparse_time(void) {
  if (forwardTimers()) {
    using Clock = double (*)(void);
    static const auto real = reinterpret_cast<Clock>(dlsym(RTLD_NEXT, "SuiteSparse_time"));
    if (real) return real();
  }
  return 0.0;
}

// Read by sim/linear/runtime.cpp through a weak reference: 1 when the timers are skipped.
int clothlab_cholmod_timers_skipped() { return forwardTimers() ? 0 : 1; }

}  // extern "C"
