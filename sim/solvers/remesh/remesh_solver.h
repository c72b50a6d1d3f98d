#pragma once
// strain-limit-remesh: cloth held within warp, weft and bias strain limits on an adaptively
// remeshed mesh (seed 003 on top of Narain et al. 2012; methods 3). Its nodes start as the
// cloth's vertices, which stay (sim/solvers/remesh/adaptive_mesh.h); the remesher adds nodes
// where the cloth folds, moves unevenly or is compressed, and takes them away again.
//
// One step of length h, on the nodes:
//   1. the air, implicit quadratic bending on the current mesh and gravity (sim/bending.h, the
//      term mls-isometry and xpbd use; toward flat, or toward the shape as loaded, which the
//      nodes' rest positions carry across remeshing), then damping; x~ = x + h v, pins at their
//      targets, the grabbed triangle's corners put where its point meets the target (sim/grab.h).
//   2. strain limiting: the point nearest x~ in the mass metric with every face's warp, weft and
//      bias limits met (sim/solvers/remesh/strain_limit.h), by the method of multipliers
//      (methods 3.7): L_A = 1/2 sum m~ |x - x~|^2 + mu sum P(g + lambda/mu), P the penalty
//      max(s, 0)^2 / 2, smoothed for the faces' rows over `limit_smoothing` (rowPenalty in
//      strain_limit.h), each L_A minimized by Gauss-Newton steps until a step moves no node
//      by a fifth of the tolerance over the mean edge (one sparse factorization each, with the
//      upper limits' own curvature, Levenberg-Marquardt damped once the line search cuts steps;
//      ARCSim minimizes it by nonlinear conjugate gradients), the multipliers updated, mu raised
//      tenfold when the violation does not fall to a quarter, until every face is within
//      `tolerance` of its limits. The obstacles' contacts are held in it as
//      inequalities n . (p - x) <= 0: those of the candidate (friction's part of their
//      corrections, across n, moving the target x~), then those of its result while new ones
//      appear, each such round in half as many solves as the first at most. A garment's
//      stitches (sim/stitches.h) are held the same way, as |d| - allowance <= 0 with d the stitch's
//      point minus its vertex (the cloth's vertices keep their indices among the nodes), met within
//      the tolerance times the mean edge. There is no elasticity inside the limits: the cloth is
//      free between them (but for the smoothing's pull within its band of a limit), and
//      inextensible at them.
//   3. the contacts once more (with friction), mesh features (with friction too) and
//      self-collision on the nodes;
//      v = (x - x_n) / h.
//   4. every `remesh_interval` steps, the remesher; the nodes it adds over an obstacle are
//      pushed out of it.
// Stats: position_iterations = Gauss-Newton solves; max_position_error = the largest violation
// of a limit (dimensionless, also max_strain_violation) by the state handed on, on the mesh it
// is handed on with (after a remesh, the new one's); converged = within the tolerance;
// max_edge_strain over the adaptive mesh's edges, against their material lengths; extra:
// max_node_count, max_face_count, splits, flips, collapses, ms_remesh, remesh_capped.
#include <array>
#include <memory>

#include "sim/bending.h"
#include "sim/grab.h"
#include "sim/linear/spd_solver.h"
#include "sim/params.h"
#include "sim/self_collision.h"
#include "sim/solver.h"
#include "sim/solvers/remesh/adaptive_mesh.h"

namespace clothlab {

struct RemeshParams {
  double warpMin = -0.01, warpMax = 0.01;  // strain limits along material axis 1, [-0.5, 0], [0, 1]
  double weftMin = -0.01, weftMax = 0.01;  // ... along axis 2
  double biasMin = -0.05, biasMax = 0.05;  // ... along both diagonals
  double tolerance = 1e-3;      // allowed violation of a limit (dimensionless), [1e-6, 0.1]
  double limitSmoothing = 0.01;  // strain band over which a limit's pull sets in, [0, 0.1]
  int iterations = 30;           // Gauss-Newton solves per projection at most, [1, 1000]
  bool remesh = true;           // adapt the mesh (off: strain limits on the cloth's own mesh)
  int remeshInterval = 8;       // steps between remeshes, [1, 1000]
  double minEdge = 0.02;        // shortest edge the remesher makes [m], [1e-4, 10]
  double refineAngle = 0.3;     // dihedral angle per edge that asks for refinement [rad], [0.01, 3]
  double refineVelocity = 1.0;  // velocity jump across an edge that asks for it [m/s], [1e-3, 1e3]
  double refineCompression = 0.01;  // compression scale (ARCSim's Delta c), [1e-4, 1]
  int maxNodes = 20000;             // the remesher stops splitting at this many nodes, [3, 1000000]
  double maxSpeed = 1000;           // speed treated as divergence [m/s], [1, 1e6]
  static const ParamTable<RemeshParams>& table();
  StrainLimits limits() const { return {warpMin, warpMax, weftMin, weftMax, biasMin, biasMax}; }
  RemeshSizing sizing() const;
};

class RemeshSolver final : public Solver {
 public:
  std::string id() const override { return "strain-limit-remesh"; }
  std::optional<std::string> reset(std::shared_ptr<const ClothModel> cloth, const SimParams& sim,
                                   const nlohmann::json& params) override;
  std::optional<std::string> setParams(const nlohmann::json& params) override;
  nlohmann::json params() const override;
  std::optional<std::string> step(const StepContext& ctx, StepStats& stats) override;
  const Positions& surface() const override { return surface_; }
  Positions surfaceVelocities() const override;
  SolverState state() const override;
  void setState(const SolverState& state) override;
  SolverCounts counts() const override;
  // The adaptive mesh's nodes and edges.
  void debugGeometry(Positions& points, std::vector<std::pair<int, int>>& lines) const override;
  // The adaptive mesh, drawn in place of the cloth's own triangles.
  std::shared_ptr<const FineMesh> fineMesh(Positions& nodes) const override;

