#pragma once
// impulse-nc and conforming: inextensible cloth by impulses (Bender, Diziol, Bayer 2011).
//
// Constraints. Distance rows C_c = |x_b - x_a| - d_c between particles (ImpulseModel), and linear
// rows for pins and the grab: C = w . x_(axis) - target. For a pin, w is each incident
// triangle's own prediction of the vertex (x_j + x_k - x_opposite), one set of rows per triangle,
// so the triangles around a pin rotate about it instead of tearing apart, and no particle is
// frozen; each row aims at the target plus the offset its prediction had from the vertex when
// the rows were built (zero at rest). For the grab, w is the surface point the user sees
// (barycentric mix of rows of B).
//
// Impulses. With J the constraint Jacobian at x(t) and K the inverse masses, impulse magnitudes
// p solve A p = r with A = J K J^T (+ a small diagonal shift: A is singular whenever the cloth is
// flat, methods 1.6), and change velocities by K J^T p. One numeric factorization per step (the
// pattern only changes when pins or the grab change), reused by every solve of the step.
//
// One step of length h:
//   1. assemble A at x, factorize (CHOLMOD supernodal; shift grows, then LDL', if needed)
//   2. forces: v <- (M + h c R + h^2 k_b Q)^-1 (M (v + h g) - h k_b Q x): implicit bending and
//      damping of nonconforming motion (R, see ImpulseModel); with bending_model "surface" Q is
//      only the nonconformity's stiffness (nonconforming_stiffness / mean edge^2 R), and the
//      surface's own implicit hinge bending follows (bendSurface); then linear damping
//   3. a garment's stitches (sim/stitches.h) on the surface's preview x_c + h v_c: the
//      velocity changes that bring each stitch within its allowance (split by inverse mass) reach
//      the particles through the midpoint map M (below), so the passes keep the constraints and a
//      seam closes as far as the cloth lets it;
//      then contacts predicted on the surface (x_c + h v_c against the obstacles, with friction):
//      the velocity changes that land those points on the obstacles reach the particles through a
//      right inverse T of B (B T = I): the paper's least-change B^T (B B^T)^-1 with B B^T
//      prefactored, or the midpoint map M (ImpulseParams::collisionTransfer)
//   4. velocity pass: solve A p = -J v, v += K J^T p  (exact: velocity constraints hold); then
//      the friction the prediction left at each contact against the slip the pass gave it, and
//      the velocity pass again (a cloth over a table's edge holds still); where mesh obstacles'
//      features pushed points in the last step, that second pass holds them as contacts with
//      Coulomb friction in the same solve (feature_contacts: an active set over three rows per
//      point, friction bounding each patch of points joined by the cloth's edges, solved on the
//      step's factor of A through the contact rows' dense Schur complement, one factorization of
//      it per round)
//   5. position pass on the preview x~ = x + h v: while max|C(x~)| > tol: solve A p = -C/h,
//      v += K J^T p, halving a correction that increases the squared error (back-tracking);
//      if none helps, or progress is slow, re-linearize at x~ (bounded, reported), the particles
//      made heavier by the impulses their rows carry (geometric stiffness), only around the rows
//      still above the tolerance while that pays
//   6. x <- x~; surface points the pass left inside an obstacle are put back on it (through T);
//      where that breaks constraints the pass met, the pass runs again holding those points on
//      the obstacle (contact_rounds); then mesh features and self-collision, split by inverse
//      mass and sent through M, so that the cloth's pushes on itself keep its momentum
//   Pulled by a grab: the push backs off while the pass is left far above the tolerance
// A non-finite or runaway state restores the state before the step and reports the step.
#include <memory>

#include "sim/linear/spd_solver.h"
#include "sim/params.h"
#include "sim/solver.h"
#include "sim/solvers/impulse/impulse_model.h"

