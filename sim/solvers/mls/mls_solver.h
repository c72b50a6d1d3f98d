#pragma once
// mls-isometry: meshless isometry constraints on moving-least-squares strain with Fast
// Projections (Chen, Kry, Vouga 2019; methods 2).
//
// Degrees of freedom: the mesh vertices, each a sample with material coordinates u_i from the
// flat rest state (ClothModel::materialCoords when they are a valid flattening up to a uniform
// scale, else a plane fit of a nearly flat mesh; anything else is refused with a message). Two
// constraints per sample on its MLS deformation gradient F_i (mls_constraints.h):
// tr(F^T F) - 2 = 0 and det(F^T F) - 1 = 0; the tolerance is on these dimensionless values.
// Their zero set is F^T F = I, but near it the pair bounds a pure shear (principal values
// 1 + d, 1 - d) only by |c_det| = d^2, so at tolerance 0.01 d reaches 0.1 (stretches of
// about +-5%), more with some c_tr: with stop_on = principal-strain the tolerance bounds
// |s - 1| for the principal values s of F^T F instead.
//
// One step of length h:
//   1. implicit quadratic bending (Bergou hinge Q) and external forces:
//      (M + h^2 k_b Q) v* = M v + h (f_ext - k_b Q x); pinned vertices move to their targets.
//      The matrix is constant: factorized only when k_b, h, density or the pinned set change.
//   2. x~ = x + h v*, then contacts with the obstacles on the candidate (with friction). With
//      contact_projection (the default), points within the thickness of an obstacle are then held
//      during the projection: stuck (where they began the step) while Coulomb's law lets
//      friction hold them, else sliding along the obstacle; let go (once per projection) when
//      the obstacle would have to pull (ProjectionContacts in mls_solver.cpp)
//   3. Fast Projection (Goldenthal et al. 2007) from x~: while max|c| > tol (or, with
//      stop_on = principal-strain, max |s - 1| > tol):
//        solve (J W J^T + eps I) dl = C,  x -= W J^T dl
//      W the inverse masses (0 for pins). eps = regularization x max diag: at the flat rest state
//      the trace and determinant gradients coincide and J W J^T is singular (methods 2.4). With
//      geometric_stiffness, W is the inverse of M + the PSD part of the diagonal 3x3 blocks of
//      sum_k dl_k Hess c_k (Tournier et al. 2015, block-diagonal approximation).
//      With projection_rows = trace-shear-gap the rows linearized are c_tr and the (softened) gap
//      g = s1 - s2 of F^T F's principal values instead of c_tr and c_det: the same zero set and
//      row space, but where a pure shear's c_det = -d^2 (a double root) lets each iteration only
//      halve d, the gap row asks for all of it (mls_constraints.h). The tolerance still bounds
//      |c_tr|, |c_det|. Geometric stiffness then keeps only the trace rows' curvature.
//      A grab moves the grabbed triangle's corners so that its point lands on its target (which
//      follows the mouse with the grab's time constant), and they weigh 100 times their mass in
//      the projection: they follow wherever the cloth reaches, and stay behind where it cannot;
//      while the projection pulls the point back, the next push is halved (sim/grab.h).
//      With edge_strain_limit, an edge stretched beyond the limit gets a row that holds it at
//      the limit in the same system while its multiplier shortens it (an inequality); the 1-ring
//      fits do not see every motion of their vertices, and without it a drag crumpled the cloth
//      with edges stretched up to tenfold while every sample met the tolerance.
//      A garment's stitches (sim/stitches.h) get rows the same way: a stitch farther apart than
//      its allowance is held at it, in the same system, so the seams close with the constraints
//      met; the projection ends when they are within the tolerance times the mean rest edge
//      length of their allowance (3 times, like the edges).
//   4. if two consecutive FP iterations fail to reduce max|c| (or the iteration cap is reached
//      with the residual above tolerance), the augmented-Lagrangian fallback minimizes
//      1/2 |x - x~|_M^2 + l.c + mu/2 |c|^2 (c: the projected rows) by Gauss-Newton steps,
//      l += mu c, mu x10 when |c| did not drop 4x (methods 2.6); reported as fallback_used.
//      Each step is solved in its dual form on Fast Projection's J W J^T (+ I / mu), with the
//      contacts held as in step 3.
//   5. points left inside obstacles are put back on them; v = (x - x_n) / h exactly. The
//      residual reported is the one of this final state: without contact_projection the
//      projection does not see the obstacles, and where the contacts push points back out of
//      them after it (a cloth lying on a sphere or the ground) the constraints end above the
//      tolerance, and say so.
// A non-finite or runaway state restores the state before the step and reports the step.
#include <memory>

#include "sim/grab.h"
#include "sim/linear/spd_solver.h"
#include "sim/params.h"
#include "sim/self_collision.h"
#include "sim/solver.h"
#include "sim/solvers/mls/mls_constraints.h"

