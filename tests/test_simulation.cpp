// Simulation: sub-steps (a step of dt taken as several solver steps) and how their statistics
// combine.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "sim/format.h"
#include "sim/scene.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "sim/solver_registry.h"
#include "test_util.h"

using namespace clothlab;

namespace {

// One step of 4 ms in 4 sub-steps is four steps of 1 ms: same states, and the step's figures
// are the sub-steps' summed (iterations) or worst (strain).
TEST(Simulation, SubstepsTakeTheSameSolverStepsAsShorterSteps) {
  for (const std::string solver : {"impulse-nc", "mls-isometry", "xpbd"}) {
    SCOPED_TRACE(solver);
    Scene scene = test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, solver);
    scene.pins.front().ramp = 0.006;  // the pins move during the sub-steps
    Scene fine = scene, coarse = scene;
    fine.sim.dt = 0.001;
    coarse.sim.dt = 0.004;
    coarse.sim.substeps = 4;
    auto a = test::makeSimulation(fine), b = test::makeSimulation(coarse);
    if (!a || !b) return;
    for (int step = 0; step < 3; ++step) {
      int iterations = 0;
      double worstStrain = 0;
      for (int k = 0; k < 4; ++k) {
        ASSERT_FALSE(a->step());
        iterations += a->lastStats().positionIterations;
        worstStrain = std::max(worstStrain, a->lastStats().maxEdgeStrain);
      }
      ASSERT_FALSE(b->step());
      EXPECT_EQ(b->lastStats().substeps, 4);
      EXPECT_EQ(b->lastStats().step, step + 1);
      EXPECT_NEAR(b->lastStats().t, a->lastStats().t, 1e-15);
      EXPECT_EQ(b->lastStats().positionIterations, iterations);
      EXPECT_DOUBLE_EQ(b->lastStats().maxEdgeStrain, worstStrain);
      EXPECT_LT((a->surface() - b->surface()).cwiseAbs().maxCoeff(), 1e-9);
    }
  }
}

TEST(Simulation, AccumulateSubstepSumsCountsAndKeepsTheWorst) {
  // One sub-step's figures: time, position iterations, error, convergence, and an mls-like set of
  // extras (an integer count, a max_* residual, a flag, a time).
  auto subStep = [](double ms, int iterations, double error, bool converged, int fp, double residual,
                    bool fallback, double selfMs) {
    StepStats s;
    s.msTotal = ms;
    s.positionIterations = iterations;
    s.maxPositionError = error;
    s.converged = converged;
    s.extra = {{"fp_iterations", fp}, {"max_isometry_residual", residual}, {"fallback_used", fallback},
               {"ms_self_collision", selfMs}};
    return s;
  };
  StepStats total;
  const StepStats first = subStep(2, 3, 1e-4, true, 2, 0.02, false, 0.5);
  const StepStats second = subStep(3, 4, 5e-5, false, 5, 0.01, true, 0.25);
  accumulateSubstep(total, first, true);
  accumulateSubstep(total, second, false);
  EXPECT_DOUBLE_EQ(total.msTotal, 5);
  EXPECT_EQ(total.positionIterations, 7);
  EXPECT_DOUBLE_EQ(total.maxPositionError, 1e-4);
  EXPECT_FALSE(total.converged);
  EXPECT_EQ(total.extra["fp_iterations"], 7);
  EXPECT_DOUBLE_EQ(total.extra["max_isometry_residual"].get<double>(), 0.02);
  EXPECT_EQ(total.extra["fallback_used"], true);
  EXPECT_DOUBLE_EQ(total.extra["ms_self_collision"].get<double>(), 0.75);
}

// A sub-step that diverges is named, and the state stays at the last good sub-step.
TEST(Simulation, DivergenceInASubstepNamesIt) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 6, "mls-isometry");
  scene.pins.clear();  // free fall
  scene.sim.dt = 0.02;
  scene.sim.substeps = 4;
  scene.solverParams = {{"max_speed", 1.0}};  // falling faster than 1 m/s counts as runaway
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  const auto [error, steps] = test::stepUntilError(*simulation, 50);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("step " + std::to_string(steps) + ", sub-step "), std::string::npos) << *error;
  EXPECT_NE(error->find(" of 4"), std::string::npos) << *error;
  EXPECT_NE(error->find("runaway speed"), std::string::npos) << *error;
  EXPECT_TRUE(simulation->surface().allFinite());
  EXPECT_TRUE(simulation->diverged());
}

// A live edit with gravity (or dt) beyond its range is refused and changes nothing; the runaway
// speed every vertex solver reports reads as a number, also where it overflowed to infinity.
TEST(Simulation, GravityEditsAreCheckedAndRunawaySpeedsReadAsNumbers) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 6, "mls-isometry");
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  SimParams edit = simulation->sim();
  edit.gravity = Vec3(0, -5000, 0);
  const auto refused = simulation->setSimParams(edit);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("simulation.gravity: -5000 is outside the valid range"), std::string::npos) << *refused;
  EXPECT_EQ(simulation->sim().gravity, scene.sim.gravity);
  // A NaN or an infinity reads as itself, not as JSON's null.
  edit = simulation->sim();
  edit.dt = std::numeric_limits<double>::quiet_NaN();
  const auto nanDt = simulation->setSimParams(edit);
  ASSERT_TRUE(nanDt);
  EXPECT_NE(nanDt->find("simulation.dt: nan is outside the valid range"), std::string::npos)
      << *nanDt;
  edit.dt = std::numeric_limits<double>::infinity();
  EXPECT_NE(simulation->setSimParams(edit).value_or("").find("simulation.dt: inf is outside"),
            std::string::npos);
  EXPECT_EQ(simulation->sim().dt, scene.sim.dt);

  EXPECT_EQ(runawaySpeedMessage("a vertex", 1657.5794487418177, 1000),
            "runaway speed: a vertex reached 1657.58 m/s, above max_speed 1000 m/s");
  EXPECT_NE(runawaySpeedMessage("a particle", std::numeric_limits<double>::infinity(), 1000).find("reached inf m/s"),
            std::string::npos);
  for (const std::string solver : {"impulse-nc", "mls-isometry", "xpbd"}) {
    SCOPED_TRACE(solver);
    Scene falling = test::hangingScene(ClothSource::Kind::Grid, 6, solver);
    falling.pins.clear();
    falling.solverParams = {{"max_speed", 1.0}};
    auto s = test::makeSimulation(falling);
    if (!s) return;
    const auto error = test::stepUntilError(*s, 500).first;
    ASSERT_TRUE(error);
    EXPECT_NE(error->find("runaway speed: a "), std::string::npos) << *error;
    EXPECT_NE(error->find(" m/s, above max_speed 1 m/s"), std::string::npos) << *error;
  }
}

