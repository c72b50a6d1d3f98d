// Sewing: a garment's stitches (sim/stitches.h) close at the sewing speed and hold.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "sim/compare_presets.h"
#include "sim/locking_metrics.h"
#include "sim/solver_registry.h"
#include "sim/stitches.h"
#include "test_util.h"

using namespace clothlab;

namespace {

// The built-in pillowcase (assets/scenes/pillow.json): two 21 x 21 panels sewn round a ball.
Scene pillowScene() {
  auto scene = resolveScene("pillow");
  EXPECT_TRUE(scene.ok()) << scene.error();
  return scene ? *scene : Scene{};
}

}  // namespace

// A stitch beyond its allowance is brought to it along the line between its points, each vertex
// moved by its share of the inverse mass, so that the momentum does not change; a held vertex
// (weight 0) stays and the others take all of it.
TEST(Stitches, TheProjectionSharesTheCorrectionByInverseMass) {
  Positions x(3, 3);
  x << 0, 1, 0,  // the vertex sewn
      -1, 0, 0,  // a
      1, 0, 0;   // b: the stitch's point (1 - t) a + t b is the origin at t = 0.5
  const std::vector<Stitch> stitches{{0, 1, 2, 0.5}};
  const Eigen::VectorXd allowance = Eigen::VectorXd::Constant(1, 0.2);
  Positions moved = x;
  EXPECT_NEAR(projectStitches(stitches, allowance, Eigen::Vector3d(1, 1, 1), moved), 0.8, 1e-15);
  EXPECT_NEAR(stitchGaps(stitches, moved)[0], 0.2, 1e-12);
  // W = 1 + 0.25 + 0.25: the vertex moves 0.8 / 1.5 down, a and b half as far up.
  EXPECT_NEAR(moved(0, 1), 1 - 0.8 / 1.5, 1e-12);
  EXPECT_NEAR(moved(1, 1), 0.4 / 1.5, 1e-12);
  EXPECT_NEAR(moved(2, 1), 0.4 / 1.5, 1e-12);
  EXPECT_NEAR((moved - x).colwise().sum().norm(), 0, 1e-12);
  // a and b held: the vertex goes the whole way.
  moved = x;
  projectStitches(stitches, allowance, Eigen::Vector3d(1, 0, 0), moved);
  EXPECT_NEAR(moved(0, 1), 0.2, 1e-12);
  EXPECT_EQ(moved.bottomRows(2), x.bottomRows(2));
  // Within its allowance a stitch is left alone.
  moved = x;
  EXPECT_EQ(
      projectStitches(stitches, Eigen::VectorXd::Constant(1, 1.5), Eigen::Vector3d(1, 1, 1), moved),
      0);
  EXPECT_EQ(moved, x);
  StepStats stats;
  recordStitches(stitches, Eigen::VectorXd::Constant(1, 0.75), x, stats);
  EXPECT_EQ(stats.extra.at("max_stitch_excess").get<double>(), 0.25);
}

TEST(Stitches, AllowancesShrinkByTheLengthSewn) {
  const Eigen::Vector3d rest(0.3, 0.1, 0);
  EXPECT_TRUE(stitchAllowances(rest, 0.05).isApprox(Eigen::Vector3d(0.25, 0.05, 0)));
  EXPECT_EQ(stitchAllowances(rest, 0.4), Eigen::Vector3d::Zero());
  EXPECT_EQ(stitchAllowances(rest, 0), rest);
}

