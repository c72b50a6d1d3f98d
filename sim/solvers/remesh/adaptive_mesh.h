#pragma once
// The adaptively refined mesh of the `strain-limit-remesh` solver (Narain, Samii, O'Brien 2012 as
// ARCSim 0.2.1 implements it; methods 3.8), in material space: every criterion is evaluated on
// the flat rest coordinates u, which no operation moves.
//
// Its nodes start as the cloth's vertices. Those are preserved (never collapsed), so the cloth's
// surface is always a subset of the nodes (nodes [0, preservedCount())) and pins, grabs, metrics
// and the renderer keep speaking in the cloth's vertices. The remesher refines where the cloth
// bends, moves unevenly or is compressed, and coarsens back to the cloth's own mesh where it no
// longer does:
//  1. sizing: per face a 2x2 metric M_f (an edge d is short enough where d^T M d <= 1), the
//     tensor maximum of curvature (dihedral angles), velocity-gradient and compression terms,
//     eigenvalues clamped to [1/max_edge^2, 1/min_edge^2] and an aspect bound; per node the
//     area-weighted mean of its faces';
//  2. flips to the anisotropic Delaunay mesh of that metric (Bossen-Heckbert), where the new
//     edge keeps its material length (within RemeshSizing::maxNewEdgeStrain) and the new faces
//     the strain limits (RemeshSizing::maxNewFaceViolation);
//  3. splits of every edge with s > 1, s^2 = (d^T M_i d + d^T M_j d) / 2, largest first, at the
//     material midpoint (position, velocity, rest position and sizing averaged), each followed
//     by flips around it;
//  4. collapses of added nodes into a neighbour where every new edge keeps s <= 0.9, no face
//     inverts (in material space or in the world), no aspect ratio falls below a quarter of
//     the bound, and the new faces keep the strain limits (RemeshSizing::maxNewFaceViolation).
#include <Eigen/Core>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/mesh.h"
#include "sim/result.h"
#include "sim/scene.h"
#include "sim/solver.h"
#include "sim/solvers/remesh/strain_limit.h"

namespace clothlab {

struct RemeshSizing {
  double minEdge = 0.02;            // shortest edge the sizing asks for [m]
  double maxEdge = 0.5;             // longest edge it allows [m] (the cloth's own edges stay)
  double refineAngle = 0.3;         // dihedral angle per edge that asks for a split [rad]
  double refineVelocity = 1.0;      // velocity difference across an edge that asks for one [m/s]
  double refineCompression = 0.01;  // compression scale (ARCSim's Delta c)
  double minAspect = 0.2;           // aspect-ratio bound of the sizing (1: equilateral)
  int maxNodes = 20000;             // splits stop at this many nodes
  // A flip may not make an edge whose length in the world differs from its material length by
  // more than this (relative): it would move the surface (a flip across a fold shortens the new
  // diagonal) and hand the strain limits a violation. (Collapses are not held to it: on a hanging
  // sheet, which is curved everywhere, they then hardly ran, and its mesh grew from 558 to 1985
  // nodes in 1 s instead of ending at 620.)
  double maxNewEdgeStrain = 0.005;
  // A flip or a collapse may not make a face that lies further beyond the strain limits
  // `limits` in the world (faceLimitViolation) than this, or than the faces it replaces did. A
  // collapse across a fold made faces that cut the fold's chord, and a flip round a sliver
  // faces that shear, and the next step's strain limiting threw them back open: on `woven-hang`
  // 60 of 600 steps handed on faces beyond the limits by up to 0.07, on `fold-drop` without
  // self-collision the remeshed meshes' edges were strained by 0.35 (median).
  StrainLimits limits;
  double maxNewFaceViolation = std::numeric_limits<double>::infinity();
};

struct RemeshCounts {
  int splits = 0, flips = 0, collapses = 0;
  bool capped = false;  // splits stopped at RemeshSizing::maxNodes
};

class AdaptiveMesh {
 public:
  // One node per vertex of `rest`, all preserved; `flat` gives their material coordinates
  // (mirrored if they wind the other way round). An error when a triangle is folded over in
  // them.
  static Result<AdaptiveMesh> fromCloth(const TriangleMesh& rest, const FlatRest& flat);

  int nodeCount() const { return static_cast<int>(material_.rows()); }
  int preservedCount() const { return preserved_; }
  int faceCount() const { return static_cast<int>(rest_.triangles.size()); }
  const Eigen::MatrixX2d& material() const { return material_; }
  const MaterialWrap& wrap() const { return wrap_; }
  // Rest positions of the nodes (the cloth's, and midpoints of them) and the faces, and its
  // topology: what bending and collisions work on.
  const TriangleMesh& restMesh() const { return rest_; }
  const MeshTopology& topology() const { return topology_; }
  const std::vector<FaceRest>& faceRests() const { return faceRests_; }

  // The mesh for drawing and measuring (sim/solver.h FineMesh): its faces, edges and their
  // material lengths, its nodes' rest positions, and their material coordinates in the frame of
  // the flattening it was built from (mirrored back where fromCloth mirrored it). Its edge strain
  // (FineMesh::maxEdgeStrain) is against the material lengths: the cloth's own edges are not
  // edges of a refined mesh, and their chords cut across its folds.
  FineMesh fineMesh() const;

  // The sizing metric of every face at the state (x, v).
  std::vector<Eigen::Matrix2d> faceSizing(const Positions& x, const Positions& v,
                                          const RemeshSizing& sizing) const;

  // The mesh remeshed for the state (x, v), which are resized with its nodes (the cloth's
  // vertices keep their rows).
  AdaptiveMesh remeshed(Positions& x, Positions& v, const RemeshSizing& sizing,
                        RemeshCounts& counts) const;

 private:
  friend struct RemeshWork;
  AdaptiveMesh() = default;
  void finish();  // face rests and topology from material_, rest_

  Eigen::MatrixX2d material_;  // u per node [m]
  MaterialWrap wrap_;          // how a tube closes round (a cylinder or a cone)
  int preserved_ = 0;
  bool mirrored_ = false;  // material_ is the flattening mirrored (v -> -v)
  TriangleMesh rest_;
  MeshTopology topology_;
  std::vector<FaceRest> faceRests_;
};

}  // namespace clothlab
