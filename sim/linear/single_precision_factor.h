#pragma once
// A supernodal Cholesky factor L (P A P' = L L') held in single precision and solved without
// BLAS (SupernodalSolve), for matrices factorized once and solved every step on the second
// thread (the impulse solver's force system), where a solve with CHOLMOD's simplicial factor
// takes 14 to 16 ms on sphere-drop (4.2 million nonzeros in L) and one with its supernodal
// factor would wait for the BLAS lock that the factorization of A holds. Half the bytes per
// entry and no row index per entry: about 8 ms for the same three columns.
//
// Accuracy: L is computed in double precision and rounded, and the solves accumulate in double,
// so a solution carries a relative error of about the condition number times 6e-8. The force
// system (mass plus small damping and bending terms) has a condition number of a few, which
// leaves velocities within about 1e-7 of the double-precision solve; do not use it for nearly
// singular matrices such as the constraint systems.
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "sim/linear/supernodal_solve.h"

namespace clothlab {

class SinglePrecisionFactor {
 public:
  // Copies `layout` (CHOLMOD's supernodal factor) with its values rounded.
  explicit SinglePrecisionFactor(const SupernodalLayout<double>& layout);

  int size() const { return static_cast<int>(firstColumn_.empty() ? 0 : firstColumn_.back()); }

  // Solves L L' x = b in place for every column of `columns` (size() rows, in the permuted
  // order), on this thread only: it runs beside the factorization of another matrix.
  void solve(Eigen::MatrixXd& columns) { solve_->solve(columns, false); }

 private:
  std::vector<int> firstColumn_, rowStart_, rows_, valueStart_;
  std::vector<float> values_;
  std::unique_ptr<SupernodalSolve<float>> solve_;
};

}  // namespace clothlab
