#include "sim/grab.h"

#include <algorithm>

namespace clothlab {

std::vector<int> moveGrabbedCorners(const Grab& grab, const Tri& tri, double h, const Positions& start,
                                    Positions& x, const std::function<bool(int)>& fixed) {
  const Vec3& b = grab.barycentric;
  Vec3 from = Vec3::Zero(), now = Vec3::Zero();
  double movable = 0;  // sum of b_k^2 over the corners that may move
  for (int k = 0; k < 3; ++k) {
    from += b[k] * start.row(tri[k]).transpose();
    now += b[k] * x.row(tri[k]).transpose();
    if (!fixed(tri[k])) movable += b[k] * b[k];
  }
  std::vector<int> moved;
  if (movable == 0) return moved;
  const Vec3 target = from + (grab.target - from) * std::min(1.0, h / grab.timeConstant);
  for (int k = 0; k < 3; ++k) {
    if (fixed(tri[k]) || b[k] == 0) continue;
    x.row(tri[k]) += (b[k] / movable) * (target - now).transpose();
    moved.push_back(tri[k]);
  }
  return moved;
}

}  // namespace clothlab
