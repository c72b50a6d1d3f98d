#include "sim/grab.h"

#include <algorithm>

namespace clothlab {

namespace {
Vec3 pointAt(const Grab& grab, const Tri& tri, const Positions& x) {
  Vec3 p = Vec3::Zero();
  for (int k = 0; k < 3; ++k) p += grab.barycentric[k] * x.row(tri[k]).transpose();
  return p;
}
}  // namespace

std::vector<int> GrabPull::move(const Grab& grab, const Tri& tri, double h, const Positions& start,
                                Positions& x, const std::function<bool(int)>& fixed) {
  const Vec3& b = grab.barycentric;
  from_ = target_ = pointAt(grab, tri, start);
  const Vec3 now = pointAt(grab, tri, x);
  double movable = 0;  // sum of b_k^2 over the corners that may move
  for (int k = 0; k < 3; ++k)
    if (!fixed(tri[k])) movable += b[k] * b[k];
  std::vector<int> moved;
  if (movable == 0) return moved;
  target_ = from_ + (grab.target - from_) * (gain_ * std::min(1.0, h / grab.timeConstant));
  for (int k = 0; k < 3; ++k) {
    if (fixed(tri[k]) || b[k] == 0) continue;
    x.row(tri[k]) += (b[k] / movable) * (target_ - now).transpose();
    moved.push_back(tri[k]);
  }
  return moved;
}

void GrabPull::settle(const Grab& grab, const Tri& tri, const Positions& x, double meanEdgeLength) {
  const Vec3 push = target_ - from_;
  if (push.squaredNorm() == 0) return;
  const double followed = (pointAt(grab, tri, x) - from_).dot(push) / push.squaredNorm();
  const bool heldBack = followed < 0.5 && push.norm() > kGrabPushFloor * meanEdgeLength;
  gain_ = heldBack ? 0.5 * gain_ : std::min(1.0, 2 * gain_);
}

}  // namespace clothlab
