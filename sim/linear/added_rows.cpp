#include "sim/linear/added_rows.h"

#include <Eigen/Cholesky>

namespace clothlab {

AddedRows::AddedRows(SpdSolver& factor, SparseMatrix B, const Eigen::MatrixXd& D, Eigen::VectorXd r)
    : factor_(&factor), B_(std::move(B)), r_(std::move(r)) {
  form_ = factor_->inverseQuadraticForm(B_);
  complement_ = D - form_;
  Eigen::MatrixXd z = r_;
  factor_->solve(z);
  reached_ = B_.transpose() * z.col(0);
}

// With the known impulses A's rows' right-hand side is r - B q', so B^T A^-1 of it is
// reached_ - form_ q': the complement's right-hand side needs no solve with A.
std::optional<Eigen::VectorXd> AddedRows::solveAdded(const std::vector<int>& kept,
                                                     const Eigen::VectorXd& s,
                                                     const Eigen::VectorXd& known) const {
  const Eigen::VectorXd reached = reached_ - form_ * known;
  const int m = static_cast<int>(kept.size());
  Eigen::MatrixXd reduced(m, m);
  Eigen::VectorXd rhs(m);
  for (int b = 0; b < m; ++b) {
    for (int a = 0; a < m; ++a) reduced(a, b) = complement_(kept[a], kept[b]);
    rhs[b] = s[kept[b]] - reached[kept[b]];
  }
  Eigen::VectorXd solved;
  Eigen::LLT<Eigen::MatrixXd> llt(reduced);
  if (llt.info() == Eigen::Success) {
    solved = llt.solve(rhs);
  } else {
    Eigen::LDLT<Eigen::MatrixXd> ldlt(reduced);
    if (ldlt.info() != Eigen::Success) return std::nullopt;
    solved = ldlt.solve(rhs);
  }
  Eigen::VectorXd q = Eigen::VectorXd::Zero(added());
  for (int a = 0; a < m; ++a) q[kept[a]] = solved[a];
  return q;
}

Eigen::VectorXd AddedRows::solveBase(const Eigen::VectorXd& total) const {
  Eigen::MatrixXd p = r_ - B_ * total;
  factor_->solve(p);
  return p.col(0);
}

}  // namespace clothlab