// xpbd sews the pillowcase round its ball: the seams close to within 2 mm (self-collision leaves
// the elements a stitch joins alone; it held them 5.8 mm apart), the upper panel lies over the
// ball and the seam runs round it below the top, while the cloth stretches little.
TEST(Sewing, XpbdSewsThePillowcaseRoundItsBall) {
  const Scene scene = pillowScene();
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  const ClothModel& cloth = simulation->cloth();
  ASSERT_EQ(cloth.stitches.size(), 80u);
  EXPECT_NEAR(cloth.stitchRestGaps.maxCoeff(), 0.296, 1e-9);
  EXPECT_TRUE(simulation->cloth().warnings.empty()) << simulation->cloth().warnings.front();
  double worstStrain = 0;
  for (int i = 0; i < 1300; ++i) {  // 2.6 s: every seam closes by 0.296 / 0.15 = 1.97 s
    ASSERT_FALSE(simulation->step()) << "step " << i;
    worstStrain = std::max(worstStrain, simulation->lastStats().maxEdgeStrain);
    if (i == 99) {  // not at once
      EXPECT_GT(simulation->lastStats().extra.at("max_stitch_gap").get<double>(), 0.2);
    }
  }
  const Positions& x = simulation->surface();
  const Eigen::VectorXd gaps = stitchGaps(cloth.stitches, x);
  EXPECT_LT(gaps.maxCoeff(), 0.002);
  EXPECT_NEAR(simulation->lastStats().extra.at("max_stitch_gap").get<double>(), gaps.maxCoeff(),
              1e-12);
  EXPECT_LT(worstStrain, 0.3);
  RecordProperty("max_stitch_gap_mm", std::to_string(1e3 * gaps.maxCoeff()));
  RecordProperty("max_edge_strain", std::to_string(worstStrain));
  // The upper panel's centre over the ball's top, the seam round its sides.
  EXPECT_GT(x(nearestVertex(cloth.mesh.positions, Vec3(0, 0.3, 0)), 1), 0.28);
  for (const Stitch& s : cloth.stitches) {
    EXPECT_GT(x(s.vertex, 1), 0.0) << s.vertex;
    EXPECT_LT(x(s.vertex, 1), 0.25) << s.vertex;
  }
}

// A moment gone back to sews the same way again, to the bit; a faster sewing speed set during the
// run closes the seams faster from where they had got to, not all at once.
TEST(Sewing, AMomentSewsTheSameWayAndASpeedEditTakesOverFromWhereTheSeamsAre) {
  Scene scene = pillowScene();
  scene.sim.selfCollision = false;
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(simulation->step());
  const auto moment = simulation->moment();
  for (int i = 0; i < 50; ++i) ASSERT_FALSE(simulation->step());
  const Positions first = simulation->surface();
  ASSERT_FALSE(simulation->goBack(*moment));
  for (int i = 0; i < 50; ++i) ASSERT_FALSE(simulation->step());
  EXPECT_EQ(simulation->surface(), first);

  const double before = stitchGaps(simulation->cloth().stitches, simulation->surface()).maxCoeff();
  SimParams faster = simulation->sim();
  faster.sewingSpeed = 1.5;  // ten times the scene's
  ASSERT_FALSE(simulation->setSimParams(faster));
  ASSERT_FALSE(simulation->step());
  const double after = stitchGaps(simulation->cloth().stitches, simulation->surface()).maxCoeff();
  EXPECT_GT(after, before - 1.5 * faster.dt - 1e-3);  // one step's worth at the new speed
  // 0.2 s more at the new speed close every seam.
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(simulation->step());
  EXPECT_LT(stitchGaps(simulation->cloth().stitches, simulation->surface()).maxCoeff(), 0.02);
}

// impulse-nc sews too: the stitches change the particles' velocities toward their allowance
// before the passes, which keep the edge midpoints' distances.
TEST(Sewing, ImpulseNcSewsThePillowcaseRoundItsBall) {
  Scene scene = pillowScene();
  useSolver(scene, "impulse-nc");
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  EXPECT_TRUE(simulation->cloth().warnings.empty()) << simulation->cloth().warnings.front();
  for (int i = 0; i < 1300; ++i) ASSERT_FALSE(simulation->step()) << "step " << i;
  const ClothModel& cloth = simulation->cloth();
  const Positions& x = simulation->surface();
  const double widest = stitchGaps(cloth.stitches, x).maxCoeff();
  EXPECT_LT(widest, 0.015);
  EXPECT_NEAR(simulation->lastStats().extra.at("max_stitch_gap").get<double>(), widest, 1e-12);
  EXPECT_GT(x(nearestVertex(cloth.mesh.positions, Vec3(0, 0.3, 0)), 1), 0.28);
  for (const Stitch& s : cloth.stitches) EXPECT_LT(x(s.vertex, 1), 0.25) << s.vertex;
  RecordProperty("max_stitch_gap_mm", std::to_string(1e3 * widest));
}

