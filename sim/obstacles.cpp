#include "sim/obstacles.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "sim/format.h"

namespace clothlab {

std::optional<std::string> validateObstacle(const Obstacle& o, const std::string& at) {
  // Named as scene files name it (a mesh's offset is the panel's "position").
  const std::string position = o.type == Obstacle::Type::Plane  ? ".point"
                               : o.type == Obstacle::Type::Mesh ? ".position"
                                                                : ".center";
  if (!o.point.allFinite()) return at + position + ": non-finite value";
  if (o.point.cwiseAbs().maxCoeff() > kMaxObstacleCoordinate)
    return at + position + ": beyond " + formatG(kMaxObstacleCoordinate) + " m from the origin along an axis";
  if (!o.velocity.allFinite()) return at + ".velocity: non-finite value";
  if (o.velocity.cwiseAbs().maxCoeff() > kMaxObstacleSpeed)
    return at + ".velocity: beyond " + formatG(kMaxObstacleSpeed) + " m/s along an axis";
  if (!o.angularVelocity.allFinite()) return at + ".angular_velocity: non-finite value";
  if (o.angularVelocity.cwiseAbs().maxCoeff() > kMaxObstacleSpin)
    return at + ".angular_velocity: beyond " + formatG(kMaxObstacleSpin) + " rad/s about an axis";
  if (!(o.moveUntil >= 0)) return at + ".move_until: must be a non-negative number of seconds";
  if (!(o.friction >= 0 && o.friction <= kMaxFriction))
    return at + ".friction: " + formatG(o.friction) + " is outside the valid range [0, " + formatG(kMaxFriction) + "]";
  switch (o.type) {
    case Obstacle::Type::Plane:
      if (!o.normal.allFinite() || o.normal.norm() < 1e-12) return at + ".normal: must be finite and not zero";
      break;
    case Obstacle::Type::Sphere:
      if (!(o.radius > 0 && o.radius <= kMaxObstacleCoordinate))
        return at + ".radius: must be a positive number up to " + formatG(kMaxObstacleCoordinate) + " m";
      break;
    case Obstacle::Type::Box:
      if (!o.halfExtents.allFinite() || !(o.halfExtents.minCoeff() > 0) ||
          o.halfExtents.maxCoeff() > kMaxObstacleCoordinate)
        return at + ".half_extents: must be positive numbers up to " + formatG(kMaxObstacleCoordinate) + " m";
      break;
    case Obstacle::Type::Mesh:
      if (!o.shape) return at + ": a mesh obstacle without its mesh";
      break;
  }
  return std::nullopt;
}

std::string obstacleTypeName(Obstacle::Type type) {
  switch (type) {
    case Obstacle::Type::Plane: return "plane";
    case Obstacle::Type::Sphere: return "sphere";
    case Obstacle::Type::Box: return "box";
    case Obstacle::Type::Mesh: return "mesh";
  }
  return "?";
}

std::optional<Eigen::AlignedBox3d> obstacleBounds(const Obstacle& obstacle) {
  switch (obstacle.type) {
    case Obstacle::Type::Plane:
      return std::nullopt;
    case Obstacle::Type::Sphere:
      return Eigen::AlignedBox3d(obstacle.point - Vec3::Constant(obstacle.radius),
                                 obstacle.point + Vec3::Constant(obstacle.radius));
    case Obstacle::Type::Box:
      return Eigen::AlignedBox3d(obstacle.point - obstacle.halfExtents,
                                 obstacle.point + obstacle.halfExtents);
    case Obstacle::Type::Mesh: {
      if (!obstacle.shape) return std::nullopt;
      const Eigen::AlignedBox3d own(obstacle.shape->lo(), obstacle.shape->hi());
      Eigen::AlignedBox3d box;
      for (int c = 0; c < 8; ++c)
        box.extend(obstacle.toWorld(own.corner(static_cast<Eigen::AlignedBox3d::CornerType>(c))));
      return box;
    }
  }
  return std::nullopt;
}

namespace {

// The closest surface point within `radius` of p: by the hierarchy, or among the triangles an
// entry of a ContactCache gathered (gathered again when p has moved too far from where they were).
MeshShape::Hit nearest(const MeshShape& shape, const Vec3& p, double radius, ContactCache* cache,
                       ContactCache::Entry* entry) {
  if (!entry) return shape.closest(p, radius);
  double moved = entry->radius < 0 ? 0.0 : (p - entry->anchor).norm();
  if (entry->radius < 0 || moved + radius > entry->radius) {
    entry->anchor = p;
    entry->radius = radius + cache->margin;
    entry->first = static_cast<int>(cache->triangles.size());
    shape.trianglesWithin(p, entry->radius, cache->triangles);
    entry->count = static_cast<int>(cache->triangles.size()) - entry->first;
    entry->inside = -1;
    moved = 0;
  }
  return shape.closestAmong(p, std::span<const MeshShape::Near>(cache->triangles).subspan(entry->first, entry->count),
                            moved, radius);
}

double meshSignedDistance(const MeshShape& shape, const Vec3& p, Vec3* normal, const Vec3* previous, double reach,
                          ContactCache* cache, ContactCache::Entry* entry) {
  // Outside the mesh's box by more than the reach: nothing to do (a closed mesh has no inside
  // there; a point that crossed an open one moved at least as far as it is from the box).
  const Eigen::AlignedBox3d box(shape.lo(), shape.hi());
  const double outside = std::sqrt(box.squaredExteriorDistance(p));
  const double travel = previous && !shape.closed() ? (p - *previous).norm() : 0.0;
  if (outside >= std::max(reach, travel)) {
    if (entry) {  // no triangle within `outside` of here, and outside a closed mesh
      entry->anchor = p;
      entry->radius = outside;
      entry->count = 0;
      entry->inside = 0;
    }
    *normal = Vec3::UnitY();
    return outside;
  }
  if (shape.closed()) {
    // Near the surface the closest point's pseudo-normal tells the side. A point farther than the
    // reach matters only when it is inside (pushed out from however deep it is); the crossings of
    // a ray tell which, far more cheaply than a search without a limit for every point in the box.
    MeshShape::Hit hit = nearest(shape, p, reach + 1e-9, cache, entry);
    if (hit.triangle < 0) {
      // With no triangle near where the entry's point was, the point has not crossed the surface
      // since: it is on the side it was then.
      const bool known = entry && entry->count == 0 && entry->inside >= 0;
      const bool in = known ? entry->inside == 1 : shape.inside(p);
      if (entry && entry->count == 0) entry->inside = in ? 1 : 0;
      if (!in) {
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
  const MeshShape::Hit hit = nearest(shape, p, std::max(reach, travel) + 1e-9, cache, entry);
  if (hit.triangle < 0) {
    *normal = Vec3::UnitY();
    return std::max(reach, outside);
  }
  const Vec3 offset = p - hit.point;
  double belongs = 1.0;  // the side the point started on, along hit.normal
  if (previous) {
    if (entry && entry->side != 0) {
      belongs = entry->side;
    } else {
      const MeshShape::Hit before = shape.closest(*previous);
      belongs = (*previous - before.point).dot(before.normal) >= 0 ? 1.0 : -1.0;
      if (entry) entry->side = static_cast<signed char>(belongs);
    }
  }
  const double side = previous ? (offset.dot(hit.normal) >= 0 ? 1.0 : -1.0) : belongs;
  if (side == belongs) {
    *normal = hit.distance > 1e-12 ? Vec3(offset / hit.distance) : Vec3(belongs * hit.normal);
    return hit.distance;
  }
  *normal = belongs * hit.normal;  // crossed: back to where it came from
  return -hit.distance;
}

// Whether what an entry holds shows a point at q (in the shape's coordinates) clear of the mesh
// without a look at it: no triangle within the entry's radius of where it was gathered, q near
// enough there to be out of the reach of them all, and for a closed mesh, the point known to be
// outside. (An open mesh's side needs nothing more: the look that gathered them searched as far
// as the point had travelled since the start of the step, so it had not crossed the surface then,
// and it has not come near enough to cross it since.)
bool knownClear(const ContactCache::Entry& entry, const Vec3& q, double reach, bool closed) {
  if (entry.count != 0 || (closed && entry.inside != 0)) return false;
  const double slack = entry.radius - reach - 1e-9;  // how far q may be from the anchor
  return slack >= 0 && (q - entry.anchor).squaredNorm() <= slack * slack;
}

// signedDistance() of a mesh obstacle for a point given in the shape's coordinates (`q`), its
// queries through a cache entry when given.
double meshObstacleDistance(const Obstacle& obstacle, const Vec3& q, Vec3* normal, const Vec3* previous,
                            double reach, ContactCache* cache = nullptr, ContactCache::Entry* entry = nullptr) {
  if (!obstacle.shape) return 1e300;
  const Vec3 from = previous ? obstacle.toShape(*previous) : Vec3::Zero();
  Vec3 local;
  const double d = meshSignedDistance(*obstacle.shape, q, &local, previous ? &from : nullptr, reach, cache, entry);
  *normal = obstacle.rotation * local;
  return d;
}

}  // namespace

double signedDistance(const Obstacle& obstacle, const Vec3& p, Vec3* normal, const Vec3* previous, double reach) {
  switch (obstacle.type) {
    case Obstacle::Type::Mesh:
      return meshObstacleDistance(obstacle, obstacle.toShape(p), normal, previous, reach);
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

Penetration pointsInside(const Obstacle& obstacle, const Positions& positions, double allowed) {
  Penetration result;
  Vec3 normal;
  for (Eigen::Index i = 0; i < positions.rows(); ++i) {
    const double depth = -signedDistance(obstacle, positions.row(i).transpose(), &normal, nullptr, allowed);
    if (depth <= allowed) continue;
    ++result.count;
    if (depth > result.depth) {
      result.depth = depth;
      result.deepest = static_cast<int>(i);
    }
  }
  return result;
}

Eigen::VectorXd depthsWithinThickness(const std::vector<Obstacle>& obstacles, const Positions& points,
                                      double thickness) {
  Eigen::VectorXd depth = Eigen::VectorXd::Zero(points.rows());
  Vec3 normal;
  for (const Obstacle& obstacle : obstacles)
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      const double distance = signedDistance(obstacle, points.row(i).transpose(), &normal, nullptr, thickness);
      depth[i] = std::max(depth[i], std::clamp(thickness - distance, 0.0, thickness));
    }
  return depth;
}

Vec3 outsideObstacles(const std::vector<Obstacle>& obstacles, Vec3 p, double thickness) {
  Vec3 normal;
  for (int round = 0; round < 3; ++round) {
    bool moved = false;
    for (const Obstacle& obstacle : obstacles) {
      const double distance = signedDistance(obstacle, p, &normal, nullptr, thickness);
      if (distance >= thickness) continue;
      p += (thickness - distance) * normal;
      moved = true;
    }
    if (!moved) break;
  }
  return p;
}

std::optional<double> groundHeight(const std::vector<Obstacle>& obstacles) {
  std::optional<double> ground;
  for (const Obstacle& o : obstacles)
    if (o.type == Obstacle::Type::Plane && o.normal.y() > 0.99 * o.normal.norm())
      ground = std::max(ground.value_or(-1e300), o.point.y());
  return ground;
}

bool hasMeshObstacle(const std::vector<Obstacle>& obstacles) {
  return std::any_of(obstacles.begin(), obstacles.end(), [](const Obstacle& o) { return o.type == Obstacle::Type::Mesh; });
}

ContactResult resolveContacts(const std::vector<Obstacle>& obstacles, double thickness,
                              const Positions& previous, const Positions& positions,
                              Positions& correction, double dt, Positions* normals,
                              ContactCache* cache, const Eigen::VectorXd* allowance,
                              std::vector<FrictionLeft>* frictionLeft) {
  ContactResult result;
  correction = Positions::Zero(positions.rows(), 3);
  if (normals) *normals = Positions::Zero(positions.rows(), 3);
  if (frictionLeft) frictionLeft->assign(positions.rows(), FrictionLeft{});
  if (obstacles.empty()) return result;
  const size_t obstacleCount = obstacles.size();
  // Entries are kept for mesh obstacles only: without one the cache has nothing to hold.
  if (!hasMeshObstacle(obstacles)) cache = nullptr;
  if (cache && cache->entries.size() != positions.rows() * obstacleCount) {
    cache->entries.assign(positions.rows() * obstacleCount, ContactCache::Entry{});
    cache->triangles.clear();
  }
  const double reach = thickness + 1e-6;  // the distances that matter
  for (Eigen::Index i = 0; i < positions.rows(); ++i) {
    Vec3 p = positions.row(i).transpose();
    const double target = thicknessKept(thickness, allowance, i);
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
        ContactCache::Entry* entry = cache && obstacle.type == Obstacle::Type::Mesh && obstacle.shape
                                         ? &cache->entries[static_cast<size_t>(i) * obstacleCount + k]
                                         : nullptr;
        const Vec3 q = entry ? obstacle.toShape(p) : p;  // where the cache's entries are kept
        if (entry && knownClear(*entry, q, reach, obstacle.shape->closed())) continue;
        Vec3 n;
        // Where the point was at the start of the step, seen from the obstacle as it is now.
        const Vec3 start = previous.row(i).transpose() + dt * obstacle.surfaceVelocity(previous.row(i).transpose());
        const double distance = entry ? meshObstacleDistance(obstacle, q, &n, &start, reach, cache, entry)
                                      : signedDistance(obstacle, p, &n, &start, reach);
        if (distance >= target) continue;
        const double depth = target - distance;
        result.maxDepth = std::max(result.maxDepth, depth);
        p += depth * n;
        // Friction: cancel tangential motion of this step up to friction x depth.
        const Vec3 motion = p - previous.row(i).transpose() - dt * obstacle.surfaceVelocity(p);
        const Vec3 tangential = motion - motion.dot(n) * n;
        const double slip = tangential.norm();
        if (slip > 0) p -= tangential * std::min(1.0, obstacle.friction * depth / slip);
        if (normals) normals->row(i) = n.transpose();
        if (frictionLeft)
          (*frictionLeft)[i] = {n, obstacle.surfaceVelocity(p),
                                std::max(obstacle.friction * depth - slip, 0.0)};
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
