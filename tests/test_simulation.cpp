// Simulation: sub-steps (a step of dt taken as several solver steps) and how their statistics
// combine.
#include <gtest/gtest.h>

#include "sim/scene.h"
#include "sim/simulation.h"
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
  StepStats total, first, second;
  first.msTotal = 2;
  first.positionIterations = 3;
  first.maxPositionError = 1e-4;
  first.converged = true;
  first.extra = {{"fp_iterations", 2},         {"max_isometry_residual", 0.02}, {"fallback_used", false},
                 {"ms_self_collision", 0.5},   {"duplicate_boundary_constraints", 7}};
  second.msTotal = 3;
  second.positionIterations = 4;
  second.maxPositionError = 5e-5;
  second.converged = false;
  second.extra = {{"fp_iterations", 5},         {"max_isometry_residual", 0.01}, {"fallback_used", true},
                  {"ms_self_collision", 0.25},  {"duplicate_boundary_constraints", 7}};
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
  EXPECT_EQ(total.extra["duplicate_boundary_constraints"], 7);  // a figure of the model
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
  std::optional<std::string> error;
  int steps = 0;
  while (!error && steps < 50) {
    error = simulation->step();
    ++steps;
  }
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("step " + std::to_string(steps) + ", sub-step "), std::string::npos) << *error;
  EXPECT_NE(error->find(" of 4"), std::string::npos) << *error;
  EXPECT_NE(error->find("runaway speed"), std::string::npos) << *error;
  EXPECT_TRUE(simulation->surface().allFinite());
  EXPECT_TRUE(simulation->diverged());
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
}

}  // namespace
