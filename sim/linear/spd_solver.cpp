#include "sim/linear/spd_solver.h"

#include <cholmod.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <Eigen/SparseCholesky>

#include "sim/linear/runtime.h"
#include "sim/linear/supernodal_solve.h"
#include "sim/steps_in_progress.h"

namespace clothlab {
namespace {

cholmod_sparse wrapSparse(Eigen::Index n, const int* starts, const int* rows, double* values, Eigen::Index nonZeros,
                          int stype) {
  cholmod_sparse s{};
  s.nrow = n;
  s.ncol = n;
  s.nzmax = nonZeros;
  s.p = const_cast<int*>(starts);
  s.i = const_cast<int*>(rows);
  s.nz = nullptr;
  s.x = values;
  s.z = nullptr;
  s.stype = stype;  // 1: upper triangle stored, -1: lower
  s.itype = CHOLMOD_INT;
  s.xtype = CHOLMOD_REAL;
  s.dtype = CHOLMOD_DOUBLE;
  s.sorted = 1;
  s.packed = 1;
  return s;
}

// CHOLMOD's ordering search for the upper triangle `pattern` (see kNestedDissectionRows), with
// the settings in `common`. Returns the analysis (its Perm is the ordering), or nullptr.
cholmod_factor* searchOrdering(const SparseMatrix& pattern, cholmod_common& common) {
  if (pattern.rows() >= kNestedDissectionRows) {
    common.nmethods = 2;
    common.method[0].ordering = CHOLMOD_AMD;
    common.method[1].ordering = CHOLMOD_NESDIS;
  } else {
    common.nmethods = 0;
  }
  common.postorder = 1;
  cholmod_sparse view = wrapSparse(pattern.rows(), pattern.outerIndexPtr(), pattern.innerIndexPtr(),
                                   const_cast<double*>(pattern.valuePtr()), pattern.nonZeros(), 1);
  cholmod_factor* ordered = cholmod_analyze(&view, &common);
  if (ordered && common.status < CHOLMOD_OK) cholmod_free_factor(&ordered, &common);
  return ordered;
}

// CHOLMOD: supernodal LL' (BLAS-based). If a matrix is not positive definite even after the
// caller's regularization, it falls back to simplicial LDL' which accepts indefinite pivots.
// Supernodal factors of kTwoThreadSolveRows rows and more are solved by a SupernodalSolve on
// CHOLMOD's arrays, on two threads where the elimination tree splits; with blasFreeSolves every
// supernodal factor is, on the calling thread only (for solves beside BLAS work on another one).
class CholmodSolver final : public SpdSolver {
 public:
  explicit CholmodSolver(bool simplicial = false, bool blasFreeSolves = false)
      : simplicial_(simplicial), blasFreeSolves_(blasFreeSolves && !simplicial) {
    configureLinearAlgebra();
    cholmod_start(&common_);
    common_.supernodal = simplicial ? CHOLMOD_SIMPLICIAL : CHOLMOD_SUPERNODAL;
    common_.final_ll = 1;  // simplicial: keep LL' (the solves are cheaper than with LDL')
    common_.print = 0;
    common_.error_handler = nullptr;
  }
  ~CholmodSolver() override {
    release();
    cholmod_finish(&common_);
  }
  using SpdSolver::analyze;
  std::string name() const override {
    const std::string ordering = method_ == "METIS" || method_ == "NESDIS" ? " (" + method_ + ")" : "";
    if (ldlFallback_) return "cholmod-simplicial-ldl" + ordering;
    if (blasFreeSolves_) return "cholmod-supernodal" + ordering + ", solves without BLAS";
    if (ownSolve_ && ownSolve_->splits()) return "cholmod-supernodal" + ordering + ", solves on two threads";
    return (simplicial_ ? "cholmod-simplicial" : "cholmod-supernodal") + ordering;
  }