// A cloth of microns with an everyday bending stiffness: the bending term outweighs the mass
// beyond what double precision holds, so the implicit step's factorization fails. The message
// says so and what to change, for the vertex solvers' bending system and the impulse solvers'
// force system alike (under impulse-nc's surface bending, whose nonconforming stiffness scales
// with the bending, too); nothing non-finite reaches the surface.
TEST(Simulation, ABendingTermThatDrownsTheMassIsNamedWhenItsFactorizationFails) {
  const std::vector<std::pair<std::string, nlohmann::json>> runs = {
      {"impulse-nc", nlohmann::json::object()},
      {"impulse-nc", {{"bending_model", "surface"}}},
      {"conforming", nlohmann::json::object()},
      {"mls-isometry", nlohmann::json::object()},
      {"xpbd", nlohmann::json::object()}};
  for (const auto& [solver, params] : runs) {
    SCOPED_TRACE(solver + " " + params.dump());
    Scene scene = test::hangingScene(ClothSource::Kind::Grid, 8, solver, 1e-6);
    scene.solverParams = params;
    scene.transform.scale = 1e-6;  // a micrometre across
    auto simulation = test::makeSimulation(scene);
    if (!simulation) return;
    const auto error = test::stepUntilError(*simulation, 5).first;
    ASSERT_TRUE(error);
    EXPECT_NE(error->find("not positive definite"), std::string::npos) << *error;
    EXPECT_NE(error->find("the bending term outweighs the mass "), std::string::npos) << *error;
    EXPECT_NE(error->find("(bending 0.0001 N m, time step 0.001 s, mass "), std::string::npos)
        << *error;
    EXPECT_NE(error->find("lower the bending stiffness or the time step"), std::string::npos)
        << *error;
    EXPECT_TRUE(simulation->surface().allFinite());
  }
  // The same cloth at 1 m steps without a word.
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 8, "mls-isometry");
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  EXPECT_FALSE(test::stepUntilError(*simulation, 5).first);
}

// The panel's obstacle edits (a typed position, friction) reach the simulation through
// setObstacles: an obstacle that would put non-finite numbers into the step or the renderer is
// refused with its index and field, and the obstacles in use stay as they were.
TEST(Simulation, ObstacleEditsAreCheckedAndARefusedOneChangesNothing) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 6, "impulse-nc");
  Obstacle ground;
  ground.point = Vec3(0, -2, 0);
  scene.obstacles = {ground};
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  struct Case {
    std::function<void(Obstacle&)> change;
    std::string message;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {[](Obstacle& o) { o.friction = -0.5; }, "obstacles[1].friction: -0.5 is outside the valid range [0, 10]"},
      {[](Obstacle& o) { o.friction = 11; }, "obstacles[1].friction: 11 is outside"},
      {[inf](Obstacle& o) { o.point.y() = inf; }, "obstacles[1].point: non-finite value"},
      {[](Obstacle& o) { o.point.x() = 1e300; }, "obstacles[1].point: beyond 1e+06 m"},
      {[](Obstacle& o) { o.normal = Vec3::Zero(); }, "obstacles[1].normal: must be finite and not zero"},
      {[inf](Obstacle& o) { o.velocity.z() = inf; }, "obstacles[1].velocity: non-finite value"},
      {[](Obstacle& o) { o.velocity.x() = -1001; }, "obstacles[1].velocity: beyond 1000 m/s along an axis"},
      {[](Obstacle& o) { o.angularVelocity.y() = 2000; }, "obstacles[1].angular_velocity: beyond 1000 rad/s"},
      {[](Obstacle& o) {
         o.type = Obstacle::Type::Sphere;
         o.radius = 1e300;
       }, "obstacles[1].radius: must be a positive number up to 1e+06 m"},
      {[](Obstacle& o) {
         o.type = Obstacle::Type::Box;
         o.halfExtents.z() = 2e6;
       }, "obstacles[1].half_extents: must be positive numbers up to 1e+06 m"},
      {[](Obstacle& o) {
         o.type = Obstacle::Type::Sphere;
         o.radius = 0;
       }, "obstacles[1].radius: must be a positive number"},
  };
  for (const Case& c : cases) {
    std::vector<Obstacle> edited = simulation->obstacles();
    Obstacle added;
    c.change(added);
    edited.push_back(added);
    const auto refused = simulation->setObstacles(edited);
    ASSERT_TRUE(refused) << c.message;
    EXPECT_NE(refused->find(c.message), std::string::npos) << *refused;
    ASSERT_EQ(simulation->obstacles().size(), 1u);
    EXPECT_EQ(simulation->obstacles()[0].point, Vec3(0, -2, 0));
  }
  std::vector<Obstacle> edited = simulation->obstacles();
  edited[0].friction = 10;
  edited[0].point = Vec3(0, -1e6, 0);
  EXPECT_FALSE(simulation->setObstacles(edited));
  EXPECT_EQ(simulation->obstacles()[0].point, Vec3(0, -1e6, 0));
  EXPECT_FALSE(simulation->step());
}

