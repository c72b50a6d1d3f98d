#pragma once
// impulse-nc and conforming: inextensible cloth by impulses (Bender, Diziol, Bayer 2011).
//
// Constraints. Distance rows C_c = |x_b - x_a| - d_c between particles (ImpulseModel), and linear
// rows for pins and the grab: C = w . x_(axis) - target, where w maps particles to a surface
// vertex (a row of B) or a surface point (barycentric mix of rows of B). A pin therefore holds
// the *surface vertex* at its target without freezing any particle.
//
// Impulses. With J the constraint Jacobian at x(t) and K the inverse masses, impulse magnitudes
// p solve A p = r with A = J K J^T (+ a small diagonal shift: A is singular whenever the cloth is
// flat, methods 1.6), and change velocities by K J^T p. One numeric factorization per step (the
// pattern only changes when pins or the grab change), reused by every solve of the step.
//
// One step of length h:
//   1. assemble A at x, factorize (CHOLMOD supernodal; shift grows, then LDL', if needed)
//   2. forces: v <- (M + h^2 k_b Q)^-1 (M (v + h g) - h k_b Q x)  (implicit bending), damping
//   3. velocity pass: solve A p = -J v, v += K J^T p  (exact: velocity constraints hold)
//   4. position pass: x~ = x + h v; while max|C(x~)| > tol: solve A p = -C(x~)/h, v += K J^T p,
//      halving the correction while it makes the error grow (back-tracking), at most N solves
//   5. x <- x~; surface x_c = B x; obstacle contacts on x_c give dx_c, sent back through the
//      prefactored B B^T: x += B^T l, v += B^T l / h with (B B^T) l = dx_c
// A non-finite or runaway state restores the state before the step and reports the step.
#include <memory>

#include "sim/linear/spd_solver.h"
#include "sim/params.h"
#include "sim/solver.h"
#include "sim/solvers/impulse/impulse_model.h"

namespace clothlab {

struct ImpulseParams {
  double tolerance = 1e-6;       // position constraint tolerance max|C| [m], [1e-10, 0.1]
  int maxIterations = 30;        // cap on position solves per step, [1, 1000]
  double regularization = 1e-6;  // diagonal shift relative to max diag(A), [0, 0.01]
  int backtrackHalvings = 4;     // halvings of a correction that increased the error, [0, 30]
  std::string linearSolver = "cholmod";  // cholmod | eigen-ldlt
  bool boundaryConstraints = true;  // nonconforming boundary constraints (methods 1.3)
  double maxSpeed = 1000;        // speed treated as divergence [m/s], [1, 1e6]
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
  SolverCounts counts() const override;

  // Inspection (tests, overlays).
  const ImpulseModel& model() const { return model_; }
  const Positions& particlePositions() const { return x_; }
  const Positions& particleVelocities() const { return v_; }
  void setParticleState(const Positions& x, const Positions& v);
  Eigen::VectorXd inverseMasses() const { return inverseMass_; }
  // J (rows x 3*particles, particle-major: column 3p + d) and A = J K J^T (no shift) at the
  // current positions, for the distance rows and the current pin/grab rows.
  SparseMatrix jacobian() const;
  SparseMatrix constraintMatrix() const;
  // Position errors of all distance rows at the current positions [m].
  Eigen::VectorXd distanceErrors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Mode mode_;
  ImpulseParams params_;
  std::shared_ptr<const ClothModel> cloth_;
  ImpulseModel model_;
  Positions x_, v_;         // particles [m], [m/s]
  Positions surface_;       // B x [m]
  Eigen::VectorXd inverseMass_;
};

}  // namespace clothlab
