#include "sim/obstacles.h"

#include <algorithm>
#include <cmath>

namespace clothlab {

std::string obstacleTypeName(Obstacle::Type type) {
  switch (type) {
    case Obstacle::Type::Plane: return "plane";
    case Obstacle::Type::Sphere: return "sphere";
    case Obstacle::Type::Box: return "box";
  }
  return "?";
}

double signedDistance(const Obstacle& obstacle, const Vec3& p, Vec3* normal) {
  switch (obstacle.type) {
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
      if (q.maxCoeff() <= 0) {  // inside: nearest face
        int axis = 0;
        q.maxCoeff(&axis);
        *normal = Vec3::Zero();
        (*normal)[axis] = local[axis] >= 0 ? 1.0 : -1.0;
        return q[axis];
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
                              Positions& correction) {
  ContactResult result;
  correction = Positions::Zero(positions.rows(), 3);
  if (obstacles.empty()) return result;
  for (Eigen::Index i = 0; i < positions.rows(); ++i) {
    Vec3 p = positions.row(i).transpose();
    bool touched = false;
    // A second sweep settles a point squeezed between two obstacles.
    for (int sweep = 0; sweep < 2 && (sweep == 0 || (touched && obstacles.size() > 1)); ++sweep)
      for (const Obstacle& obstacle : obstacles) {
        Vec3 n;
        const double distance = signedDistance(obstacle, p, &n);
        if (distance >= thickness) continue;
        const double depth = thickness - distance;
        result.maxDepth = std::max(result.maxDepth, depth);
        p += depth * n;
        // Friction: cancel tangential motion of this step up to friction x depth.
        const Vec3 motion = p - previous.row(i).transpose();
        const Vec3 tangential = motion - motion.dot(n) * n;
        const double slip = tangential.norm();
        if (slip > 0) p -= tangential * std::min(1.0, obstacle.friction * depth / slip);
        touched = true;
      }
    if (touched) {
      correction.row(i) = p.transpose() - positions.row(i);
      ++result.contactCount;
    }
  }
  return result;
}

}  // namespace clothlab