// A stop request (the viewer's, for an edit that should not wait for a slow step) gives the step
// up: each solver checks it between its iterations and restores the state before its step, and
// Simulation::step undoes the whole step without calling it a divergence.
// A cloth that starts deeper inside an obstacle than half its mean edge length is refused, with
// the obstacle, how many vertices and the deepest; one that only grazes it starts (contacts move
// those points out). The 6 x 6 sheet at 1 m has edges of 0.2 m (0.22 with the diagonals).
TEST(Simulation, AClothStartedInsideAnObstacleIsRefused) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 6, "impulse-nc");
  Obstacle sphere = test::sphereObstacle(Vec3(0, 1, 0), 0.3);
  const Obstacle box = test::boxObstacle(Vec3(0.1, 1, 0.1), Vec3(0.4, 0.4, 0.4));
  Obstacle plane;
  plane.point = Vec3(0, 1.2, 0);
  struct Case {
    std::vector<Obstacle> obstacles;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{sphere}, "test: obstacles[0] (sphere): 4 cloth vertices start inside it by more than 0.112 m"},
      {{plane, sphere}, "obstacles[0] (plane): 36 cloth vertices start inside it"},
      {{box}, "obstacles[0] (box): 9 cloth vertices start inside it"},
  };
  for (const Case& c : cases) {
    scene.obstacles = c.obstacles;
    const auto simulation = Simulation::create(scene);
    ASSERT_FALSE(simulation) << c.message;
    EXPECT_NE(simulation.error().find(c.message), std::string::npos) << simulation.error();
  }
  scene.obstacles = {sphere};
  const auto refused = Simulation::create(scene);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find(" by 0.159 m; the first step would throw them out"), std::string::npos) << refused.error();
  // Grazing: 2 cm into the sphere's top.
  sphere.point = Vec3(0, 0.7, 0);
  sphere.radius = 0.35;
  scene.obstacles = {sphere};
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  EXPECT_FALSE(simulation->step());
  EXPECT_GT(simulation->lastStats().contacts, 0);
  EXPECT_FALSE(startsInsideObstacle(simulation->cloth(), simulation->obstacles(), simulation->sim().thickness));
  // A sphere moved up into where the cloth rests is taken while it runs (it pushes the cloth),
  // but the scene as it now stands would not start: the viewer does not save it.
  sphere.point = Vec3(0, 1, 0);
  sphere.radius = 0.3;
  ASSERT_FALSE(simulation->setObstacles({sphere}));
  EXPECT_FALSE(simulation->step());
  const auto wouldNot = startsInsideObstacle(simulation->cloth(), simulation->obstacles(), simulation->sim().thickness);
  ASSERT_TRUE(wouldNot);
  EXPECT_NE(wouldNot->find("obstacles[0] (sphere): 4 cloth vertices start inside it"), std::string::npos) << *wouldNot;
  EXPECT_FALSE(Simulation::create(simulation->currentScene()));
}

// A pin moved into an obstacle holds its vertex at the thickness outside it, where the contacts
// keep the vertex's neighbours; pins() keeps the target as given. Held at the target (the
// sphere's centre), the cloth around it was torn: here edges strained by 2.6, 0.82 and 0.97 over
// the last 200 steps (impulse-nc, xpbd, mls-isometry), on hanging by 4.7 to 17. impulse-nc's
// point pin strains the conforming edges next to it by about 0.9 wherever it holds (set on the
// sphere's top, 0.77 to 0.91 on hanging).
TEST(Simulation, APinMovedIntoAnObstacleHoldsItsVertexOutside) {
  for (const auto& [solver, largestStrain] :
       std::vector<std::pair<const char*, double>>{{"impulse-nc", 1.5}, {"xpbd", 0.5}, {"mls-isometry", 0.5}}) {
    Scene scene = test::hangingScene(ClothSource::Kind::Grid, 10, solver);
    scene.obstacles = {test::sphereObstacle(Vec3(0, 0.6, 0), 0.2)};
    auto simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation);
    const int vertex = simulation->pins().front().first;
    const Vec3 centre = scene.obstacles[0].point;
    ASSERT_FALSE(simulation->setPin(vertex, centre));
    double strain = 0;
    for (int i = 0; i < 600; ++i) {
      ASSERT_FALSE(simulation->step()) << solver << ", step " << i + 1;
      if (i >= 400) strain = std::max(strain, simulation->lastStats().maxEdgeStrain);
    }
    const double outside = (simulation->surface().row(vertex).transpose() - centre).norm() - 0.2;
    std::printf("%s: the pinned vertex %.4f m outside the sphere, largest edge strain over steps 401-600 %.3f\n",
                solver, outside, strain);
    EXPECT_NEAR(outside, scene.sim.thickness, 1e-6) << solver;
    EXPECT_LT(strain, largestStrain) << solver;
    EXPECT_EQ(simulation->pins().front().second, centre);
  }
}

TEST(Simulation, AStopRequestGivesTheStepUpAndUndoesIt) {
  for (const std::string solver : {"impulse-nc", "conforming", "mls-isometry", "xpbd"}) {
    SCOPED_TRACE(solver);
    Scene scene = test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, solver);
    scene.sim.dt = 0.01;  // every step iterates
    scene.sim.substeps = 2;
    auto simulation = test::makeSimulation(scene);
    if (!simulation) return;
    for (int k = 0; k < 5; ++k) ASSERT_FALSE(simulation->step());
    const Positions before = simulation->surface();
    const double time = simulation->time();

    // The solver alone, asked to stop before its first iteration.
    std::atomic<bool> stop{true};
    const std::optional<Grab> noGrab;
    const StepContext ctx{simulation->sim(), simulation->obstacles(), simulation->pins(), noGrab, &stop};
    StepStats stats;
    EXPECT_EQ(simulation->solver().step(ctx, stats), std::string(kStepStopped));
    EXPECT_EQ(simulation->surface(), before);

    // The simulation's step, with sub-steps.
    simulation->setStopFlag(&stop);
    EXPECT_EQ(simulation->step(), std::string(kStepStopped));
    EXPECT_FALSE(simulation->diverged());
    EXPECT_EQ(simulation->time(), time);
    EXPECT_EQ(simulation->surface(), before);
    stop = false;
    EXPECT_FALSE(simulation->step());
    EXPECT_GT(simulation->time(), time);
    EXPECT_GT((simulation->surface() - before).cwiseAbs().maxCoeff(), 0);
  }
}

// corners-fine swings down from horizontal. In single 5 ms steps impulse-nc's position pass
// without its geometric stiffness stalls from step 6 on and never recovers (with it, every step
// converges); with adaptive sub-steps each such step is taken again in 2, 4, ... sub-steps until
// it converges.
TEST(Simulation, AdaptiveSubstepsRetakeStepsThatEndAboveTolerance) {
  Scene scene = test::builtinScene("corners-fine", "impulse-nc");
  scene.solverParams["geometric_stiffness"] = 0;
  scene.sim.substeps = 1;
  scene.sim.maxSubsteps = 16;
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  int above = 0, retries = 0, most = 1;
  for (int i = 0; i < 150; ++i) {
    ASSERT_FALSE(simulation->step());
    const StepStats& stats = simulation->lastStats();
    above += !stats.converged;
    retries += stats.extra["adaptive_retries"].get<int>();
    most = std::max(most, stats.substeps);
  }
  EXPECT_EQ(above, 0);
  EXPECT_GT(retries, 0);
  EXPECT_GT(most, 1);
  EXPECT_LE(most, 16);
}

