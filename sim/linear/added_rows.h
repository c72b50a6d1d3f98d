#pragma once
// A factorized SPD system A with rows added beside it (a few hundred), solved through the added
// rows' dense Schur complement on A's own factor, so that an active set can take added rows out
// round after round without factorizing A again. The system, over the added rows kept:
//   [ A    B ] [p]   [r - B q']
//   [ B^T  D ] [q] = [s       ]
// where q' holds known impulses along added rows that are not kept (moved to the right-hand
// side), and a row not kept has q = 0 and no coupling to the others. B (A's rows by the added
// ones) is sparse with few entries per column (SpdSolver::inverseQuadraticForm).
#include <Eigen/Core>
#include <optional>
#include <vector>

#include "sim/linear/spd_solver.h"

namespace clothlab {

class AddedRows {
 public:
  // `factor` holds A's factorization and must outlive this object unchanged; D is the added
  // rows' own block (with whatever diagonal shift they take); r A's rows' right-hand side.
  // Costs B^T A^-1 B and one solve with A.
  AddedRows(SpdSolver& factor, SparseMatrix B, const Eigen::MatrixXd& D, Eigen::VectorXd r);

  int added() const { return static_cast<int>(B_.cols()); }

  // q (zero at the rows not in `kept`) for the added rows' right-hand side s and the known
  // impulses q' (zero at the kept rows): one dense factorization of the complement over `kept`,
  // no solve with A. Empty where the complement could not be factorized.
  std::optional<Eigen::VectorXd> solveAdded(const std::vector<int>& kept, const Eigen::VectorXd& s,
                                            const Eigen::VectorXd& known) const;
  // p for q + q' (`total`): A p = r - B total. One solve with A.
  Eigen::VectorXd solveBase(const Eigen::VectorXd& total) const;

 private:
  SpdSolver* factor_;
  SparseMatrix B_;
  Eigen::VectorXd r_;
  Eigen::MatrixXd form_;        // B^T A^-1 B
  Eigen::MatrixXd complement_;  // D - B^T A^-1 B
  Eigen::VectorXd reached_;     // B^T A^-1 r
};

}  // namespace clothlab
