#pragma once
// A supernodal Cholesky factor L (P A P' = L L') held in single precision and solved without
// BLAS, for matrices factorized once and solved every step on the second thread (the impulse
// solver's force system), where a solve with CHOLMOD's simplicial factor takes 14 to 16 ms on
// sphere-drop (4.2 million nonzeros in L) and one with its supernodal factor would wait for the
// BLAS lock that the factorization of A holds. Half the bytes per entry and no row index per
// entry: about 8 ms for the same three columns (docs/measurements.md, "The force solve in single
// precision").
//
// Accuracy: L is computed in double precision and rounded, and the solves accumulate in double,
// so a solution carries a relative error of about the condition number times 6e-8. The force
// system (mass plus small damping and bending terms) has a condition number of a few, which
// leaves velocities within about 1e-7 of the double-precision solve; do not use it for nearly
// singular matrices such as the constraint systems.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace clothlab {

class SinglePrecisionFactor {
 public:
  // The supernodal layout, as CHOLMOD stores it: supernode s holds columns
  // [firstColumn[s], firstColumn[s + 1]) of L; their rows are rows[rowStart[s] .. rowStart[s + 1])
  // (the supernode's own columns first), and their values a dense column-major block of
  // (rowStart[s + 1] - rowStart[s]) rows from values[valueStart[s]]. Columns are those of the
  // permuted matrix P A P'.
  SinglePrecisionFactor(std::vector<int> firstColumn, std::vector<std::int64_t> rowStart, std::vector<int> rows,
                        std::vector<std::int64_t> valueStart, const double* values);
  SinglePrecisionFactor() = default;

  int size() const { return firstColumn_.empty() ? 0 : firstColumn_.back(); }
  std::int64_t storedValues() const { return static_cast<std::int64_t>(values_.size()); }

  // Solves L L' x = b in place for every column of `columns` (size() rows, in the permuted order).
  void solve(Eigen::MatrixXd& columns);

 private:
  // Three columns at a time (x, y, z of a field); a, b, c point at size() values each.
  void solveThree(double* a, double* b, double* c);

  std::vector<int> firstColumn_;
  std::vector<std::int64_t> rowStart_;
  std::vector<int> rows_;
  std::vector<std::int64_t> valueStart_;
  std::vector<float> values_;
  std::vector<double> gathered_;  // workspace: one supernode's off-diagonal rows, three columns
};

}  // namespace clothlab