// A solver's state taken and given back continues exactly as it did the first time.
TEST(Simulation, SolverStateGivenBackRepeatsTheSteps) {
  for (const std::string solver : {"impulse-nc", "conforming", "mls-isometry", "xpbd"}) {
    SCOPED_TRACE(solver);
    auto simulation = test::makeSimulation(test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, solver));
    if (!simulation) return;
    for (int i = 0; i < 5; ++i) ASSERT_FALSE(simulation->step());
    const SolverState saved = simulation->solver().state();
    for (int i = 0; i < 5; ++i) ASSERT_FALSE(simulation->step());
    const Positions first = simulation->surface();
    simulation->solver().setState(saved);
    EXPECT_GT((simulation->surface() - first).cwiseAbs().maxCoeff(), 1e-6);  // it went back
    for (int i = 0; i < 5; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_EQ((simulation->surface() - first).cwiseAbs().maxCoeff(), 0.0);
  }
}

// A moment kept and gone back to (the viewer's "keep moment" and "back to it") puts the motion
// back: the time and step count, and the same steps follow, to the bit, in every solver, with
// the cloth on the ground and a jelly dropped beside it.
TEST(Simulation, AMomentGoneBackToRepeatsTheSteps) {
  for (const std::string solver :
       {"impulse-nc", "conforming", "mls-isometry", "xpbd", "strain-limit-remesh"}) {
    SCOPED_TRACE(solver);
    Scene scene = test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, solver, 0.6);
    scene.sim.dt = 0.01;  // on the ground by the moment
    Obstacle ground;
    ground.point = Vec3::Zero();
    ground.normal = Vec3::UnitY();
    scene.obstacles.push_back(ground);
    scene.jellies.push_back(test::jellyBall(0.1, Vec3(0.8, 0.3, 0), 16, 8));
    auto simulation = test::makeSimulation(scene);
    if (!simulation) return;
    for (int i = 0; i < 40; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_GT(simulation->lastStats().contacts, 0);
    EXPECT_LT(simulation->jellies()[0].center().y(), 0.2);  // it fell, and met the ground
    const auto kept = simulation->moment();
    const double t = simulation->time();
    for (int i = 0; i < 30; ++i) ASSERT_FALSE(simulation->step());
    const Positions first = simulation->surface();
    const Vec3 jellyFirst = simulation->jellies()[0].center();
    ASSERT_FALSE(simulation->goBack(*kept));
    EXPECT_EQ(simulation->time(), t);
    EXPECT_EQ(simulation->stepCount(), 40);
    EXPECT_GT((simulation->surface() - first).cwiseAbs().maxCoeff(), 1e-4);  // it went back
    for (int i = 0; i < 30; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_EQ((simulation->surface() - first).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ((simulation->jellies()[0].center() - jellyFirst).norm(), 0.0);
  }
}

// What a solver learns from its steps goes back with the moment. Every solver's grab pushes at a
// rate it halves while the cloth does not follow and doubles once it does (impulse-nc's own,
// GrabPull in the others, sim/grab.h), so a moment kept while the grab pulls the cloth into a
// ball must keep that rate for the same steps to follow; mls-isometry's projection also starts
// from the last step's rows for the edges near their limit.
TEST(Simulation, AMomentKeepsWhatTheSolverLearnt) {
  for (const std::string solver :
       {"impulse-nc", "conforming", "mls-isometry", "xpbd", "strain-limit-remesh"}) {
    SCOPED_TRACE(solver);
    auto simulation =
        test::makeSimulation(test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, solver));
    if (!simulation) continue;  // makeSimulation reported it; the other solvers still run
    Simulation& s = *simulation;
    for (int i = 0; i < 10; ++i) ASSERT_FALSE(s.step());
    const Vec3 bary = Vec3::Constant(1.0 / 3);
    const Tri& f = s.cloth().mesh.triangles[5];
    Vec3 point = Vec3::Zero();
    for (int k = 0; k < 3; ++k) point += bary[k] * s.surface().row(f[k]).transpose();
    // The cloth hangs in the plane z = 0; a ball 2 cm behind the point, and the grab pulls the
    // point 1 m into it.
    Obstacle ball;
    ball.type = Obstacle::Type::Sphere;
    ball.point = point - Vec3(0, 0, 0.12);
    ball.radius = 0.1;
    ASSERT_FALSE(s.setObstacles({ball}));
    ASSERT_FALSE(s.setGrab(Grab{5, bary, point - Vec3(0, 0, 1)}));
    int steps = 0;
    do {
      ASSERT_FALSE(s.step());
    } while (s.lastStats().extra.value("grab_gain", 1.0) == 1.0 && ++steps < 12);
    // Pushing at a fraction of its rate.
    ASSERT_LT(s.lastStats().extra.value("grab_gain", 1.0), 1.0);
    const auto kept = s.moment();
    for (int i = 0; i < 15; ++i) ASSERT_FALSE(s.step());
    const Positions first = s.surface();
    ASSERT_FALSE(s.goBack(*kept));
    for (int i = 0; i < 15; ++i) ASSERT_FALSE(s.step());
    EXPECT_EQ((s.surface() - first).cwiseAbs().maxCoeff(), 0.0);
  }
}

// Going back keeps the edits made since: a pin set since travels to its target from where the
// moment held its vertex, no faster than the hand's speed, and one removed since stays removed.
// A moment of another solver or another cloth is refused and changes nothing; a diverged
// simulation runs again from a moment.
TEST(Simulation, GoingBackKeepsTheEditsMadeSince) {
  auto simulation = test::makeSimulation(
      test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, "impulse-nc"));
  if (!simulation) return;
  Simulation& s = *simulation;
  for (int i = 0; i < 40; ++i) ASSERT_FALSE(s.step());
  const auto kept = s.moment();
  const Positions then = s.surface();
  for (int i = 0; i < 40; ++i) ASSERT_FALSE(s.step());
  const int removed = s.pins()[1].first, added = 40;
  s.removePin(removed);
  const Vec3 target = s.surface().row(added).transpose() + Vec3(0, 0.05, 0);
  ASSERT_FALSE(s.setPin(added, target));
  ASSERT_FALSE(s.goBack(*kept));
  ASSERT_EQ(s.pins().size(), 2u);
  EXPECT_EQ(s.pins()[1], std::make_pair(added, target));
  Vec3 last = then.row(added).transpose();
  double fastest = 0;
  for (int i = 0; i < 200; ++i) {
    ASSERT_FALSE(s.step());
    const Vec3 now = s.surface().row(added).transpose();
    fastest = std::max(fastest, (now - last).norm() / s.sim().dt);
    last = now;
  }
  EXPECT_LT(fastest, Simulation::kPinHandSpeed + 0.05);
  EXPECT_LT((last - target).norm(), 1e-3) << "arrived";

  auto other =
      test::makeSimulation(test::hangingScene(ClothSource::Kind::IrregularRectangle, 9, "xpbd"));
  ASSERT_TRUE(other);
  const double t = s.time();
  auto error = s.goBack(*other->moment());
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "the moment was kept under xpbd, and impulse-nc runs now");
  Scene finer = test::hangingScene(ClothSource::Kind::IrregularRectangle, 11, "impulse-nc");
  auto another = test::makeSimulation(finer);
  ASSERT_TRUE(another);
  error = s.goBack(*another->moment());
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("another cloth"), std::string::npos) << *error;
  EXPECT_EQ(s.time(), t);

  // Falling faster than 1 m/s counts as a runaway here (DivergenceInASubstepNamesIt).
  Scene falling = test::hangingScene(ClothSource::Kind::Grid, 6, "mls-isometry");
  falling.pins.clear();
  falling.sim.dt = 0.02;
  falling.solverParams = {{"max_speed", 1.0}};
  auto runaway = test::makeSimulation(falling);
  ASSERT_TRUE(runaway);
  ASSERT_FALSE(runaway->step());
  const auto early = runaway->moment();
  ASSERT_TRUE(test::stepUntilError(*runaway, 50).first);
  EXPECT_TRUE(runaway->diverged());
  ASSERT_FALSE(runaway->goBack(*early));
  EXPECT_FALSE(runaway->diverged());
  EXPECT_FALSE(runaway->step());
  EXPECT_TRUE(runaway->surface().allFinite());
}

