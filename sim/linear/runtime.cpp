#include "sim/linear/runtime.h"

#include <cholmod.h>
#include <dlfcn.h>
#include <malloc.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>

#include "sim/linear/env_flag.h"

extern "C" long long clothlab_omp_inlined_regions() __attribute__((weak));
extern "C" int clothlab_cholmod_timers_skipped() __attribute__((weak));

namespace clothlab {
namespace {
bool allocatorKeepsMemory = false;
std::string kernelChoice = "not looked at";  // LinearAlgebraInfo::kernels

// OpenBLAS picks its kernels for the CPU when it loads, and takes SSE3's (Prescott) on a CPU with
// AVX2 whenever CPUID does not report that the system saves the AVX registers (OSXSAVE). Some
// virtual machines hide that bit while their kernel supports AVX and AVX-512 (these 2-core VMs:
// a Xeon with AVX-512, where OpenBLAS chose Prescott and ckv-corners-fine's factorizations took
// 104 instead of 76 to 83 ms per frame). Where the kernels in use lack AVX2 and the kernel's
// flags have it, OpenBLAS is initialized again with the best set they support, as
// OPENBLAS_CORETYPE would choose it at load time. Runs before any BLAS call; a choice already
// made by OPENBLAS_CORETYPE, or CLOTHLAB_BLAS_KERNELS_AS_LOADED=1, is left alone.
void chooseBlasKernels() {
  using Call = void (*)();
  const std::string loaded = blasKernelName();
  auto quit = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (loaded.empty() || !quit || !init) {
    kernelChoice = "not an OpenBLAS that picks its kernels at load time";
    return;
  }
  if (std::getenv("OPENBLAS_CORETYPE")) {
    kernelChoice = loaded + ", set by OPENBLAS_CORETYPE";
    return;
  }
  if (environmentFlagIsOne("CLOTHLAB_BLAS_KERNELS_AS_LOADED")) {
    kernelChoice = loaded + ", as OpenBLAS chose them (CLOTHLAB_BLAS_KERNELS_AS_LOADED=1)";
    return;
  }
  if (blasKernelsHaveAvx2(loaded)) {
    kernelChoice = loaded + ", as OpenBLAS chose them";
    return;
  }
  const std::set<std::string> flags = systemCpuFlags();
  auto has = [&](std::initializer_list<const char*> wanted) {
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](const char* flag) { return flags.count(flag) > 0; });
  };
  const bool avx512 = has({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"});
  if (!avx512 && !has({"avx2", "fma"})) {
    kernelChoice = loaded + ", as OpenBLAS chose them (the CPU has no AVX2 the system supports)";
    return;
  }
  setenv("OPENBLAS_CORETYPE", avx512 ? "SkylakeX" : "Haswell", 1);
  quit();
  init();
  kernelChoice = blasKernelName() + ", set by ClothLab: OpenBLAS chose " + loaded +
                 " where the system supports " + (avx512 ? "AVX-512" : "AVX2");
}
}  // namespace

std::set<std::string> commonCpuFlags(std::istream& cpuinfo) {
  std::set<std::string> common;
  bool first = true;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0 || line.find(':') == std::string::npos) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string word; words >> word;) flags.insert(word);
    if (first) {
      common = std::move(flags);
      first = false;
      continue;
    }
    for (auto it = common.begin(); it != common.end();)
      it = flags.count(*it) ? std::next(it) : common.erase(it);
  }
  return common;
}

std::set<std::string> systemCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  return commonCpuFlags(in);
}

bool blasKernelsHaveAvx2(const std::string& core) {
  static const char* const withAvx2[] = {"Haswell",  "Excavator",  "Zen",
                                         "SkylakeX", "Cooperlake", "SapphireRapids"};
  return std::any_of(std::begin(withAvx2), std::end(withAvx2),
                     [&](const char* name) { return strcasecmp(name, core.c_str()) == 0; });
}

std::string blasKernelName() {
  using GetName = char* (*)();
  auto name = reinterpret_cast<GetName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* core = name ? name() : nullptr;
  return core ? core : "";
}

void configureLinearAlgebra() {
  static std::once_flag once;
  std::call_once(once, [] {
    chooseBlasKernels();
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
      if (const char* env = std::getenv("OPENBLAS_NUM_THREADS"))
        threads = std::max(1, std::atoi(env));
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
  info.kernels = kernelChoice;
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
  return "BLAS: " + info.blas + "; BLAS kernels: " + info.kernels + "; " + info.cholmod +
         "; CHOLMOD OpenMP: " + info.openmp + "; CHOLMOD statistics timers: " + info.timers +
         "; allocator: " + info.allocator;
}

}  // namespace clothlab
