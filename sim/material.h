#pragma once
// The cloth's flat rest state in material coordinates: what mls-isometry's samples are placed by,
// and what says how far apart two points of an inextensible cloth can get (sim/grab.h).
#include <Eigen/Core>

#include "sim/result.h"
#include "sim/scene.h"

namespace clothlab {

// d with its first coordinate wrapped into [-period/2, period/2] when period > 0.
Eigen::Vector2d wrapOffset(Eigen::Vector2d d, double period);
// u_j - u_i, wrapped (wrapOffset).
Eigen::Vector2d materialOffset(const Eigen::MatrixX2d& u, int i, int j, double period);

// The cloth's own material coordinates when they flatten the rest mesh up to a uniform scale
// (checked on every edge, 1%), scaled to it with their period, else a plane fit of a mesh flat
// within 0.1% of its size. Otherwise an error saying why there are none (curved, texture
// coordinates not a flattening).
Result<FlatRest> flatMaterialCoordinates(const ClothModel& cloth);

}  // namespace clothlab