// A step that diverges in every sub-stepping is still reported, after the retries.
TEST(Simulation, AdaptiveSubstepsStillReportDivergence) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 6, "mls-isometry");
  scene.pins.clear();
  scene.sim.dt = 0.02;
  scene.sim.maxSubsteps = 4;
  scene.solverParams = {{"max_speed", 1.0}};
  auto simulation = test::makeSimulation(scene);
  if (!simulation) return;
  const auto error = test::stepUntilError(*simulation, 50).first;
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("of 4"), std::string::npos) << *error;  // the last attempt: 4 sub-steps
  EXPECT_TRUE(simulation->diverged());
  EXPECT_TRUE(simulation->surface().allFinite());
}

TEST(Simulation, SubstepsAreReadAndChecked) {
  auto parse = [](const std::string& simulation) {
    return parseScene(nlohmann::json::parse(R"({"cloth": {"generator": {"type": "grid"}}, "simulation": )" +
                                            simulation + "}"),
                      "inline.json", "");
  };
  auto good = parse(R"({"substeps": 8})");
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_EQ(good->sim.substeps, 8);
  EXPECT_EQ(sceneToJson(*good)["simulation"]["substeps"], 8);
  for (const std::string bad : {R"({"substeps": 0})", R"({"substeps": 101})", R"({"substeps": 2.5})"}) {
    auto parsed = parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.error().find("simulation.substeps"), std::string::npos) << parsed.error();
  }
  auto adaptive = parse(R"({"max_substeps": 64})");
  ASSERT_TRUE(adaptive.ok()) << adaptive.error();
  EXPECT_EQ(adaptive->sim.maxSubsteps, 64);
  auto bad = parse(R"({"max_substeps": 0})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("simulation.max_substeps"), std::string::npos) << bad.error();
}

// A pin moved by hand (dragged or flicked by the mouse) carries its vertex to the new target at
// Simulation::kPinHandSpeed, from where it holds it, even when moved again on the way.
TEST(Simulation, APinMovedByHandTravelsThereAtTheHandSpeed) {
  for (const std::string solver : {"impulse-nc", "mls-isometry"}) {
    auto scene = resolveScene("hanging");
    ASSERT_TRUE(scene.ok()) << scene.error();
    useSolver(*scene, solver);
    auto created = Simulation::create(*scene);
    ASSERT_TRUE(created.ok()) << created.error();
    Simulation& s = **created;
    for (int i = 0; i < 300; ++i) ASSERT_FALSE(s.step());
    const auto [vertex, target] = s.pins()[0];
    // Toward the other pin, within the cloth's reach of it (the reach would hold the pin short).
    const Vec3 toward = (s.pins()[1].second - target).normalized();
    const Vec3 first = target + 0.4 * toward + Vec3(0, 0, 0.3), second = target + 0.3 * toward + Vec3(0, -0.2, 0);
    const double dt = s.sim().dt, tolerance = solver == "impulse-nc" ? 1e-5 : 2e-3;
    Vec3 last = s.surface().row(vertex).transpose();
    double fastest = 0, largestMove = 0;
    ASSERT_FALSE(s.setPin(vertex, first));
    for (int i = 0; i < 400; ++i) {
      if (i == 100) {  // on its way: turns from where it is
        ASSERT_FALSE(s.setPin(vertex, second));
      }
      ASSERT_FALSE(s.step());
      const Vec3 now = s.surface().row(vertex).transpose();
      largestMove = std::max(largestMove, (now - last).norm());
      last = now;
      fastest = std::max(fastest, s.lastStats().extra.value("max_speed", 0.0));
    }
    std::printf("%s: the pinned vertex moved at most %.2f mm a step (%.1f m/s); fastest point %.1f m/s\n",
                solver.c_str(), 1e3 * largestMove, largestMove / dt, fastest);
    EXPECT_LT(largestMove, Simulation::kPinHandSpeed * dt + tolerance);
    EXPECT_LT((last - second).norm(), tolerance) << "arrived";
    EXPECT_LT(fastest, 30.0);  // 256 and 277 m/s when the pin jumped 0.57 m in one step
  }
}

