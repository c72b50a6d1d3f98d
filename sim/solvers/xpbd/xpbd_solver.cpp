#include "sim/solvers/xpbd/xpbd_solver.h"

#include <cmath>
#include <optional>

#include "sim/air.h"
#include "sim/format.h"
#include "sim/grab.h"
#include "sim/metrics.h"
#include "sim/self_collision.h"
#include "sim/stitches.h"
#include "sim/timing.h"

namespace clothlab {

const ParamTable<XpbdParams>& XpbdParams::table() {
  static const ParamTable<XpbdParams> table = {
      {"iterations", "", "Gauss-Seidel sweeps over the edges per step", &XpbdParams::iterations, 1,
       100000, true},
      {"compliance", "m/N", "edge compliance (0: inextensible)", &XpbdParams::compliance, 0, 1, false},
      {"tolerance", "m", "sweeps stop once every edge error is below this", &XpbdParams::tolerance, 0,
       0.1, false},
      {"max_speed", "m/s", "speed treated as divergence", &XpbdParams::maxSpeed, 1, 1e6, true},
  };
  return table;
}

std::optional<std::string> XpbdSolver::reset(std::shared_ptr<const ClothModel> cloth, const SimParams&,
                                             const nlohmann::json& params) {
  XpbdParams parsed;
  if (auto e = readParams(params, XpbdParams::table(), parsed, "solver")) return e;
  cloth_ = std::move(cloth);
  params_ = parsed;
  const TriangleMesh& mesh = cloth_->mesh;
  const MeshTopology& topology = cloth_->topology;
  areaShare_ = vertexAreaShares(mesh);
  extraMass_ = vertexPointMasses(*cloth_);
  restLength_ = edgeLengths(mesh.positions, topology.edges);
  bending_ = std::make_unique<ImplicitBending>(hingeBendingRows(mesh, topology), mesh.positions);
  x_ = mesh.positions;
  v_ = Positions::Zero(mesh.vertexCount(), 3);
  grabPull_ = GrabPull(restLength_.mean());
  return std::nullopt;
}

std::optional<std::string> XpbdSolver::setParams(const nlohmann::json& params) {
  XpbdParams parsed = params_;
  if (auto e = readParams(params, XpbdParams::table(), parsed, "solver")) return e;
  params_ = parsed;
  return std::nullopt;
}

nlohmann::json XpbdSolver::params() const { return writeParams(XpbdParams::table(), params_); }

SolverState XpbdSolver::state() const {
  return {x_, v_, std::make_shared<const GrabPull>(grabPull_)};
}

void XpbdSolver::setState(const SolverState& state) {
  VertexSolver::setState(state);
  if (state.more) grabPull_ = *static_cast<const GrabPull*>(state.more.get());
}

SolverCounts XpbdSolver::counts() const {
  return {static_cast<int>(x_.rows()), cloth_ ? cloth_->topology.edgeCount() : 0, 0};
}

std::optional<std::string> XpbdSolver::step(const StepContext& ctx, StepStats& stats) {
  const auto stepStart = Clock::now();
  const double h = ctx.sim.dt;
  const int n = static_cast<int>(x_.rows());
  const Positions x0 = x_, v0 = v_;
  auto restore = [&](const std::string& why) {
    x_ = x0;
    v_ = v0;
    return std::optional<std::string>(why);
  };
  const Eigen::VectorXd mass = ctx.sim.density * areaShare_ + extraMass_;
  Eigen::VectorXd w = mass.cwiseInverse();
  for (const auto& pin : ctx.pins) w[pin.first] = 0;

  // 1. Bending and gravity, then the candidate.
  auto t = Clock::now();
  if (ctx.sim.airDensity > 0)
    v_ += airVelocityChange(cloth_->mesh, x_, v_, mass, ctx.sim, h, ctx.pins);
  if (auto e = bending_->velocities(mass, ctx.sim.bending, h, ctx.sim.gravity, x_, v_, ctx.pins, v_,
                                    restShapeFor(ctx.sim.bendingRest, bending_->restBend())))
    return restore(*e);
  if (ctx.sim.damping > 0) v_ /= 1.0 + h * ctx.sim.damping;
  Positions x = x_ + h * v_;
  for (const auto& [vertex, target] : ctx.pins) x.row(vertex) = target.transpose();
  stats.msForces = msSince(t);

  // The grab (sim/grab.h).
  if (ctx.grab) {
    const auto moved = grabPull_.move(*ctx.grab, cloth_->mesh.triangles[ctx.grab->triangle], h, x_, x,
                                      [&](int vertex) { return w[vertex] == 0; });
    for (int vertex : moved) w[vertex] /= kGrabWeight;
  } else {
    grabPull_.release();
  }

  // 2. Gauss-Seidel sweeps.
  t = Clock::now();
  const auto& edges = cloth_->topology.edges;
  const double alpha = params_.compliance / (h * h);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(edges.size()));
  double collisionMs = 0;
  int contacts = 0;
  int sweeps = 0;
  double worst = 0;
  Positions correction;
  std::optional<ObstacleFeaturePairs> features;
  // Each point's mesh obstacle triangles within twice the thickness, gathered in the first sweep,
  // serve the later sweeps while the point stays within the thickness of where they were gathered.
  ContactCache contactCache(ctx.sim.thickness);
  while (sweeps < params_.iterations) {
    if (ctx.stopRequested()) return restore(kStepStopped);
    ++sweeps;
    worst = 0;
    // A garment's stitches first, as inequalities on their gaps (sim/stitches.h), so that the
    // edges have the last word: a seam the cloth cannot close without stretching stays open.
    if (ctx.stitchAllowance) projectStitches(cloth_->stitches, *ctx.stitchAllowance, w, x);
    for (size_t e = 0; e < edges.size(); ++e) {
      const int a = edges[e][0], b = edges[e][1];
      const double wSum = w[a] + w[b];
      if (wSum == 0) continue;
      Vec3 d = (x.row(a) - x.row(b)).transpose();
      const double length = d.norm();
      if (length < 1e-12) continue;
      d /= length;
      const double c = length - restLength_[e];
      worst = std::max(worst, std::abs(c));
      const double dl = (-c - alpha * lambda[e]) / (wSum + alpha);
      lambda[e] += dl;
      x.row(a) += (w[a] * dl) * d.transpose();
      x.row(b) -= (w[b] * dl) * d.transpose();
    }
    if (!ctx.obstacles.empty()) {
      const auto ct = Clock::now();
      contacts = resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x, correction, h, nullptr,
                                 &contactCache, ctx.contactAllowance)
                     .contactCount;
      for (int i = 0; i < n; ++i)
        if (w[i] > 0) x.row(i) += correction.row(i);
      // Mesh obstacles' sharp features too, inside the sweeps like the contacts: run only after
      // them, the points an apex held up were pulled down by every step's sweeps. Their pairs are
      // found once, with the thickness as a margin for what the later sweeps move (a mean edge
      // gave 60 times as many pairs on a table lined with sharp edges); the pass after the sweeps
      // searches again where a point moved farther.
      if (!features)
        features.emplace(cloth_->mesh, cloth_->topology, x_, x, w, ctx.sim.thickness, ctx.obstacles,
                         ctx.sim.thickness);
      features->resolve(x, 4, ctx.contactAllowance, nullptr, h);
      collisionMs += msSince(ct);
    }
    if (worst <= params_.tolerance) break;
  }
  stats.msPosition = msSince(t) - collisionMs;
  {
    // The features once more, and self-collision: the pairs found in the sweeps serve while no
    // point has moved farther than their margin since.
    const auto featureStart = Clock::now();
    resolveFeaturesAndSelfCollisions(cloth_->mesh, cloth_->topology, x_, x, w, ctx.sim.thickness,
                                     ctx.sim.selfCollision, ctx.obstacles, stats,
                                     features ? &*features : nullptr, ctx.contactAllowance,
                                     &cloth_->stitches, nullptr, &selfPairs_, h);
    collisionMs += msSince(featureStart);
  }
  stats.msCollision = collisionMs;
  // The error of the state handed on.
  worst = 0;
  for (size_t e = 0; e < edges.size(); ++e)
    worst = std::max(worst, std::abs((x.row(edges[e][0]) - x.row(edges[e][1])).norm() - restLength_[e]));
  if (ctx.stitchAllowance) recordStitches(cloth_->stitches, *ctx.stitchAllowance, x, stats);

  // 3. Velocities.
  Positions v = (x - x_) / h;
  if (!x.allFinite() || !v.allFinite())
    return restore("the state became non-finite (sweeps " + std::to_string(sweeps) + ")");
  const double speed = v.rowwise().norm().maxCoeff();
  if (speed > params_.maxSpeed)
    return restore(runawaySpeedMessage("a vertex", speed, params_.maxSpeed));
  if (ctx.grab) grabPull_.settle(*ctx.grab, cloth_->mesh.triangles[ctx.grab->triangle], x, stats);
  x_ = std::move(x);
  v_ = std::move(v);

  stats.positionIterations = sweeps;
  stats.maxPositionError = worst;
  stats.converged = worst <= params_.tolerance;
  stats.contacts = contacts;
  stats.maxEdgeStrain = maxEdgeStrain(cloth_->mesh, cloth_->topology, x_);
  stats.extra["max_speed"] = speed;
  stats.msTotal = msSince(stepStart);
  return std::nullopt;
}

}  // namespace clothlab
