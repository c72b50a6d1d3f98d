#pragma once
// The solver interface. A solver owns its own degrees of freedom (NC particles, mesh vertices,
// ...) built from an immutable ClothModel by reset(), and advances them by step(). Everything
// it is told between steps (parameters, pins, grab, obstacles) arrives in a StepContext, so cheap
// edits take effect at the next step without a reset. The conforming surface is the common
// language: pins and grabs name surface vertices / points, and surface() returns vertex positions.
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/bending.h"
#include "sim/mesh.h"
#include "sim/obstacles.h"
#include "sim/scene.h"

namespace clothlab {

// A material point of the surface pulled toward a target (the mouse). The point approaches the
// target at rate 1/timeConstant (a first-order lag, so a far jump of the mouse pulls instead of
// teleporting the cloth); releasing keeps the cloth's motion.
struct Grab {
  int triangle = 0;
  Vec3 barycentric{1.0 / 3, 1.0 / 3, 1.0 / 3};
  Vec3 target{0, 0, 0};   // world position the point is pulled to [m]
  double timeConstant = 0.03;  // [s]: the point closes the gap to the target at rate 1/timeConstant
};

// Whether a stop flag (StepContext::stop, Simulation::setStopFlag) is given and set.
inline bool stopRequested(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

struct StepContext {
  const SimParams& sim;
  const std::vector<Obstacle>& obstacles;
  const std::vector<std::pair<int, Vec3>>& pins;  // surface vertex -> world target [m]
  const std::optional<Grab>& grab;
  // Set from another thread (the viewer, for an edit that should not wait for a slow step): a
  // solver that sees it between its iterations gives the step up, restoring the state before it
  // and returning kStepStopped (Simulation::step then undoes the whole step).
  const std::atomic<bool>* stop = nullptr;
  bool stopRequested() const { return clothlab::stopRequested(stop); }
  // Per surface vertex, how far within the thickness of an obstacle, or of another part of the
  // cloth, its contacts may leave it this step [m] (kContactRecoverySpeed, sim/obstacles.h);
  // nullptr: nowhere.
  const Eigen::VectorXd* contactAllowance = nullptr;
  // Per stitch of the cloth (ClothModel::stitches, sim/stitches.h), how far apart its two points
  // may be at the end of this step [m]; nullptr: the cloth has no stitches.
  const Eigen::VectorXd* stitchAllowance = nullptr;
};

// The message of a step given up on request (StepContext::stop); not a divergence.
inline constexpr const char* kStepStopped = "stopped on request";

// Timings [ms] and convergence figures of one step. Solvers fill what applies to them.
struct StepStats {
  long step = 0;
  int substeps = 1;           // solver steps the step was taken in (sim/simulation.h)
  double t = 0;               // simulated time after the step [s]
  double msTotal = 0, msFactor = 0, msPosition = 0, msVelocity = 0, msCollision = 0, msForces = 0;
  int positionIterations = 0;  // linear solves in the position pass
  int backtracks = 0;          // halvings of a position correction that made things worse
  double maxPositionError = 0;  // largest |C_pos| after the step [m] (constraint rows + pins)
  double maxEdgeStrain = 0;     // largest | |e|/|e0| - 1 | over surface edges
  bool converged = true;        // position error below tolerance within the iteration cap
  int contacts = 0;             // surface vertices moved by obstacles
  double regularization = 0;    // relative diagonal shift used by the factorization
  std::string linearSolver;     // which factorization ran
  nlohmann::json extra = nlohmann::json::object();  // solver-specific figures
};

// The constraint error a step reports against its solver's tolerance, with its name and unit
// for a message: the largest |C| [m], or mls-isometry's dimensionless isometry residual, or
// strain-limit-remesh's dimensionless violation of a strain limit.
struct ConstraintError {
  double value;
  const char* name;
  const char* unit;  // " m", or "" where it is dimensionless
};
inline ConstraintError constraintError(const StepStats& stats) {
  if (const auto residual = stats.extra.find("max_isometry_residual");
      residual != stats.extra.end())
    return {residual->get<double>(), "max isometry residual", ""};
  if (const auto violation = stats.extra.find("max_strain_violation");
      violation != stats.extra.end())
    return {violation->get<double>(), "max strain-limit violation", ""};
  return {stats.maxPositionError, "max position error", " m"};
}
inline double reportedConstraintError(const StepStats& stats) {
  return constraintError(stats).value;
}

struct SolverCounts {
  int particles = 0;            // degrees of freedom carriers (3 DOF each)
  int constraints = 0;          // all constraint rows excluding pins/grab
  int boundaryConstraints = 0;  // of which boundary constraints
  int duplicateBoundaryConstraints = 0;  // boundary constraints dropped as duplicates (impulse-nc)
};

// What a step changes in a solver: its degrees of freedom (particles for the impulse solvers,
// vertices for the others) and their velocities. Taken before a step and given back to take the
// step again (adaptive sub-steps, sim/simulation.h).
struct SolverState {
  Positions x, v;
  // Whatever else the solver's steps change, opaque to the caller (strain-limit-remesh: its
  // adaptive mesh, whose nodes x and v are); null for the others.
  std::shared_ptr<const void> more;
};

// A finer mesh than the cloth's own on which a solver simulates the cloth (strain-limit-remesh's
// adaptive mesh), for drawing and measuring what the solver simulates. Its first nodes are the
// cloth's vertices, in their order; the others lie inside the cloth. One object per mesh: a new
// object means a new mesh.
struct FineMesh {
  std::vector<Tri> triangles;  // over the nodes
  // Each node's place in the cloth's flat rest state, in ClothModel::flatCoords's frame [m] (an
  // added node beside a tube's seam may lie once round from the rest of its piece).
  Eigen::MatrixX2d flat;
  Positions rest;                         // each node's rest position [m]
  std::vector<std::array<int, 2>> edges;  // the mesh's edges
  Eigen::VectorXd edgeLengths;            // their material lengths [m]
  // The hinge bending the solver simulates on this mesh (sim/bending.h): Q, toward flat, and the
  // rows' bends at the nodes' rest positions, toward the shape as loaded.
  SparseMatrix hinge;
  RestBend restBend;

  int nodeCount() const { return static_cast<int>(flat.rows()); }
  // Per node, the largest | |e| / |e0| - 1 | of its edges at the nodes' positions `x`.
  Eigen::VectorXd nodeStrain(const Positions& x) const;
  // The largest of them over the mesh.
  double maxEdgeStrain(const Positions& x) const;
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string id() const = 0;
  // Builds the solver's model from the cloth. `params` is the solver's parameter object (JSON);
  // unknown keys and bad values are errors naming the key.
  virtual std::optional<std::string> reset(std::shared_ptr<const ClothModel> cloth,
                                           const SimParams& sim, const nlohmann::json& params) = 0;
  // Replaces solver parameters between steps (validated; nothing changes on error). Before reset
  // it only checks and keeps them (the CLI checks its flags so); reset's own then replace them.
  virtual std::optional<std::string> setParams(const nlohmann::json& params) = 0;
  virtual nlohmann::json params() const = 0;
  // Advances one step of ctx.sim.dt. On divergence (non-finite or runaway state) or a failed
  // factorization the state is left as it was before the step and a message is returned.
  virtual std::optional<std::string> step(const StepContext& ctx, StepStats& stats) = 0;
  // Positions of the conforming surface vertices [m], vertexCount x 3; always finite.
  virtual const Positions& surface() const = 0;
  // Velocities of the surface vertices [m/s].
  virtual Positions surfaceVelocities() const = 0;
  virtual SolverState state() const = 0;
  virtual void setState(const SolverState& state) = 0;
  virtual SolverCounts counts() const = 0;
  // Optional debug geometry for overlays: points [m] and index pairs of lines between them
  // (impulse solvers: the particles and their distance constraints). Default: none.
  virtual void debugGeometry(Positions& points, std::vector<std::pair<int, int>>& lines) const {
    points.resize(0, 3);
    lines.clear();
  }
  // The finer mesh the solver simulates on, with its nodes' positions in `nodes` [m]; null (and
  // `nodes` untouched) where the solver simulates on the cloth's own mesh.
  virtual std::shared_ptr<const FineMesh> fineMesh(Positions& nodes) const {
    (void)nodes;
    return nullptr;
  }
};

// A solver whose degrees of freedom are the surface vertices themselves (mls-isometry, xpbd):
// its state is the surface and its velocities.
class VertexSolver : public Solver {
 public:
  const Positions& surface() const override { return x_; }
  Positions surfaceVelocities() const override { return v_; }
  SolverState state() const override { return {x_, v_, nullptr}; }
  void setState(const SolverState& state) override {
    x_ = state.x;
    v_ = state.v;
  }

 protected:
  Positions x_, v_;  // surface vertices [m] and their velocities [m/s]
};

}  // namespace clothlab