  // Two analyses. The first is CHOLMOD's choice of ordering (searchOrdering): AMD, METIS as well
  // when AMD's fill-in is high (only large, wide-stencil matrices get there: the 30 000-row
  // J W J^T of ckv-cylinder-fine, 2.6e9 instead of 6.9e9 flops per factorization), and nested
  // dissection for the largest (sphere-drop's A). The matrix is then stored in that order,
  // in the triangle each factorization reads directly (lower for supernodal, upper for
  // simplicial), and analysed in its natural order: a factorization then copies the values
  // through a fixed map instead of CHOLMOD permuting and transposing the matrix every time.
  std::optional<std::string> analyze(const SparseMatrix& upper) override {
    release();
    pattern_ = upper;
    pattern_.makeCompressed();
    cholmod_factor* ordered = searchOrdering(pattern_, common_);
    if (!ordered) return "CHOLMOD symbolic analysis failed (status " + std::to_string(common_.status) + ")";
    method_ = ordered->ordering == CHOLMOD_METIS    ? "METIS"
              : ordered->ordering == CHOLMOD_NESDIS ? "NESDIS"
              : ordered->ordering == CHOLMOD_AMD    ? "AMD"
                                                    : "CHOLMOD " + std::to_string(ordered->ordering);
    const int n = static_cast<int>(upper.rows());
    const int* perm = static_cast<const int*>(ordered->Perm);
    perm_.assign(perm, perm + n);
    cholmod_free_factor(&ordered, &common_);
    return analyzePermuted();
  }

  std::optional<std::string> analyze(const SparseMatrix& upper, const std::vector<int>& ordering,
                                     const std::string& method) override {
    if (ordering.size() != static_cast<size_t>(upper.rows())) return analyze(upper);
    release();
    pattern_ = upper;
    pattern_.makeCompressed();
    method_ = method;
    perm_ = ordering;
    return analyzePermuted();
  }

  bool takesOrdering() const override { return true; }
  std::vector<int> ordering() const override { return perm_; }
  std::string orderingMethod() const override { return method_; }
  double factorFlops() const override { return flops_; }

  bool analysedFor(const SparseMatrix& upper) const override {
    const Eigen::Index n = pattern_.rows(), nnz = pattern_.nonZeros();
    return factor_ && upper.rows() == n && upper.nonZeros() == nnz && upper.isCompressed() &&
           std::equal(upper.outerIndexPtr(), upper.outerIndexPtr() + n + 1,
                      pattern_.outerIndexPtr()) &&
           std::equal(upper.innerIndexPtr(), upper.innerIndexPtr() + nnz, pattern_.innerIndexPtr());
  }

  Status factorize(const SparseMatrix& upper, std::string* message) override {
    if (!analysedFor(upper)) {
      if (message) *message = "matrix pattern differs from the analysed one (" + name() + ")";
      return Status::Failed;
    }
    const double* values = upper.valuePtr();
    for (size_t p = 0; p < slot_.size(); ++p) permutedValues_[slot_[p]] = values[p];
    cholmod_sparse view = permutedView();
    const auto blas = common_.supernodal == CHOLMOD_SIMPLICIAL ? std::unique_lock<std::mutex>() : lockBlas();
    const int ok = cholmod_factorize(&view, factor_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF) {
      ownSolve_.reset();  // its values were overwritten
      if (message)
        *message = "not positive definite at column " + std::to_string(factor_->minor) + " of " +
                   std::to_string(upper.rows()) + " (" + name() + ")";
      return Status::NotPositiveDefinite;
    }
    if (!ok || common_.status < CHOLMOD_OK) {
      ownSolve_.reset();
      if (message) *message = "CHOLMOD factorization failed (status " + std::to_string(common_.status) + ")";
      return Status::Failed;
    }
    // An own solve that exists was planned for this factor's structure: every analysis (release)
    // and every failed factorization drops it. Only the values may have moved.
    if (factor_->is_super && (blasFreeSolves_ || static_cast<int>(perm_.size()) >= kTwoThreadSolveRows)) {
      if (ownSolve_) ownSolve_->setValues(static_cast<const double*>(factor_->x));
      else ownSolve_ = std::make_unique<SupernodalSolve>(layout());
    }
    return Status::Ok;
  }

