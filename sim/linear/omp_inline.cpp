// Runs OpenMP parallel regions of shared libraries (CHOLMOD) inline on the calling thread.
//
// libgomp's GOMP_parallel(fn, data, threads, flags) starts a team and calls fn(data) on each
// member. Defining the symbol in the executable interposes it for every shared library. Inside
// fn, omp_get_num_threads() is then 1 and omp_get_thread_num() 0, so worksharing loops run whole
// on this thread. CHOLMOD 5.12 uses only GOMP_parallel with static loops (checked with nm -D).
// CLOTHLAB_CHOLMOD_OPENMP=1 forwards to libgomp instead (for comparison in benchmarks).
#include <dlfcn.h>

#include <atomic>

#include "sim/linear/env_flag.h"

namespace {
std::atomic<long long> inlinedRegions{0};
using GompParallel = void (*)(void (*)(void*), void*, unsigned, unsigned);

bool forwardToLibgomp() {
  static const bool forward = clothlab::environmentFlagIsOne("CLOTHLAB_CHOLMOD_OPENMP");
  return forward;
}
}  // namespace

extern "C" {

void GOMP_parallel(void (*fn)(void*), void* data, unsigned threads, unsigned flags) {
  if (forwardToLibgomp()) {
    static const auto real = reinterpret_cast<GompParallel>(dlsym(RTLD_NEXT, "GOMP_parallel"));
    if (real) {
      real(fn, data, threads, flags);
      return;
    }
  }
  // A load and a store, not a locked read-modify-write: CHOLMOD opens thousands of regions per
  // factorization, and the count only has to show that regions ran here.
  inlinedRegions.store(inlinedRegions.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  fn(data);
}

// Read by sim/linear/runtime.cpp through a weak reference: -1 when regions are forwarded.
long long clothlab_omp_inlined_regions() {
  return forwardToLibgomp() ? -2 : inlinedRegions.load(std::memory_order_relaxed);
}

}  // extern "C"
