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
  // R = sum over vertices i and incident triangles t of (P_ti - B_i)^T (P_ti - B_i), P_ti the
  // row of triangle t's own prediction of vertex i. R u = 0 exactly when u is the midpoint field
  // of a conforming field, so -R v damps only nonconforming motion (empty if conforming).
  SparseMatrix nonconformity;
  int particleCount() const { return static_cast<int>(restPositions.rows()); }
};

ImpulseModel buildNonconformingModel(const TriangleMesh& rest, const MeshTopology& topology,
                                     bool boundaryConstraints);
ImpulseModel buildConformingModel(const TriangleMesh& rest, const MeshTopology& topology);

// Surface positions from particle positions (B x, or x itself when conforming).
Positions surfaceFromParticles(const ImpulseModel& model, const Positions& particles);

}  // namespace clothlab