namespace clothlab {

struct ImpulseParams {
  double tolerance = 1e-6;       // position constraint tolerance max|C| [m], [1e-10, 0.1]
  int maxIterations = 50;        // cap on position solves per step, [1, 1000]
  double regularization = 1e-6;  // diagonal shift relative to max diag(A), [0, 0.01]
  int backtrackHalvings = 4;     // halvings of a correction that increased the error, [0, 30]
  std::string linearSolver = "auto";  // auto (by size: spdSolverId) | cholmod | eigen-ldlt
  bool boundaryConstraints = true;  // nonconforming boundary constraints (methods 1.3)
  double maxSpeed = 1000;        // speed treated as divergence [m/s], [1, 1e6]
  // How the obstacles' contact corrections on the surface reach the NC particles: "midpoint" moves
  // each particle by the mean correction of its edge's two vertices (a conforming displacement,
  // B M = I); "bbt" is the paper's least-change transfer B^T (B B^T)^-1 dx_c. Both reproduce dx_c
  // exactly on the surface. The cloth's own corrections (stitches, self-collision and the mesh
  // features resolved with it) always take the midpoint map, the one that keeps the momentum.
  std::string collisionTransfer = "bbt";
  // When the position pass stalls (the correction cannot reduce the error because the constraint
  // directions at x(t) no longer describe the preview, e.g. in fast whips) or makes slow
  // progress, re-linearize at the preview and factorize again, at most this many times per
  // step. 0: the paper's strict one factorization per step. Cloth hanging from point pins on
  // fine meshes and cloth lying on a sphere need several: near a point pin or a taut edge the
  // nearly flat cloth makes A nearly singular, a correction moves points 10 or more times as
  // far as the error it removes, and the directions of the last linearization stop describing
  // the preview after one or two solves (docs/measurements.md). With 3 the error left by each
  // step piled up on `hanging` at 8000 triangles (1 cm after 0.4 s). [0, 20]
  int maxRefactorizations = 10;
  // Each re-linearization shifts the diagonal this many times more than the one before (a
  // Levenberg-Marquardt damping: shorter, safer steps). 1 keeps the base shift: a larger one
  // shortens the steps so much that the later re-linearizations gain almost nothing. [1, 1e4]
  double refactorizationShiftGrowth = 1;
  // A correction that cuts the squared error by less than this fraction counts as slow progress:
  // the next iteration re-linearizes (while re-linearizations remain) instead of taking dozens
  // of solves that each gain a fraction of a per cent. 0: only a stall re-linearizes. [0, 0.9]
  double slowProgressGain = 0.1;
  // Lumped geometric stiffness in the re-linearizations (Tournier et al. 2015). A taut row
  // carries a transverse stiffness P / (h d) (P its impulse, d its length) that Gauss-Newton
  // corrections leave out; where cloth hangs from point pins or lies on a sphere they then swing
  // taut particles far sideways and the back-tracking rejects them. Once a correction has been
  // rejected in a step, each re-linearization makes every particle heavier by
  // gain * h * sum |P| / d over its distance rows, P the impulse the step has applied along the
  // row so far (velocity pass and accepted corrections). The first linearization and the
  // velocity pass keep the true masses; without pins, grab or held contacts the momentum the
  // stiffened masses would add is taken back. 0: off. [0, 10]
  double geometricStiffness = 0.5;
  // Re-linearizations where the errors are. After the first corrections of a step the rows above
  // the tolerance are a few hundred of `sphere-drop`'s 59 398, on the rim of the contact; a
  // re-linearization then factorizes only the rows around them (their particles and three rings
  // more move, the rest of the cloth is held) at a fraction of the full factorization's cost.
  // Used while it pays (the first correction, taken whole, halves the squared error): held
  // surroundings cannot give way to a stretch that needs the cloth around to move, as near point
  // pins, so one that does not is followed by one reaching twice as far, up to 24 rings, and then
  // the pass re-linearizes the whole cloth. Local ones are not counted in
  // maxRefactorizations (maxIterations bounds them). false: every re-linearization is global
  // (the default of `conforming`).
  bool localRelinearization = true;
  // Position passes per step. After a pass that met the tolerance, the contacts put points it
  // moved into an obstacle back on it and break constraints; the next pass holds those points on
  // the obstacle along its normal (one row each on the surface vertex, kept for the rest of the
  // step) and the contacts run again. On `tablecloth` with its middle dragged off the table 212
  // of 300 steps end above the tolerance with 1 (up to 1.5 cm), 20 with 4. 1: no repeat. [1, 20]
  int contactRounds = 4;
  // The same for the points that mesh obstacles' features and self-collision move. Off by
  // default: on `fold-drop` and `torus-drape` the median error falls about 30 times, but the
  // collision passes rerun each round and a step takes 5 times as long (`spinning-sphere`: 64
  // instead of 227 of 600 steps above the tolerance, at 1.8 times the mean time).
  bool holdPairCorrections = false;
  // Only the points that mesh obstacles' sharp features move (an apex, a horn), which the pass
  // otherwise pulled back every step: on a sheet dropped on a pyramid's apex the median error
  // falls from 1.6e-2 to 1.3e-3 m, on Spot from 6.8e-4 to 1.0e-5 m, at 1.5 to 1.7 times the
  // time. Nothing changes without sharp features.
  bool holdFeatureCorrections = true;
  // The step's forces (the implicit bending and damping solve) and its contact prediction do not
  // use A: they run on a second thread while A is assembled and factorized, whenever the
  // simulation steps in progress leave a hardware thread free. Same results either way.
  bool parallelForces = true;
  // A cloth that needs no impulse, such as one falling freely (J v = 0 within rounding, every row
  // within the tolerance at the preview), needs no factorization of A. After such a step the next
  // one assembles and factorizes A only once its velocity pass or its first position pass has
  // something to solve (then after the forces, not beside them). A cloth lying on an obstacle is
  // not idle: the contacts and friction move its points apart by about the tolerance each step.
  // false: A is factorized every step, as BDB11 do.
  bool skipIdleFactorization = true;
  // Damping of nonconforming motion (impulse-nc): force -rate * mean particle mass * R v, with R
  // zero on conforming motion, so smooth motion and equilibria are unchanged while the spurious
  // zig-zag modes of the edge-midpoint mesh die out. [1/s], [0, 1e4]
  double nonconformingDamping = 100;
  // Under bending_model "surface": a stiffness k_nc = this * k_b / (mean rest edge)^2 on the
  // nonconforming shapes, energy k_nc / 2 x^T R x (zero on every midpoint field of a conforming
  // surface). The surface's hinge energy does not see them; the CR energy holds them itself. Left
  // free, the position passes' corrections pile them up: a strip sewn into a loop strained its
  // surface's edges by 0.87 (0.040 at 3, the CR energy's 0.012), and the cantilevers' edges by up
  // to 0.23 (0.13). Nothing is added to the force system's pattern: R is the damping's.
  // [k_b / m^2], [0, 1e4]
  double nonconformingStiffness = 3;
  // The bending energy (impulse-nc; setBendingModel in impulse_model.h): "crouzeix-raviart" on
  // the particles (methods 1.10), or "surface", the hinge energy of the surface the user sees,
  // taken implicitly on the surface's vertices after the force solve (bendSurface). On the
  // clamped cantilevers the CR energy lets the sheet crease over the 30 cm beyond the clamp
  // (tips 15 to 46% below xpbd's); with the surface's only the kink at the clamp's jagged edge
  // is left, where the pins make the triangles rigid.
  std::string bendingModel = "crouzeix-raviart";
  // Contacts with mesh obstacles' sharp features in the velocity pass. The features' pushes come
  // after the passes, as position corrections without friction; where a feature carries the
  // cloth (a cloth hung on the scanned bunny's top) it slid off over that frictionless point,
  // and friction applied after the pass at those few points was spread over the whole cloth by
  // the next pass. With this, each point a feature pushed in the last step is held in the next
  // velocity pass as a contact of the same solve (its velocity along the push no less than the
  // obstacle's, along the surface the obstacle's, that impulse within the obstacle's friction x
  // the normal one; ImpulseSolver::Impl::contactVelocityPass). Nothing changes without sharp
  // features.
  bool featureContacts = true;
  static const ParamTable<ImpulseParams>& table();
};

class ImpulseSolver final : public Solver {
 public:
  enum class Mode { Nonconforming, Conforming };
  explicit ImpulseSolver(Mode mode);
  ~ImpulseSolver() override;