namespace clothlab {

struct MlsParams {
  double tolerance = 0.01;        // max |c| accepted (dimensionless), [1e-8, 1]
  // What the tolerance bounds: "constraints" (|c|, the paper's rule) or "principal-strain"
  // (|s - 1| for the principal values s of F^T F; see the shear note above).
  std::string stopOn = "constraints";
  // The functions Fast Projection linearizes: "trace-determinant" (the paper's c_tr, c_det) or
  // "trace-shear-gap" (c_tr and the softened gap g_e of the principal values, s1 - s2: the same
  // zero set; see mls_constraints.h).
  std::string projectionRows = "trace-determinant";
  double shearGapSoftening = 0;    // e of g_e, [0, 10]
  int maxIterations = 20;         // Fast Projection iterations per step, [1, 500]
  std::string neighbourhood = "1-ring";  // 1-ring | 2-ring | radius
  double radius = 0.0;            // material-space radius for "radius" neighbourhoods [m] (0: automatic)
  std::string weighting = "uniform";     // uniform | mass
  double regularization = 1e-6;   // relative diagonal shift of J W J^T, [0, 0.1]
  bool geometricStiffness = false;
  bool fallback = true;           // augmented-Lagrangian fallback when FP stalls
  // Hand over to the fallback as soon as Fast Projection's rate (over its last two iterations)
  // would not bring the largest |c| within the tolerance in the iterations it has left, instead
  // of after them. Where it crawls (a sewn pillowcase, a crushed tube) that is most of a step.
  bool fallbackOnRate = true;
  bool contactProjection = true;   // hold contact points during the projection (see mls_solver.cpp)
  int fallbackIterations = 10;    // outer augmented-Lagrangian iterations, [1, 1000]
  double maxSpeed = 1000;         // speed treated as divergence [m/s], [1, 1e6]
  // Edges may stretch by at most this strain (0: no limit), [0, 1]. The 1-ring fits do not see
  // every motion of their vertices, so states that meet the constraints can still crumple, and
  // a drag crumpled ckv-corners with edges stretched up to tenfold (see mls_solver.cpp).
  double edgeStrainLimit = 0.2;
  // Rings of the neighbourhood of a vertex pinned alone (none of its neighbours pinned), [1, 2].
  // The cloth's weight hangs from such a point through the few neighbours of its 1-ring (2 to 4
  // at a corner), and those samples were the ones Fast Projection iterated for in almost every
  // sub-step; with the 2-ring there ckv-corners-fine takes 16 instead of 24 iterations per frame.
  // A pin set where its 2-ring fit is further off the constraints (a crease) keeps its 1-ring.
  int lonePinRings = 2;
  static const ParamTable<MlsParams>& table();
};

class MlsSolver final : public VertexSolver {
 public:
  MlsSolver();
  ~MlsSolver() override;

  std::string id() const override { return "mls-isometry"; }
  std::optional<std::string> reset(std::shared_ptr<const ClothModel> cloth, const SimParams& sim,
                                   const nlohmann::json& params) override;
  std::optional<std::string> setParams(const nlohmann::json& params) override;
  nlohmann::json params() const override;
  std::optional<std::string> step(const StepContext& ctx, StepStats& stats) override;
  SolverCounts counts() const override;
  // x, v, the grab's push rate (GrabPull) and the lengths with rows in the projection's pattern
  // (a step starts from the last one's and holds those at their limit): what a moment must carry
  // for its steps to repeat.
  SolverState state() const override;
  void setState(const SolverState& state) override;

  // Inspection (tests).
  const MlsNeighbourhoods& neighbourhoods() const { return neighbourhoods_; }
  const Eigen::MatrixX2d& materialCoordinates() const { return cloth_->flatCoords->coords; }
  double maxResidual() const;  // max |c| at the current state

 private:
  struct Impl;
  std::optional<std::string> rebuild(const MlsParams& params);
  // A curved cloth whose MLS fits cannot follow its shape (a sharp crease, a tube of a few
  // columns) starts off its constraints: a 90-degree crease on a 2 m mesh, |c| = 0.44. Projected
  // in the first step, that correction became a velocity (967 m/s, diverging in the second step).
  // reset lays it onto them at rest instead, with steps in which only the projection moves the
  // cloth, their velocity dropped (consistent initial values), until it is within the tolerance
  // or after 5 of them.
  std::optional<std::string> settle(const SimParams& sim);
  // The vertices of `pins` none of whose neighbours is pinned, sorted.
  std::vector<int> lonePins(const std::vector<std::pair<int, Vec3>>& pins) const;
  // Takes `lone` as the lone pins (MlsParams::lonePinRings), rebuilding the neighbourhoods where
  // their samples change. A pin that was lone already keeps its neighbourhood (unless `retest`);
  // any other takes its 2-ring only where that fit, at the current state, is within the tolerance
  // or no further off than the one it had. Across a crease (a folded sheet pinned at its fold) a
  // 2-ring fit sees a shrink that the 1-ring fit does not, and the next step projected it away as
  // a kick (42 m/s against 3.1). Nothing changes on error.
  std::optional<std::string> followLonePins(std::vector<int> lone, const MlsParams& params,
                                            bool retest);
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<const ClothModel> cloth_;
  MlsParams params_;
  MlsNeighbourhoods neighbourhoods_;
  std::vector<int> lonePins_;  // the lone pins the neighbourhoods were built for
  // Those whose samples take their 2-ring (none with lonePinRings 1).
  std::vector<int> twoRingPins_;
  GrabPull grabPull_;
  SelfPairCache selfPairs_;  // the self-collision pairs held from step to step
};


}  // namespace clothlab