// The viewer's undo puts back a set of pins at once (Simulation::setPins): after "clear pins"
// and a fall, the pins travel back together, each the same fraction of its way at every step,
// none faster than the hand speed, so that the cloth between them is not pulled apart on the way.
// An unchanged pin is left as it is; a bad list changes nothing.
TEST(Simulation, PinsPutBackTogetherTravelTogether) {
  auto scene = resolveScene("hanging");
  ASSERT_TRUE(scene.ok()) << scene.error();
  useSolver(*scene, "impulse-nc");
  auto created = Simulation::create(*scene);
  ASSERT_TRUE(created.ok()) << created.error();
  Simulation& s = **created;
  for (int i = 0; i < 200; ++i) ASSERT_FALSE(s.step());
  const auto pins = s.pins();
  ASSERT_GE(pins.size(), 2u);

  // Bad lists: refused by name, nothing changed.
  const int n = s.cloth().mesh.vertexCount();
  auto twice = pins;
  twice.push_back(pins[0]);
  auto outOfRange = pins;
  outOfRange.emplace_back(n, Vec3::Zero());
  auto notFinite = pins;
  notFinite[1].second.x() = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(s.setPins(twice).value_or(""),
            "pins: vertex " + std::to_string(pins[0].first) + " is listed twice");
  EXPECT_EQ(s.setPins(outOfRange).value_or(""), "pins: vertex " + std::to_string(n) +
                                                    " is out of range (the cloth has " +
                                                    std::to_string(n) + " vertices)");
  EXPECT_EQ(s.setPins(notFinite).value_or(""),
            "pins: the target of vertex " + std::to_string(pins[1].first) + " is not finite");
  EXPECT_EQ(s.pins(), pins);

  s.clearPins();
  for (int i = 0; i < 150; ++i) ASSERT_FALSE(s.step());
  // Put back with one target nearer the other pin, so that their ways differ in length.
  auto back = pins;
  back[1].second += 0.1 * (pins[0].second - pins[1].second).normalized();
  std::vector<Vec3> from;
  double farthest = 0, nearest = 1e9;
  for (const auto& [vertex, target] : back) {
    from.push_back(s.surface().row(vertex).transpose());
    farthest = std::max(farthest, (target - from.back()).norm());
    nearest = std::min(nearest, (target - from.back()).norm());
  }
  ASSERT_GT(nearest, 0.05) << "the cloth fell from its pins";
  ASSERT_GT(farthest - nearest, 0.01) << "ways of different lengths";
  ASSERT_FALSE(s.setPins(back));
  EXPECT_EQ(s.pins(), back);
  const double dt = s.sim().dt;
  const int arrival = static_cast<int>(std::ceil(farthest / Simulation::kPinHandSpeed / dt));
  double spread = 0;
  for (int i = 1; i <= arrival + 5; ++i) {
    ASSERT_FALSE(s.step());
    std::vector<double> fraction;
    for (size_t k = 0; k < back.size(); ++k) {
      const Vec3 way = back[k].second - from[k];
      fraction.push_back((s.surface().row(back[k].first).transpose() - from[k]).dot(way) /
                         way.squaredNorm());
    }
    const auto [lo, hi] = std::minmax_element(fraction.begin(), fraction.end());
    spread = std::max(spread, *hi - *lo);
    if (i == arrival / 2) {
      EXPECT_GT(*lo, 0.3) << "on their way together at step " << i;
      EXPECT_LT(*hi, 0.7) << "on their way together at step " << i;
    }
  }
  std::printf(
      "%zu pins put back over %d steps (%.3f to %.3f m away): the fractions of their ways "
      "differed by at most %.2e\n",
      back.size(), arrival, nearest, farthest, spread);
  EXPECT_LT(spread, 1e-4);
  for (const auto& [vertex, target] : back)
    EXPECT_LT((s.surface().row(vertex).transpose() - target).norm(), 1e-5)
        << "vertex " << vertex << " arrived";

  // One pin changed (toward another: the reach would hold it short the other way): only it
  // travels; the others stay where they are.
  auto moved = back;
  moved[0].second += 0.1 * (back[1].second - back[0].second).normalized();
  ASSERT_FALSE(s.setPins(moved));
  ASSERT_FALSE(s.step());
  EXPECT_GT((s.surface().row(back[0].first).transpose() - back[0].second).norm(), 1e-4);
  for (size_t k = 1; k < back.size(); ++k)
    EXPECT_LT((s.surface().row(back[k].first).transpose() - back[k].second).norm(), 1e-5);
}

// A pin the user set away from its vertex's rest position (Ctrl+click where the cloth hangs now,
// or dragged there) is kept by Reset, Save scene and "this scene, all solvers", which start the
// cloth from rest: the restarted scene must carry the vertex there, not jump it in the first step
// (634 m/s, and mls-isometry's sheet tangled for good, before pins travelled).
TEST(Simulation, ARestartedScenesPinTravelsFromRestToWhereItWasSet) {
  auto scene = parseScene(nlohmann::json::parse(R"({
      "cloth": {"generator": {"type": "grid", "columns": 13, "rows": 13},
                "transform": {"rotate_deg": [-90, 0, 0], "translate": [0, 1, 0]}},
      "simulation": {"dt": 0.001, "bending": 1e-6},
      "solver": {"id": "mls-isometry"}})"), "sheet.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  auto first = Simulation::create(*scene);
  ASSERT_TRUE(first.ok()) << first.error();
  const int centre = 84;  // the middle of the 13 x 13 grid
  const Vec3 rest = (*first)->cloth().mesh.positions.row(centre).transpose();
  const Vec3 target = rest + Vec3(0.3, -0.3, 0.3);
  ASSERT_FALSE((*first)->setPin(centre, target));
  const Scene restarted = (*first)->currentScene();
  ASSERT_EQ(restarted.pins.size(), 1u);
  EXPECT_EQ(restarted.pins[0].target, target);
  EXPECT_EQ(restarted.pins[0].ramp, 0);

  auto simulation = Simulation::create(restarted);
  ASSERT_TRUE(simulation.ok()) << simulation.error();
  const double dt = (*simulation)->sim().dt, away = (target - rest).norm();
  double fastest = 0, largestMove = 0;
  Vec3 last = rest;
  for (int i = 0; i < 1500; ++i) {
    ASSERT_FALSE((*simulation)->step());
    const Vec3 now = (*simulation)->surface().row(centre).transpose();
    largestMove = std::max(largestMove, (now - last).norm());
    last = now;
    fastest = std::max(fastest, (*simulation)->lastStats().extra.value("max_speed", 0.0));
  }
  std::printf("pin %.3f m from rest: the vertex moved at most %.2f mm a step; fastest point %.1f m/s\n", away,
              1e3 * largestMove, fastest);
  EXPECT_LT(largestMove, Simulation::kPinHandSpeed * dt + 2e-3);
  // The sheet whips around the travelling pin: its fastest point reaches 13 to 26 m/s, depending
  // on the floating-point kernels (SkylakeX 13.4, Haswell 18.9, Nehalem 25.6; scripts/kernels.sh),
  // against 634 m/s when the pin jumped there in one step.
  EXPECT_LT(fastest, 60.0);
  EXPECT_LT((last - target).norm(), 1e-3) << "the pin reached its target";
}

}  // namespace