  std::string id() const override;
  std::optional<std::string> reset(std::shared_ptr<const ClothModel> cloth, const SimParams& sim,
                                   const nlohmann::json& params) override;
  std::optional<std::string> setParams(const nlohmann::json& params) override;
  nlohmann::json params() const override;
  std::optional<std::string> step(const StepContext& ctx, StepStats& stats) override;
  const Positions& surface() const override { return surface_; }
  Positions surfaceVelocities() const override;
  // The particles, and what the next steps learnt from the last ones (the grab's push, how often
  // the step's factor failed as a first correction): so that the same steps follow a state given
  // back.
  SolverState state() const override;
  void setState(const SolverState& state) override;
  SolverCounts counts() const override;
  void debugGeometry(Positions& points, std::vector<std::pair<int, int>>& lines) const override;

  // Inspection (tests, overlays).
  const ImpulseModel& model() const { return model_; }
  const Positions& particlePositions() const { return x_; }
  const Positions& particleVelocities() const { return v_; }
  void setParticleState(const Positions& x, const Positions& v);
  Eigen::VectorXd inverseMasses() const { return inverseMass_; }
  // J (rows x 3*particles, particle-major: column 3p + d) and A = J K J^T (no shift) at the
  // current positions, for the distance rows and the current pin/grab rows, and after them a row
  // for each (surface vertex, unit direction) in `held`, as a later pass holds a vertex the
  // contacts moved.
  SparseMatrix jacobian(const std::vector<std::pair<int, Vec3>>& held = {}) const;
  SparseMatrix constraintMatrix(const std::vector<std::pair<int, Vec3>>& held = {}) const;
  // The velocity pass alone at the current state: velocities become tangent to the constraints
  // (J v = 0 up to the regularization). Rows for ctx's pins and grab.
  std::optional<std::string> projectVelocities(const StepContext& ctx);
  // Position errors of all distance rows at the current positions [m].
  Eigen::VectorXd distanceErrors() const;

