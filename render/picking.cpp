#include "render/picking.h"

#include <cmath>

namespace clothlab {

std::optional<SurfaceHit> pickSurface(const Snapshot& snapshot, const Ray& ray) {
  if (!snapshot.triangles) return std::nullopt;
  const Vec3 o(ray.origin.x, ray.origin.y, ray.origin.z), d(ray.direction.x, ray.direction.y, ray.direction.z);
  const auto& tris = *snapshot.triangles;
  std::optional<SurfaceHit> best;
  for (int t = 0; t < snapshot.triangleCount(); ++t) {
    // Moller-Trumbore.
    const Vec3 a = snapshot.vertex(static_cast<int>(tris[3 * t]));
    const Vec3 e1 = snapshot.vertex(static_cast<int>(tris[3 * t + 1])) - a;
    const Vec3 e2 = snapshot.vertex(static_cast<int>(tris[3 * t + 2])) - a;
    const Vec3 p = d.cross(e2);
    const double det = e1.dot(p);
    if (std::abs(det) < 1e-14) continue;
    const Vec3 s = o - a;
    const double u = s.dot(p) / det;
    if (u < 0 || u > 1) continue;
    const Vec3 q = s.cross(e1);
    const double v = d.dot(q) / det;
    if (v < 0 || u + v > 1) continue;
    const double dist = e2.dot(q) / det;
    if (dist <= 0 || (best && dist >= best->distance)) continue;
    SurfaceHit hit;
    hit.triangle = t;
    hit.barycentric = Vec3(1 - u - v, u, v);
    hit.distance = dist;
    hit.point = o + dist * d;
    int corner = 0;
    hit.barycentric.maxCoeff(&corner);
    hit.nearestVertex = static_cast<int>(tris[3 * t + corner]);
    best = hit;
  }
  return best;
}

}  // namespace clothlab
