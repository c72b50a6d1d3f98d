#include "sim/linear/supernodal_solve.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cstring>

#include "sim/alongside.h"

namespace clothlab {
namespace {

// Two doubles in one SSE register (GCC and Clang vector extension): the dot products of the
// backward solve are sums, which the compiler may not reorder into vector lanes on its own.
typedef double Pair __attribute__((vector_size(16)));

Pair loadPair(const double* p) {
  Pair v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Forward substitution L y = x over supernodes [begin, end), W columns x[0..W). The diagonal
// block by columns; the rows below it are updated through `gathered` (W times the tallest
// block's rows below), two columns of the block at a time. Updates to rows from `sharedFrom` on
// go to shared[k][row - sharedFrom] instead, where `shared` is given.
template <int W>
void forward(const SupernodalLayout& L, int begin, int end, double* const* x, double* gathered,
             int sharedFrom, double* const* shared) {
  for (int s = begin; s < end; ++s) {
    const int k = L.firstColumn[s], width = L.firstColumn[s + 1] - k;
    const int height = L.rowStart[s + 1] - L.rowStart[s], below = height - width;
    const double* block = L.values + L.valueStart[s];
    for (int j = 0; j < width; ++j) {
      const double* column = block + static_cast<std::ptrdiff_t>(j) * height;
      const double inverse = 1.0 / column[j];
      double y[W];
      for (int c = 0; c < W; ++c) y[c] = (x[c][k + j] *= inverse);
      for (int i = j + 1; i < width; ++i) {
        const double l = column[i];
        for (int c = 0; c < W; ++c) x[c][k + i] -= l * y[c];
      }
    }
    if (below == 0) continue;
    double* __restrict u[W];
    for (int c = 0; c < W; ++c) u[c] = gathered + c * below;
    std::fill(gathered, gathered + W * below, 0.0);
    int j = 0;
    for (; j + 1 < width; j += 2) {
      const double* first = block + static_cast<std::ptrdiff_t>(j) * height + width;
      const double* second = first + height;
      double y[W], z[W];
      for (int c = 0; c < W; ++c) {
        y[c] = x[c][k + j];
        z[c] = x[c][k + j + 1];
      }
      for (int i = 0; i < below; ++i) {
        const double l = first[i], m = second[i];
        for (int c = 0; c < W; ++c) u[c][i] += l * y[c] + m * z[c];
      }
    }
    for (; j < width; ++j) {
      const double* column = block + static_cast<std::ptrdiff_t>(j) * height + width;
      double y[W];
      for (int c = 0; c < W; ++c) y[c] = x[c][k + j];
      for (int i = 0; i < below; ++i) {
        const double l = column[i];
        for (int c = 0; c < W; ++c) u[c][i] += l * y[c];
      }
    }
    const int* rows = L.rows + L.rowStart[s] + width;
    for (int i = 0; i < below; ++i) {
      const int r = rows[i];
      if (shared && r >= sharedFrom) {
        for (int c = 0; c < W; ++c) shared[c][r - sharedFrom] -= u[c][i];
      } else {
        for (int c = 0; c < W; ++c) x[c][r] -= u[c][i];
      }
    }
  }
}

// Backward substitution L' x = y over supernodes [begin, end) in reverse. The rows below each
// block are gathered, every column of the block takes its dot product with them, then the
// diagonal block.
template <int W>
void backward(const SupernodalLayout& L, int begin, int end, double* const* x, double* gathered) {
  for (int s = end - 1; s >= begin; --s) {
    const int k = L.firstColumn[s], width = L.firstColumn[s + 1] - k;
    const int height = L.rowStart[s + 1] - L.rowStart[s], below = height - width;
    const double* block = L.values + L.valueStart[s];
    if (below > 0) {
      double* __restrict u[W];
      for (int c = 0; c < W; ++c) u[c] = gathered + c * below;
      const int* rows = L.rows + L.rowStart[s] + width;
      for (int i = 0; i < below; ++i)
        for (int c = 0; c < W; ++c) u[c][i] = x[c][rows[i]];
      for (int j = 0; j < width; ++j) {
        const double* column = block + static_cast<std::ptrdiff_t>(j) * height + width;
        Pair sum[W];
        for (int c = 0; c < W; ++c) sum[c] = Pair{0, 0};
        int i = 0;
        for (; i + 1 < below; i += 2) {
          const Pair l = loadPair(column + i);
          for (int c = 0; c < W; ++c) sum[c] += l * loadPair(u[c] + i);
        }
        for (int c = 0; c < W; ++c) {
          double d = sum[c][0] + sum[c][1];
          if (i < below) d += column[i] * u[c][i];
          x[c][k + j] -= d;
        }
      }
    }
    for (int j = width - 1; j >= 0; --j) {
      const double* column = block + static_cast<std::ptrdiff_t>(j) * height;
      double y[W];
      for (int c = 0; c < W; ++c) y[c] = x[c][k + j];
      for (int i = j + 1; i < width; ++i) {
        const double l = column[i];
        for (int c = 0; c < W; ++c) y[c] -= l * x[c][k + i];
      }
      const double inverse = 1.0 / column[j];
      for (int c = 0; c < W; ++c) x[c][k + j] = y[c] * inverse;
    }
  }
}

// Offers `second` to another thread where `allowed` (sim/alongside.h), and runs `first` here;
// `second` runs here after `first` where it was not offered or no helper has begun it by then.
template <class First, class Second>
void inParallel(bool allowed, First first, Second second) {
  Alongside<void> other(second, allowed);
  first();
  other.get();
}

// The elimination tree of L's supernodes: the supernode of each column, and each supernode's
// parent, the one that holds the first row below its block (-1 for a root).
void supernodalTree(const SupernodalLayout& L, std::vector<int>& supernodeOf,
                    std::vector<int>& parent) {
  supernodeOf.resize(L.size());
  for (int s = 0; s < L.supernodes; ++s)
    std::fill(supernodeOf.begin() + L.firstColumn[s], supernodeOf.begin() + L.firstColumn[s + 1],
              s);
  parent.assign(L.supernodes, -1);
  for (int s = 0; s < L.supernodes; ++s) {
    const int width = L.firstColumn[s + 1] - L.firstColumn[s];
    if (L.rowStart[s + 1] - L.rowStart[s] > width)
      parent[s] = supernodeOf[L.rows[L.rowStart[s] + width]];
  }
}

}  // namespace

SupernodalSolve::SupernodalSolve(const SupernodalLayout& layout) : layout_(layout) {
  const int count = layout_.supernodes;
  if (count <= 0) return;
  std::vector<int> supernodeOf, parent;
  supernodalTree(layout_, supernodeOf, parent);
  std::vector<double> work(count), subtreeWork(count), beforeWork(count + 1, 0.0);
  std::vector<int> subtreeSize(count, 1);
  int tallest = 0;
  for (int s = 0; s < count; ++s) {
    const int width = layout_.firstColumn[s + 1] - layout_.firstColumn[s];
    const int height = layout_.rowStart[s + 1] - layout_.rowStart[s];
    tallest = std::max(tallest, height - width);
    work[s] = static_cast<double>(height) * width;
    beforeWork[s + 1] = beforeWork[s] + work[s];
  }
  firstGathered_.resize(3 * static_cast<size_t>(tallest));
  secondGathered_.resize(3 * static_cast<size_t>(tallest));
  std::vector<std::vector<int>> children(count);
  for (int s = 0; s < count; ++s) {
    subtreeWork[s] += work[s];
    if (parent[s] < 0) continue;
    if (parent[s] <= s) return;  // not postordered: one thread
    subtreeWork[parent[s]] += subtreeWork[s];
    subtreeSize[parent[s]] += subtreeSize[s];
    children[parent[s]].push_back(s);
  }
  for (int s = 0; s < count; ++s)  // a postorder numbers each subtree contiguously, below its root
    if (parent[s] >= 0 && s < parent[s] - subtreeSize[parent[s]] + 1) return;
  // From the last root down the heaviest child while it holds most of the work before it; there
  // the heaviest child's subtree goes to the second thread, everything else before it to the first.
  int current = count - 1;
  while (!children[current].empty()) {
    const int heaviest = *std::max_element(children[current].begin(), children[current].end(),
                                           [&](int a, int b) { return subtreeWork[a] < subtreeWork[b]; });
    const double before = beforeWork[current];
    if (subtreeWork[heaviest] > 0.6 * before) {
      current = heaviest;
      continue;
    }
    const double second = subtreeWork[heaviest];
    if (second < 0.25 * beforeWork[count] || before - second < 0.25 * beforeWork[count]) return;
    secondBegin_ = heaviest - subtreeSize[heaviest] + 1;
    secondEnd_ = heaviest + 1;
    top_ = current;
    sharedFrom_ = layout_.firstColumn[current];
    return;
  }
}

template <int W>
void SupernodalSolve::solveColumns(double* const* x, bool secondThread) {
  const int count = layout_.supernodes;
  if (!splits()) {
    forward<W>(layout_, 0, count, x, firstGathered_.data(), 0, nullptr);
    backward<W>(layout_, 0, count, x, firstGathered_.data());
    return;
  }
  const int sharedRows = layout_.size() - sharedFrom_;
  shared_.assign(static_cast<size_t>(W) * sharedRows, 0.0);
  double* shared[W];
  for (int c = 0; c < W; ++c) shared[c] = shared_.data() + static_cast<size_t>(c) * sharedRows;
  inParallel(
      secondThread,
      [&] {
        forward<W>(layout_, 0, secondBegin_, x, firstGathered_.data(), 0, nullptr);
        forward<W>(layout_, secondEnd_, top_, x, firstGathered_.data(), 0, nullptr);
      },
      [&] { forward<W>(layout_, secondBegin_, secondEnd_, x, secondGathered_.data(), sharedFrom_, shared); });
  for (int c = 0; c < W; ++c)
    for (int i = 0; i < sharedRows; ++i) x[c][sharedFrom_ + i] += shared[c][i];
  forward<W>(layout_, top_, count, x, firstGathered_.data(), 0, nullptr);
  backward<W>(layout_, top_, count, x, firstGathered_.data());
  inParallel(
      secondThread,
      [&] {
        backward<W>(layout_, secondEnd_, top_, x, firstGathered_.data());
        backward<W>(layout_, 0, secondBegin_, x, firstGathered_.data());
      },
      [&] { backward<W>(layout_, secondBegin_, secondEnd_, x, secondGathered_.data()); });
}

void SupernodalSolve::solve(Eigen::MatrixXd& columns, bool secondThread) {
  Eigen::Index first = 0;
  for (; columns.cols() - first >= 3; first += 3) {
    double* x[3] = {columns.col(first).data(), columns.col(first + 1).data(), columns.col(first + 2).data()};
    solveColumns<3>(x, secondThread);
  }
  for (; first < columns.cols(); ++first) {
    double* x[1] = {columns.col(first).data()};
    solveColumns<1>(x, secondThread);
  }
}

Eigen::MatrixXd supernodalInverseQuadraticForm(
    const SupernodalLayout& L, const std::vector<int>& perm,
    const Eigen::SparseMatrix<double, Eigen::ColMajor, int>& B) {
  const int n = L.size(), count = L.supernodes, k = static_cast<int>(B.cols());
  Eigen::MatrixXd form = Eigen::MatrixXd::Zero(k, k);
  std::vector<int> inverse(n), supernodeOf, parent;
  for (int i = 0; i < n; ++i) inverse[perm[i]] = i;
  supernodalTree(L, supernodeOf, parent);
  // The columns of B that reach each supernode, ascending (a column's path stops where it joins
  // one it has marked).
  std::vector<std::vector<int>> reach(count);
  std::vector<int> marked(count, -1);
  for (int c = 0; c < k; ++c)
    for (Eigen::SparseMatrix<double, Eigen::ColMajor, int>::InnerIterator it(B, c); it; ++it)
      for (int s = supernodeOf[inverse[it.row()]]; s >= 0 && marked[s] != c; s = parent[s]) {
        marked[s] = c;
        reach[s].push_back(c);
      }
  // Y on each supernode's own rows and its columns: width x (columns reaching it), column-major.
  std::vector<size_t> offset(count + 1, 0);
  for (int s = 0; s < count; ++s)
    offset[s + 1] =
        offset[s] + static_cast<size_t>(L.firstColumn[s + 1] - L.firstColumn[s]) * reach[s].size();
  std::vector<double> y(offset[count], 0.0);
  auto localColumn = [&](int s, int c) {
    return static_cast<int>(std::lower_bound(reach[s].begin(), reach[s].end(), c) -
                            reach[s].begin());
  };
  for (int c = 0; c < k; ++c)
    for (Eigen::SparseMatrix<double, Eigen::ColMajor, int>::InnerIterator it(B, c); it; ++it) {
      const int r = inverse[it.row()], s = supernodeOf[r];
      const int width = L.firstColumn[s + 1] - L.firstColumn[s];
      y[offset[s] + static_cast<size_t>(localColumn(s, c)) * width + (r - L.firstColumn[s])] +=
          it.value();
    }
  std::vector<int> position;  // a supernode's columns among those of the one it updates
  Eigen::MatrixXd update, share;
  for (int s = 0; s < count; ++s) {
    const int m = static_cast<int>(reach[s].size());
    if (m == 0) continue;
    const int first = L.firstColumn[s], width = L.firstColumn[s + 1] - first;
    const int height = L.rowStart[s + 1] - L.rowStart[s], below = height - width;
    const Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>> block(
        L.values + L.valueStart[s], height, width, Eigen::OuterStride<>(height));
    Eigen::Map<Eigen::MatrixXd> own(y.data() + offset[s], width, m);
    block.topRows(width).triangularView<Eigen::Lower>().solveInPlace(own);
    share.setZero(m, m);  // its lower triangle: the form's is summed, then mirrored
    share.selfadjointView<Eigen::Lower>().rankUpdate(own.transpose());
    for (int b = 0; b < m; ++b)
      for (int a = b; a < m; ++a) form(reach[s][a], reach[s][b]) += share(a, b);
    if (below == 0) continue;
    update.noalias() = block.bottomRows(below) * own;
    const int* rows = L.rows + L.rowStart[s] + width;
    for (int i = 0; i < below;) {  // runs of rows in one supernode
      const int target = supernodeOf[rows[i]], targetFirst = L.firstColumn[target];
      const int targetWidth = L.firstColumn[target + 1] - targetFirst;
      int end = i + 1;
      while (end < below && supernodeOf[rows[end]] == target) ++end;
      position.resize(m);
      for (int q = 0, t = 0; q < m; ++q) {  // reach[s] is a subset of reach[target]
        while (reach[target][t] != reach[s][q]) ++t;
        position[q] = t;
      }
      for (int q = 0; q < m; ++q) {
        double* column = y.data() + offset[target] +
                         static_cast<size_t>(position[q]) * targetWidth - targetFirst;
        for (int r = i; r < end; ++r) column[rows[r]] -= update(r, q);
      }
      i = end;
    }
  }
  form.triangularView<Eigen::StrictlyUpper>() = form.transpose();
  return form;
}

}  // namespace clothlab
