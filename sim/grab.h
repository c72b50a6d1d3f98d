#pragma once
// The grab as mls-isometry and xpbd apply it: the grabbed triangle's corners are put where the
// grabbed point reaches its target, and their solver then moves them as if they weighed
// kGrabWeight times their mass. They follow the mouse wherever the cloth can reach and stay
// behind where it cannot (beyond the pins' reach) instead of stretching it; as constraints
// that had to be met, the grab and the cloth's constraints had no common solution there.
// (impulse-nc and conforming keep the grab as three rows: docs/measurements.md says why.)
#include <functional>
#include <vector>

#include "sim/solver.h"

namespace clothlab {

// With weight 10 a dragged corner of ckv-corners lagged 23 mm behind the cursor, with 100 2 mm.
constexpr double kGrabWeight = 100;

// Moves the corners of the grabbed triangle in x (a step's candidate) by the least move that
// puts the grabbed point on this step's target: its position at `start` (where the step began)
// advanced toward grab.target at the grab's rate over h. Corners for which fixed(vertex) holds
// (pins) stay. Returns the corners moved.
std::vector<int> moveGrabbedCorners(const Grab& grab, const Tri& tri, double h, const Positions& start,
                                    Positions& x, const std::function<bool(int)>& fixed);

}  // namespace clothlab
