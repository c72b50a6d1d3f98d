#pragma once
// Sparse symmetric positive-definite solvers with a fixed pattern: symbolic analysis once,
// numeric factorization every step, solves with several right-hand sides. The matrix is given by
// its upper triangle (Eigen column-major, compressed). CHOLMOD is hidden behind this class.
#include <Eigen/Sparse>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/result.h"

namespace clothlab {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

class SpdSolver {
 public:
  enum class Status { Ok, NotPositiveDefinite, Failed };
  virtual ~SpdSolver() = default;
  virtual std::string name() const = 0;
  // Symbolic analysis of the pattern (upper triangle). Call again when the pattern changes.
  virtual std::optional<std::string> analyze(const SparseMatrix& upper) = 0;
  // The same with a fill-reducing ordering given (row i of the permuted matrix is row
  // ordering[i]), which skips the ordering's search; back ends without one ignore it. `method`
  // names the search it came from, for orderingMethod() and name().
  virtual std::optional<std::string> analyze(const SparseMatrix& upper, const std::vector<int>& ordering,
                                             const std::string& method) {
    (void)ordering;
    (void)method;
    return analyze(upper);
  }
  std::optional<std::string> analyze(const SparseMatrix& upper, const std::vector<int>& ordering) {
    return analyze(upper, ordering, "");
  }
  // Whether analyze takes a given ordering (false: the back end orders by itself, so callers
  // need not search for one).
  virtual bool takesOrdering() const { return false; }
  // The ordering of the last analysis, in analyze's convention (empty where not known), and the
  // search that found it ("AMD", "METIS", "NESDIS"; for a given one, the name it came with).
  virtual std::vector<int> ordering() const { return {}; }
  virtual std::string orderingMethod() const { return {}; }
  // Whether `upper` has the pattern of the last analysis, so that factorize takes it without a
  // new analyze (false where the back end cannot tell).
  virtual bool analysedFor(const SparseMatrix& upper) const {
    (void)upper;
    return false;
  }
  // Floating-point operations of one factorization of the last analysed pattern, in its
  // ordering (0 where the back end cannot tell): what orderings are compared by.
  virtual double factorFlops() const { return 0; }
  // Numeric factorization of a matrix with the analysed pattern.
  virtual Status factorize(const SparseMatrix& upper, std::string* message) = 0;
  // Overwrites each column of rhs with the solution.
  virtual void solve(Eigen::MatrixXd& rhs) = 0;
  // B^T A^-1 B (B.cols() square) for a sparse B whose columns have few entries; here by solves
  // of B's columns, a block at a time; a supernodal factor follows each column only where it
  // reaches (supernodalInverseQuadraticForm).
  virtual Eigen::MatrixXd inverseQuadraticForm(const SparseMatrix& B);
  // Switches to a factorization that tolerates indefinite matrices (LDL'), if this back end has
  // one. Returns false when there is nothing left to try. Re-analysis is done internally.
  virtual bool useIndefiniteFallback() { return false; }
};

// The "cholmod" back end's search for a fill-reducing ordering: AMD, METIS as well where AMD's
// fill is high, and from this many rows on AMD against nested dissection (NESDIS), keeping the
// one with fewer nonzeros in L. On sphere-drop's A (59 398 rows) that is NESDIS: 1.19 instead of
// 1.50 million nonzeros in L, 0.84e8 instead of 1.58e8 flops per factorization, for 230 instead
// of 16 ms of analysis; on tablecloth's (14 604 rows) it would save 4% of the nonzeros and no
// time (docs/measurements.md, "Nested dissection for the largest systems").
constexpr int kNestedDissectionRows = 40000;

// From this many rows the "cholmod" back end solves with its supernodal factor itself
// (SupernodalSolve), on two threads where the elimination tree splits and a core is free.
constexpr int kTwoThreadSolveRows = 20000;

// AMD's ordering of the upper triangle `upper` (in analyze's convention), without the symbolic
// analysis a search does to compare orderings: for systems analysed once and factorized once,
// where that analysis would cost more than the factorization (empty if AMD failed).
std::vector<int> amdOrdering(const SparseMatrix& upper);

// An ordering (in analyze's convention) of all rows of `upper` that keeps `base`, an ordering of
// its first base.size() rows, and eliminates each later row right after the last of the base rows
// it is coupled to (later rows coupled to no base row go first; ties keep row order). Rows added
// to a system (pins, a grab, contacts, edge limits) then need no new search, and, unlike rows put
// last, they do not fill in a dense block among themselves (every later row is coupled to all
// the others through the base rows eliminated before it).
std::vector<int> orderingWithRowsAfterNeighbours(const SparseMatrix& upper, const std::vector<int>& base);

// An ordering of `upper` (in analyze's convention) and the search it came from.
struct NamedOrdering {
  std::vector<int> ordering;
  std::string method;
};
// Analyses `upper` in each of `candidates` (skipping empty ones) and leaves `solver` analysed in
// the one whose factorization takes the fewest flops (the first of equals; the first, for a back
// end that cannot tell: factorFlops() 0). Returns its index. Fails with the analysis' message,
// or where no candidate has an ordering.
Result<size_t> analyzeFewestFlops(SpdSolver& solver, const SparseMatrix& upper,
                                  const std::vector<NamedOrdering>& candidates);

// id: "cholmod" (supernodal LL', ordered as kNestedDissectionRows says; simplicial
// LDL' as fallback: for matrices factorized every step), "cholmod-simplicial" (simplicial LL':
// cheaper solves, for matrices factorized once and solved often), "cholmod-blas-free-solves"
// ("cholmod" factorizations, solved by SupernodalSolve on the calling thread: for matrices
// factorized once and solved often beside BLAS work on another thread) or "eigen-ldlt" (Eigen
// SimplicialLDLT, AMD ordering).
// Returns nullptr for an unknown id.
std::unique_ptr<SpdSolver> makeSpdSolver(const std::string& id);

// The id to give makeSpdSolver for `id`, which may also be "auto": for a system of `rows` rows
// factorized every step, "eigen-ldlt" below kEigenLdltRows rows and "cholmod" from there on
// (any other id as it is). On small systems the supernodal factorization's many small BLAS
// calls cost more than they save:
// impulse-nc's step took 0.61 to 0.66 of CHOLMOD's time with Eigen's on `hanging` (3198 rows),
// 0.75 to 0.86 on a 1600-triangle tablecloth (5065 rows), 0.75 to 1.16 at 7518 rows and 1.14 on
// `tablecloth` (14 604 rows) (`clothlab-cli bench`; docs/measurements.md, stop 120).
constexpr int kEigenLdltRows = 6000;
std::string spdSolverId(const std::string& id, int rows);

// The back end for a matrix of `rows` rows that is factorized rarely and solved often (the
// implicit bending of mls-isometry and xpbd): simplicial LL' solves are cheaper for small
// systems, supernodal (BLAS) ones for large. Measured on the impulse solver's force system (which
// now takes "cholmod-blas-free-solves"): 1.48 vs 1.73 ms at 7k rows, 12.5 vs 11 ms at 30k.
// `blasFreeSolves`: the large ones' solves call no BLAS ("cholmod-blas-free-solves"), so that they
// run beside a factorization holding the BLAS lock (impulse-nc's surface bending).
std::unique_ptr<SpdSolver> makeSolveOftenSpdSolver(int rows, bool blasFreeSolves = false);

}  // namespace clothlab
