#pragma once
// A uniform grid of cells over a set of boxes, for finding the items near a place: the cloth's
// self-collision and obstacle-feature pairs (sim/self_collision.h), and material-radius MLS
// neighbourhoods (sim/solvers/mls/mls_constraints.h).
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/mesh.h"

namespace clothlab {

// Items binned by their boxes into a dense grid of cells over the boxes' extent, stored as
// compressed rows (built once per step; far cheaper than a hash map of cells).
class CellGrid {
 public:
  // Bins the boxes into cells of about `cell`, larger where the boxes' extent would take more
  // than `maxCells` cells.
  CellGrid(const std::vector<Eigen::AlignedBox3d>& boxes, double cell, double maxCells = 4e6) {
    if (!frame(boxes, cell, maxCells)) return;
    start_.assign(static_cast<size_t>(dims_.prod()) + 1, 0);
    auto each = [&](auto&& fn) {
      for (size_t i = 0; i < boxes.size(); ++i) {
        Eigen::Vector3i lo, hi;
        range(boxes[i], lo, hi);
        for (int z = lo.z(); z <= hi.z(); ++z)
          for (int y = lo.y(); y <= hi.y(); ++y)
            for (int x = lo.x(); x <= hi.x(); ++x) fn(index(x, y, z), static_cast<int>(i));
      }
    };
    each([&](int c, int) { ++start_[c + 1]; });
    for (size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
    items_.resize(start_.back());
    std::vector<int> fill(start_.begin(), start_.end() - 1);
    each([&](int c, int item) { items_[fill[c]++] = item; });
  }

  // The cells such a grid would have, without the items: for firstSharedCell.
  static CellGrid frameOf(const std::vector<Eigen::AlignedBox3d>& boxes, double cell,
                          double maxCells = 4e6) {
    CellGrid grid;
    grid.frame(boxes, cell, maxCells);
    return grid;
  }

  // The lowest cell a box covers, as firstSharedCell takes it.
  Eigen::Vector3i lowestCell(const Eigen::AlignedBox3d& box) const {
    Eigen::Vector3i lo, hi;
    range(box, lo, hi);
    return lo;
  }
  // The first cell that a query over a box visits among those an item of another box is binned
  // in (boxes that meet), from the two boxes' lowestCell: the order in which a query meets the
  // items is that of this cell, then of the items' numbers.
  int firstSharedCell(const Eigen::Vector3i& aLowest, const Eigen::Vector3i& bLowest) const {
    const Eigen::Vector3i lo = aLowest.cwiseMax(bLowest);
    return index(lo.x(), lo.y(), lo.z());
  }

  // Calls fn(item) for each item binned in a cell the box covers (once per such cell), only
  // for items above `above`. A cell lists its items in increasing order, so the others are
  // passed over by one search per cell: a search for pairs (each item against the higher ones)
  // does not visit, one by one, the half it has already seen.
  template <class Fn>
  void query(const Eigen::AlignedBox3d& box, Fn&& fn, int above = -1) const {
    if (start_.empty()) return;
    Eigen::Vector3i lo, hi;
    range(box, lo, hi);
    for (int z = lo.z(); z <= hi.z(); ++z)
      for (int y = lo.y(); y <= hi.y(); ++y)
        for (int x = lo.x(); x <= hi.x(); ++x) {
          const int c = index(x, y, z);
          const auto first = items_.begin() + start_[c], last = items_.begin() + start_[c + 1];
          for (auto it = above < 0 ? first : std::upper_bound(first, last, above); it != last; ++it)
            fn(*it);
        }
  }

 private:
  CellGrid() = default;
  // The grid's origin, cell size and dimensions over the boxes' extent; false where there is none.
  bool frame(const std::vector<Eigen::AlignedBox3d>& boxes, double cell, double maxCells) {
    Eigen::AlignedBox3d bounds;
    for (const auto& box : boxes) bounds.extend(box);
    if (bounds.isEmpty()) return false;
    origin_ = bounds.min();
    const Vec3 extent = bounds.sizes();
    const double cells = ((extent / cell).array().floor().max(0.0) + 1.0).prod();
    if (cells > maxCells) cell *= std::cbrt(cells / maxCells);
    inverse_ = 1.0 / cell;
    dims_ = ((extent * inverse_).array().floor().cast<int>() + 1).matrix();
    return true;
  }
  // The cells a box covers, clamped to the grid (an empty range when it misses the grid).
  void range(const Eigen::AlignedBox3d& box, Eigen::Vector3i& lo, Eigen::Vector3i& hi) const {
    const Eigen::Vector3d a = ((box.min() - origin_) * inverse_).array().floor(), b = ((box.max() - origin_) * inverse_).array().floor();
    for (int k = 0; k < 3; ++k) {
      lo[k] = static_cast<int>(std::clamp(a[k], 0.0, double(dims_[k] - 1)));
      hi[k] = static_cast<int>(std::clamp(b[k], -1.0, double(dims_[k] - 1)));
      if (b[k] < 0 || a[k] > dims_[k] - 1) hi[k] = lo[k] - 1;
    }
  }
  int index(int x, int y, int z) const { return (z * dims_.y() + y) * dims_.x() + x; }

  Vec3 origin_{0, 0, 0};
  double inverse_ = 1;
  Eigen::Vector3i dims_{0, 0, 0};
  std::vector<int> start_, items_;
};

}  // namespace clothlab
