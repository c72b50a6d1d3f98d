#include "sim/linear/single_precision_factor.h"

#include <algorithm>
#include <cstring>
#include <utility>

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

}  // namespace

SinglePrecisionFactor::SinglePrecisionFactor(std::vector<int> firstColumn, std::vector<std::int64_t> rowStart,
                                             std::vector<int> rows, std::vector<std::int64_t> valueStart,
                                             const double* values)
    : firstColumn_(std::move(firstColumn)),
      rowStart_(std::move(rowStart)),
      rows_(std::move(rows)),
      valueStart_(std::move(valueStart)) {
  const std::int64_t count = valueStart_.empty() ? 0 : valueStart_.back();
  values_.assign(values, values + count);
  std::int64_t widest = 0;
  for (size_t s = 0; s + 1 < rowStart_.size(); ++s) widest = std::max(widest, rowStart_[s + 1] - rowStart_[s]);
  gathered_.resize(3 * widest);
}

void SinglePrecisionFactor::solve(Eigen::MatrixXd& columns) {
  const Eigen::Index n = size();
  for (Eigen::Index first = 0; first < columns.cols(); first += 3) {
    if (columns.cols() - first >= 3) {
      solveThree(columns.col(first).data(), columns.col(first + 1).data(), columns.col(first + 2).data());
      continue;
    }
    Eigen::MatrixXd three = Eigen::MatrixXd::Zero(n, 3);  // the last one or two, padded
    const Eigen::Index left = columns.cols() - first;
    three.leftCols(left) = columns.middleCols(first, left);
    solveThree(three.col(0).data(), three.col(1).data(), three.col(2).data());
    columns.middleCols(first, left) = three.leftCols(left);
  }
}

void SinglePrecisionFactor::solveThree(double* a, double* b, double* c) {
  const int supernodes = static_cast<int>(firstColumn_.size()) - 1;
  // Forward: L y = x, supernode by supernode. The diagonal block by columns; the rows below it
  // are updated through a gathered buffer, two columns of the block at a time.
  for (int s = 0; s < supernodes; ++s) {
    const int k = firstColumn_[s], width = firstColumn_[s + 1] - k;
    const int height = static_cast<int>(rowStart_[s + 1] - rowStart_[s]), below = height - width;
    const float* block = values_.data() + valueStart_[s];
    for (int j = 0; j < width; ++j) {
      const float* column = block + static_cast<std::int64_t>(j) * height;
      const double inverse = 1.0 / column[j];
      const double ya = (a[k + j] *= inverse), yb = (b[k + j] *= inverse), yc = (c[k + j] *= inverse);
      for (int i = j + 1; i < width; ++i) {
        const double l = column[i];
        a[k + i] -= l * ya;
        b[k + i] -= l * yb;
        c[k + i] -= l * yc;
      }
    }
    if (below == 0) continue;
    double* __restrict ua = gathered_.data();
    double* __restrict ub = ua + below;
    double* __restrict uc = ub + below;
    std::fill(ua, ua + 3 * below, 0.0);
    int j = 0;
    for (; j + 1 < width; j += 2) {
      const float* first = block + static_cast<std::int64_t>(j) * height + width;
      const float* second = first + height;
      const double ya = a[k + j], yb = b[k + j], yc = c[k + j];
      const double za = a[k + j + 1], zb = b[k + j + 1], zc = c[k + j + 1];
      for (int i = 0; i < below; ++i) {
        const double l = first[i], m = second[i];
        ua[i] += l * ya + m * za;
        ub[i] += l * yb + m * zb;
        uc[i] += l * yc + m * zc;
      }
    }
    for (; j < width; ++j) {
      const float* column = block + static_cast<std::int64_t>(j) * height + width;
      const double ya = a[k + j], yb = b[k + j], yc = c[k + j];
      for (int i = 0; i < below; ++i) {
        const double l = column[i];
        ua[i] += l * ya;
        ub[i] += l * yb;
        uc[i] += l * yc;
      }
    }
    const int* rows = rows_.data() + rowStart_[s] + width;
    for (int i = 0; i < below; ++i) {
      a[rows[i]] -= ua[i];
      b[rows[i]] -= ub[i];
      c[rows[i]] -= uc[i];
    }
  }
  // Backward: L' x = y, supernodes in reverse. The rows below each block are gathered, then
  // every column of the block takes its dot product with them, then the diagonal block.
  for (int s = supernodes - 1; s >= 0; --s) {
    const int k = firstColumn_[s], width = firstColumn_[s + 1] - k;
    const int height = static_cast<int>(rowStart_[s + 1] - rowStart_[s]), below = height - width;
    const float* block = values_.data() + valueStart_[s];
    if (below > 0) {
      double* __restrict ua = gathered_.data();
      double* __restrict ub = ua + below;
      double* __restrict uc = ub + below;
      const int* rows = rows_.data() + rowStart_[s] + width;
      for (int i = 0; i < below; ++i) {
        ua[i] = a[rows[i]];
        ub[i] = b[rows[i]];
        uc[i] = c[rows[i]];
      }
      for (int j = 0; j < width; ++j) {
        const float* column = block + static_cast<std::int64_t>(j) * height + width;
        Pair sa = {0, 0}, sb = {0, 0}, sc = {0, 0};
        int i = 0;
        for (; i + 1 < below; i += 2) {
          const Pair l = {column[i], column[i + 1]};
          sa += l * loadPair(ua + i);
          sb += l * loadPair(ub + i);
          sc += l * loadPair(uc + i);
        }
        double da = sa[0] + sa[1], db = sb[0] + sb[1], dc = sc[0] + sc[1];
        if (i < below) {
          const double l = column[i];
          da += l * ua[i];
          db += l * ub[i];
          dc += l * uc[i];
        }
        a[k + j] -= da;
        b[k + j] -= db;
        c[k + j] -= dc;
      }
    }
    for (int j = width - 1; j >= 0; --j) {
      const float* column = block + static_cast<std::int64_t>(j) * height;
      double ya = a[k + j], yb = b[k + j], yc = c[k + j];
      for (int i = j + 1; i < width; ++i) {
        const double l = column[i];
        ya -= l * a[k + i];
        yb -= l * b[k + i];
        yc -= l * c[k + i];
      }
      const double inverse = 1.0 / column[j];
      a[k + j] = ya * inverse;
      b[k + j] = yb * inverse;
      c[k + j] = yc * inverse;
    }
  }
}

}  // namespace clothlab
