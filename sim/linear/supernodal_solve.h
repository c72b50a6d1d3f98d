#pragma once
// Triangular solves with a supernodal Cholesky factor L (P A P' = L L'), laid out as CHOLMOD
// stores it, without BLAS, on two threads where the elimination tree splits into two halves of
// similar work.
//
// Why: the impulse solver solves with the step's factor of A (sphere-drop: 59 398 rows, 1.19
// million nonzeros in L) several times per step on one thread while the second core waits, and
// CHOLMOD's solve (BLAS calls per supernode) takes 4 to 6 ms. A nested-dissection ordering's
// first separator splits the tree into two independent halves: each half's forward solve runs
// on its own thread, then the separator's, and backwards the other way round
// (docs/measurements.md, "Solves on two threads, and the force solve without BLAS"). Calling no
// BLAS, it also solves the force system's factor on the second thread while the first holds the
// BLAS lock to factorize A.
//
// The arithmetic is the same whether the second thread runs or not (the second half's updates
// to the shared rows are summed apart and added after the first half's), so results never
// depend on whether a core was free.
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <vector>

namespace clothlab {

// Supernode s holds columns [firstColumn[s], firstColumn[s + 1]) of L; their rows are
// rows[rowStart[s] .. rowStart[s + 1]) (the supernode's own columns first), and their values a
// dense column-major block of rowStart[s + 1] - rowStart[s] rows from values[valueStart[s]].
// Supernodes are numbered in a postorder of the elimination tree (CHOLMOD's, analysed after a
// postordered fill-reducing ordering); the split falls back to one thread otherwise.
struct SupernodalLayout {
  int supernodes = 0;
  const int* firstColumn = nullptr;
  const int* rowStart = nullptr;
  const int* rows = nullptr;
  const int* valueStart = nullptr;
  const double* values = nullptr;
  int size() const { return supernodes > 0 ? firstColumn[supernodes] : 0; }
};

class SupernodalSolve {
 public:
  // Plans the split for `layout`'s structure; the layout's arrays must outlive this object (and
  // may be refilled with new values of the same structure: call setValues if they moved).
  explicit SupernodalSolve(const SupernodalLayout& layout);
  void setValues(const double* values) { layout_.values = values; }

  // Solves L L' x = b in place for every column of `columns` (size() rows, permuted order), on a
  // second thread as well where `secondThread` and the split has one.
  void solve(Eigen::MatrixXd& columns, bool secondThread);

  bool splits() const { return secondBegin_ < secondEnd_; }
  int size() const { return layout_.size(); }

 private:
  template <int W>
  void solveColumns(double* const* x, bool secondThread);

  SupernodalLayout layout_;
  // Supernodes [secondBegin_, secondEnd_) are a subtree the second thread takes; the others
  // before top_ the first thread; [top_, supernodes) come after both (forward) or before them
  // (backward). Their first column: the first row that both halves update.
  int secondBegin_ = 0, secondEnd_ = 0, top_ = 0, sharedFrom_ = 0;
  std::vector<double> firstGathered_, secondGathered_, shared_;  // workspaces
};

// B^T A^-1 B for A = P' L L' P, L the supernodal factor `layout` (row i of P A P' is row perm[i]
// of A), and B sparse in A's rows, each column with few entries: with Y = L^-1 P B it is Y^T Y.
// Column c of Y is nonzero only in the supernodes on the elimination tree's paths from its
// entries to the root, so each supernode solves and updates only the columns that reach it,
// and adds its own rows' share of Y^T Y: a small part of a solve per column where a solve of
// each column would go through all of L (the contact rows' Schur complement in impulse-nc's
// velocity pass: docs/measurements.md, "The features' contacts on the step's factor").
Eigen::MatrixXd supernodalInverseQuadraticForm(
    const SupernodalLayout& layout, const std::vector<int>& perm,
    const Eigen::SparseMatrix<double, Eigen::ColMajor, int>& B);

}  // namespace clothlab