 private:
  struct Impl;
  // Runs `inspect` on the current rows, with the rows holding `held` appended while it runs.
  template <typename Inspect>
  auto inspectRows(const std::vector<std::pair<int, Vec3>>& held, Inspect inspect) const;
  // Takes params_.bendingModel: the model's bending (setBendingModel), the surface's implicit
  // step where it bends the surface, and a new force factor.
  void useBendingModel();
  std::unique_ptr<Impl> impl_;
  Mode mode_;
  ImpulseParams params_;
  std::shared_ptr<const ClothModel> cloth_;
  ImpulseModel model_;
  Positions x_, v_;         // particles [m], [m/s]
  Eigen::VectorXd extraMass_;  // point masses carried by each particle [kg]
  // Per surface vertex, for the air (sim/air.h): its share of the rest area [m^2] and its point
  // masses [kg].
  Eigen::VectorXd vertexAreaShare_, vertexPointMass_;
  // The fraction of the grab's rate it pushes at (halved after a step whose position pass ended
  // above kGrabPushFloor mean edge lengths, doubled after any other).
  double grabGain_ = 1;
  double meanEdgeLength_ = 0;  // of the rest mesh [m], which scales the push's floor
  Positions surface_;       // B x [m]
  Eigen::VectorXd inverseMass_;
};

}  // namespace clothlab
