#pragma once
// Sparse symmetric positive-definite solvers with a fixed pattern: symbolic analysis once,
// numeric factorization every step, solves with several right-hand sides. The matrix is given by
// its upper triangle (Eigen column-major, compressed). CHOLMOD is hidden behind this class.
#include <Eigen/Sparse>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  // ordering[i]), which skips the ordering's search; back ends without one ignore it.
  virtual std::optional<std::string> analyze(const SparseMatrix& upper, const std::vector<int>& ordering) {
    (void)ordering;
    return analyze(upper);
  }
  // The ordering of the last analysis, in analyze's convention (empty where not known).
  virtual std::vector<int> ordering() const { return {}; }
  // Numeric factorization of a matrix with the analysed pattern.
  virtual Status factorize(const SparseMatrix& upper, std::string* message) = 0;
  // Overwrites each column of rhs with the solution.
  virtual void solve(Eigen::MatrixXd& rhs) = 0;
  // Switches to a factorization that tolerates indefinite matrices (LDL'), if this back end has
  // one. Returns false when there is nothing left to try. Re-analysis is done internally.
  virtual bool useIndefiniteFallback() { return false; }
};

// id: "cholmod" (supernodal LL', CHOLMOD's choice of AMD or, for high fill, METIS; simplicial
// LDL' as fallback: for matrices factorized every step), "cholmod-simplicial" (simplicial LL':
// cheaper solves, for matrices factorized once and solved often) or "eigen-ldlt" (Eigen
// SimplicialLDLT, AMD ordering).
// Returns nullptr for an unknown id.
std::unique_ptr<SpdSolver> makeSpdSolver(const std::string& id);

// The back end for a matrix of `rows` rows that is factorized rarely and solved often (implicit
// force systems, B B^T): simplicial LL' solves are cheaper for small systems, supernodal (BLAS)
// ones for large. Measured on the force system: 1.48 vs 1.73 ms at 7k rows, 12.5 vs 11 ms at 30k.
std::unique_ptr<SpdSolver> makeSolveOftenSpdSolver(int rows);

}  // namespace clothlab