  void solve(Eigen::MatrixXd& rhs) override {
    const int n = static_cast<int>(perm_.size());
    permutedRhs_.resize(n, rhs.cols());
    for (int c = 0; c < rhs.cols(); ++c)
      for (int i = 0; i < n; ++i) permutedRhs_(i, c) = rhs(perm_[i], c);
    const double* x = permutedRhs_.data();  // the solution, column-major, n rows
    if (ownSolve_ && (blasFreeSolves_ || ownSolve_->splits())) {
      ownSolve_->solve(permutedRhs_, !blasFreeSolves_ && StepInProgress::threadToSpare());
    } else {
      cholmod_dense b;
      b.nrow = permutedRhs_.rows();
      b.ncol = permutedRhs_.cols();
      b.nzmax = permutedRhs_.size();
      b.d = permutedRhs_.rows();
      b.x = permutedRhs_.data();
      b.z = nullptr;
      b.xtype = CHOLMOD_REAL;
      b.dtype = CHOLMOD_DOUBLE;
      const auto blas = factor_->is_super ? lockBlas() : std::unique_lock<std::mutex>();
      cholmod_solve2(CHOLMOD_A, factor_, &b, nullptr, &x_, nullptr, &y_, &e_, &common_);
      x = static_cast<const double*>(x_->x);
    }
    for (int c = 0; c < rhs.cols(); ++c)
      for (int i = 0; i < n; ++i) rhs(perm_[i], c) = x[c * n + i];
  }

  Eigen::MatrixXd inverseQuadraticForm(const SparseMatrix& B) override {
    if (factor_ && factor_->is_super) return supernodalInverseQuadraticForm(layout(), perm_, B);
    return SpdSolver::inverseQuadraticForm(B);
  }

  bool useIndefiniteFallback() override {
    if (ldlFallback_) return false;
    ldlFallback_ = true;
    blasFreeSolves_ = false;
    ownSolve_.reset();
    common_.supernodal = CHOLMOD_SIMPLICIAL;
    common_.final_ll = 0;
    return !analyze(pattern_).has_value();
  }

 private:
  // factor_'s supernodes (CHOLMOD_INT indices).
  SupernodalLayout layout() const {
    SupernodalLayout l;
    l.supernodes = static_cast<int>(factor_->nsuper);
    l.firstColumn = static_cast<const int*>(factor_->super);
    l.rowStart = static_cast<const int*>(factor_->pi);
    l.rows = static_cast<const int*>(factor_->s);
    l.valueStart = static_cast<const int*>(factor_->px);
    l.values = static_cast<const double*>(factor_->x);
    return l;
  }

  // The symbolic factorization of P A P' (pattern_ holds A, perm_ P), analysed in its natural order.
  std::optional<std::string> analyzePermuted() {
    permute(pattern_);
    common_.nmethods = 1;
    common_.method[0].ordering = CHOLMOD_NATURAL;
    common_.postorder = 0;
    cholmod_sparse permuted = permutedView();
    factor_ = cholmod_analyze(&permuted, &common_);
    if (!factor_ || common_.status < CHOLMOD_OK)
      return "CHOLMOD symbolic analysis failed (status " + std::to_string(common_.status) + ")";
    flops_ = common_.fl;
    const int* identity = static_cast<const int*>(factor_->Perm);
    for (int i = 0; i < static_cast<int>(perm_.size()); ++i)
      if (identity[i] != i) return "CHOLMOD symbolic analysis: the natural ordering was permuted";
    return std::nullopt;
  }

  int permutedStype() const { return common_.supernodal == CHOLMOD_SIMPLICIAL ? 1 : -1; }
  cholmod_sparse permutedView() {
    return wrapSparse(static_cast<Eigen::Index>(perm_.size()), permutedStarts_.data(), permutedRows_.data(),
                      permutedValues_.data(), static_cast<Eigen::Index>(permutedValues_.size()), permutedStype());
  }
  // The pattern of P A P' in the triangle permutedStype() names, columns sorted, and for each
  // stored entry of `upper` the position of its value there. Entries are bucketed by column
  // (linear time), then each short column is sorted by row.
  void permute(const SparseMatrix& upper) {
    const int n = static_cast<int>(upper.rows());
    std::vector<int> inverse(n);
    for (int i = 0; i < n; ++i) inverse[perm_[i]] = i;
    const bool lower = permutedStype() < 0;
    const int* starts = upper.outerIndexPtr();
    const int* rows = upper.innerIndexPtr();
    auto place = [&](int j, int p) {  // (column, row) of entry p of column j in the permuted triangle
      const int a = inverse[rows[p]], b = inverse[j];
      return lower ? std::make_pair(std::min(a, b), std::max(a, b)) : std::make_pair(std::max(a, b), std::min(a, b));
    };
    permutedStarts_.assign(n + 1, 0);
    for (int j = 0; j < n; ++j)
      for (int p = starts[j]; p < starts[j + 1]; ++p) ++permutedStarts_[place(j, p).first + 1];
    for (int j = 0; j < n; ++j) permutedStarts_[j + 1] += permutedStarts_[j];
    const size_t nonZeros = static_cast<size_t>(upper.nonZeros());
    std::vector<std::pair<int, int>> bucket(nonZeros);  // (row, source entry), grouped by column
    std::vector<int> next(permutedStarts_.begin(), permutedStarts_.end() - 1);
    for (int j = 0; j < n; ++j)
      for (int p = starts[j]; p < starts[j + 1]; ++p) {
        const auto [column, row] = place(j, p);
        bucket[next[column]++] = {row, p};
      }
    permutedRows_.resize(nonZeros);
    permutedValues_.assign(nonZeros, 0.0);
    slot_.resize(nonZeros);
    for (int j = 0; j < n; ++j) {
      std::sort(bucket.begin() + permutedStarts_[j], bucket.begin() + permutedStarts_[j + 1]);
      for (int k = permutedStarts_[j]; k < permutedStarts_[j + 1]; ++k) {
        permutedRows_[k] = bucket[k].first;
        slot_[bucket[k].second] = k;
      }
    }
  }
  void release() {
    ownSolve_.reset();
    if (factor_) cholmod_free_factor(&factor_, &common_);
    if (x_) cholmod_free_dense(&x_, &common_);
    if (y_) cholmod_free_dense(&y_, &common_);
    if (e_) cholmod_free_dense(&e_, &common_);
  }