// A strip 0.6 x 0.2 m (25 x 9 vertices) about y = 0.5, its texture coordinates its flat rest
// state, whose left end is sewn to its right end: a loop, which an inextensible cloth can close
// without stretching (a cylinder of circumference 0.6 m). It starts bowed 2 cm out of its plane:
// a strip exactly flat, pulled at both ends in its plane, has no side to buckle to, and the
// 1-ring fits let its edges shorten by up to 19% before it does.
namespace {

std::string loopGarment() {
  constexpr int nx = 25, ny = 9;
  std::string obj;
  auto index = [&](int i, int j) { return j * nx + i; };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const double u = 0.6 * i / (nx - 1), v = 0.2 * j / (ny - 1);
      obj += "v " + std::to_string(u - 0.3) + " " +
             std::to_string(0.5 + 0.02 * std::sin(M_PI * u / 0.6)) + " " + std::to_string(v - 0.1) +
             "\n";
      obj += "vt " + std::to_string(u) + " " + std::to_string(v) + "\n";
    }
  for (int j = 0; j + 1 < ny; ++j)
    for (int i = 0; i + 1 < nx; ++i) {
      const int a = index(i, j) + 1, b = index(i + 1, j) + 1, c = index(i + 1, j + 1) + 1,
                d = index(i, j + 1) + 1;
      auto corner = [](int k) { return std::to_string(k) + "/" + std::to_string(k); };
      obj += "f " + corner(a) + " " + corner(b) + " " + corner(c) + "\n";
      obj += "f " + corner(a) + " " + corner(c) + " " + corner(d) + "\n";
    }
  // Each left-end vertex sewn to the right-end vertex in its row (t = 0 on a right-end edge).
  for (int j = 0; j < ny; ++j)
    obj += "stitch " + std::to_string(index(0, j)) + " " + std::to_string(index(nx - 1, j)) + " " +
           std::to_string(index(nx - 1, j + 1 < ny ? j + 1 : j - 1)) + " 0\n";
  return obj;
}

}  // namespace

// Every solver sews: the strip's seam closes at the sewing speed and holds, while the cloth keeps
// its length (mls-isometry holds the stitches as rows of Fast Projection, strain-limit-remesh as
// inequalities of its strain limiting, beside their own constraints). Without gravity the strip
// curls into a closed loop, not a circle: the seam is a hinge, with no bending across it.
// impulse-nc runs under both its bending models: under the surface's hinge energy its particles'
// nonconformity is held by nonconforming_stiffness alone, without which the surface's edges
// stretched by up to 0.87.
TEST(Sewing, EverySolverSewsAStripIntoALoop) {
  const std::string garment = test::writeFile("loop_garment.obj", loopGarment());
  std::vector<std::pair<std::string, nlohmann::json>> runs;
  for (const SolverEntry& entry : solverRegistry())
    runs.emplace_back(entry.id, nlohmann::json::object());
  runs.emplace_back("impulse-nc", nlohmann::json{{"bending_model", "surface"}});
  for (const auto& [id, params] : runs) {
    SCOPED_TRACE(id + " " + params.dump());
    Scene scene = sceneForObj(garment);
    useSolver(scene, id);
    scene.solverParams.update(params);
    scene.sim.gravity = Vec3::Zero();
    scene.sim.dt = 0.002;
    scene.sim.damping = 0.5;
    scene.sim.bending = 1e-4;
    scene.sim.sewingSpeed = 0.3;  // the 0.6 m gap closes in 2 s
    auto simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation);
    const ClothModel& cloth = simulation->cloth();
    ASSERT_EQ(cloth.stitches.size(), 9u);
    EXPECT_TRUE(simulation->cloth().warnings.empty()) << simulation->cloth().warnings.front();
    int above = 0;
    double worstStrain = 0;
    for (int i = 0; i < 1500; ++i) {  // 3 s
      ASSERT_FALSE(simulation->step()) << "step " << i;
      above += !simulation->lastStats().converged;
      worstStrain = std::max(worstStrain, simulation->lastStats().maxEdgeStrain);
      if (i == 499) {  // closing at the sewing speed, not at once: at most 0.6 - 0.3 x 1 s
        const double gap = simulation->lastStats().extra.at("max_stitch_gap").get<double>();
        EXPECT_LT(gap, 0.301);
        EXPECT_GT(gap, 0.2);
      }
    }
    const Positions& x = simulation->surface();
    const double widest = stitchGaps(cloth.stitches, x).maxCoeff();
    EXPECT_LT(widest, 0.002);
    EXPECT_NEAR(simulation->lastStats().extra.at("max_stitch_gap").get<double>(), widest, 1e-12);
    // xpbd's sweeps end above its 1e-6 m on every step, here as everywhere.
    if (id != "xpbd") {
      EXPECT_LE(above, 3);
    }
    EXPECT_LT(worstStrain, 0.06);
    // The middle row (v = 0.1) round its centre within half the radius of a 0.6 m circle: a loop
    // (more or less pointed at the seam, with each solver's bending), neither the strip laid
    // double nor left open.
    const double radius = 0.6 / (2 * M_PI);
    Vec3 centre = Vec3::Zero();
    for (int i = 0; i < 25; ++i) centre += x.row(4 * 25 + i).transpose() / 25;
    for (int i = 0; i < 25; ++i)
      EXPECT_NEAR((x.row(4 * 25 + i).transpose() - centre).norm(), radius, 0.5 * radius) << i;
    RecordProperty(id + (params.empty() ? "" : "_surface") + "_max_stitch_gap_mm",
                   std::to_string(1e3 * widest));
    RecordProperty(id + (params.empty() ? "" : "_surface") + "_max_edge_strain",
                   std::to_string(worstStrain));
  }
}

