#pragma once
// xpbd: the baseline most real-time cloth tools use (Macklin, Müller, Chentanez 2016). XPBD
// distance constraints on the mesh edges, solved by Gauss-Seidel sweeps with a compliance, on
// the mesh vertices. It stretches unless given many iterations; it exists to show what the
// locking-free solvers buy.
//
// One step of length h:
//   1. implicit quadratic bending and gravity, the same term as mls-isometry
//      ((M + h^2 k_b Q) v* = M v + h (M g - k_b Q x), sim/bending.h), then damping;
//      x~ = x + h v*, pinned vertices at their targets.
//   2. up to `iterations` sweeps over the edges in a fixed order: per edge e with
//      C = |x_a - x_b| - l0 and alpha~ = compliance / h^2,
//        dl = (-C - alpha~ l_e) / (w_a + w_b + alpha~),
//        l_e += dl,  x_a += w_a dl n,  x_b -= w_b dl n
//      (w = 1/m, 0 for pins; the grabbed triangle's corners, moved beforehand so that its
//      point lands on its target, weigh 100 times their mass: sim/grab.h); the obstacles push
//      points out after every sweep, with friction bounded by each sweep's depth, and mesh
//      obstacles' sharp features push the cloth's triangles and edges, with friction bounded by
//      the pushes summed over the sweeps (ObstacleFeaturePairs::resolve with a step). A
//      garment's stitches (sim/stitches.h) are swept first in each sweep, each gap brought
//      within its allowance, so that the edges have the last word. The sweeps stop early once
//      every |C| is below `tolerance`.
//   3. v = (x - x_n) / h.
// Stats: position_iterations = sweeps, max_position_error = the largest |C| over edges after the
// step [m]; converged = below tolerance. A garment's steps add max_stitch_gap (its widest stitch
// [m]) and max_stitch_excess (the most a stitch stands beyond its allowance [m]).
#include <memory>

#include "sim/bending.h"
#include "sim/grab.h"
#include "sim/params.h"
#include "sim/self_collision.h"
#include "sim/solver.h"

namespace clothlab {

struct XpbdParams {
  int iterations = 20;        // Gauss-Seidel sweeps per step, [1, 100000]
  double compliance = 0;      // edge compliance [m/N] (inverse stiffness); 0: inextensible, [0, 1]
  double tolerance = 1e-6;    // sweeps stop once max |C| is below this [m], [0, 0.1]
  double maxSpeed = 1000;     // speed treated as divergence [m/s], [1, 1e6]
  static const ParamTable<XpbdParams>& table();
};

class XpbdSolver final : public VertexSolver {
 public:
  std::string id() const override { return "xpbd"; }
  std::optional<std::string> reset(std::shared_ptr<const ClothModel> cloth, const SimParams& sim,
                                   const nlohmann::json& params) override;
  std::optional<std::string> setParams(const nlohmann::json& params) override;
  nlohmann::json params() const override;
  std::optional<std::string> step(const StepContext& ctx, StepStats& stats) override;
  SolverCounts counts() const override;
  // x, v and the grab's push rate (GrabPull), which a moment must carry for its steps to repeat.
  SolverState state() const override;
  void setState(const SolverState& state) override;

 private:
  std::shared_ptr<const ClothModel> cloth_;
  XpbdParams params_;
  std::unique_ptr<ImplicitBending> bending_;
  Eigen::VectorXd areaShare_, extraMass_;
  Eigen::VectorXd restLength_;  // per topology edge [m]
  GrabPull grabPull_;
  SelfPairCache selfPairs_;  // the self-collision pairs held from step to step
};

}  // namespace clothlab
