#include "sim/linear/single_precision_factor.h"

namespace clothlab {

SinglePrecisionFactor::SinglePrecisionFactor(const SupernodalLayout<double>& layout) {
  const int count = layout.supernodes;
  firstColumn_.assign(layout.firstColumn, layout.firstColumn + count + 1);
  rowStart_.assign(layout.rowStart, layout.rowStart + count + 1);
  rows_.assign(layout.rows, layout.rows + rowStart_.back());
  valueStart_.assign(layout.valueStart, layout.valueStart + count + 1);
  values_.assign(layout.values, layout.values + valueStart_.back());
  SupernodalLayout<float> copy;
  copy.supernodes = count;
  copy.firstColumn = firstColumn_.data();
  copy.rowStart = rowStart_.data();
  copy.rows = rows_.data();
  copy.valueStart = valueStart_.data();
  copy.values = values_.data();
  solve_ = std::make_unique<SupernodalSolve<float>>(copy);
}

}  // namespace clothlab
