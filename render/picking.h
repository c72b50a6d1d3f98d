#pragma once
// Ray casts against a snapshot's surface: which material point is under the mouse.
#include <optional>

#include "render/camera.h"
#include "sim/snapshot.h"

namespace clothlab {

struct SurfaceHit {
  int triangle = 0;
  Vec3 barycentric{1.0 / 3, 1.0 / 3, 1.0 / 3};
  double distance = 0;  // along the ray [m]
  Vec3 point{0, 0, 0};
  int nearestVertex = 0;  // the triangle's corner closest to the hit
};

// Nearest intersection of the ray with the surface triangles (both sides), if any. Where the
// snapshot has a finer mesh (Snapshot::fine), the ray meets that mesh, which is what is drawn,
// and the hit names the cloth triangle and barycentric coordinates of the point it met by its
// place in the cloth's flat rest state; `point` is where the ray met the finer mesh.
std::optional<SurfaceHit> pickSurface(const Snapshot& snapshot, const Ray& ray);

}  // namespace clothlab