  cholmod_common common_{};
  cholmod_factor* factor_ = nullptr;
  cholmod_dense *x_ = nullptr, *y_ = nullptr, *e_ = nullptr;  // solve workspaces, reused
  SparseMatrix pattern_;
  std::string method_;  // orderingMethod()
  double flops_ = 0;    // factorFlops(), of the last analysis
  std::vector<int> perm_;  // row i of the permuted matrix is row perm_[i] of the given one
  std::vector<int> permutedStarts_, permutedRows_, slot_;
  std::vector<double> permutedValues_;
  Eigen::MatrixXd permutedRhs_;
  bool simplicial_ = false;
  bool blasFreeSolves_ = false;
  bool ldlFallback_ = false;
  std::unique_ptr<SupernodalSolve> ownSolve_;  // after a supernodal factorization (see the class comment)
};

class EigenLdltSolver final : public SpdSolver {
 public:
  using SpdSolver::analyze;
  std::string name() const override { return "eigen-simplicial-ldlt"; }
  std::optional<std::string> analyze(const SparseMatrix& upper) override {
    ldlt_.analyzePattern(upper);
    if (ldlt_.info() != Eigen::Success) return std::string("Eigen SimplicialLDLT analysis failed");
    return std::nullopt;
  }
  // Like CHOLMOD's LL', a pivot that is not positive fails, so that the callers shift the
  // diagonal as they do for CHOLMOD: without pivoting, LDL' would go on through a matrix that
  // rounding made indefinite. (Not met in `hanging`, `corners-fine`, `fold-drop`, `torus-drape`,
  // `corners-coarse` or a yanked grab: their shifted matrices stay positive definite.)
  // useIndefiniteFallback accepts such pivots, as CHOLMOD's LDL' does.
  Status factorize(const SparseMatrix& upper, std::string* message) override {
    ldlt_.factorize(upper);
    if (ldlt_.info() != Eigen::Success) {
      if (message) *message = "Eigen SimplicialLDLT: zero pivot (matrix singular)";
      return Status::NotPositiveDefinite;
    }
    if (!indefinite_ && !(ldlt_.vectorD().array() > 0).all()) {
      if (message)
        *message = "Eigen SimplicialLDLT: a pivot is not positive (matrix not positive definite)";
      return Status::NotPositiveDefinite;
    }
    return Status::Ok;
  }
  void solve(Eigen::MatrixXd& rhs) override { rhs = ldlt_.solve(rhs); }
  bool useIndefiniteFallback() override { return !std::exchange(indefinite_, true); }

