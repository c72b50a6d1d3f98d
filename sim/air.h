#pragma once
// The air a cloth moves through: each face feels the pressure of the air that meets it,
// ½ ρ |u·n| (u·n) per unit area along its normal n, u the air's velocity (the wind) relative to
// the face (a drag coefficient of 1 on the face's normal; the air slides along the faces
// freely). So a falling sheet reaches a terminal speed, √(2 m g / ρ) for areal density m (1.28
// m/s for 0.1 kg/m² in air of 1.2 kg/m³), and a flag pinned at one edge flies in the wind.
#include <Eigen/Core>

#include "sim/mesh.h"
#include "sim/scene.h"

namespace clothlab {

// The change of each vertex's velocity over a step of `h` from the air of `sim` (air_density,
// wind) on the triangles of `mesh` at positions `x` moving at `v`, the vertices weighing `mass`
// [kg]. Each vertex takes a third of each of its faces' drag, whose rate (½ ρ A |u·n| along n, at
// the start of the step) is taken implicitly, so that no step carries a vertex past the wind's
// velocity however light the cloth or long the step. Rows of `held` vertices (pins) are zero.
// All zero when the air density is 0.
Positions airVelocityChange(const TriangleMesh& mesh, const Positions& x, const Positions& v,
                            const Eigen::VectorXd& mass, const SimParams& sim, double h,
                            const std::vector<std::pair<int, Vec3>>& held);

}  // namespace clothlab