// Codim-IPC's dress (14 panels and 851 stitches) is read with every stitch.
TEST(Sewing, CodimIpcsDressIsReadWithItsStitches) {
  const std::filesystem::path path =
      std::filesystem::path(CLOTHLAB_SHARED_TESTDATA) / "cloth/codim-ipc/dress_knife/stage.obj";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is absent (the shared test data is not part of the repository)";
  auto dress = loadObj(path.string());
  ASSERT_TRUE(dress.ok()) << dress.error();
  ASSERT_EQ(dress->stitches.size(), 851u);
  const Eigen::VectorXd gaps = stitchGaps(dress->stitches, dress->mesh.positions);
  // The panels lie round the body 4 mm to 29 cm apart.
  EXPECT_NEAR(gaps.minCoeff(), 0.0043, 5e-4);
  EXPECT_NEAR(gaps.maxCoeff(), 0.2908, 5e-4);
  ASSERT_EQ(dress->warnings.size(), 1u);
  EXPECT_NE(dress->warnings[0].find("ignored 94 'seam' records"), std::string::npos)
      << dress->warnings[0];
}

// A garment OBJ opened on its own (the viewer's Open, `clothlab-cli run FILE.obj`) runs under
// xpbd, the fastest of the solvers that sew it; any other OBJ keeps the default solver.
TEST(Sewing, AGarmentOpensUnderTheSolverThatSewsIt) {
  const std::string garment = assetDirectory() + "/garments/pillow.obj";
  const Scene opened = sceneForObj(garment);
  EXPECT_EQ(opened.solverId, "xpbd");
  auto simulation = test::makeSimulation(opened);
  ASSERT_TRUE(simulation);
  EXPECT_EQ(simulation->cloth().stitches.size(), 80u);
  EXPECT_TRUE(simulation->cloth().warnings.empty()) << simulation->cloth().warnings.front();
  const std::string plain =
      test::writeFile("plain_sheet.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n# stitch 0 1 2 0\n");
  EXPECT_EQ(sceneForObj(plain).solverId, Scene{}.solverId);
}

// Compare mode's metrics include a garment's widest stitch (the `sewing` preset lines up
// conforming, impulse-nc and xpbd on the pillowcase); a cloth without stitches has none.
TEST(Sewing, CompareMeasuresTheWidestStitch) {
  auto simulation = test::makeSimulation(pillowScene());
  ASSERT_TRUE(simulation);
  const size_t gap = lockingMetricIndex("max_stitch_gap");
  const auto values =
      measureLockingMetrics(makeMetricProbe(*simulation), simulation->cloth(),
                            simulation->surface(), simulation->lastStats(), simulation->sim(), 1);
  EXPECT_NEAR(values[gap], 0.296, 1e-9);
  auto plain = test::makeSimulation(test::builtinScene("hanging", "xpbd"));
  ASSERT_TRUE(plain);
  EXPECT_TRUE(
      std::isnan(measureLockingMetrics(makeMetricProbe(*plain), plain->cloth(), plain->surface(),
                                       plain->lastStats(), plain->sim(), 1)[gap]));
  const ComparePreset* sewing = findComparePreset("sewing");
  ASSERT_NE(sewing, nullptr);
  for (const ComparePane& pane : sewing->panes) EXPECT_EQ(pane.scene, "pillow");
}
