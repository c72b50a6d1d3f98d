#pragma once
// The linear-algebra runtime ClothLab runs on, and its configuration (see shared perf notes):
//  - OpenBLAS runs on one thread: the executables load Debian's serial build (third_party/), and
//    a threaded build is set to one thread (CHOLMOD's supernodes here are tiny);
//  - Debian's CHOLMOD opens OpenMP regions inside supernodal factorization that cost ~20 us each
//    on these machines. Executables link sim/linear/omp_inline.cpp, which runs those regions
//    inline on the calling thread. CLOTHLAB_CHOLMOD_OPENMP=1 restores libgomp's behaviour.
//  - Debian's CHOLMOD reads the clock around every BLAS call of a supernodal factorization, for
//    statistics nobody reads; sim/linear/cholmod_timers.cpp skips that (about 12% of the
//    factorization here). CLOTHLAB_CHOLMOD_TIMERS=1 restores it.
//  - glibc's allocator is set to keep freed memory and to serve every block from the heap (a
//    factor allocated again after each new pattern cost page faults: about 20% of an
//    `impulse-nc` step in contact with a mesh obstacle, 25% of `mls-isometry`'s on fine cloth).
//    CLOTHLAB_MALLOC_DEFAULT=1 leaves it.
//  - OpenBLAS's kernels: where it took SSE3's on a CPU whose AVX2 the system supports (a VM that
//    hides OSXSAVE), it is initialized again with the AVX2 or AVX-512 ones.
//    CLOTHLAB_BLAS_KERNELS_AS_LOADED=1 keeps its choice.
// The last four are optional: without them everything stays correct, only slower, and describe()
// says so.
#include <istream>
#include <mutex>
#include <set>
#include <string>

namespace clothlab {

// Idempotent; called by the CHOLMOD solver before first use, and by the executables at start
// (before their threads: it may set OPENBLAS_CORETYPE).
void configureLinearAlgebra();

// The flags every processor in /proc/cpuinfo lists: the CPU's features that the running system
// supports on all of them (Linux lists AVX and AVX-512 only where it saves their registers; the
// simulation's threads may run on any processor). Empty where unread.
std::set<std::string> systemCpuFlags();
// The same from a /proc/cpuinfo text: the flags common to all of its "flags" lines.
std::set<std::string> commonCpuFlags(std::istream& cpuinfo);
// Whether OpenBLAS's kernel set `core` (its own name, as openblas_get_corename gives it) uses AVX2.
bool blasKernelsHaveAvx2(const std::string& core);
// The kernel set the loaded OpenBLAS runs now (openblas_get_corename); empty where the BLAS has no
// such call.
std::string blasKernelName();

struct LinearAlgebraInfo {
  std::string blas;         // e.g. "OpenBLAS 0.3.21 ... (pthread), 1 thread"
  std::string kernels;      // OpenBLAS's kernel set, and who chose it (configureLinearAlgebra)
  std::string cholmod;      // e.g. "CHOLMOD 3.0.14 (SuiteSparse 5.12)"
  std::string openmp;       // how CHOLMOD's OpenMP regions run
  long long inlinedRegions = 0;  // OpenMP regions run inline so far (-1: interposer not linked)
  std::string timers;            // whether CHOLMOD's statistics timers read the clock
  std::string allocator;         // how glibc's allocator is set
};
LinearAlgebraInfo linearAlgebraInfo();
std::string describeLinearAlgebra();  // one line of the above

// Held around BLAS-based work (CHOLMOD's supernodal factorization and solves) when the loaded BLAS
// must not be called from several threads at once: Debian's serial OpenBLAS has no locks, and
// two simulations factorizing at the same time (compare mode) corrupt each other's results.
// An empty (unowning) lock for a thread-safe BLAS.
std::unique_lock<std::mutex> lockBlas();

}  // namespace clothlab
