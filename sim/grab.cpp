#include "sim/grab.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "sim/material.h"  // materialOffset, wrappedPieces, flatPointAt, locateFlatPoint

namespace clothlab {

Vec3 grabbedPoint(const Grab& grab, const Tri& tri, const Positions& x) {
  Vec3 p = Vec3::Zero();
  for (int k = 0; k < 3; ++k) p += grab.barycentric[k] * x.row(tri[k]).transpose();
  return p;
}

std::vector<int> GrabPull::move(const Grab& grab, const Tri& tri, double h, const Positions& start,
                                Positions& x, const std::function<bool(int)>& fixed) {
  const Vec3& b = grab.barycentric;
  from_ = target_ = grabbedPoint(grab, tri, start);
  const Vec3 now = grabbedPoint(grab, tri, x);
  double movable = 0;  // sum of b_k^2 over the corners that may move
  for (int k = 0; k < 3; ++k)
    if (!fixed(tri[k])) movable += b[k] * b[k];
  std::vector<int> moved;
  if (movable == 0) return moved;
  target_ = from_ + (grab.target - from_) * (gain_ * std::min(1.0, h / grab.timeConstant));
  if (const double push = (target_ - from_).norm(); pushCeiling_ > 0 && push > pushCeiling_)
    target_ = from_ + (pushCeiling_ / push) * (target_ - from_);
  for (int k = 0; k < 3; ++k) {
    if (fixed(tri[k]) || b[k] == 0) continue;
    x.row(tri[k]) += (b[k] / movable) * (target_ - now).transpose();
    moved.push_back(tri[k]);
  }
  return moved;
}

void GrabPull::settle(const Grab& grab, const Tri& tri, const Positions& x, StepStats& stats) {
  const Vec3 push = target_ - from_;
  if (push.squaredNorm() > 0) {
    const double followed = (grabbedPoint(grab, tri, x) - from_).dot(push) / push.squaredNorm();
    const bool heldBack = followed < 0.5 && push.norm() > pushFloor_;
    gain_ = heldBack ? 0.5 * gain_ : std::min(1.0, 2 * gain_);
  }
  stats.extra["grab_gain"] = gain_;
}

std::optional<Grab> grabOnFineMesh(const ClothModel& cloth, const FineMesh& fine,
                                   const Grab& grab) {
  if (!cloth.flatCoords) return std::nullopt;
  const FlatRest& flat = *cloth.flatCoords;
  const Eigen::Vector2d m =
      flatPointAt(cloth.mesh.triangles[grab.triangle], flat.coords, flat.wrap, grab.barycentric);
  Grab onFine = grab;
  std::tie(onFine.triangle, onFine.barycentric) =
      locateFlatPoint(fine.triangles, fine.flat, flat.wrap, m);
  return onFine;
}

Grab grabAtVertex(const ClothModel& cloth, int vertex, const Vec3& target) {
  Grab grab;
  grab.triangle = cloth.topology.vertexTris[vertex].front();
  const Tri& f = cloth.mesh.triangles[grab.triangle];
  grab.barycentric = Vec3(f[0] == vertex, f[1] == vertex, f[2] == vertex);
  grab.target = target;
  return grab;
}

GrabReach::GrabReach(const ClothModel& cloth) : cloth_(&cloth) {
  if (!cloth.flatCoords) return;
  const Eigen::MatrixX2d& material = cloth.flatCoords->coords;
  const MeshTopology& topology = cloth.topology;
  // An unrolled cylinder is a strip, convex across its seam, unless holes are cut in it (more
  // than its two rims). An unfolded cone is not: a straight line between two of its points may
  // cross the hole round its apex, where the cloth's shortest way goes round (coneReach). Its
  // two rims, by their distances from the apex: the annulus between the inner one's farthest
  // point and the outer one's nearest is all cloth. Any other piece is convex when it has one
  // boundary loop that turns one way only (straight runs, as along a rectangle's sides,
  // allowed).
  const MaterialWrap& wraps = cloth.flatCoords->wrap;
  convex_.assign(topology.componentCount, 0);
  cone_.assign(topology.componentCount, std::nullopt);
  // Texture coordinates wrap round in every piece (MaterialWrap::reach infinite): say nothing
  // where there are several.
  if (wraps.wraps() && topology.componentCount > 1 && !std::isfinite(wraps.reach)) return;
  // Each piece's wrap, where it closes round.
  std::vector<const MaterialWrap*> wrapOf(topology.componentCount, nullptr);
  const std::vector<int> wrapped = wrappedPieces(*cloth.flatCoords, topology);
  const std::vector<const MaterialWrap*> rounds = wraps.rounds();
  for (size_t k = 0; k < wrapped.size(); ++k)
    if (wrapped[k] >= 0) wrapOf[wrapped[k]] = rounds[k];
  std::vector<std::vector<int>> loops(topology.componentCount);  // each piece's boundary loops
  for (int l = 0; l < static_cast<int>(topology.boundaryLoops.size()); ++l)
    if (topology.boundaryLoops[l].size() >= 3)
      loops[topology.vertexComponent[topology.boundaryLoops[l].front()]].push_back(l);
  for (int component = 0; component < topology.componentCount; ++component) {
    const std::vector<int>& own = loops[component];
    const MaterialWrap* wrap = wrapOf[component];
    if (wrap && wrap->period > 0) {
      convex_[component] = own.size() == 2;
    } else if (wrap) {
      if (own.size() != 2) continue;
      std::array<double, 2> nearest{1e300, 1e300}, farthest{0, 0}, mean{0, 0};
      for (int l = 0; l < 2; ++l) {
        const auto& loop = topology.boundaryLoops[own[l]];
        for (int v : loop) {
          const double r = (material.row(v).transpose() - wrap->apex).norm();
          nearest[l] = std::min(nearest[l], r);
          farthest[l] = std::max(farthest[l], r);
          mean[l] += r / loop.size();
        }
      }
      const int inner = mean[0] < mean[1] ? 0 : 1;
      const Cone cone{wrap->apex, farthest[inner], nearest[1 - inner]};
      convex_[component] = cone.hole > 0 && cone.hole < cone.rim;
      cone_[component] = cone;
    } else if (own.size() == 1) {
      const auto& loop = topology.boundaryLoops[own[0]];
      bool oneWay = true;
      int turn = 0;
      const size_t n = loop.size();
      for (size_t i = 0; i < n; ++i) {
        const Eigen::Vector2d a = material.row(loop[i]), b = material.row(loop[(i + 1) % n]),
                              c = material.row(loop[(i + 2) % n]);
        const Eigen::Vector2d in = b - a, out = c - b;
        const double cross = in.x() * out.y() - in.y() * out.x();
        if (std::abs(cross) <= 1e-3 * in.norm() * out.norm()) continue;
        const int sign = cross > 0 ? 1 : -1;
        if (turn == 0)
          turn = sign;
        else if (sign != turn)
          oneWay = false;
      }
      convex_[component] = oneWay;
    }
  }
}

std::vector<std::pair<Vec3, double>> GrabReach::balls(const Grab& grab, const std::vector<std::pair<int, Vec3>>& pins,
                                                     int except) const {
  std::vector<std::pair<Vec3, double>> balls;  // a pin's target and how far the point can be from it
  if (!cloth_->flatCoords) return balls;
  const MeshTopology& topology = cloth_->topology;
  const int component = topology.triComponent[grab.triangle];
  if (!convex_[component]) return balls;
  const Tri& tri = cloth_->mesh.triangles[grab.triangle];
  const Eigen::MatrixX2d& material = cloth_->flatCoords->coords;
  for (const auto& [vertex, target] : pins) {
    if (vertex == except) continue;
    if (topology.vertexComponent[vertex] != component) continue;
    Eigen::Vector2d offset = Eigen::Vector2d::Zero();
    for (int k = 0; k < 3; ++k)
      offset +=
          grab.barycentric[k] * materialOffset(material, vertex, tri[k], cloth_->flatCoords->wrap);
    balls.emplace_back(target, cone_[component]
                                   ? coneReach(*cone_[component], material.row(vertex).transpose(),
                                               material.row(vertex).transpose() + offset)
                                   : offset.norm());
  }
  return balls;
}

double GrabReach::coneReach(const Cone& cone, const Eigen::Vector2d& from,
                            const Eigen::Vector2d& to) {
  const Eigen::Vector2d& apex = cone.apex;
  const double hole = cone.hole, rim = cone.rim;
  Eigen::Vector2d a = from - apex, b = to - apex;
  // An end nearer the apex than the hole's edge, or beyond the outer rim's nearest point, goes
  // there first along its ray (the rims of a skirt are rings about the apex).
  double legs = 0;
  for (Eigen::Vector2d* end : {&a, &b}) {
    const double r = end->norm(), within = std::clamp(r, hole, rim);
    legs += std::abs(r - within);
    if (r > 0) *end *= within / r;
  }
  const Eigen::Vector2d ab = b - a;
  const double t = ab.squaredNorm() > 0 ? std::clamp(-a.dot(ab) / ab.squaredNorm(), 0.0, 1.0) : 0.0;
  if ((a + t * ab).norm() >= hole) return legs + ab.norm();
  // Round the hole: along the tangent from each end, and the arc between the tangent points.
  const double ra = a.norm(), rb = b.norm();
  const double between = std::acos(std::clamp(a.dot(b) / (ra * rb), -1.0, 1.0));
  const double arc =
      between - std::acos(std::min(1.0, hole / ra)) - std::acos(std::min(1.0, hole / rb));
  return legs + std::sqrt(std::max(0.0, ra * ra - hole * hole)) +
         std::sqrt(std::max(0.0, rb * rb - hole * hole)) + hole * std::max(0.0, arc);
}

Vec3 GrabReach::clamp(const Grab& grab, const std::vector<std::pair<int, Vec3>>& pins, int except,
                      double slack) const {
  const std::vector<std::pair<Vec3, double>> held = balls(grab, pins, except);
  Vec3 p = grab.target;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double moved = 0;
    for (const auto& [centre, reach] : held) {
      const double radius = reach + slack;
      const Vec3 d = p - centre;
      const double distance = d.norm();
      if (distance <= radius) continue;
      const Vec3 onBall = centre + d * (radius / distance);
      moved = std::max(moved, (onBall - p).norm());
      p = onBall;
    }
    if (moved < 1e-9) break;
  }
  return p;
}

double GrabReach::pinExcess(int vertex, const Vec3& position, const std::vector<std::pair<int, Vec3>>& pins) const {
  if (cloth_->topology.vertexTris[vertex].empty()) return 0;
  double excess = 0;
  for (const auto& [centre, reach] : balls(grabAtVertex(*cloth_, vertex, position), pins, vertex))
    excess = std::max(excess, (position - centre).norm() - reach);
  return excess;
}

Vec3 GrabReach::clampPin(int vertex, const Vec3& target, const std::vector<std::pair<int, Vec3>>& pins,
                         double slack) const {
  if (cloth_->topology.vertexTris[vertex].empty()) return target;
  return clamp(grabAtVertex(*cloth_, vertex, target), pins, vertex, slack);
}

}  // namespace clothlab
