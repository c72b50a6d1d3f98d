#pragma once
// Measurements on the conforming surface, shared by the CLI, the viewer and the tests.
#include "sim/mesh.h"

namespace clothlab {

// Largest | |e| / |e0| - 1 | over mesh edges, with e0 from `rest` (dimensionless).
double maxEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology, const Positions& current);

// Per-vertex strain: the largest | |e|/|e0| - 1 | over the vertex's edges (for heat maps).
Eigen::VectorXd vertexEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology,
                                 const Positions& current);

}  // namespace clothlab
