#include "sim/obstacles.h"

#include <algorithm>
#include <cmath>

namespace clothlab {

std::string obstacleTypeName(Obstacle::Type type) {
  switch (type) {
    case Obstacle::Type::Plane: return "plane";
    case Obstacle::Type::Sphere: return "sphere";
    case Obstacle::Type::Box: return "box";
    case Obstacle::Type::Mesh: return "mesh";
  }
  return "?";
}

namespace {

double meshSignedDistance(const MeshShape& shape, const Vec3& p, Vec3* normal, const Vec3* previous, double reach) {
  // Outside the mesh's box by more than the reach: nothing to do (a closed mesh has no inside
  // there; a point that crossed an open one moved at least as far as it is from the box).
  const Eigen::AlignedBox3d box(shape.lo(), shape.hi());
  const double outside = std::sqrt(box.squaredExteriorDistance(p));
  const double travel = previous && !shape.closed() ? (p - *previous).norm() : 0.0;
  if (outside >= std::max(reach, travel)) {
    *normal = Vec3::UnitY();
    return outside;
  }
  if (shape.closed()) {
    // Near the surface the closest point's pseudo-normal tells the side. A point farther than the
    // reach matters only when it is inside (pushed out from however deep it is); the crossings of
    // a ray tell which, far more cheaply than a search without a limit for every point in the box.
    MeshShape::Hit hit = shape.closest(p, reach + 1e-9);
    if (hit.triangle < 0) {
      if (!shape.inside(p)) {
        *normal = Vec3::UnitY();
        return std::max(reach, outside);
      }
      hit = shape.closest(p);
    }
    const Vec3 offset = p - hit.point;
    const double side = offset.dot(hit.normal) >= 0 ? 1.0 : -1.0;
    *normal = hit.distance > 1e-12 ? Vec3(side * offset / hit.distance) : hit.normal;
    return side * hit.distance;
  }
  // Open: only points near the surface matter, and those that crossed it since `previous`.
  const MeshShape::Hit hit = shape.closest(p, std::max(reach, travel) + 1e-9);
  if (hit.triangle < 0) {
    *normal = Vec3::UnitY();
    return std::max(reach, outside);
  }
  const Vec3 offset = p - hit.point;
  double belongs = 1.0;  // the side the point started on, along hit.normal
  if (previous) {
    const MeshShape::Hit before = shape.closest(*previous);
    belongs = (*previous - before.point).dot(before.normal) >= 0 ? 1.0 : -1.0;
  }
  const double side = previous ? (offset.dot(hit.normal) >= 0 ? 1.0 : -1.0) : belongs;
  if (side == belongs) {
    *normal = hit.distance > 1e-12 ? Vec3(offset / hit.distance) : Vec3(belongs * hit.normal);
    return hit.distance;
  }
  *normal = belongs * hit.normal;  // crossed: back to where it came from
  return -hit.distance;
}

}  // namespace

double signedDistance(const Obstacle& obstacle, const Vec3& p, Vec3* normal, const Vec3* previous, double reach) {
  switch (obstacle.type) {
    case Obstacle::Type::Mesh: {
      if (!obstacle.shape) return 1e300;
      const Vec3 from = previous ? obstacle.toShape(*previous) : Vec3::Zero();
      Vec3 local;
      const double d = meshSignedDistance(*obstacle.shape, obstacle.toShape(p), &local, previous ? &from : nullptr, reach);
      *normal = obstacle.rotation * local;
      return d;
    }
    case Obstacle::Type::Plane:
      *normal = obstacle.normal;
      return (p - obstacle.point).dot(obstacle.normal);
    case Obstacle::Type::Sphere: {
      const Vec3 d = p - obstacle.point;
      const double len = d.norm();
      *normal = len > 1e-12 ? Vec3(d / len) : Vec3(0, 1, 0);
      return len - obstacle.radius;
    }
    case Obstacle::Type::Box: {
      const Vec3 local = p - obstacle.point;
      const Vec3 q = local.cwiseAbs() - obstacle.halfExtents;
      if (q.maxCoeff() <= 0) {
        // Inside: out through the face it came in by, when it was outside at the start of the
        // step (a point pushed deeper than half a thin plate would otherwise leave through the
        // far face); else the nearest face.
        int axis = 0;
        double sign = 0;
        if (previous) {
          const Vec3 before = *previous - obstacle.point;
          const Vec3 outsideBefore = before.cwiseAbs() - obstacle.halfExtents;
          if (outsideBefore.maxCoeff() > 0) {
            outsideBefore.maxCoeff(&axis);
            sign = before[axis] >= 0 ? 1.0 : -1.0;
          }
        }
        if (sign == 0) {
          q.maxCoeff(&axis);
          sign = local[axis] >= 0 ? 1.0 : -1.0;
        }
        *normal = Vec3::Zero();
        (*normal)[axis] = sign;
        return sign * local[axis] - obstacle.halfExtents[axis];
      }
      const Vec3 outside = q.cwiseMax(0.0);
      Vec3 n = outside.cwiseProduct(local.cwiseSign());
      const double len = n.norm();
      *normal = n / len;
      return len;
    }
  }
  return 1e300;
}

ContactResult resolveContacts(const std::vector<Obstacle>& obstacles, double thickness,
                              const Positions& previous, const Positions& positions,
                              Positions& correction, double dt, Positions* normals,
                              ContactClearance* clearance) {
  ContactResult result;
  correction = Positions::Zero(positions.rows(), 3);
  if (normals) *normals = Positions::Zero(positions.rows(), 3);
  if (obstacles.empty()) return result;
  const size_t obstacleCount = obstacles.size();
  if (clearance && clearance->clearAt.size() != positions.rows() * obstacleCount)
    clearance->clearAt.assign(positions.rows() * obstacleCount, Vec3::Constant(std::nan("")));
  const double margin = clearance ? clearance->margin : 0.0;
  const double reach = thickness + 1e-6;  // the distances that matter
  for (Eigen::Index i = 0; i < positions.rows(); ++i) {
    Vec3 p = positions.row(i).transpose();
    bool touched = false;
    // A second sweep settles a point squeezed between two obstacles: it looks again at those
    // before the last one that pushed it (the others have seen it since). Looking at all of them
    // again cost a second closest-point search on a mesh for every point resting on it.
    size_t recheck = obstacles.size();
    for (int sweep = 0; sweep < 2; ++sweep) {
      const size_t count = sweep == 0 ? obstacles.size() : recheck;
      recheck = 0;
      for (size_t k = 0; k < count; ++k) {
        const Obstacle& obstacle = obstacles[k];
        Vec3* clearAt = clearance && obstacle.type == Obstacle::Type::Mesh
                            ? &clearance->clearAt[static_cast<size_t>(i) * obstacleCount + k]
                            : nullptr;
        // Not NaN and within the margin (a NaN compares false).
        if (clearAt && (p - *clearAt).norm() < margin) continue;
        Vec3 n;
        // Where the point was at the start of the step, seen from the obstacle as it is now.
        const Vec3 start = previous.row(i).transpose() + dt * obstacle.surfaceVelocity(previous.row(i).transpose());
        const double distance = signedDistance(obstacle, p, &n, &start, reach);
        if (clearAt) {
          // Nothing within the reach: is it clear by the margin too? (Points resting on the
          // surface, most of a draped cloth, are not asked: it would cost them a second search.)
          double clear = distance;
          if (clear >= reach && clear < thickness + margin) {
            Vec3 unused;
            clear = signedDistance(obstacle, p, &unused, &start, reach + margin);
          }
          *clearAt = clear >= thickness + margin ? p : Vec3::Constant(std::nan(""));
        }
        if (distance >= thickness) continue;
        const double depth = thickness - distance;
        result.maxDepth = std::max(result.maxDepth, depth);
        p += depth * n;
        // Friction: cancel tangential motion of this step up to friction x depth.
        const Vec3 motion = p - previous.row(i).transpose() - dt * obstacle.surfaceVelocity(p);
        const Vec3 tangential = motion - motion.dot(n) * n;
        const double slip = tangential.norm();
        if (slip > 0) p -= tangential * std::min(1.0, obstacle.friction * depth / slip);
        if (normals) normals->row(i) = n.transpose();
        touched = true;
        recheck = k;
      }
    }
    if (touched) {
      correction.row(i) = p.transpose() - positions.row(i);
      ++result.contactCount;
    }
  }
  return result;
}

}  // namespace clothlab
