#include "sim/placement.h"

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>

#include "sim/format.h"
#include "sim/json_text.h"

namespace clothlab {

namespace {

std::optional<std::string> nonFinite(const Vec3& v, const std::string& what) {
  for (int d = 0; d < 3; ++d)
    if (!std::isfinite(v[d])) return what + "[" + std::to_string(d) + "] is not a finite number";
  return std::nullopt;
}

// Why a placement (its rotation, scale and `offset`, named `offsetName`) of the cloth `rest`
// cannot be made; nothing when it can.
std::optional<std::string> refused(const Vec3& rotateDeg, double scale, const Vec3& offset,
                                   const std::string& offsetName, const Positions& rest) {
  if (auto e = nonFinite(rotateDeg, "rotate_deg")) return e;
  if (auto e = nonFinite(offset, offsetName)) return e;
  if (!(scale >= 1e-6 && scale <= 1e6))
    return "scale must be between 1e-06 and 1e+06, got " + formatG(scale);
  if (rest.rows() == 0) return "the cloth has no vertices";
  return std::nullopt;
}

Vec3 boundsCentre(const Positions& rest) {
  return 0.5 * (rest.colwise().minCoeff() + rest.colwise().maxCoeff()).transpose();
}

// Takes a point where `before` places it to where `after` places it.
struct Carry {
  Carry(const Transform& before, const Transform& after)
      : turn(after.scale * after.rotation() * before.rotation().transpose() / before.scale),
        from(before.translate),
        to(after.translate) {}
  Vec3 operator()(const Vec3& p) const { return turn * (p - from) + to; }
  Eigen::Matrix3d turn;
  Vec3 from, to;
};

}  // namespace

Result<Scene> placeCloth(const Scene& scene, const Positions& rest,
                         const ClothPlacement& placement) {
  if (auto e = refused(placement.rotateDeg, placement.scale, placement.move, "move", rest))
    return Error{*e};
  const Transform& before = scene.transform;
  Transform after = before;
  after.rotateDeg = placement.rotateDeg;
  after.scale = placement.scale;
  // The bounding box's centre stays where it was, plus the move.
  const Vec3 centre = boundsCentre(rest);
  after.translate =
      centre + placement.move - Carry(before, after).turn * (centre - before.translate);
  // Through a plane: lifted along its normal. A plane is the whole half-space behind it, so a
  // cloth that is anywhere behind it could never be meant to start there.
  for (const Obstacle& obstacle : scene.obstacles) {
    if (obstacle.type != Obstacle::Type::Plane) continue;
    const Carry carried(before, after);
    double lowest = 1e300;
    for (Eigen::Index v = 0; v < rest.rows(); ++v)
      lowest = std::min(lowest,
                        (carried(rest.row(v).transpose()) - obstacle.point).dot(obstacle.normal));
    if (lowest < scene.sim.thickness)
      after.translate += (scene.sim.thickness - lowest) * obstacle.normal;
  }
  return placeClothAt(scene, rest, after);
}

Result<Scene> placeClothAt(const Scene& scene, const Positions& rest, const Transform& transform) {
  if (auto e =
          refused(transform.rotateDeg, transform.scale, transform.translate, "translate", rest))
    return Error{*e};
  const Carry carried(scene.transform, transform);
  Scene placed = scene;
  placed.transform = transform;
  // Within a millionth of the cloth's size of its vertex's rest position, a pin is at it (the
  // viewer's pins, as Simulation::currentScene gives them, all carry their target).
  const double atRest = 1e-6 * boxDiagonal(rest);
  for (PinSpec& pin : placed.pins) {
    if (pin.kind == PinSpec::Kind::Near) pin.point = carried(pin.point);
    if (!pin.target) continue;
    const bool unmoved = pin.kind == PinSpec::Kind::Vertex && pin.vertex >= 0 &&
                         pin.vertex < rest.rows() &&
                         (*pin.target - rest.row(pin.vertex).transpose()).norm() <= atRest;
    pin.target = unmoved ? std::nullopt : std::optional<Vec3>(carried(*pin.target));
  }
  for (Scene::PointMass& pm : placed.pointMasses)
    if (pm.where.kind == PinSpec::Kind::Near) pm.where.point = carried(pm.where.point);
  return placed;
}

namespace {

// How far off its best-fit plane a cloth may lie, as a fraction of its size, and still count as
// flat for standing on edge and for laying flat.
constexpr double kFlatFraction = 0.01;

}  // namespace

Obstacle groundBelowCloth(const Positions& placed, double friction) {
  const double size = boxDiagonal(placed);
  Obstacle ground;
  ground.type = Obstacle::Type::Plane;
  ground.point = Vec3(0, placed.col(1).minCoeff() - 0.5 * size, 0);
  ground.normal = Vec3::UnitY();
  ground.friction = friction;
  return ground;
}

bool standsOnEdge(const Positions& placed, const Vec3& gravity) {
  if (placed.rows() < 3 || !(gravity.norm() > 0)) return false;
  const PlaneFit fit = fitPlane(placed);
  return fit.flatWithin(kFlatFraction) &&
         std::abs(fit.normal().dot(gravity.normalized())) < std::sin(10 * std::numbers::pi / 180);
}

Result<Vec3> layFlatRotation(const Scene& scene, const Positions& rest) {
  if (rest.rows() < 3) return Error{"the cloth has fewer than 3 vertices"};
  const PlaneFit fit = fitPlane(rest);
  if (!fit.flatWithin(kFlatFraction))
    return Error{"the cloth is not flat (up to " + formatG(fit.offPlane, 3) +
                 " m off its best-fit plane, " + formatG(100 * fit.offPlane / fit.size, 3) +
                 "% of its size); turn it with the rotation instead"};
  Vec3 normal = fit.normal();
  const Vec3 up =
      scene.sim.gravity.norm() > 0 ? Vec3(-scene.sim.gravity.normalized()) : Vec3::UnitY();
  if (normal.dot(up) < 0) normal = -normal;  // the least turn: a flat cloth face down stays so
  // A level cloth is not laid flat again: the placement would restart it from rest for nothing.
  if (std::acos(std::min(normal.dot(up), 1.0)) * 180 / std::numbers::pi < kLevelDegrees)
    return Error{"the cloth already lies level (within " + formatG(kLevelDegrees, 2) +
                 " degrees of across gravity); nothing to lay flat"};
  const Eigen::Matrix3d turned = Eigen::Quaterniond::FromTwoVectors(normal, up).toRotationMatrix() *
                                 scene.transform.rotation();
  // Transform's order, R = Rz Ry Rx: eulerAngles(2, 1, 0) gives (z, y, x).
  const Vec3 zyx = turned.eulerAngles(2, 1, 0) * (180.0 / std::numbers::pi);
  Vec3 degrees(zyx.z(), zyx.y(), zyx.x());
  // No -1e-14 (or -0) in the panel.
  for (int d = 0; d < 3; ++d) degrees[d] = std::round(degrees[d] * 1e9) / 1e9 + 0.0;
  return degrees;
}

std::vector<PlacedObstacle> meshObstaclesUnderCloth(std::vector<ObjToPlace> objs,
                                                    const Vec3& clothLo, const Vec3& clothHi,
                                                    double friction,
                                                    const std::vector<Obstacle>& present,
                                                    bool clothPinned) {
  constexpr double kGap = 0.02;  // between the cloth and the tops, and between neighbours [m]
  const size_t n = objs.size();
  if (n == 0) return {};
  const Vec3 clothExtent = clothHi - clothLo;
  const double clothSize = std::max(clothExtent.maxCoeff(), 0.1);
  const int along = clothExtent.x() >= clothExtent.z() ? 0 : 2;  // the row's horizontal axis
  const Vec3 clothCentre = 0.5 * (clothLo + clothHi);
  // Each OBJ scaled, its bounding box's centre at the origin (x, z) and its top 2 cm below the
  // cloth (y); widths along the row.
  std::vector<Transform> transforms(n);
  std::vector<Eigen::AlignedBox3d> boxes(n);
  double widths = 0;
  for (size_t i = 0; i < n; ++i) {
    const Positions& p = objs[i].mesh.positions;
    const Vec3 lo = p.colwise().minCoeff(), hi = p.colwise().maxCoeff();
    Transform& t = transforms[i];
    t.scale = 0.6 * clothSize / static_cast<double>(n) / std::max((hi - lo).maxCoeff(), 1e-9);
    const Vec3 centre = 0.5 * (lo + hi);
    t.translate =
        Vec3(-t.scale * centre.x(), clothLo.y() - kGap - t.scale * hi.y(), -t.scale * centre.z());
    boxes[i] = Eigen::AlignedBox3d(t.scale * lo + t.translate, t.scale * hi + t.translate);
    widths += boxes[i].sizes()[along];
  }
  // Under a free cloth, on the ground where there is one below: down onto it.
  if (const std::optional<double> ground = clothPinned ? std::nullopt : groundHeight(present))
    for (size_t i = 0; i < n; ++i) {
      const double above = boxes[i].min().y() - *ground;
      if (above <= 0) continue;  // the ground cuts it: left where the cloth put it
      transforms[i].translate.y() -= above;
      boxes[i].translate(Vec3(0, -above, 0));
    }
  // Spread over the cloth's length, as evenly spaced as the widths leave room for.
  const double gap = std::max(kGap, (clothExtent[along] - widths) / static_cast<double>(n));
  double at = clothCentre[along] - 0.5 * (widths + static_cast<double>(n) * gap) + 0.5 * gap;
  for (size_t i = 0; i < n; ++i) {
    Vec3 move(clothCentre.x(), 0, clothCentre.z());
    move[along] = at + 0.5 * boxes[i].sizes()[along];
    at += boxes[i].sizes()[along] + gap;
    transforms[i].translate += move;
    boxes[i].translate(move);
  }
  // Beside the obstacles present, where the row would cut into one: the least shift along the
  // row that clears them all (beyond the farthest of them always does).
  std::vector<Eigen::AlignedBox3d> taken;
  for (const Obstacle& obstacle : present)
    if (auto box = obstacleBounds(obstacle)) taken.push_back(*box);
  Eigen::AlignedBox3d row;
  for (const auto& box : boxes) row.extend(box);
  const auto clear = [&](double shift) {
    Vec3 move = Vec3::Zero();
    move[along] = shift;
    for (const auto& box : boxes)
      for (const auto& other : taken)
        if (box.translated(move).intersects(other)) return false;
    return true;
  };
  double shift = 0;
  if (!clear(0)) {
    std::vector<double> shifts;
    for (const auto& other : taken) {
      shifts.push_back(other.max()[along] + kGap - row.min()[along]);
      shifts.push_back(other.min()[along] - kGap - row.max()[along]);
    }
    std::sort(shifts.begin(), shifts.end(),
              [](double a, double b) { return std::abs(a) < std::abs(b); });
    for (double s : shifts)
      if (clear(s)) {
        shift = s;
        break;
      }
  }
  std::vector<PlacedObstacle> placed(n);
  for (size_t i = 0; i < n; ++i) {
    Transform& t = transforms[i];
    t.translate[along] += shift;
    const nlohmann::json spec = {
        {"type", "mesh"},
        {"obj", std::filesystem::absolute(objs[i].path).lexically_normal().string()},
        {"transform", {{"scale", t.scale}, {"translate", vecJson(t.translate)}}}};
    placed[i].scale = t.scale;
    placed[i].obstacle.friction = friction;
    placeMeshObstacle(std::move(objs[i].mesh), t, spec, placed[i].obstacle);
  }
  return placed;
}

}  // namespace clothlab