// A cloth laid within the thickness of an obstacle (a tablecloth laid on its table, as Codim-IPC's
// is, 0.4 mm above the top) is moved out to the thickness at kContactRecoverySpeed, not at once:
// at once, the push became velocity, and a sheet 1 mm above the ground with a 2 mm thickness left
// it at 1 m/s (dt = 1 ms), in every solver; the table's sharp edges threw the cloth's rim up at
// 2 m/s. The same holds where a thicker cloth or a moved obstacle puts the cloth within it.
TEST(Simulation, AClothLaidWithinTheThicknessRisesToItWithoutBeingThrown) {
  std::ostringstream cube;  // a 0.6 m table top, 0.1 m thick, its top at y = 0
  for (int k = 0; k < 8; ++k)
    cube << "v " << (k & 1 ? 0.3 : -0.3) << " " << (k & 2 ? 0.0 : -0.1) << " " << (k & 4 ? 0.3 : -0.3) << "\n";
  cube << "f 1 2 6\nf 1 6 5\nf 3 7 8\nf 3 8 4\nf 1 5 7\nf 1 7 3\nf 2 4 8\nf 2 8 6\nf 1 3 4\nf 1 4 2\nf 5 6 8\nf 5 8 7\n";
  const std::string table = test::writeFile("table_top.obj", cube.str());
  auto sheetAt = [&](const std::string& solver, double height, const nlohmann::json& obstacle,
                     const std::string& pins = "") {
    nlohmann::json json = {
        {"name", "laid"},
        {"cloth", {{"generator", {{"type", "irregular-rectangle"}, {"width", 1.0}, {"height", 1.0}, {"triangles", 300}, {"seed", 3}}},
                   {"transform", {{"rotate_deg", {-90, 0, 0}}, {"translate", {0, height, 0}}}}}},
        {"simulation", {{"dt", 0.001}, {"thickness", 0.002}, {"damping", 0.05}, {"bending", 1e-5}}},
        {"obstacles", {obstacle}},
        {"solver", {{"id", solver}}}};
    if (!pins.empty()) json["pins"] = {{{"preset", pins}}};
    auto scene = parseScene(json, "laid", test::tempDir().string());
    EXPECT_TRUE(scene) << scene.error();
    return test::makeSimulation(*scene);
  };
  const nlohmann::json ground = {{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {0, 1, 0}}};
  // The fastest upward speed of a vertex over `steps` steps, and the lowest and highest vertex after.
  struct Run {
    double rising = 0, low = 0, high = 0;
  };
  auto run = [](Simulation& simulation, int steps) {
    Run r;
    for (int step = 0; step < steps; ++step) {
      const Positions before = simulation.surface();
      EXPECT_FALSE(simulation.step());
      r.rising = std::max(r.rising, (simulation.surface().col(1) - before.col(1)).maxCoeff() / simulation.sim().dt);
    }
    r.low = simulation.surface().col(1).minCoeff();
    r.high = simulation.surface().col(1).maxCoeff();
    return r;
  };
  for (const std::string solver : {"impulse-nc", "xpbd", "mls-isometry"}) {
    SCOPED_TRACE(solver);
    // 1 mm above the ground: up to the 2 mm at 0.05 m/s, in 20 ms.
    auto simulation = sheetAt(solver, 0.001, ground);
    ASSERT_TRUE(simulation);
    Run r = run(*simulation, 60);
    EXPECT_LT(r.rising, 1.2 * kContactRecoverySpeed);
    EXPECT_GT(r.low, 0.0019);
    EXPECT_LT(r.high, 0.0022);
    // A thickness raised to 5 mm in the panel.
    SimParams thicker = simulation->sim();
    thicker.thickness = 0.005;
    ASSERT_FALSE(simulation->setSimParams(thicker));
    r = run(*simulation, 100);
    EXPECT_LT(r.rising, 1.2 * kContactRecoverySpeed);
    EXPECT_GT(r.low, 0.0049);
    EXPECT_LT(r.high, 0.0053);
    // The ground moved up 3 mm under it.
    std::vector<Obstacle> raised = simulation->obstacles();
    raised[0].point.y() = 0.003;
    ASSERT_FALSE(simulation->setObstacles(raised));
    r = run(*simulation, 100);
    EXPECT_LT(r.rising, 1.2 * kContactRecoverySpeed);
    EXPECT_GT(r.low, 0.0079);
    // Pinned at its corners where it lies: the pins move out with it (each corner jumped the
    // millimetre in one step, and kicked impulse-nc's sheet to 0.3 to 0.7 m/s for 10 steps).
    simulation = sheetAt(solver, 0.001, ground, "four-corners");
    ASSERT_TRUE(simulation);
    r = run(*simulation, 60);
    EXPECT_LT(r.rising, 1.2 * kContactRecoverySpeed);
    EXPECT_GT(r.low, 0.0019);
    // Laid 0.5 mm above a table top with sharp edges: the rim over them is not thrown up, and the
    // overhang falls.
    simulation = sheetAt(solver, 0.0005, {{"type", "mesh"}, {"obj", table}});
    ASSERT_TRUE(simulation);
    r = run(*simulation, 30);
    EXPECT_LT(r.rising, 0.2);  // the cloth wrapping the edge lifts its inner vertices at about 0.1 m/s
    EXPECT_LT(r.low, -0.003);
  }
}

