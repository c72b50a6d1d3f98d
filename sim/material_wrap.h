#pragma once
// How a flat rest state closes round a tube. Laid flat, a tube is cut along one side; going once
// round it brings a point back to its material coordinates moved by a rigid map of the plane (the
// unfolding's holonomy):
//  - a translation for a cylinder, kept along the first coordinate: `period`;
//  - a rotation about the apex for a cone (a flared skirt): `angle` about `apex`. The flat state
//    is then a sector of the plane round the apex, `angle` wide (it may be wider than half a
//    turn), and `cut` is a direction from the apex outside it.
// The offset from one material point to another takes the second once round either way where
// that brings it nearer (for a cone: nearer in angle round the apex, since a sector wider than
// half a turn overlaps itself when turned), so a neighbourhood across the cut sees the cloth as
// it was before cutting.
// In a cloth of several pieces laid apart in the plane only one piece may close round, and the
// wrap holds only where that piece lies (`reach`): offsets within the other pieces are plain.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>
#include <limits>
#include <numbers>

namespace clothlab {

struct MaterialWrap {
  // > 0: once round is a translation by `period` along the first coordinate [m].
  double period = 0;
  // != 0: once round is a rotation by `angle` about `apex` [rad], |angle| < 2 pi.
  double angle = 0;
  Eigen::Vector2d apex = Eigen::Vector2d::Zero();  // [m]
  double cut = 0;  // a cone's: a direction from the apex outside its sector [rad]

  // Where the wrap holds: within `reach` of the line v = `middle` for a cylinder, of the apex for
  // a cone [m]. Infinite for a cloth in one piece; finite round the one piece of several that
  // closes round, the others laid beyond it (unfoldRestMesh).
  double reach = std::numeric_limits<double>::infinity();
  double middle = 0;  // [m]

  bool wraps() const { return period > 0 || angle != 0; }

  // Whether u lies where the wrap holds (above); false where nothing wraps.
  bool holds(const Eigen::Vector2d& u) const {
    if (!wraps()) return false;
    if (reach == std::numeric_limits<double>::infinity()) return true;
    return period > 0 ? std::abs(u.y() - middle) <= reach : (u - apex).norm() <= reach;
  }

  // `u` taken round k times (k < 0: the other way); u itself where the wrap does not hold.
  Eigen::Vector2d image(const Eigen::Vector2d& u, int k) const {
    if (k == 0 || !holds(u)) return u;
    if (period > 0) return u + Eigen::Vector2d(k * period, 0);
    return apex + Eigen::Rotation2Dd(k * angle) * (u - apex);
  }

  // How many times round (-1, 0 or 1) `offset` takes `to` as seen from `from`: 0 unless the wrap
  // holds at both.
  int turns(const Eigen::Vector2d& from, const Eigen::Vector2d& to) const {
    if (!holds(from) || !holds(to)) return 0;
    if (period > 0) return static_cast<int>(std::lround((from.x() - to.x()) / period));
    // Round the apex, from the cut: the sector lies within [0, 2 pi).
    auto round = [&](const Eigen::Vector2d& u) {
      const double a = std::atan2(u.y() - apex.y(), u.x() - apex.x()) - cut;
      return a - 2 * std::numbers::pi * std::floor(a / (2 * std::numbers::pi));
    };
    const double apart = round(to) - round(from);
    int best = 0;
    for (int k : {-1, 1})
      if (std::abs(apart + k * angle) < std::abs(apart + best * angle)) best = k;
    return best;
  }

  // to - from, with `to` once round either way where that brings it nearer `from` (above).
  Eigen::Vector2d offset(const Eigen::Vector2d& from, const Eigen::Vector2d& to) const {
    if (period > 0 && holds(from) && holds(to)) {
      Eigen::Vector2d d = to - from;
      d.x() = std::remainder(d.x(), period);
      return d;
    }
    return image(to, turns(from, to)) - from;
  }

  // What taking a point k times round does to directions at it: a rotation for a cone, nothing
  // for a cylinder. A tensor T on directions at `to` reads R T R^T at `from`, with R =
  // turn(turns(from, to)) (the remesher's sizes).
  Eigen::Matrix2d turn(int k) const {
    if (angle == 0 || k == 0) return Eigen::Matrix2d::Identity();
    return Eigen::Rotation2Dd(k * angle).toRotationMatrix();
  }

  // The same wrap for the material coordinates mirrored across the first axis (v -> -v).
  MaterialWrap mirrored() const {
    MaterialWrap m = *this;
    m.apex.y() = -apex.y();
    m.angle = -angle;
    m.cut = -cut;
    m.middle = -middle;
    return m;
  }
};

}  // namespace clothlab
