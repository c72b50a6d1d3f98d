#include "sim/simulation.h"

#include <algorithm>

#include "sim/format.h"
#include "sim/placement.h"
#include "sim/self_collision.h"
#include "sim/solver_registry.h"
#include "sim/steps_in_progress.h"
#include "sim/timing.h"

namespace clothlab {

// Contacts would move vertices that deep out within the first step while their neighbours stay,
// which tears the cloth: on sphere-drop sunk 1 cm (one edge) into the sphere, impulse-nc strained
// edges by 0.47 and missed its tolerance on 4 of 20 steps; sunk by the sphere's radius,
// mls-isometry took 27 s per step to residuals of 1e5.
std::optional<std::string> startsInsideObstacle(const ClothModel& cloth, const std::vector<Obstacle>& obstacles,
                                                double thickness) {
  const Positions& rest = cloth.mesh.positions;
  const double allowed = std::max(0.5 * meanEdgeLength(rest, cloth.topology.edges), thickness);
  for (size_t i = 0; i < obstacles.size(); ++i) {
    const Penetration inside = pointsInside(obstacles[i], rest, allowed);
    if (inside.count == 0) continue;
    return "obstacles[" + std::to_string(i) + "] (" + obstacleTypeName(obstacles[i].type) + "): " +
           std::to_string(inside.count) + " cloth vertices start inside it by more than " + formatG(allowed, 3) +
           " m (half the cloth's mean edge length or the thickness), vertex " + std::to_string(inside.deepest) +
           " by " + formatG(inside.depth, 3) +
           " m; the first step would throw them out and tear the cloth. Move the cloth (cloth.transform) or the "
           "obstacle";
  }
  return std::nullopt;
}

namespace {

// What is wrong with a scene's parameters or solver id, checked before its cloth is built.
std::optional<std::string> paramsError(const Scene& scene) {
  if (auto e = validateParams(SimParams::table(), scene.sim, scene.sourcePath + ": simulation"))
    return e;
  if (auto e = validateVectors(scene.sim, scene.sourcePath + ": simulation")) return e;
  if (!findSolver(scene.solverId))
    return scene.sourcePath + ": solver.id: unknown solver '" + scene.solverId +
           "' (known: " + solverIdList() + ")";
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<Simulation>> Simulation::create(const Scene& scene) {
  if (auto e = paramsError(scene)) return Error{*e};
  auto cloth = buildClothModel(scene);
  if (!cloth) return Error{cloth.error()};
  return build(scene, std::move(cloth).value());
}

Result<std::unique_ptr<Simulation>> Simulation::create(const Scene& scene, ClothModel cloth) {
  if (auto e = paramsError(scene)) return Error{*e};
  return build(scene, std::move(cloth));
}

Result<std::unique_ptr<Simulation>> Simulation::build(const Scene& asked, ClothModel cloth) {
  std::unique_ptr<Simulation> simulation(new Simulation());
  simulation->scene_ = asked;
  Scene& scene = simulation->scene_;
  if (scene.groundBelowCloth) {
    const Obstacle ground = groundBelowCloth(cloth.mesh.positions, scene.sim.friction);
    if (auto e = validateObstacle(ground, "ground"))  // beyond kMaxObstacleCoordinate
      return Error{scene.sourcePath +
                   ": the cloth lies too far from the origin for a ground below it (" + *e + ")"};
    scene.obstacles.push_back(ground);
    scene.groundBelowCloth = false;  // the ground is an obstacle of the scene now
  }
  simulation->sim_ = scene.sim;
  auto solver = createSolver(scene.solverId);
  simulation->cloth_ = std::make_shared<const ClothModel>(std::move(cloth));
  if (auto e = simulation->setJellies(scene.jellies)) return Error{scene.sourcePath + ": " + *e};
  if (auto e = startsInsideObstacle(*simulation->cloth_, scene.obstacles, scene.sim.thickness))
    return Error{scene.sourcePath + ": " + *e};
  if (auto e = startsInsideObstacle(*simulation->cloth_, simulation->jellyObstacles(),
                                    scene.sim.thickness))
    return Error{scene.sourcePath + ": " + *e + " (the jellies, numbered as in \"jellies\")"};
  simulation->reach_ = std::make_unique<GrabReach>(*simulation->cloth_);
  if (auto e = solver->reset(simulation->cloth_, simulation->sim_, scene.solverParams))
    return Error{scene.sourcePath + ": " + *e};
  simulation->solver_ = std::move(solver);
  simulation->pins_ = simulation->cloth_->pins;
  // The scene's pins travel from rest: over their ramp, or, away from their vertex's rest
  // position without one, like a pin moved by hand.
  for (const auto& [vertex, target] : simulation->pins_) {
    const Vec3 rest = simulation->cloth_->mesh.positions.row(vertex).transpose();
    const auto& ramps = simulation->cloth_->pinRamps;
    const auto ramp = std::find_if(ramps.begin(), ramps.end(), [&](const auto& r) { return r.first == vertex; });
    const double distance = (target - rest).norm();
    if (ramp != ramps.end()) simulation->pinTravels_.push_back({vertex, rest, 0, ramp->second, true});
    else if (distance > 0) simulation->pinTravels_.push_back({vertex, rest, 0, distance / kPinHandSpeed, false});
  }
  simulation->obstacles_ = scene.obstacles;
  simulation->allowWhereTheClothStands();
  return simulation;
}

void Simulation::allowWhereTheClothStands() {
  std::vector<Obstacle> around = obstaclesAt(time_);
  for (Obstacle& jelly : jellyObstacles()) around.push_back(std::move(jelly));
  allowance_ = depthsWithinThickness(around, surface(), sim_.thickness);
  if (sim_.selfCollision)
    allowance_ = allowance_.cwiseMax(selfDepthsWithinThickness(
        cloth_->mesh, cloth_->topology, surface(), sim_.thickness, &cloth_->stitches));
  if (!(allowance_.size() > 0 && allowance_.maxCoeff() > 0)) allowance_.resize(0);
  ++allowanceSettings_;
}

std::shared_ptr<const Simulation::Moment> Simulation::moment() const {
  return std::make_shared<const Moment>(
      Moment{cloth_, solver_->id(), solver_->state(), pins_, pinTravels_, movedPin_, movedPinSlack_,
             jellies_, jellySpecs_, allowance_, allowanceSettings_, sewn_, stats_, stepCount_,
             time_, adaptiveSubsteps_, easySteps_, stillFor_, asleep_});
}

std::optional<std::string> Simulation::goBack(const Moment& m) {
  if (m.solver != solver_->id())
    return "the moment was kept under " + m.solver + ", and " + solver_->id() + " runs now";
  const TriangleMesh &then = m.cloth->mesh, &now = cloth_->mesh;
  if (m.cloth != cloth_ && !(then.triangles == now.triangles && then.positions == now.positions))
    return "the moment was kept on another cloth (opened or placed anew since)";
  const auto pins = pins_;
  auto specs = jellySpecs_;
  solver_->setState(m.state);
  stats_ = m.stats;
  stepCount_ = m.steps;
  time_ = m.time;
  sewn_ = m.sewn;
  adaptiveSubsteps_ = m.adaptiveSubsteps;
  easySteps_ = m.easySteps;
  stillFor_ = m.stillFor;
  asleep_ = m.asleep;  // until the pins set again below differ from the moment's
  diverged_ = false;
  // The pins and jellies as they were, then as they are: what changed since is set anew from
  // there, what did not keeps its travel or motion.
  pins_ = m.pins;
  pinTravels_ = m.pinTravels;
  movedPin_ = m.movedPin;
  movedPinSlack_ = m.movedPinSlack;
  setPins(pins);  // valid: they hold now
  jellies_ = m.jellies;
  jellySpecs_ = m.jellySpecs;
  replaceJellies(std::move(specs), {});  // valid: they run now
  // The allowance as it was; after an edit of the obstacles, the jellies or the thickness since,
  // set where the cloth stands, as that edit set it.
  allowance_ = m.allowance;
  if (allowanceSettings_ != m.allowanceSettings) allowWhereTheClothStands();
  return std::nullopt;
}

void accumulateSubstep(StepStats& total, const StepStats& sub, bool first) {
  if (first) {
    total = sub;
    return;
  }
  total.msTotal += sub.msTotal;
  total.msFactor += sub.msFactor;
  total.msPosition += sub.msPosition;
  total.msVelocity += sub.msVelocity;
  total.msCollision += sub.msCollision;
  total.msForces += sub.msForces;
  total.positionIterations += sub.positionIterations;
  total.backtracks += sub.backtracks;
  total.maxPositionError = std::max(total.maxPositionError, sub.maxPositionError);
  total.maxEdgeStrain = std::max(total.maxEdgeStrain, sub.maxEdgeStrain);
  total.converged = total.converged && sub.converged;
  total.contacts = std::max(total.contacts, sub.contacts);
  total.regularization = std::max(total.regularization, sub.regularization);
  total.linearSolver = sub.linearSolver;
  for (const auto& [key, value] : sub.extra.items()) {
    nlohmann::json& into = total.extra[key];
    if (value.is_boolean()) into = value.get<bool>() || (into.is_boolean() && into.get<bool>());
    else if (!value.is_number() || !into.is_number()) into = value;
    else if (key.starts_with("max_")) into = std::max(into.get<double>(), value.get<double>());
    else if (value.is_number_integer() && into.is_number_integer()) into = into.get<long>() + value.get<long>();
    else into = into.get<double>() + value.get<double>();
  }
}

std::optional<std::string> Simulation::step() {
  if (diverged_) return "the simulation diverged earlier; reset it";
  if (asleep_ && (!(sim_.sleepSpeed > 0) || restless())) wake();
  if (asleep_) {
    StepStats rest;
    rest.step = ++stepCount_;
    time_ += sim_.dt;
    rest.t = time_;
    rest.substeps = 0;
    rest.maxPositionError = stats_.maxPositionError;
    rest.maxEdgeStrain = stats_.maxEdgeStrain;
    rest.converged = stats_.converged;
    rest.contacts = stats_.contacts;
    rest.linearSolver = stats_.linearSolver;
    for (const auto& [key, value] : stats_.extra.items())
      if (key.starts_with("max_")) rest.extra[key] = value;
    rest.extra[kAsleepKey] = true;
    stats_ = std::move(rest);
    return std::nullopt;
  }
  const StepInProgress inProgress;
  const int base = std::max(1, sim_.substeps);
  const int most = std::max(base, sim_.maxSubsteps);
  // The state at the step's start, to take the step again (adaptive) or to undo the sub-steps
  // already taken when a stop request gives it up; a single sub-step's solver restores its own.
  const bool keepStart = most > base || (stop_ && base > 1);
  const SolverState start = keepStart ? solver_->state() : SolverState{};
  const Eigen::VectorXd allowanceAtStart = allowance_;
  const double sewnAtStart = sewn_;
  const std::vector<JellyBody> jelliesAtStart = jellies_;
  double spentMs = 0;  // on attempts taken again
  int retries = 0;
  // Start from the count the last steps needed; after kEasySteps steps that needed no retry, try
  // half as many again.
  constexpr int kEasySteps = 20;
  const int first = std::clamp(adaptiveSubsteps_, base, most);
  for (int substeps = first;; substeps *= 2) {
    StepStats stats;
    const auto error = takeSubsteps(substeps, stats);
    if (error && stopRequested()) {
      if (keepStart) solver_->setState(start);
      allowance_ = allowanceAtStart;
      sewn_ = sewnAtStart;
      jellies_ = jelliesAtStart;
      return std::string(kStepStopped);
    }
    if (substeps * 2 <= most && (error || !stats.converged)) {
      spentMs += stats.msTotal;
      ++retries;
      solver_->setState(start);
      allowance_ = allowanceAtStart;
      sewn_ = sewnAtStart;
      jellies_ = jelliesAtStart;
      continue;
    }
    if (error) {
      diverged_ = true;
      return error;
    }
    ++stepCount_;
    time_ += sim_.dt;
    stats.step = stepCount_;
    stats.t = time_;
    stats.substeps = substeps;
    if (most > base) {
      stats.msTotal += spentMs;
      stats.extra["adaptive_retries"] = retries;
      easySteps_ = retries > 0 ? 0 : easySteps_ + 1;
      adaptiveSubsteps_ = substeps;
      if (easySteps_ >= kEasySteps && substeps > base) {
        adaptiveSubsteps_ = substeps / 2;
        easySteps_ = 0;
      }
    }
    noteStillness(stats);
    stats_ = std::move(stats);
    return std::nullopt;
  }
}

bool Simulation::restless() const {
  if (grab_ || !jellies_.empty() || allowance_.size() > 0) return true;
  if (std::any_of(pinTravels_.begin(), pinTravels_.end(),
                  [&](const PinTravel& p) { return time_ < p.start + p.duration; }))
    return true;
  if (cloth_->stitchRestGaps.size() > 0 && sewn_ < cloth_->stitchRestGaps.maxCoeff()) return true;
  return std::any_of(obstacles_.begin(), obstacles_.end(), [&](const Obstacle& o) {
    if (o.velocity == Vec3::Zero() && o.angularVelocity == Vec3::Zero()) return false;
    const Obstacle now = o.at(time_);  // one that moved may have stopped
    return now.velocity != Vec3::Zero() || now.angularVelocity != Vec3::Zero();
  });
}

double Simulation::fastestSurfaceSpeed() const {
  const Positions v = solver_->surfaceVelocities();
  return v.rows() > 0 ? v.rowwise().norm().maxCoeff() : 0.0;
}

void Simulation::noteStillness(const StepStats& stats) {
  // The cheap checks first: the speeds are not looked at where sleep is off.
  if (sim_.sleepSpeed > 0 && stats.converged && !restless() &&
      fastestSurfaceSpeed() < sim_.sleepSpeed)
    stillFor_ += sim_.dt;
  else
    stillFor_ = 0;
  // Half a step short of sleepTime: the sum of dt rounds.
  if (stillFor_ > 0 && stillFor_ >= sim_.sleepTime - 0.5 * sim_.dt) asleep_ = true;
}

std::optional<std::string> Simulation::takeSubsteps(int substeps, StepStats& stats) {
  SimParams sub = sim_;
  sub.dt = sim_.dt / substeps;
  for (int k = 0; k < substeps; ++k) {
    if (stopRequested()) return std::string(kStepStopped);
    const double start = time_ + k * sub.dt;
    StepStats subStats;
    if (auto e = substep(sub, start, subStats)) {
      return "step " + std::to_string(stepCount_ + 1) +
             (substeps > 1 ? ", sub-step " + std::to_string(k + 1) + " of " + std::to_string(substeps) : "") +
             " (t = " + nlohmann::json(start + sub.dt).dump() + " s): " + *e;
    }
    accumulateSubstep(stats, subStats, k == 0);
  }
  return std::nullopt;
}

std::optional<std::string> Simulation::substep(const SimParams& sim, double start, StepStats& stats) {
  std::vector<Obstacle> obstacles = obstaclesAt(start + sim.dt);
  // The jellies move and deform against the obstacles first; the cloth then meets them too.
  int jellyWalls = 0, jellySolves = 0, jellyFactorizations = 0, jellySubsteps = 0;
  double squash = 0;
  const auto jellyStart = Clock::now();
  // Each jelly meets the obstacles and the other jellies as they stood at the sub-step's start: a
  // jelly's deformed surface where another one's reach (its centre's search for walls) comes
  // near it.
  std::vector<Obstacle> around;
  if (jellies_.size() > 1) {
    around = obstacles;
    for (const JellyBody& jelly : jellies_) {
      Eigen::AlignedBox3d others;
      for (const JellyBody& other : jellies_)
        if (&other != &jelly)
          others.extend(Eigen::AlignedBox3d(other.center().array() - other.reach(),
                                            other.center().array() + other.reach()));
      around.push_back(jelly.asObstacleFor(others));
    }
  }
  for (JellyBody& jelly : jellies_) {
    jelly.step(sim.dt, sim.gravity, jellies_.size() > 1 ? around : obstacles);
    jellyWalls += jelly.lastStep().walls;
    jellySolves += jelly.lastStep().sectionSolves;
    jellyFactorizations += jelly.lastStep().factorizations;
    jellySubsteps += jelly.lastStep().rigidSubsteps;
    squash = std::max(squash, jelly.lastStep().maxDisplacement);
  }
  // The cloth meets a jelly's deformed surface where it can reach the jelly in this sub-step.
  if (!jellies_.empty()) {
    const Eigen::AlignedBox3d cloth = clothReach(sim);
    for (const JellyBody& jelly : jellies_) obstacles.push_back(jelly.asObstacleFor(cloth));
  }
  const double jellyMs = msSince(jellyStart);
  // Where each pin holds its vertex in this sub-step: pins_, copied only once a hold differs.
  const std::vector<std::pair<int, Vec3>>* given = &pins_;
  std::vector<std::pair<int, Vec3>> holds;
  auto hold = [&](size_t i, const Vec3& at) {
    if (at == (*given)[i].second) return;
    if (given != &holds) {
      holds = *given;
      given = &holds;
    }
    holds[i].second = at;
  };
  // Pins still on their way (ramps, travels) hold their vertices where they have got to.
  const bool moving = std::any_of(pinTravels_.begin(), pinTravels_.end(),
                                  [&](const PinTravel& p) { return start < p.start + p.duration; });
  for (size_t i = 0; moving && i < pins_.size(); ++i)
    hold(i, pinHoldAt(pins_[i].first, pins_[i].second, start + sim.dt));
  // The pin moved last, and the grab, are held within the other pins' reach (sim/grab.h).
  auto moved = std::find_if(given->begin(), given->end(), [&](const auto& p) { return p.first == movedPin_; });
  if (moved != given->end() && given->size() > 1) {
    const size_t i = static_cast<size_t>(moved - given->begin());
    hold(i, reach_->clampPin(movedPin_, moved->second, *given, movedPinSlack_));
  }
  // A pin held closer to an obstacle than the thickness (dragged into it, or set there) holds its
  // vertex at the thickness instead, where the contacts keep its neighbours: held inside a sphere
  // on hanging, every solver tore the cloth around it (edges strained 4.7 to 17-fold).
  // A pin laid within the thickness with its cloth moves out with it (allowance_), not at once.
  for (size_t i = 0; i < given->size() && !obstacles.empty(); ++i) {
    const int vertex = (*given)[i].first;
    const double kept = thicknessKept(sim.thickness, contactAllowance(), vertex);
    hold(i, outsideObstacles(obstacles, (*given)[i].second, kept));
  }
  const auto& pins = *given;
  std::optional<Grab> grab = grab_;
  if (grab) grab->target = reach_->clamp(*grab, pins);
  // The stitches' gaps close at the sewing speed (sim/stitches.h).
  Eigen::VectorXd stitchAllowance;
  if (!cloth_->stitches.empty()) {
    sewn_ += sim.sewingSpeed * sim.dt;
    stitchAllowance = stitchAllowances(cloth_->stitchRestGaps, sewn_);
  }
  const StepContext context{sim,
                            obstacles,
                            pins,
                            grab,
                            stop_,
                            contactAllowance(),
                            cloth_->stitches.empty() ? nullptr : &stitchAllowance};
  if (auto e = solver_->step(context, stats)) return e;
  if (!jellies_.empty()) {
    stats.extra["jelly_walls"] = jellyWalls;
    stats.extra["max_jelly_squash"] = squash;
    stats.extra["jelly_section_solves"] = jellySolves;
    stats.extra["jelly_factorizations"] = jellyFactorizations;
    stats.extra["jelly_rigid_substeps"] = jellySubsteps;
    stats.extra["ms_jellies"] = jellyMs;  // also in ms_total
    stats.msTotal += jellyMs;
  }
  if (allowance_.size() > 0) {
    allowance_ = (allowance_.array() - kContactRecoverySpeed * sim.dt).max(0.0);
    if (allowance_.maxCoeff() == 0) allowance_.resize(0);
  }
  return std::nullopt;
}

Vec3 Simulation::pinHoldAt(int vertex, const Vec3& target, double t) const {
  for (const PinTravel& p : pinTravels_) {
    if (p.vertex != vertex) continue;
    const double s = std::clamp((t - p.start) / p.duration, 0.0, 1.0);
    return p.from + (p.smooth ? s * s * (3 - 2 * s) : s) * (target - p.from);
  }
  return target;
}

std::optional<std::string> Simulation::setSimParams(const SimParams& params) {
  if (auto e = validateParams(SimParams::table(), params, "simulation")) return e;
  if (auto e = validateVectors(params, "simulation")) return e;
  const bool settle = params.thickness != sim_.thickness || (params.selfCollision && !sim_.selfCollision);
  sim_ = params;
  wake();
  if (settle) allowWhereTheClothStands();
  return std::nullopt;
}

std::optional<std::string> Simulation::setObstacles(std::vector<Obstacle> obstacles) {
  for (size_t i = 0; i < obstacles.size(); ++i)
    if (auto e = validateObstacle(obstacles[i], "obstacles[" + std::to_string(i) + "]")) return e;
  obstacles_ = std::move(obstacles);
  wake();
  allowWhereTheClothStands();
  return std::nullopt;
}

std::optional<std::string> Simulation::setSolverParams(const nlohmann::json& params) {
  if (auto e = solver_->setParams(params)) return e;
  wake();
  return std::nullopt;
}

std::optional<std::string> Simulation::pinRefusal(int vertex, const Vec3& target) const {
  if (vertex < 0 || vertex >= cloth_->mesh.vertexCount())
    return "vertex " + std::to_string(vertex) + " is out of range (the cloth has " +
           std::to_string(cloth_->mesh.vertexCount()) + " vertices)";
  if (!target.allFinite())
    return "the target of vertex " + std::to_string(vertex) + " is not finite";
  return std::nullopt;
}

std::optional<std::string> Simulation::setPin(int vertex, const Vec3& target) {
  if (auto refused = pinRefusal(vertex, target)) return "pin: " + *refused;
  auto it = std::find_if(pins_.begin(), pins_.end(), [&](const auto& p) { return p.first == vertex; });
  const Vec3 from = it != pins_.end() ? pinHoldAt(vertex, it->second, time_) : Vec3(surface().row(vertex).transpose());
  if (it != pins_.end()) it->second = target;
  else pins_.emplace_back(vertex, target);
  std::erase_if(pinTravels_, [&](const PinTravel& p) { return p.vertex == vertex; });  // moved by hand now
  const double distance = (target - from).norm();
  if (distance > 0) pinTravels_.push_back({vertex, from, time_, distance / kPinHandSpeed, false});
  movedPin_ = vertex;
  movedPinSlack_ = reach_->pinExcess(vertex, surface().row(vertex).transpose(), pins_);
  wake();
  return std::nullopt;
}

std::optional<std::string> Simulation::setGrab(std::optional<Grab> grab) {
  if (grab) {
    if (grab->triangle < 0 || grab->triangle >= cloth_->mesh.triangleCount())
      return "grab: triangle " + std::to_string(grab->triangle) + " is out of range (the cloth has " +
             std::to_string(cloth_->mesh.triangleCount()) + " triangles)";
    if (!grab->barycentric.allFinite() || !grab->target.allFinite() || !(grab->timeConstant > 0))
      return std::string("grab: barycentric coordinates, target and time constant must be finite "
                         "(and the time constant positive)");
  }
  grab_ = std::move(grab);
  wake();
  return std::nullopt;
}

std::optional<std::string> Simulation::setPins(const std::vector<std::pair<int, Vec3>>& pins) {
  std::vector<char> listed(static_cast<size_t>(cloth_->mesh.vertexCount()), 0);
  for (const auto& [vertex, target] : pins) {
    if (auto refused = pinRefusal(vertex, target)) return "pins: " + *refused;
    if (listed[vertex]++) return "pins: vertex " + std::to_string(vertex) + " is listed twice";
  }
  // Where each new or changed pin starts from, and how long the farthest takes.
  std::vector<PinTravel> travels;
  double duration = 0;
  int moved = -1;
  for (const auto& [vertex, target] : pins) {
    auto old =
        std::find_if(pins_.begin(), pins_.end(), [&](const auto& p) { return p.first == vertex; });
    if (old != pins_.end() && old->second == target) continue;
    const Vec3 from = old != pins_.end() ? pinHoldAt(vertex, old->second, time_)
                                         : Vec3(surface().row(vertex).transpose());
    travels.push_back({vertex, from, time_, 0, false});
    duration = std::max(duration, (target - from).norm() / kPinHandSpeed);
    moved = vertex;
  }
  // The pins that go and the changed ones drop their travels (the changed get new ones); the
  // unchanged keep theirs.
  std::erase_if(pinTravels_, [&](const PinTravel& p) {
    return !listed[p.vertex] ||
           std::any_of(travels.begin(), travels.end(),
                       [&](const PinTravel& t) { return t.vertex == p.vertex; });
  });
  for (PinTravel& travel : travels) {
    travel.duration = duration;
    if (duration > 0) pinTravels_.push_back(travel);
  }
  if (pins != pins_) wake();
  pins_ = pins;
  if (moved >= 0) {
    movedPin_ = moved;
    movedPinSlack_ = reach_->pinExcess(moved, surface().row(moved).transpose(), pins_);
  }
  return std::nullopt;
}

void Simulation::removePin(int vertex) {
  if (std::erase_if(pins_, [&](const auto& p) { return p.first == vertex; }) > 0) wake();
  std::erase_if(pinTravels_, [&](const PinTravel& p) { return p.vertex == vertex; });
}

void Simulation::clearPins() {
  if (!pins_.empty()) wake();
  pins_.clear();
  pinTravels_.clear();
}

std::optional<std::string> Simulation::setJellies(std::vector<JellySpec> jellies,
                                                  const std::vector<JellyBody>& earlier) {
  for (size_t i = 0; i < jellies.size(); ++i)
    if (auto e = validateJelly(jellies[i], "jellies[" + std::to_string(i) + "]")) return e;
  replaceJellies(std::move(jellies), earlier);
  wake();
  if (cloth_ && solver_) allowWhereTheClothStands();
  return std::nullopt;
}

void Simulation::replaceJellies(std::vector<JellySpec> jellies,
                                const std::vector<JellyBody>& earlier) {
  std::vector<JellyBody> bodies;
  for (size_t i = 0; i < jellies.size(); ++i) {
    const JellySpec& spec = jellies[i];
    auto same = std::find_if(jellySpecs_.begin(), jellySpecs_.end(),
                             [&](const JellySpec& old) { return old.surface == spec.surface; });
    if (same != jellySpecs_.end())
      bodies.push_back(jellies_[static_cast<size_t>(same - jellySpecs_.begin())]);
    else if (i < earlier.size())
      bodies.push_back(earlier[i]);
    else {
      bodies.emplace_back(spec);
      continue;
    }
    bodies.back().setMaterial(spec.material);
  }
  jellies_ = std::move(bodies);
  jellySpecs_ = std::move(jellies);
}

Eigen::AlignedBox3d Simulation::clothReach(const SimParams& sim) const {
  const Positions& x = solver_->surface();
  if (x.rows() == 0) return {};
  const double speed = fastestSurfaceSpeed();
  const double margin = sim.thickness + 2 * sim.dt * (speed + sim.gravity.norm() * sim.dt);
  const Vec3 lo = x.colwise().minCoeff(), hi = x.colwise().maxCoeff();
  Eigen::AlignedBox3d reach(lo.array() - margin, hi.array() + margin);
  // A grab pulls its point towards the target faster than the point's speed at the start shows.
  if (grab_) reach.extend(grab_->target);
  return reach;
}

std::vector<Obstacle> Simulation::jellyObstacles() const {
  std::vector<Obstacle> out;
  for (const JellyBody& jelly : jellies_) out.push_back(jelly.asObstacle());
  return out;
}

std::vector<Obstacle> Simulation::obstaclesAt(double t) const {
  std::vector<Obstacle> out;
  out.reserve(obstacles_.size());
  for (const Obstacle& o : obstacles_) out.push_back(o.at(t));
  return out;
}

Scene Simulation::currentScene() const {
  Scene scene = scene_;
  scene.sim = sim_;
  scene.obstacles = obstacles_;
  scene.jellies = jellySpecs_;
  scene.pins.clear();
  for (const auto& [vertex, target] : pins_) {
    PinSpec pin;
    pin.kind = PinSpec::Kind::Vertex;
    pin.vertex = vertex;
    pin.target = target;
    for (const PinTravel& travel : pinTravels_)
      if (travel.vertex == vertex && travel.smooth) pin.ramp = travel.duration;  // a saved scene starts from rest again
    scene.pins.push_back(pin);
  }
  scene.solverParams = solver_->params();
  return scene;
}

}  // namespace clothlab