  const AdaptiveMesh& mesh() const { return *mesh_; }
  const Positions& nodes() const { return x_; }

 private:
  // What depends on the mesh alone: masses' area shares, point masses, bending, the projection's
  // pattern. Rebuilt when the mesh changes.
  void meshChanged();
  // A node touching an obstacle in the projection: n . (p - x) <= 0 keeps it on the outer side
  // of the plane through p (where the contacts put it) with the obstacle's normal n.
  struct ContactRow {
    int node;
    Vec3 normal, point;
  };
  // Step 2: moves x (from x~) onto the limits, the contact rows held, in `limit` Gauss-Newton
  // solves at most; adds those taken to `solves`; `violation` is x's worst (worstViolation) on
  // entry and the result's on return; an error message if a factorization failed. It returns x
  // unchanged when every limit, contact and stitch is met, unless `pullInBands` and the smoothing
  // band pulls some face's row (kBandPullFloor): the band's pull is part of the problem, and steps
  // that skipped it while others applied it pulled such rows only now and then. A sheet hanging
  // from its corners never came to rest: beside each pin a node fell freely for about ten steps
  // while every limit held, was pulled back by up to 0.16 mm in one, and swung about that
  // (docs/measurements.md). The step passes it for its first projection only: for the later
  // contact rounds too, 15 drapes ended 186 steps above the tolerance instead of 148.
  // The cloth's self-collision pairs (`pairs`, SelfCollisionPairs::rows) are held in it as
  // inequalities gap - n . sum_k c_k x_k <= 0, met within the tolerance times the mean edge like
  // the contacts.
  std::optional<std::string> project(Positions& x, const Eigen::VectorXd& mass,
                                     const std::vector<char>& fixed,
                                     const std::vector<ContactRow>& contacts,
                                     const std::vector<SelfCollisionRow>& pairs,
                                     const StepContext& ctx, bool pullInBands, int limit,
                                     int& solves, double& violation);
  double worstViolation(const Positions& x) const;

  // The Gauss-Newton matrix's upper triangle on the mesh's fixed pattern (every face's full
  // 9 x 9 block, so that one analysis serves every solve), and where each entry lies among its
  // values: built with the mesh, so that a solve fills values instead of sorting triplets.
  struct HessianPattern {
    SparseMatrix matrix;
    // Face f's block entry (3a + p, 3b + q) at [9 (3a + p) + 3b + q]; -1 below the diagonal.
    // After the faces, the cloth's stitches' blocks (their vertex, a, b) the same way.
    std::vector<std::array<int, 81>> face;
    // Node i's own 3 x 3 block, entry (p, q) at [3p + q]; -1 below the diagonal.
    std::vector<std::array<int, 9>> node;
  };
  void buildPattern();

  std::shared_ptr<const ClothModel> cloth_;
  RemeshParams params_;
  std::shared_ptr<const AdaptiveMesh> mesh_;
  std::shared_ptr<const FineMesh> fine_;  // mesh_'s, for drawing and its edge strain
  int stepsSinceRemesh_ = 0;
  double meanEdge_ = 0;  // the cloth's mean rest edge [m]
  Positions x_, v_, surface_;
  Eigen::VectorXd areaShare_, extraMass_;
  std::unique_ptr<ImplicitBending> bending_;
  std::unique_ptr<SpdSolver> projection_;
  HessianPattern pattern_;
  GrabPull grabPull_;
  SelfPairCache selfPairs_;  // the self-collision pairs held from step to step
};

}  // namespace clothlab
