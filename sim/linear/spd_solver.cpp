#include "sim/linear/spd_solver.h"

#include <cholmod.h>

#include <Eigen/SparseCholesky>

#include "sim/linear/runtime.h"

namespace clothlab {
namespace {

// CHOLMOD: supernodal LL' (BLAS-based). If a matrix is not positive definite even after the
// caller's regularization, it falls back to simplicial LDL' which accepts indefinite pivots.
class CholmodSolver final : public SpdSolver {
 public:
  explicit CholmodSolver(bool simplicial = false) : simplicial_(simplicial) {
    configureLinearAlgebra();
    cholmod_start(&common_);
    // CHOLMOD's own choice of ordering: AMD, and METIS as well when AMD's fill-in is high (the
    // one with fewer flops is kept). Only large, wide-stencil matrices get there: the 30 000-row
    // J W J^T of ckv-cylinder-fine (2.6e9 instead of 6.9e9 flops per factorization, for 170 ms
    // more analysis once per pattern); every other system here keeps AMD.
    common_.nmethods = 0;
    common_.postorder = 1;
    common_.supernodal = simplicial ? CHOLMOD_SIMPLICIAL : CHOLMOD_SUPERNODAL;
    common_.final_ll = 1;  // simplicial: keep LL' (the solves are cheaper than with LDL')
    common_.print = 0;
    common_.error_handler = nullptr;
  }
  ~CholmodSolver() override {
    release();
    cholmod_finish(&common_);
  }
  std::string name() const override {
    const std::string ordering =
        factor_ && factor_->ordering == CHOLMOD_METIS ? " (METIS)" : factor_ && factor_->ordering == CHOLMOD_NESDIS ? " (NESDIS)" : "";
    if (ldlFallback_) return "cholmod-simplicial-ldl" + ordering;
    return (simplicial_ ? "cholmod-simplicial" : "cholmod-supernodal") + ordering;
  }

  std::optional<std::string> analyze(const SparseMatrix& upper) override {
    release();
    pattern_ = upper;
    cholmod_sparse view = wrap(pattern_);
    factor_ = cholmod_analyze(&view, &common_);
    if (!factor_ || common_.status < CHOLMOD_OK)
      return "CHOLMOD symbolic analysis failed (status " + std::to_string(common_.status) + ")";
    return std::nullopt;
  }

  Status factorize(const SparseMatrix& upper, std::string* message) override {
    cholmod_sparse view = wrap(upper);
    const auto blas = common_.supernodal == CHOLMOD_SIMPLICIAL ? std::unique_lock<std::mutex>() : lockBlas();
    const int ok = cholmod_factorize(&view, factor_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF) {
      if (message)
        *message = "not positive definite at column " + std::to_string(factor_->minor) + " of " +
                   std::to_string(upper.rows()) + " (" + name() + ")";
      return Status::NotPositiveDefinite;
    }
    if (!ok || common_.status < CHOLMOD_OK) {
      if (message) *message = "CHOLMOD factorization failed (status " + std::to_string(common_.status) + ")";
      return Status::Failed;
    }
    return Status::Ok;
  }

  void solve(Eigen::MatrixXd& rhs) override {
    cholmod_dense b;
    b.nrow = rhs.rows();
    b.ncol = rhs.cols();
    b.nzmax = rhs.size();
    b.d = rhs.rows();
    b.x = rhs.data();
    b.z = nullptr;
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    const auto blas = factor_->is_super ? lockBlas() : std::unique_lock<std::mutex>();
    cholmod_solve2(CHOLMOD_A, factor_, &b, nullptr, &x_, nullptr, &y_, &e_, &common_);
    std::copy_n(static_cast<const double*>(x_->x), rhs.size(), rhs.data());
  }

  bool useIndefiniteFallback() override {
    if (ldlFallback_) return false;
    ldlFallback_ = true;
    common_.supernodal = CHOLMOD_SIMPLICIAL;
    common_.final_ll = 0;
    return !analyze(pattern_).has_value();
  }

 private:
  static cholmod_sparse wrap(const SparseMatrix& m) {
    cholmod_sparse s{};
    s.nrow = m.rows();
    s.ncol = m.cols();
    s.nzmax = m.nonZeros();
    s.p = const_cast<int*>(m.outerIndexPtr());
    s.i = const_cast<int*>(m.innerIndexPtr());
    s.nz = nullptr;
    s.x = const_cast<double*>(m.valuePtr());
    s.z = nullptr;
    s.stype = 1;  // upper triangle stored
    s.itype = CHOLMOD_INT;
    s.xtype = CHOLMOD_REAL;
    s.dtype = CHOLMOD_DOUBLE;
    s.sorted = 1;
    s.packed = 1;
    return s;
  }
  void release() {
    if (factor_) cholmod_free_factor(&factor_, &common_);
    if (x_) cholmod_free_dense(&x_, &common_);
    if (y_) cholmod_free_dense(&y_, &common_);
    if (e_) cholmod_free_dense(&e_, &common_);
  }

  cholmod_common common_{};
  cholmod_factor* factor_ = nullptr;
  cholmod_dense *x_ = nullptr, *y_ = nullptr, *e_ = nullptr;  // solve workspaces, reused
  SparseMatrix pattern_;
  bool simplicial_ = false;
  bool ldlFallback_ = false;
};

class EigenLdltSolver final : public SpdSolver {
 public:
  std::string name() const override { return "eigen-simplicial-ldlt"; }
  std::optional<std::string> analyze(const SparseMatrix& upper) override {
    ldlt_.analyzePattern(upper);
    if (ldlt_.info() != Eigen::Success) return std::string("Eigen SimplicialLDLT analysis failed");
    return std::nullopt;
  }
  Status factorize(const SparseMatrix& upper, std::string* message) override {
    ldlt_.factorize(upper);
    if (ldlt_.info() != Eigen::Success) {
      if (message) *message = "Eigen SimplicialLDLT: zero pivot (matrix singular)";
      return Status::NotPositiveDefinite;
    }
    return Status::Ok;
  }
  void solve(Eigen::MatrixXd& rhs) override { rhs = ldlt_.solve(rhs); }

 private:
  Eigen::SimplicialLDLT<SparseMatrix, Eigen::Upper, Eigen::AMDOrdering<int>> ldlt_;
};

}  // namespace

std::unique_ptr<SpdSolver> makeSpdSolver(const std::string& id) {
  if (id == "cholmod") return std::make_unique<CholmodSolver>();
  if (id == "cholmod-simplicial") return std::make_unique<CholmodSolver>(/*simplicial=*/true);
  if (id == "eigen-ldlt") return std::make_unique<EigenLdltSolver>();
  return nullptr;
}

std::unique_ptr<SpdSolver> makeSolveOftenSpdSolver(int rows) {
  return makeSpdSolver(rows < 15000 ? "cholmod-simplicial" : "cholmod");
}

}  // namespace clothlab
