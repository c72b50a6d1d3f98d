// mls-isometry with contacts held during the projection (MlsParams::contactProjection, the
// default): the constraints hold where the cloth lies on something, friction follows Coulomb's
// law, and the cloth lets go of an obstacle when something pulls it away. The tube and the drape
// also run with the contacts resolved only after the projection, which is what they catch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/scene.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "sim/solvers/mls/mls_solver.h"
#include "tests/test_util.h"

namespace clothlab {
namespace {

std::unique_ptr<Simulation> create(const nlohmann::json& json) {
  auto scene = parseScene(json, "contacts", "");
  EXPECT_TRUE(scene) << scene.error();
  return scene ? test::makeSimulation(*scene) : nullptr;
}

// A tube standing on the ground. Without the contacts in the projection it pulled the bottom ring
// into the ground each step, the contacts put the ring back afterwards, and the rest of the tube
// fell through it (ckv-cylinder-fine's vertical bottom edges shortened by 80% in 6 steps).
nlohmann::json tube(bool contactProjection) {
  return {{"cloth", {{"generator", {{"type", "cylinder"}, {"radius", 0.1}, {"height", 0.12},
                                    {"columns", 24}, {"rows", 8}, {"diagonal", "alternating"}}},
                     {"transform", {{"translate", {0, 0.003, 0}}}}}},
          {"simulation", {{"density", 0.1}, {"dt", 0.005}, {"damping", 0.5}, {"bending", 1e-5},
                          {"thickness", 0.003}}},
          {"obstacles", {{{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {0, 1, 0}}, {"friction", 0.8}}}},
          {"solver", {{"id", "mls-isometry"}, {"tolerance", 0.01}, {"contact_projection", contactProjection}}}};
}

struct TubeRun {
  int above = 0;          // steps ending above the tolerance
  double heightLoss = 0;  // how far the top ring came down [m]
};

TubeRun runTube(bool contactProjection) {
  auto sim = create(tube(contactProjection));
  TubeRun run;
  if (!sim) return run;
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  const double top = sim->surface().col(1).maxCoeff();
  for (int step = 0; step < 40; ++step) {
    if (auto e = sim->step()) {
      ADD_FAILURE() << *e;
      return run;
    }
    const StepStats& stats = sim->lastStats();
    // The residual reported is the one of the state handed on.
    EXPECT_DOUBLE_EQ(stats.extra["max_isometry_residual"].get<double>(), solver.maxResidual()) << "step " << step + 1;
    run.above += !stats.converged;
    EXPECT_GT(stats.contacts, 0) << "step " << step + 1;
  }
  run.heightLoss = top - sim->surface().col(1).maxCoeff();
  return run;
}

TEST(MlsContacts, ATubeOnTheGroundStandsOnItsBottomRing) {
  const TubeRun held = runTube(true);
  EXPECT_EQ(held.above, 0) << "steps ending above the tolerance";
  EXPECT_LT(held.heightLoss, 0.0015) << "the tube sank";  // measured 0.0006 m
  const TubeRun after = runTube(false);
  EXPECT_GT(after.above, 30) << "the contacts after the projection no longer break the constraints";
  EXPECT_GT(after.heightLoss, 0.0025) << "the tube no longer sinks without the contacts in the projection";  // 0.0031
}

// A square on a plane tilted by 20 degrees (tan = 0.36): Coulomb friction holds it at
// friction 0.6 and lets it slide at 0.1.
double slideOnSlope(double friction, int& above) {
  const double angle = 20.0 * M_PI / 180.0;
  const Vec3 normal(-std::sin(angle), std::cos(angle), 0);
  const nlohmann::json json = {
      {"cloth", {{"generator", {{"type", "grid"}, {"width", 0.3}, {"height", 0.3}, {"columns", 10}, {"rows", 10}}},
                 {"transform", {{"rotate_deg", {-90, 0, 20}}, {"translate", {0, 0.0021, 0}}}}}},
      {"simulation", {{"density", 0.1}, {"dt", 1.0 / 60}, {"substeps", 4}, {"damping", 0.0}, {"bending", 1e-5},
                      {"thickness", 0.002}}},
      {"obstacles", {{{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {normal.x(), normal.y(), normal.z()}},
                      {"friction", friction}}}},
      {"solver", {{"id", "mls-isometry"}, {"tolerance", 0.01}, {"contact_projection", true}}}};
  auto sim = create(json);
  above = 0;
  if (!sim) return 0;
  const Eigen::RowVector3d start = sim->surface().colwise().mean();
  for (int step = 0; step < 60; ++step) {
    if (auto e = sim->step()) {
      ADD_FAILURE() << *e;
      return 0;
    }
    above += !sim->lastStats().converged;
  }
  return (sim->surface().colwise().mean() - start).norm();
}

TEST(MlsContacts, FrictionHoldsOnASlopeBelowItsAngleAndSlidesAbove) {
  int above = 0;
  const double held = slideOnSlope(0.6, above);
  EXPECT_LT(held, 0.005) << "friction 0.6 > tan 20 degrees should hold the cloth";
  EXPECT_EQ(above, 0);
  const double slid = slideOnSlope(0.1, above);
  // Sliding from rest for 1 s at g (sin 20 - 0.1 cos 20) = 2.433 m/s^2: 1.2165 m (measured 1.222).
  EXPECT_NEAR(slid, 1.2165, 0.05) << "friction 0.1 < tan 20 degrees: the cloth should slide as Coulomb says";
  EXPECT_EQ(above, 0);
}

// A sheet lying on the ground, one corner pinned and lifted by 4 cm per step (1 cm per sub-step): the corner's
// neighbourhood leaves the ground in the same step (contacts push, never pull), so the
// constraints hold all along.
TEST(MlsContacts, ALiftedCornerLetsGoOfTheGround) {
  const nlohmann::json json = {
      {"cloth", {{"generator", {{"type", "grid"}, {"width", 0.4}, {"height", 0.4}, {"columns", 12}, {"rows", 12}}},
                 {"transform", {{"rotate_deg", {-90, 0, 0}}, {"translate", {0, 0.002, 0}}}}}},
      {"simulation", {{"density", 0.1}, {"dt", 1.0 / 60}, {"substeps", 4}, {"damping", 0.5}, {"bending", 1e-5},
                      {"thickness", 0.002}}},
      {"obstacles", {{{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {0, 1, 0}}, {"friction", 0.5}}}},
      {"solver", {{"id", "mls-isometry"}, {"tolerance", 0.01}, {"contact_projection", true}}}};
  auto sim = create(json);
  ASSERT_TRUE(sim);
  int corner = 0;
  for (int i = 1; i < sim->surface().rows(); ++i)
    if (sim->surface()(i, 0) + sim->surface()(i, 2) < sim->surface()(corner, 0) + sim->surface()(corner, 2)) corner = i;
  const Vec3 start = sim->surface().row(corner).transpose();
  int above = 0;
  for (int step = 0; step < 5; ++step) {
    ASSERT_FALSE(sim->setPin(corner, start + Vec3(0, 0.04 * (step + 1), 0)));
    ASSERT_FALSE(sim->step());
    above += !sim->lastStats().converged;
    // Points the lift pulls off the ground are let go inside the projection: no fallback needed.
    EXPECT_FALSE(sim->lastStats().extra["fallback_used"].get<bool>()) << "step " << step + 1;
  }
  EXPECT_EQ(above, 0);
  // Points within 0.1 m of the corner (in the rest state) have left the ground.
  int near = 0, lifted = 0;
  for (int i = 0; i < sim->surface().rows(); ++i) {
    if (i == corner || (sim->cloth().mesh.positions.row(i) - sim->cloth().mesh.positions.row(corner)).norm() > 0.1)
      continue;
    ++near;
    lifted += sim->surface()(i, 1) > 0.01;
  }
  EXPECT_GT(near, 3);
  EXPECT_EQ(lifted, near) << "points next to the lifted corner stayed on the ground";
}

// CKV19's drape (ckv-drape): a square dropped on a sphere. Friction holds it there; the
// constraints hold on every step, where the contacts after the projection left 291 of 300 steps
// above the tolerance. Static friction is tested on the points stuck to an obstacle together:
// tested point by point, the points on the sphere's steep sides slid off under their own weight
// (the cloth's tension that holds them reaches them only through the projection) and took the
// drape off the sphere within 1 to 3 s.
struct DrapeRun {
  int above = 0;
  Eigen::RowVector3d centroid = Eigen::RowVector3d::Zero();
};

DrapeRun drape(bool contactProjection) {
  auto scene = resolveScene("ckv-drape");
  EXPECT_TRUE(scene) << scene.error();
  DrapeRun run;
  if (!scene) return run;
  scene->solverParams["contact_projection"] = contactProjection;
  auto sim = test::makeSimulation(*scene);
  if (!sim) return run;
  for (int step = 0; step < 240; ++step) {
    if (auto e = sim->step()) {
      ADD_FAILURE() << *e;
      return run;
    }
    run.above += step >= 30 && !sim->lastStats().converged;  // from 0.5 s, once it lies on the sphere
  }
  run.centroid = sim->surface().colwise().mean();
  return run;
}

TEST(MlsContacts, ADrapeStaysOnTheSphereWithinTheTolerance) {
  const DrapeRun held = drape(true);
  EXPECT_EQ(held.above, 0);
  EXPECT_LT(std::hypot(held.centroid.x(), held.centroid.z()), 0.03) << "the drape slid on the sphere";
  EXPECT_GT(held.centroid.y(), 0.4) << "the drape fell off the sphere";
  EXPECT_GT(drape(false).above, 150) << "the contacts after the projection no longer break the constraints";
}

// ckv-cylinder as the plate starts to press (steps 6 to 9): the points of the rings are let go
// and put back on the ground and the plate. Letting a point go every time its reaction pulled
// cycled there (points let go and put back each iteration): Fast Projection ran its 20
// iterations and the fallback followed on every one of these steps (put back for this test: on
// three of the four with OpenBLAS's Haswell or Prescott kernels, on two with SkylakeX's). On the
// tube of 89 columns where it was found: the scene's tube has 90 since its seam was mended, and
// there the plate presses from step 8 and the tube buckles at once (the fallback from step 9,
// after 9 iterations). Without the cycling each of these projections converges or stalls within
// 8 to 17 iterations; one of them may stall into the fallback, depending on the floating-point
// kernels (step 8, after 10 iterations, with the Prescott kernels that OpenBLAS picks on a
// virtual machine that hides the OS's AVX support).
TEST(MlsContacts, ThePressedCylinderConvergesWithoutCyclingItsContacts) {
  auto scene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(scene) << scene.error();
  scene->cloth.columns = 89;
  scene->solverParams["geometric_stiffness"] = false;  // the plain projection, where it cycled
  // Fast Projection's own convergence: a crawling projection is not handed to the fallback early.
  scene->solverParams["fallback_on_rate"] = false;
  const int most = scene->solverParams.value("max_iterations", MlsParams{}.maxIterations);
  auto sim = test::makeSimulation(*scene);
  int fallbacks = 0;
  for (int step = 0; step < 9; ++step) {
    ASSERT_FALSE(sim->step());
    const StepStats& stats = sim->lastStats();
    EXPECT_TRUE(stats.converged) << "step " << step + 1;
    EXPECT_LT(stats.extra["fp_iterations"].get<int>(), most) << "step " << step + 1;
    fallbacks += stats.extra["fallback_used"].get<bool>();
  }
  EXPECT_LE(fallbacks, 1);
  EXPECT_GT(sim->lastStats().extra["max_contacts_stuck"].get<int>(), 0);
}

// The first 30 steps of ckv-cylinder's crush, with or without geometric stiffness (the scene's
// own setting when not given), handing crawling projections to the fallback or not: steps ending
// within the tolerance, fallbacks, Fast Projection iterations, hand-overs, and the median and
// largest residual.
struct Crush {
  int within = 0, fallbacks = 0, iterations = 0, handedOver = 0;
  double largest = 0, median = 0;
};
Crush crushCylinder(std::optional<bool> geometricStiffness, bool fallbackOnRate = true) {
  Crush crush;
  auto scene = resolveScene("ckv-cylinder");
  EXPECT_TRUE(scene) << scene.error();
  if (!scene) return crush;
  if (geometricStiffness) scene->solverParams["geometric_stiffness"] = *geometricStiffness;
  scene->solverParams["fallback_on_rate"] = fallbackOnRate;
  auto sim = test::makeSimulation(*scene);
  std::vector<double> residuals;
  for (int step = 0; step < 30; ++step) {
    if (auto e = sim->step()) {
      ADD_FAILURE() << "step " << step + 1 << ": " << *e;
      return crush;
    }
    const StepStats& stats = sim->lastStats();
    crush.within += stats.converged;
    crush.fallbacks += stats.extra["fallback_used"].get<bool>();
    crush.iterations += stats.extra["fp_iterations"].get<int>();
    crush.handedOver += stats.extra["fp_handed_over"].get<int>();
    residuals.push_back(stats.extra["max_isometry_residual"].get<double>());
  }
  crush.largest = *std::max_element(residuals.begin(), residuals.end());
  std::nth_element(residuals.begin(), residuals.begin() + residuals.size() / 2, residuals.end());
  crush.median = residuals[residuals.size() / 2];
  std::printf(
      "%d of 30 steps within the tolerance, %d fallbacks (%d handed over), %d Fast Projection "
      "iterations, residual median %.2g, largest %.2g\n",
      crush.within, crush.fallbacks, crush.handedOver, crush.iterations, crush.median,
      crush.largest);
  return crush;
}

// Where Fast Projection stalls, the augmented-Lagrangian fallback keeps sliding contacts on their
// obstacle and holds the points it moves into one. When it let them move freely, pushing them
// back afterwards undid its work (measured again by putting that back): 9 of 30 steps ended
// within the tolerance (0.001), the median residual was 0.013 and the largest 0.11. With the
// holds: medians of 0.00097 to 0.001, largest residuals of 0.0016 to 0.0025, and 16 to 23 steps
// within the tolerance. The crush is chaotic: how many steps end just below the tolerance rather
// than just above depends on the machine's floating-point kernels (16 on an AMD EPYC of family
// 25, whose OpenBLAS picks its Cooper Lake kernels), so the test bounds the residuals, not that
// count. Without the scene's geometric stiffness Fast Projection stalls on most of these steps,
// so the fallback is what is tested.
TEST(MlsContacts, TheCrushedCylinderStaysNearTheToleranceThroughTheFallback) {
  const Crush crush = crushCylinder(false);
  EXPECT_LT(crush.median, 0.0015);
  EXPECT_LT(crush.largest, 0.005);
  EXPECT_GE(crush.fallbacks, 10) << "the fallback no longer runs here: this test no longer tests it";
}

// The scene as shipped regularizes with geometric stiffness, which on the coarse tube keeps Fast
// Projection converging through most of the crush and needs the fallback far less often
// (measured over the first 30 steps, each projection given its max_iterations: 23 to 30 within
// the tolerance and 12 to 16 fallbacks, against 12 to 18 and 21 to 22 without it, under
// OpenBLAS's SkylakeX, Haswell, Sandybridge and Prescott kernels). As shipped, crawling
// projections are handed to the fallback early (next test); how many steps then end just below
// the tolerance rather than just above depends on the kernels (19 to 29), so the residuals are
// bounded instead.
TEST(MlsContacts, TheShippedCylinderSceneConvergesThroughTheCrush) {
  auto scene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(scene) << scene.error();
  ASSERT_TRUE(scene->solverParams.value("geometric_stiffness", false));
  const Crush asShipped = crushCylinder(std::nullopt);
  EXPECT_LT(asShipped.median, 0.0012);
  EXPECT_LT(asShipped.largest, 0.005);
  const Crush shipped = crushCylinder(std::nullopt, false);
  const Crush plain = crushCylinder(false, false);
  EXPECT_GE(shipped.within, 22);
  EXPECT_GT(shipped.within, plain.within);
  EXPECT_LT(4 * shipped.fallbacks, 3 * plain.fallbacks);
}

// Fast Projection hands a projection that crawls to the fallback as soon as, at its rate, it would
// not reach the tolerance in the iterations left (MlsParams::fallbackOnRate), instead of after
// them. Measured on these 30 steps of the crush: 271 to 284 instead of 347 to 395 iterations
// under four kernels (above), the median step's residual 0.0007 to 0.001 (tolerance 0.001) and
// the largest 0.0011 to 0.0028, against 0.0010 to 0.0014. Over 1500 steps of the pillowcase
// under mls-isometry, whose projections crawl once its seams close, 64 instead of 150 ms per
// step from 2 s on, with 186 instead of 191 steps above the tolerance.
TEST(MlsContacts, ACrawlingProjectionIsHandedToTheFallbackWithoutLosingTheTolerance) {
  const Crush early = crushCylinder(std::nullopt, true);
  const Crush late = crushCylinder(std::nullopt, false);
  EXPECT_GE(early.handedOver, 5);
  EXPECT_EQ(late.handedOver, 0);
  EXPECT_LT(10 * early.iterations, 9 * late.iterations);
  EXPECT_LT(early.median, 0.0012);
  EXPECT_LT(early.largest, 0.005);
}

}  // namespace
}  // namespace clothlab
