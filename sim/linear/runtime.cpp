#include "sim/linear/runtime.h"

#include <cholmod.h>
#include <dlfcn.h>
#include <malloc.h>

#include <cstdlib>
#include <mutex>

#include "sim/linear/env_flag.h"

extern "C" long long clothlab_omp_inlined_regions() __attribute__((weak));
extern "C" int clothlab_cholmod_timers_skipped() __attribute__((weak));

namespace clothlab {
namespace {
bool allocatorKeepsMemory = false;
}  // namespace

void configureLinearAlgebra() {
  static std::once_flag once;
  std::call_once(once, [] {
    // glibc's allocator gives freed memory back to the system and maps large blocks anew, so a
    // factor freed and allocated again (a new pattern: the impulse passes' held contact rows,
    // mls-isometry's edge rows) was paid for in page faults each time. Every block now comes from
    // the heap (no mmap at all: glibc caps the mmap threshold at 32 MB, and a fine cloth's factor
    // is larger), and the heap keeps what is freed.
    if (!environmentFlagIsOne("CLOTHLAB_MALLOC_DEFAULT"))
      allocatorKeepsMemory = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
      int threads = 1;
      if (const char* env = std::getenv("OPENBLAS_NUM_THREADS")) threads = std::max(1, std::atoi(env));
      set(threads);
    }
  });
}

std::unique_lock<std::mutex> lockBlas() {
  static const bool needed = [] {
    using GetConfig = char* (*)();
    auto config = reinterpret_cast<GetConfig>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
    return config && std::string(config()).find("SINGLE_THREADED") != std::string::npos;
  }();
  static std::mutex mutex;
  return needed ? std::unique_lock<std::mutex>(mutex) : std::unique_lock<std::mutex>();
}

LinearAlgebraInfo linearAlgebraInfo() {
  configureLinearAlgebra();
  LinearAlgebraInfo info;
  using GetConfig = char* (*)();
  using GetThreads = int (*)();
  auto config = reinterpret_cast<GetConfig>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  auto threads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (config) {
    info.blas = std::string("OpenBLAS (") + config() + ")";
    if (threads) info.blas += ", " + std::to_string(threads()) + " thread(s)";
  } else if (void* dgemm = dlsym(RTLD_DEFAULT, "dgemm_")) {
    Dl_info where{};
    dladdr(dgemm, &where);
    info.blas = std::string("non-OpenBLAS BLAS from ") + (where.dli_fname ? where.dli_fname : "?") +
                " (likely netlib reference: slow)";
  } else {
    info.blas = "no BLAS loaded";
  }
  info.cholmod = "CHOLMOD " + std::to_string(CHOLMOD_MAIN_VERSION) + "." +
                 std::to_string(CHOLMOD_SUB_VERSION) + "." + std::to_string(CHOLMOD_SUBSUB_VERSION);
  if (!clothlab_omp_inlined_regions) {
    info.inlinedRegions = -1;
    info.openmp = "libgomp teams (interposer not linked; slow on these VMs)";
  } else if (clothlab_omp_inlined_regions() == -2) {
    info.inlinedRegions = -1;
    info.openmp = "libgomp teams (CLOTHLAB_CHOLMOD_OPENMP=1)";
  } else {
    info.inlinedRegions = clothlab_omp_inlined_regions();
    info.openmp = "OpenMP regions inline on the calling thread";
  }
  if (!clothlab_cholmod_timers_skipped) info.timers = "read the clock (interposer not linked)";
  else if (clothlab_cholmod_timers_skipped()) info.timers = "skipped";
  else info.timers = "read the clock (CLOTHLAB_CHOLMOD_TIMERS=1)";
  info.allocator = allocatorKeepsMemory ? "glibc, every block from the heap, freed memory kept"
                                        : "glibc defaults (CLOTHLAB_MALLOC_DEFAULT=1 or mallopt refused)";
  return info;
}

std::string describeLinearAlgebra() {
  const LinearAlgebraInfo info = linearAlgebraInfo();
  return "BLAS: " + info.blas + "; " + info.cholmod + "; CHOLMOD OpenMP: " + info.openmp +
         "; CHOLMOD statistics timers: " + info.timers + "; allocator: " + info.allocator;
}

}  // namespace clothlab
