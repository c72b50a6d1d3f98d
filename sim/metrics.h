#pragma once
// Measurements on the conforming surface, shared by the CLI, the viewer and the tests.
#include <vector>

#include "sim/linear/spd_solver.h"
#include "sim/mesh.h"

namespace clothlab {

// Largest | |e| / |e0| - 1 | over mesh edges, with e0 from `rest` (dimensionless).
double maxEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology, const Positions& current);

// Per-vertex strain: the largest | |e|/|e0| - 1 | over the vertex's edges (for heat maps).
Eigen::VectorXd vertexEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology,
                                 const Positions& current);

// Locking metrics (compare mode, CLI, tests). Heights are measured along `up` (unit vector).

// Sag [m]: how far the surface point that starts at the middle between two pinned vertices has
// dropped below the pins' mean height. The reference is the vertex whose rest position is
// nearest the rest midpoint of the pins (for corner pins: the middle of the edge between them).
double pinnedSag(const TriangleMesh& rest, const Positions& current, int pinA, int pinB,
                 const Vec3& up);

// Mean height [m] of the given vertices (for the cantilever: the free edge's tip height).
double meanHeight(const Positions& current, const std::vector<int>& vertices, const Vec3& up);

// Discrete bending energy [J] of the surface, k_b/2 sum_d x_d^T Q x_d with the hinge matrix Q of
// the rest mesh (sim/bending.h), k_b [N m].
double bendingEnergy(const SparseMatrix& hinge, double bendingStiffness, const Positions& current);

// Rest distances [m] from `reference` to every vertex, for the shear test below: for a flat rest
// mesh the straight rest distance (the geodesic, exactly); otherwise the shortest path along rest
// edges (an upper bound of the geodesic). Infinite for vertices not connected to `reference`.
Eigen::VectorXd restDistancesFrom(const TriangleMesh& rest, const MeshTopology& topology,
                                  int reference);

// Shear test [dimensionless]: the largest relative increase of the distance from `reference` to
// any other vertex, max_j (|x_j - x_ref| - g_j) / g_j, with g_j = restDistance[j] (from
// restDistancesFrom, computed once per rest mesh and reference). Vertices closer than
// `minDistance` [m] at rest are skipped (their ratio is dominated by round-off).
double maxDistanceIncrease(const Eigen::VectorXd& restDistance, const Positions& current,
                           int reference, double minDistance = 1e-6);
// The same, with the rest distances computed on the spot.
double maxDistanceIncrease(const TriangleMesh& rest, const MeshTopology& topology,
                           const Positions& current, int reference, double minDistance = 1e-6);

}  // namespace clothlab
