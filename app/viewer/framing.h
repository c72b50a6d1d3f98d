#pragma once
// What the camera frames (Camera::fit) when a scene opens, and when F is pressed: the bounds of
// the cloth, the obstacles and the jellies, and for a new scene also where its cloth is going.
// - A pinned cloth will hang: the room below it, as far down as it is wide or deep.
// - An unpinned one standing above the ground may fall over: the ground round it, as far out as
//   it is tall.
// - An unpinned one lying above the ground with nothing under it but the ground (an OBJ opened
//   as it is) falls onto it: the ground below it, down to at most three times its width. Where
//   something else is in the scene (a table, a sphere) it lands on that, which the bounds hold.
#include <algorithm>
#include <utility>

#include "sim/obstacles.h"
#include "sim/snapshot.h"

namespace clothlab {

inline std::pair<Vec3, Vec3> framedBounds(const Snapshot& snapshot, bool newScene) {
  Vec3 lo, hi;
  snapshot.bounds(lo, hi);
  if (!newScene || snapshot.vertexCount() == 0) return {lo, hi};
  const double across = std::max(hi.x() - lo.x(), hi.z() - lo.z());
  if (!snapshot.pinVertices.empty()) {
    lo.y() -= across;
    return {lo, hi};
  }
  const std::optional<double> ground = groundHeight(snapshot.obstacles);
  if (!ground || *ground >= lo.y()) return {lo, hi};
  Vec3 clothLo, clothHi;
  snapshot.clothBounds(clothLo, clothHi);
  const double tall = clothHi.y() - clothLo.y();
  if (tall > 0.5 * across) {  // standing, not lying
    lo.x() -= 0.5 * tall;
    lo.z() -= 0.5 * tall;
    hi.x() += 0.5 * tall;
    hi.z() += 0.5 * tall;
    lo.y() = *ground;
    return {lo, hi};
  }
  const bool onlyPlanes =
      snapshot.jellies.empty() &&
      std::all_of(snapshot.obstacles.begin(), snapshot.obstacles.end(),
                  [](const Obstacle& o) { return o.type == Obstacle::Type::Plane; });
  if (onlyPlanes) lo.y() = std::max(*ground, lo.y() - 3 * across);
  return {lo, hi};
}

}  // namespace clothlab