// Two layers of cloth laid 1 mm apart with self-collision on (2 mm thickness): pushed apart to
// the thickness in one step, each left at 0.5 m/s; now they part at kContactRecoverySpeed, and
// so do they when self-collision is turned on later.
TEST(Simulation, LayersLaidWithinTheThicknessPartWithoutBeingThrown) {
  std::ostringstream obj;
  const int n = 12;
  // The upper layer a third of a cell aside, as a fold would lie.
  for (double y : {0.3, 0.301})
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double shift = y > 0.3 ? 1 / (3.0 * (n - 1)) : 0;
        obj << "v " << i / double(n - 1) - 0.5 + shift << " " << y << " " << j / double(n - 1) - 0.5 + shift << "\n";
      }
  for (int layer = 0; layer < 2; ++layer) test::writeGridFaces(obj, n, layer * n * n);
  const std::string path = test::writeFile("two_layers.obj", obj.str());
  // The largest vertical speed of a vertex relative to the cloth's mean (both fall together).
  auto parting = [](Simulation& simulation, int steps) {
    double fastest = 0;
    for (int step = 0; step < steps; ++step) {
      const Positions before = simulation.surface();
      EXPECT_FALSE(simulation.step());
      const Eigen::VectorXd v = (simulation.surface().col(1) - before.col(1)) / simulation.sim().dt;
      fastest = std::max(fastest, (v.array() - v.mean()).abs().maxCoeff());
    }
    return fastest;
  };
  for (const std::string solver : {"impulse-nc", "xpbd", "mls-isometry"}) {
    SCOPED_TRACE(solver);
    Scene scene = sceneForObj(path);
    scene.solverId = solver;
    scene.sim.dt = 0.001;
    scene.sim.thickness = 0.002;
    scene.sim.selfCollision = true;
    auto simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation);
    EXPECT_LT(parting(*simulation, 20), 1.2 * kContactRecoverySpeed);
    const Eigen::VectorXd y = simulation->surface().col(1);
    EXPECT_GT(y.tail(n * n).mean() - y.head(n * n).mean(), 0.0015);  // parting towards the thickness
    // Self-collision turned on with the layers laid 1 mm apart.
    scene.sim.selfCollision = false;
    simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation);
    SimParams on = simulation->sim();
    on.selfCollision = true;
    ASSERT_FALSE(simulation->setSimParams(on));
    EXPECT_LT(parting(*simulation, 20), 1.2 * kContactRecoverySpeed);
  }
}

// A cloth opened from a bare OBJ (its units and origin arbitrary) lands on a ground that the
// simulation puts half the cloth's size below it, in the viewer and clothlab-cli alike; before,
// only the viewer added it and `clothlab-cli run sheet.obj` fell forever (24.5 m/s after 2.5 s).
// The ground is then one of the scene's obstacles, so a restart does not add a second.
TEST(Simulation, AClothOpenedFromAnObjLandsOnTheGroundBelowIt) {
  const auto sheet = [](double x0, double y) {
    std::ostringstream obj;
    const int n = 7;  // a 0.6 m square of n x n vertices, level at height y
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) obj << "v " << x0 + 0.1 * i << " " << y << " " << 0.1 * j << "\n";
    test::writeGridFaces(obj, n);
    return obj.str();
  };
  const std::string path = test::writeFile("ground_below_sheet.obj", sheet(3, 1.2));
  for (const std::string solver : {"impulse-nc", "xpbd", "mls-isometry", "strain-limit-remesh"}) {
    SCOPED_TRACE(solver);
    Scene scene = sceneForObj(path);
    useSolver(scene, solver);
    scene.sim.dt = 0.005;
    auto simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation);
    ASSERT_EQ(simulation->obstacles().size(), 1u);
    const Obstacle& ground = simulation->obstacles()[0];
    EXPECT_EQ(ground.type, Obstacle::Type::Plane);
    EXPECT_EQ(ground.normal, Vec3::UnitY());
    const double below = 1.2 - 0.5 * std::sqrt(2 * 0.6 * 0.6);  // half the diagonal down
    EXPECT_NEAR(ground.point.y(), below, 1e-9);
    EXPECT_EQ(ground.friction, scene.sim.friction);
    const Scene now = simulation->currentScene();
    EXPECT_FALSE(now.groundBelowCloth);
    auto restarted = test::makeSimulation(now);
    ASSERT_TRUE(restarted);
    EXPECT_EQ(restarted->obstacles().size(), 1u);
    // Falls the 0.42 m in 0.3 s and lies on it.
    for (int step = 0; step < 200; ++step) ASSERT_FALSE(simulation->step()) << "step " << step;
    const Eigen::VectorXd y = simulation->surface().col(1);
    EXPECT_GT(y.minCoeff(), below);
    EXPECT_LT(y.maxCoeff(), below + 2 * scene.sim.thickness);
    EXPECT_GT(simulation->lastStats().contacts, 0);
  }
  // Too far from the origin for the ground's plane: refused, naming the file.
  const std::string far = test::writeFile("ground_below_far.obj", sheet(0, 2e6));
  auto refused = Simulation::create(sceneForObj(far));
  ASSERT_FALSE(refused);
  EXPECT_NE(
      refused.error().find(far + ": the cloth lies too far from the origin for a ground below it"),
      std::string::npos)
      << refused.error();
}

// Every solver takes every one of its parameters before reset (clothlab-cli checks --tol and
// --param so, before the cloth is built): each value is only checked and kept, and the reset that
// follows starts from its own. impulse-nc rebuilt its bending there, and mls-isometry its
// neighbourhoods, from a cloth not yet given: `run --param bending_model=surface` crashed.
TEST(Simulation, EverySolverChecksEachParameterBeforeReset) {
  for (const SolverEntry& entry : solverRegistry()) {
    for (const ParamDescription& d : entry.parameters) {
      SCOPED_TRACE(entry.id + " " + d.key);
      std::vector<nlohmann::json> values;
      switch (d.type) {
        case ParamDescription::Type::Boolean:
          values = {true, false};
          break;
        case ParamDescription::Type::Text:
          for (const auto& choice : d.choices) values.push_back(choice);
          break;
        case ParamDescription::Type::Integer:
          values = {static_cast<long>(d.min), static_cast<long>(d.max)};
          break;
        case ParamDescription::Type::Number:
          values = {d.min, d.max};
          break;
      }
      for (const nlohmann::json& value : values) {
        auto solver = entry.create();
        const auto error = solver->setParams({{d.key, value}});
        EXPECT_FALSE(error) << value.dump() << ": " << error.value_or("");
        if (!error) {
          EXPECT_EQ(solver->params()[d.key], value);
        }
      }
      auto solver = entry.create();
      EXPECT_TRUE(solver->setParams({{d.key, nlohmann::json::array()}})) << "an array is no value";
    }
  }
}
