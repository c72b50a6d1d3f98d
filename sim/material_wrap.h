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
// In a cloth of several pieces laid apart in the plane, each piece that closes round has its own
// wrap, holding only where that piece lies (`reach`); offsets within the other pieces are plain.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace clothlab {

struct MaterialWrap {
  // > 0: once round is a translation by `period` along the first coordinate [m].
  double period = 0;
  // != 0: once round is a rotation by `angle` about `apex` [rad], |angle| < 2 pi.
  double angle = 0;
  Eigen::Vector2d apex = Eigen::Vector2d::Zero();  // [m]
  double cut = 0;  // a cone's: a direction from the apex outside its sector [rad]

  // Where the wrap holds: within `reach` of the line v = `middle` for a cylinder, of the apex for
  // a cone [m]. Infinite for a cloth in one piece; finite round each piece of several that
  // closes round, the others laid beyond (unfoldRestMesh).
  double reach = std::numeric_limits<double>::infinity();
  double middle = 0;  // [m]

  // The other pieces that close round, in a cloth of several (two sleeves): each its own wrap,
  // with a finite reach, the regions where they hold apart from each other and from this one's.
  // Each member below answers with the wrap that holds where it is asked (`at`).
  std::vector<MaterialWrap> others;

  // A cylinder's wrap, holding everywhere: once round is `period` along the first coordinate.
  static MaterialWrap cylinder(double period) {
    MaterialWrap wrap;
    wrap.period = period;
    return wrap;
  }

  bool wraps() const { return period > 0 || angle != 0; }

  // Every wrap: this one where it wraps, then the others (wrappedPieces numbers them so).
  std::vector<const MaterialWrap*> rounds() const {
    std::vector<const MaterialWrap*> all;
    if (wraps()) all.push_back(this);
    for (const MaterialWrap& other : others) all.push_back(&other);
    return all;
  }

  // The wrap of the piece round which u lies: one of `others` where it holds, else this one.
  const MaterialWrap& at(const Eigen::Vector2d& u) const {
    for (const MaterialWrap& other : others)
      if (other.holdsHere(u)) return other;
    return *this;
  }

  // Whether some wrap, this or another, turns directions (a cone's).
  bool turnsDirections() const {
    return angle != 0 || std::any_of(others.begin(), others.end(),
                                     [](const MaterialWrap& o) { return o.angle != 0; });
  }

  // Whether u lies where a wrap holds (above); false where nothing wraps.
  bool holds(const Eigen::Vector2d& u) const { return at(u).holdsHere(u); }

  // `u` taken round k times (k < 0: the other way); u itself where no wrap holds.
  Eigen::Vector2d image(const Eigen::Vector2d& u, int k) const { return at(u).imageHere(u, k); }

  // How many times round (-1, 0 or 1) `offset` takes `to` as seen from `from`: 0 unless one wrap
  // holds at both.
  int turns(const Eigen::Vector2d& from, const Eigen::Vector2d& to) const {
    return at(from).turnsHere(from, to);
  }

  // to - from, with `to` once round either way where that brings it nearer `from` (above).
  Eigen::Vector2d offset(const Eigen::Vector2d& from, const Eigen::Vector2d& to) const {
    const MaterialWrap& wrap = at(from);
    if (wrap.period > 0 && wrap.holdsHere(from) && wrap.holdsHere(to)) {
      Eigen::Vector2d d = to - from;
      d.x() = std::remainder(d.x(), wrap.period);
      return d;
    }
    return wrap.imageHere(to, wrap.turnsHere(from, to)) - from;
  }

  // What taking a point at `u` k times round does to directions there: a rotation for a cone,
  // nothing for a cylinder. A tensor T on directions at `to` reads R T R^T at `from`, with R =
  // turn(turns(from, to), from) (the remesher's sizes).
  Eigen::Matrix2d turn(int k, const Eigen::Vector2d& u) const {
    const double a = at(u).angle;
    if (a == 0 || k == 0) return Eigen::Matrix2d::Identity();
    return Eigen::Rotation2Dd(k * a).toRotationMatrix();
  }

  // A cone's angle round its apex from its cut to u, in [0, 2 pi): its sector lies within it.
  double angleFromCut(const Eigen::Vector2d& u) const {
    const double a = std::atan2(u.y() - apex.y(), u.x() - apex.x()) - cut;
    return a - 2 * std::numbers::pi * std::floor(a / (2 * std::numbers::pi));
  }

  // The same wraps for the material coordinates mirrored across the first axis (v -> -v).
  MaterialWrap mirrored() const {
    MaterialWrap m = *this;
    m.apex.y() = -apex.y();
    m.angle = -angle;
    m.cut = -cut;
    m.middle = -middle;
    for (MaterialWrap& other : m.others) other = other.mirrored();
    return m;
  }

 private:
  // The members above for this wrap alone.
  bool holdsHere(const Eigen::Vector2d& u) const {
    if (!wraps()) return false;
    if (reach == std::numeric_limits<double>::infinity()) return true;
    return period > 0 ? std::abs(u.y() - middle) <= reach : (u - apex).norm() <= reach;
  }
  Eigen::Vector2d imageHere(const Eigen::Vector2d& u, int k) const {
    if (k == 0 || !holdsHere(u)) return u;
    if (period > 0) return u + Eigen::Vector2d(k * period, 0);
    return apex + Eigen::Rotation2Dd(k * angle) * (u - apex);
  }
  int turnsHere(const Eigen::Vector2d& from, const Eigen::Vector2d& to) const {
    if (!holdsHere(from) || !holdsHere(to)) return 0;
    if (period > 0) return static_cast<int>(std::lround((from.x() - to.x()) / period));
    const double apart = angleFromCut(to) - angleFromCut(from);
    int best = 0;
    for (int k : {-1, 1})
      if (std::abs(apart + k * angle) < std::abs(apart + best * angle)) best = k;
    return best;
  }
};

}  // namespace clothlab
