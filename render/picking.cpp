#include "render/picking.h"

#include <cmath>
#include <tuple>

#include "sim/material.h"  // flatPointAt, locateFlatPoint

namespace clothlab {

namespace {

// The nearest intersection of the ray (o, d) with `triangles` triangles over the points `p`
// (x, y, z floats), corner k of triangle t at point corner(t, k), both sides: Moller-Trumbore.
template <typename Corner>
std::optional<SurfaceHit> castRay(const std::vector<float>& p, size_t triangles, Corner corner,
                                  const Vec3& o, const Vec3& d) {
  auto point = [&](size_t t, int k) {
    const size_t v = static_cast<size_t>(corner(t, k));
    return Vec3(p[3 * v], p[3 * v + 1], p[3 * v + 2]);
  };
  std::optional<SurfaceHit> best;
  for (size_t t = 0; t < triangles; ++t) {
    const Vec3 a = point(t, 0);
    const Vec3 e1 = point(t, 1) - a;
    const Vec3 e2 = point(t, 2) - a;
    const Vec3 q0 = d.cross(e2);
    const double det = e1.dot(q0);
    if (std::abs(det) < 1e-14) continue;
    const Vec3 s = o - a;
    const double u = s.dot(q0) / det;
    if (u < 0 || u > 1) continue;
    const Vec3 q = s.cross(e1);
    const double v = d.dot(q) / det;
    if (v < 0 || u + v > 1) continue;
    const double dist = e2.dot(q) / det;
    if (dist <= 0 || (best && dist >= best->distance)) continue;
    SurfaceHit hit;
    hit.triangle = static_cast<int>(t);
    hit.barycentric = Vec3(1 - u - v, u, v);
    hit.distance = dist;
    hit.point = o + dist * d;
    best = hit;
  }
  return best;
}

}  // namespace

std::optional<SurfaceHit> pickSurface(const Snapshot& snapshot, const Ray& ray) {
  if (!snapshot.triangles) return std::nullopt;
  const Vec3 o(ray.origin.x, ray.origin.y, ray.origin.z),
      d(ray.direction.x, ray.direction.y, ray.direction.z);
  std::optional<SurfaceHit> hit;
  const bool fine =
      snapshot.fine && snapshot.cloth && snapshot.cloth->flatCoords &&
      snapshot.cloth->flatCoords->coords.rows() == snapshot.vertexCount() &&
      snapshot.finePositions.size() == 3 * static_cast<size_t>(snapshot.fine->nodeCount());
  if (fine) {
    // What is drawn is the finer mesh: the ray meets it, and the point it meets is named by its
    // place in the cloth, the cloth triangle it lies in.
    const std::vector<Tri>& faces = snapshot.fine->triangles;
    hit = castRay(
        snapshot.finePositions, faces.size(), [&faces](size_t t, int k) { return faces[t][k]; }, o,
        d);
    if (!hit) return std::nullopt;
    const FlatRest& flat = *snapshot.cloth->flatCoords;
    const Eigen::Vector2d m = flatPointAt(snapshot.fine->triangles[hit->triangle],
                                          snapshot.fine->flat, flat.wrap, hit->barycentric);
    std::tie(hit->triangle, hit->barycentric) =
        locateFlatPoint(snapshot.cloth->mesh.triangles, flat.coords, flat.wrap, m);
  } else {
    const std::vector<std::uint32_t>& tris = *snapshot.triangles;
    hit = castRay(
        snapshot.positions, tris.size() / 3, [&tris](size_t t, int k) { return tris[3 * t + k]; },
        o, d);
    if (!hit) return std::nullopt;
  }
  int corner = 0;
  hit->barycentric.maxCoeff(&corner);
  hit->nearestVertex = static_cast<int>((*snapshot.triangles)[3 * hit->triangle + corner]);
  return hit;
}

}  // namespace clothlab