 private:
  Eigen::SimplicialLDLT<SparseMatrix, Eigen::Upper, Eigen::AMDOrdering<int>> ldlt_;
  bool indefinite_ = false;
};

}  // namespace

std::vector<int> amdOrdering(const SparseMatrix& upper) {
  const int rows = static_cast<int>(upper.rows());
  std::vector<int> ordering(rows);
  cholmod_common common;
  cholmod_start(&common);
  common.print = 0;
  common.error_handler = nullptr;
  cholmod_sparse view = wrapSparse(rows, upper.outerIndexPtr(), upper.innerIndexPtr(),
                                   const_cast<double*>(upper.valuePtr()), upper.nonZeros(), 1);
  const bool ok = cholmod_amd(&view, nullptr, 0, ordering.data(), &common) && common.status >= CHOLMOD_OK;
  cholmod_finish(&common);
  if (!ok) return {};
  return ordering;
}

std::vector<int> orderingWithRowsAfterNeighbours(const SparseMatrix& upper, const std::vector<int>& base) {
  const int baseRows = static_cast<int>(base.size());
  const int rows = static_cast<int>(upper.rows());
  std::vector<int> position(baseRows);
  for (int p = 0; p < baseRows; ++p) position[base[p]] = p;
  // Each later row keyed by the position of its last base neighbour (-1: none); only these are
  // sorted, and then merged into the base ordering, which stays as it is.
  std::vector<std::pair<int, int>> later;
  later.reserve(rows - baseRows);
  for (int row = baseRows; row < rows; ++row) {  // column `row` of the upper triangle: its rows above
    int last = -1;
    for (SparseMatrix::InnerIterator it(upper, row); it; ++it)
      if (it.row() < baseRows) last = std::max(last, position[it.row()]);
    later.emplace_back(last, row);
  }
  std::stable_sort(later.begin(), later.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> ordering;
  ordering.reserve(rows);
  auto next = later.begin();
  for (; next != later.end() && next->first < 0; ++next) ordering.push_back(next->second);
  for (int p = 0; p < baseRows; ++p) {
    ordering.push_back(base[p]);
    for (; next != later.end() && next->first == p; ++next) ordering.push_back(next->second);
  }
  return ordering;
}

Eigen::MatrixXd SpdSolver::inverseQuadraticForm(const SparseMatrix& B) {
  constexpr Eigen::Index kColumnsPerSolve = 64;  // bounds the dense block of A^-1 B held at once
  const Eigen::Index k = B.cols();
  Eigen::MatrixXd form(k, k), block;
  for (Eigen::Index first = 0; first < k; first += kColumnsPerSolve) {
    const Eigen::Index width = std::min(kColumnsPerSolve, k - first);
    block = Eigen::MatrixXd(B.middleCols(first, width));
    solve(block);
    form.middleCols(first, width).noalias() = B.transpose() * block;
  }
  form.triangularView<Eigen::StrictlyUpper>() = form.transpose();  // symmetric to the bit
  return form;
}

Result<size_t> analyzeFewestFlops(SpdSolver& solver, const SparseMatrix& upper,
                                  const std::vector<NamedOrdering>& candidates) {
  std::optional<size_t> best, analysed;
  double bestFlops = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (candidates[c].ordering.empty()) continue;
    if (auto e = solver.analyze(upper, candidates[c].ordering, candidates[c].method))
      return Error{*e};
    analysed = c;
    const double flops = solver.factorFlops();
    if (!best || flops < bestFlops) {
      best = c;
      bestFlops = flops;
    }
    if (flops <= 0) break;  // the back end cannot tell
  }
  if (!best) return Error{"no ordering to analyse"};
  if (*best != *analysed)
    if (auto e = solver.analyze(upper, candidates[*best].ordering, candidates[*best].method))
      return Error{*e};
  return *best;
}

std::unique_ptr<SpdSolver> makeSpdSolver(const std::string& id) {
  if (id == "cholmod") return std::make_unique<CholmodSolver>();
  if (id == "cholmod-simplicial") return std::make_unique<CholmodSolver>(/*simplicial=*/true);
  if (id == "cholmod-blas-free-solves")
    return std::make_unique<CholmodSolver>(/*simplicial=*/false, /*blasFreeSolves=*/true);
  if (id == "eigen-ldlt") return std::make_unique<EigenLdltSolver>();
  return nullptr;
}

std::string spdSolverId(const std::string& id, int rows) {
  if (id != "auto") return id;
  return rows < kEigenLdltRows ? "eigen-ldlt" : "cholmod";
}

std::unique_ptr<SpdSolver> makeSolveOftenSpdSolver(int rows, bool blasFreeSolves) {
  if (rows < 15000) return makeSpdSolver("cholmod-simplicial");
  return makeSpdSolver(blasFreeSolves ? "cholmod-blas-free-solves" : "cholmod");
}

}  // namespace clothlab
