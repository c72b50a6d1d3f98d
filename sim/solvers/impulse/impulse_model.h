#pragma once
// The particle models of the impulse solvers (methods 1.3, 1.8).
//
// Nonconforming (Bender, Diziol, Bayer 2011, after English & Bridson 2008): one particle per edge
// midpoint; per triangle the 3 distance constraints between its edge particles (rest length =
// half the third edge); per boundary edge up to two boundary constraints to the nearest particle
// of each neighbouring triangle (duplicated pairs, which make A singular, are kept once); the
// surface ("ghost conforming mesh") is x_c = B x_nc, where vertex i averages the predictions
// x_j + x_k - x_opposite of its incident triangles.
// Conforming: particles at vertices, one distance constraint per edge, B = identity. It locks.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/bending.h"
#include "sim/linear/spd_solver.h"
#include "sim/mesh.h"

namespace clothlab {

struct DistanceConstraint {
  int a = 0, b = 0;         // first and second particle
  double restLength = 0;    // [m]
  bool boundary = false;    // boundary constraint (nonconforming only)
};

struct ImpulseModel {
  Positions restPositions;              // particleCount x 3 [m]
  Eigen::VectorXd areaShare;            // mass per unit areal density [m^2]: m = density * share
  std::vector<DistanceConstraint> constraints;
  int boundaryConstraintCount = 0;
  int duplicateBoundaryConstraints = 0;  // dropped duplicates (see header comment)
  bool conforming = false;              // B is the identity
  SparseMatrix surfaceMap;              // B: vertexCount x particleCount (empty if conforming)
  SparseMatrix surfaceMapRowsTransposed;  // B^T (column v lists the particles of vertex v)
  SparseMatrix midpointMap;             // M: particleCount x vertexCount, edge midpoints; B M = I
  SparseMatrix bending;                 // Q: particleCount x particleCount
  RestBend restBend;                    // Q's rows, bent as the rest state is (sim/bending.h)
  // The hinge energy of the surface the user sees in place of the CR energy (setBendingModel: Q
  // then only holds the nonconformity, and bendSurface bends the surface).
  bool bendingOnSurface = false;
  // R = sum over vertices i and incident triangles t of (P_ti - B_i)^T (P_ti - B_i), P_ti the
  // row of triangle t's own prediction of vertex i. R u = 0 exactly when u is the midpoint field
  // of a conforming field, so -R v damps only nonconforming motion (empty if conforming).
  SparseMatrix nonconformity;
  int particleCount() const { return static_cast<int>(restPositions.rows()); }
};

ImpulseModel buildNonconformingModel(const TriangleMesh& rest, const MeshTopology& topology,
                                     bool boundaryConstraints);
ImpulseModel buildConformingModel(const TriangleMesh& rest, const MeshTopology& topology);

// The bending of a nonconforming model: "crouzeix-raviart" (crBendingMatrix on the particles, as
// built) or "surface" (the hinge energy of the surface x_c = B x, bendSurface). The CR energy
// equals the hinge energy only where the particles are the midpoints of a conforming surface;
// elsewhere it can be lower, and a clamped cantilever creases beyond its clamp
// (docs/measurements.md). A conforming model's bending is the hinge already.
// Under "surface" Q is nonconformingStiffness / (mean rest edge)^2 R (ImpulseParams::
// nonconformingStiffness; empty at 0), so that k_b Q holds the nonconformity that the surface's
// hinge energy does not see, where the CR energy held it; under CR the stiffness is not used.
void setBendingModel(ImpulseModel& model, const std::string& bendingModel,
                     double nonconformingStiffness, const TriangleMesh& rest,
                     const MeshTopology& topology);

// The surface's implicit hinge bending (bending_model "surface"), after the particles' force
// solve: the surface's velocities v_c = B v take the vertex solvers' implicit step at `surface`
// (x_c = B x; ImplicitBending with the vertices' masses, no gravity, no pins: the pins are the
// constraints'), and the particles change by the midpoint map of that change, a conforming field
// that moves the surface by exactly it and carries its momentum (B M = I, and the particles'
// masses summed through M are the vertices'). A V x V system factorized once: on the particles
// the same energy, B^T Q_hinge B, couples particles three rings apart and made `tablecloth`'s
// force solve three times as costly. `bendingRest` as SimParams::bendingRest; `bending` holds the
// surface's hinge rows (surfaceBending). An error if the factorization fails.
std::optional<std::string> bendSurface(const ImpulseModel& model, ImplicitBending& bending,
                                       const Eigen::VectorXd& vertexMass, double stiffness,
                                       double h, const std::string& bendingRest,
                                       const Positions& surface, Positions& v);
// The implicit step of the hinge energy on the mesh's vertices, for bendSurface.
std::unique_ptr<ImplicitBending> surfaceBending(const TriangleMesh& rest,
                                                const MeshTopology& topology);

// Surface positions from particle positions (B x, or x itself when conforming).
Positions surfaceFromParticles(const ImpulseModel& model, const Positions& particles);

}  // namespace clothlab
