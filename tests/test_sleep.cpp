// Sleep (Simulation::asleep): a cloth at rest is no longer stepped until something wakes it.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/scene.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "sim/solver_registry.h"
#include "test_util.h"

using namespace clothlab;

namespace {

// A 0.6 m square of 13 x 13 vertices, level 0.3 m above a plane at y = 0 (friction 0.5), stepped
// at 5 ms.
Scene sheetAboveGround(const std::string& solver) {
  Scene scene;
  scene.name = "test-sleep";
  scene.sourcePath = "test";
  scene.cloth.kind = ClothSource::Kind::Grid;
  scene.cloth.columns = scene.cloth.rows = 13;
  scene.cloth.width = scene.cloth.height = 0.6;
  scene.transform.rotateDeg = Vec3(-90, 0, 0);
  scene.transform.translate = Vec3(0, 0.3, 0);
  scene.sim.dt = 0.005;
  Obstacle ground;
  ground.point = Vec3::Zero();
  ground.normal = Vec3::UnitY();
  ground.friction = 0.5;
  scene.obstacles.push_back(ground);
  scene.solverId = solver;
  return scene;
}

// The fastest surface vertex: its speed and where it is, for a failure's message.
std::string fastest(const Simulation& simulation) {
  Eigen::Index at = 0;
  const double speed = simulation.solver().surfaceVelocities().rowwise().norm().maxCoeff(&at);
  std::ostringstream out;
  out << "vertex " << at << " at " << simulation.surface().row(at) << " moves at " << speed
      << " m/s at t = " << simulation.time() << " s";
  return out.str();
}

// Steps until the simulation falls asleep, at most `limit` steps; the steps taken.
int stepUntilAsleep(Simulation& simulation, int limit) {
  for (int i = 0; i < limit; ++i) {
    if (simulation.asleep()) return i;
    if (auto e = simulation.step()) {
      ADD_FAILURE() << *e;
      return limit;
    }
  }
  return limit;
}

const char* const kSolvers[] = {"impulse-nc", "conforming", "mls-isometry", "xpbd",
                                "strain-limit-remesh"};

// The sheet falls 0.3 m (0.25 s), lands and lies still: it falls asleep sleep_time after it came
// to rest, not before it landed, and then takes no solver step: its surface stays put, the time
// and step count go on, and the stats say so without work. Stepped on instead, it stays within a
// millimetre of where it slept. (impulse-nc's coarse sheet creeps on the ground at 1 to 3 mm/s
// for its first 7 s there, its boundary vertices sliding inward, so it sleeps last.)
TEST(Sleep, AClothLyingStillFallsAsleepAndTakesNoSteps) {
  for (const char* solver : kSolvers) {
    SCOPED_TRACE(solver);
    Scene scene = sheetAboveGround(solver);
    auto simulation = test::makeSimulation(scene);
    Scene awake = scene;
    awake.sim.sleepSpeed = 0;
    auto stepped = test::makeSimulation(awake);
    ASSERT_TRUE(simulation && stepped);
    const int taken = stepUntilAsleep(*simulation, 2500);
    ASSERT_TRUE(simulation->asleep()) << fastest(*simulation);
    // Landed at 0.245 s (0.298 m down to the thickness), then still for sleep_time (0.5 s).
    EXPECT_GE(taken * scene.sim.dt, 0.24 + scene.sim.sleepTime);
    const Positions slept = simulation->surface();
    EXPECT_LT(slept.col(1).maxCoeff(), 2 * scene.sim.thickness);  // on the ground
    for (int i = 0; i < 100; ++i) {
      ASSERT_FALSE(simulation->step());
      const StepStats& s = simulation->lastStats();
      ASSERT_TRUE(s.extra.value("asleep", false));
      EXPECT_EQ(s.msTotal, 0.0);
      EXPECT_EQ(s.positionIterations, 0);
      EXPECT_EQ(s.substeps, 0);
      EXPECT_TRUE(s.converged);
      EXPECT_FALSE(s.extra.contains("factorizations"));
    }
    EXPECT_EQ((simulation->surface() - slept).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ(simulation->stepCount(), taken + 100);
    EXPECT_NEAR(simulation->time(), (taken + 100) * scene.sim.dt, 1e-9);
    for (int i = 0; i < taken + 100; ++i) ASSERT_FALSE(stepped->step());
    EXPECT_FALSE(stepped->asleep());
    EXPECT_FALSE(stepped->lastStats().extra.contains("asleep"));
    EXPECT_LT((stepped->surface() - slept).cwiseAbs().maxCoeff(), 1e-3);
  }
}

// Edits wake a sleeping cloth, each tried on a sheet asleep on the ground: gravity turned
// sideways (beyond what friction holds) slides it, and it sleeps again once gravity is back and
// it lies still; a grab keeps it awake while held, and the corner it lifted falls back once let
// go (under impulse-nc and mls-isometry only halfway: the sheet's fold stands on the ground,
// 8 cm high); a pin set where its vertex lies wakes it, and it sleeps again, held; removing the
// pin wakes it again. (After the grab's release impulse-nc's boundary vertices flap at 3 cm/s
// 15 s on, so that sheet is not asked to sleep again there.)
TEST(Sleep, EditsGrabsAndPinsWakeIt) {
  for (const char* solver : kSolvers) {
    SCOPED_TRACE(solver);
    const auto asleepSheet = [&] {
      auto simulation = test::makeSimulation(sheetAboveGround(solver));
      if (simulation) stepUntilAsleep(*simulation, 2500);
      return simulation;
    };
    auto simulation = asleepSheet();
    ASSERT_TRUE(simulation && simulation->asleep());
    // Sideways gravity: 8 m/s^2 along x against friction's 0.5 x 9.81.
    SimParams tilted = simulation->sim();
    tilted.gravity = Vec3(8, -9.81, 0);
    ASSERT_FALSE(simulation->setSimParams(tilted));
    EXPECT_FALSE(simulation->asleep());
    const double x = simulation->surface().col(0).mean();
    for (int i = 0; i < 40; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_FALSE(simulation->lastStats().extra.contains("asleep"));
    EXPECT_GT(simulation->surface().col(0).mean() - x, 0.01);
    tilted.gravity = Vec3(0, -9.81, 0);
    ASSERT_FALSE(simulation->setSimParams(tilted));
    stepUntilAsleep(*simulation, 2500);
    ASSERT_TRUE(simulation->asleep()) << fastest(*simulation);

    simulation = asleepSheet();
    ASSERT_TRUE(simulation && simulation->asleep());
    Grab grab;
    grab.triangle = 0;
    grab.barycentric = Vec3(1, 0, 0);
    const int grabbed = simulation->cloth().mesh.triangles[0][0];
    grab.target = simulation->surface().row(grabbed).transpose() + Vec3(0, 0.15, 0);
    ASSERT_FALSE(simulation->setGrab(grab));
    for (int i = 0; i < 300; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_FALSE(simulation->asleep());  // held still, but held
    EXPECT_GT(simulation->surface()(grabbed, 1), 0.1);
    ASSERT_FALSE(simulation->setGrab(std::nullopt));
    const double held = simulation->surface()(grabbed, 1);
    for (int i = 0; i < 100; ++i) ASSERT_FALSE(simulation->step());
    EXPECT_FALSE(simulation->lastStats().extra.contains("asleep"));
    EXPECT_LT(simulation->surface()(grabbed, 1), held - 0.05);

    simulation = asleepSheet();
    ASSERT_TRUE(simulation && simulation->asleep());
    ASSERT_FALSE(simulation->setPin(grabbed, simulation->surface().row(grabbed).transpose()));
    EXPECT_FALSE(simulation->asleep());
    ASSERT_FALSE(simulation->step());
    EXPECT_FALSE(simulation->lastStats().extra.contains("asleep"));
    stepUntilAsleep(*simulation, 2500);
    ASSERT_TRUE(simulation->asleep()) << fastest(*simulation);
    simulation->removePin(grabbed);
    EXPECT_FALSE(simulation->asleep());
    simulation->removePin(grabbed);  // no pin there: nothing changes, nothing wakes
    ASSERT_FALSE(simulation->step());
    EXPECT_FALSE(simulation->lastStats().extra.contains("asleep"));
  }
}

// Nothing sleeps while something moves or changes by itself: an obstacle moving away (until it
// stops), or with sleep_speed 0. A moment kept asleep goes back asleep.
TEST(Sleep, SomethingMovingKeepsItAwakeAndMomentsKeepTheSleep) {
  Scene scene = sheetAboveGround("xpbd");
  Obstacle ball;
  ball.type = Obstacle::Type::Sphere;
  ball.point = Vec3(3, 1, 0);
  ball.radius = 0.2;
  ball.velocity = Vec3(0.5, 0, 0);
  ball.moveUntil = 2.0;
  scene.obstacles.push_back(ball);
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  const int taken = stepUntilAsleep(*simulation, 1000);
  ASSERT_TRUE(simulation->asleep()) << fastest(*simulation);
  EXPECT_GE(taken * scene.sim.dt, 2.0);  // not while the ball moved

  const auto kept = simulation->moment();
  for (int i = 0; i < 10; ++i) ASSERT_FALSE(simulation->step());
  SimParams never = simulation->sim();
  never.sleepSpeed = 0;
  ASSERT_FALSE(simulation->setSimParams(never));
  for (int i = 0; i < 300; ++i) ASSERT_FALSE(simulation->step());
  EXPECT_FALSE(simulation->asleep());
  EXPECT_FALSE(simulation->lastStats().extra.contains("asleep"));
  ASSERT_FALSE(simulation->goBack(*kept));
  EXPECT_TRUE(simulation->asleep());  // as kept; the edit since keeps it awake once it steps
  ASSERT_FALSE(simulation->step());
  EXPECT_FALSE(simulation->asleep());
}

// The keys are read and checked as the other simulation keys are.
TEST(Sleep, TheKeysAreReadAndChecked) {
  nlohmann::json j = {{"cloth", {{"generator", {{"type", "grid"}}}}},
                      {"simulation", {{"sleep_speed", 0.01}, {"sleep_time", 2}}}};
  auto scene = parseScene(j, "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->sim.sleepSpeed, 0.01);
  EXPECT_EQ(scene->sim.sleepTime, 2);
  j["simulation"]["sleep_speed"] = -1;
  auto refused = parseScene(j, "scene.json", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("sleep_speed"), std::string::npos) << refused.error();
  j["simulation"]["sleep_speed"] = 0;
  j["simulation"]["sleep_time"] = 0;
  refused = parseScene(j, "scene.json", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("sleep_time"), std::string::npos) << refused.error();
}

}  // namespace
