#pragma once
// Sparse symmetric positive-definite solvers with a fixed pattern: symbolic analysis once,
// numeric factorization every step, solves with several right-hand sides. The matrix is given by
// its upper triangle (Eigen column-major, compressed). CHOLMOD is hidden behind this class.
#include <Eigen/Sparse>
#include <memory>
#include <optional>
#include <string>

namespace clothlab {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

class SpdSolver {
 public:
  enum class Status { Ok, NotPositiveDefinite, Failed };
  virtual ~SpdSolver() = default;
  virtual std::string name() const = 0;
  // Symbolic analysis of the pattern (upper triangle). Call again when the pattern changes.
  virtual std::optional<std::string> analyze(const SparseMatrix& upper) = 0;
  // Numeric factorization of a matrix with the analysed pattern.
  virtual Status factorize(const SparseMatrix& upper, std::string* message) = 0;
  // Overwrites each column of rhs with the solution.
  virtual void solve(Eigen::MatrixXd& rhs) = 0;
  // Switches to a factorization that tolerates indefinite matrices (LDL'), if this back end has
  // one. Returns false when there is nothing left to try. Re-analysis is done internally.
  virtual bool useIndefiniteFallback() { return false; }
};

// id: "cholmod" (supernodal LL', AMD ordering; simplicial LDL' as fallback: for matrices
// factorized every step), "cholmod-simplicial" (simplicial LL': cheaper solves, for matrices
// factorized once and solved often) or "eigen-ldlt" (Eigen SimplicialLDLT, AMD ordering).
// Returns nullptr for an unknown id.
std::unique_ptr<SpdSolver> makeSpdSolver(const std::string& id);

}  // namespace clothlab
