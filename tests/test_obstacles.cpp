// Analytic obstacles: distances, contact response, and the cloth resting on / sliding over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <numbers>
#include <optional>

#include "sim/obstacles.h"
#include "sim/simulation.h"
#include "test_util.h"

using namespace clothlab;

TEST(Obstacles, SignedDistancesAndNormals) {
  Obstacle plane;
  plane.point = Vec3(0, 1, 0);
  Obstacle sphere;
  sphere.type = Obstacle::Type::Sphere;
  sphere.radius = 0.5;
  Obstacle box;
  box.type = Obstacle::Type::Box;
  box.halfExtents = Vec3(1, 0.5, 2);
  Vec3 n;
  EXPECT_DOUBLE_EQ(signedDistance(plane, Vec3(3, 0.25, 1), &n), -0.75);
  EXPECT_TRUE(n.isApprox(Vec3(0, 1, 0)));
  EXPECT_DOUBLE_EQ(signedDistance(sphere, Vec3(0, 0, 2), &n), 1.5);
  EXPECT_TRUE(n.isApprox(Vec3(0, 0, 1)));
  EXPECT_DOUBLE_EQ(signedDistance(box, Vec3(0, 0.4, 0), &n), -0.1);  // nearest face: top
  EXPECT_TRUE(n.isApprox(Vec3(0, 1, 0)));
  EXPECT_NEAR(signedDistance(box, Vec3(2, 1.5, 0), &n), std::sqrt(2.0), 1e-12);  // edge region
  EXPECT_TRUE(n.isApprox(Vec3(1, 1, 0).normalized()));
}

// A moving obstacle stops along an axis where it reaches kMaxObstacleCoordinate (the renderer
// draws in single precision): 1000 m/s for 2000 s would take it to 2e6 m.
TEST(Obstacles, TheGroundIsTheHighestPlaneFacingUp) {
  auto plane = [](double y, const Vec3& normal) {
    Obstacle o;
    o.type = Obstacle::Type::Plane;
    o.point = Vec3(0, y, 0);
    o.normal = normal;
    return o;
  };
  Obstacle sphere;
  sphere.type = Obstacle::Type::Sphere;
  sphere.point = Vec3(0, 5, 0);
  EXPECT_FALSE(groundHeight({}).has_value());
  EXPECT_FALSE(
      groundHeight({sphere, plane(1, Vec3(1, 1, 0).normalized()), plane(2, -Vec3::UnitY())})
          .has_value());  // a slope and a ceiling are not the ground
  EXPECT_EQ(groundHeight({plane(-0.5, Vec3::UnitY()), sphere, plane(0.25, Vec3::UnitY()),
                          plane(-1, Vec3::UnitY())}),
            0.25);
  EXPECT_EQ(groundHeight({plane(0.3, Vec3(0, 2, 0))}), 0.3);  // a normal not yet of unit length
}

TEST(Obstacles, AMovingObstacleStopsAtTheLargestCoordinate) {
  Obstacle o;
  o.type = Obstacle::Type::Sphere;
  o.point = Vec3(0, 1, 0);
  o.velocity = Vec3(-1000, 0, 2);
  const Obstacle early = o.at(10);
  EXPECT_EQ(early.point, Vec3(-1e4, 1, 20));
  EXPECT_EQ(early.velocity, o.velocity);
  const Obstacle late = o.at(2000);
  EXPECT_EQ(late.point, Vec3(-kMaxObstacleCoordinate, 1, 4000));
  EXPECT_EQ(late.velocity, Vec3(0, 0, 2));
}

// Where a pin holds a vertex near obstacles: out to the thickness from each, inside one included.
TEST(Obstacles, APointIsMovedOutToTheThicknessFromEveryObstacle) {
  Obstacle ground;
  const Obstacle sphere = test::sphereObstacle(Vec3(0, 0.3, 0), 0.25);
  const std::vector<Obstacle> both = {ground, sphere};
  const double thickness = 0.002;
  Vec3 n;
  // Inside the sphere, off its centre: out along the radius.
  const Vec3 fromInside = outsideObstacles(both, Vec3(0.1, 0.3, 0), thickness);
  EXPECT_NEAR(signedDistance(sphere, fromInside, &n), thickness, 1e-12);
  EXPECT_NEAR(fromInside.y(), 0.3, 1e-12);
  // Below the ground and within the thickness of it: up to the thickness.
  EXPECT_TRUE(outsideObstacles(both, Vec3(2, -0.5, 0), thickness).isApprox(Vec3(2, thickness, 0)));
  EXPECT_TRUE(outsideObstacles(both, Vec3(2, 0.001, 0), thickness).isApprox(Vec3(2, thickness, 0)));
  // Clear of both: where it was.
  EXPECT_EQ(outsideObstacles(both, Vec3(2, 1, 0), thickness), Vec3(2, 1, 0));
}

TEST(Obstacles, ContactMovesPointsOutAndFrictionLimitsSlip) {
  Obstacle ground;
  ground.friction = 0.5;
  Positions previous(2, 3), now(2, 3), correction;
  previous << 0, 0.01, 0, 5, 0.01, 0;
  now << 1.0, -0.02, 0, 5, 0.5, 0;  // the first slid 1 m and sank 2 cm; the second is free
  const ContactResult result = resolveContacts({ground}, 0.001, previous, now, correction);
  EXPECT_EQ(result.contactCount, 1);
  EXPECT_NEAR(result.maxDepth, 0.021, 1e-12);
  const Vec3 resolved = (now + correction).row(0).transpose();
  EXPECT_NEAR(resolved.y(), 0.001, 1e-12);
  EXPECT_NEAR(resolved.x(), 1.0 - 0.5 * 0.021, 1e-12);  // tangential correction = mu x depth
  EXPECT_TRUE(correction.row(1).isZero());
}

// What friction could still cancel after the contact: friction x depth less the slip it cancelled,
// with the surface's normal and velocity, and nothing where no obstacle touched the point.
TEST(Obstacles, ContactsReportTheFrictionTheyLeft) {
  Obstacle ground;
  ground.friction = 0.3;
  ground.velocity = Vec3(0.2, 0, 0);
  Positions previous(3, 3), now(3, 3), correction;
  previous << 0, 0.01, 0, 1, 0.01, 0, 5, 0.01, 0;
  // The first sank 3 mm (with the thickness 2 mm, depth 3 mm) and moved 0.1 mm along the
  // ground's motion of 0.2 mm; the second moved 2 mm along while sinking as far; the third is
  // free.
  now << 0.0001, -0.001, 0, 1.002, -0.001, 0, 5, 0.5, 0;
  std::vector<FrictionLeft> left;
  resolveContacts({ground}, 0.002, previous, now, correction, 0.001, nullptr, nullptr, nullptr,
                  &left);
  ASSERT_EQ(left.size(), 3u);
  // The slip relative to the ground: 0.1 mm.
  EXPECT_NEAR(left[0].left, 0.3 * 0.003 - 0.0001, 1e-12);
  EXPECT_TRUE(left[0].normal.isApprox(Vec3(0, 1, 0)));
  EXPECT_TRUE(left[0].obstacleVelocity.isApprox(Vec3(0.2, 0, 0)));
  EXPECT_EQ(left[1].left, 0);  // 1.8 mm of slip is more than the 0.9 mm friction cancels
  EXPECT_EQ(left[2].left, 0);
  EXPECT_TRUE(left[2].normal.isZero());
}

// A point that a later obstacle pushes into an earlier one is looked at again: here the tilted
// plane pushes it 3 mm under the ground, which then puts it back on top.
TEST(Obstacles, APointPushedIntoAnEarlierObstacleIsPushedOutAgain) {
  Obstacle ground, tilted;
  ground.friction = tilted.friction = 0;
  tilted.normal = Vec3(1, -1, 0).normalized();
  Positions previous(1, 3), now(1, 3), correction;
  now << -0.01, 0.005, 0;
  previous = now;
  const ContactResult result = resolveContacts({ground, tilted}, 0.001, previous, now, correction);
  EXPECT_EQ(result.contactCount, 1);
  const Vec3 resolved = (now + correction).row(0).transpose();
  EXPECT_NEAR(resolved.y(), 0.001, 1e-12);
  EXPECT_GT(resolved.x(), -0.01);  // the tilted plane's push stays
}

// A plate (4 cm thick) coming down at 0.2 m/s onto points held below it: a point pushed past
// the plate's middle in one step goes back out of the bottom face it came in by, not out of the
// top (ckv-cylinder's rim came through its crushing plate that way).
TEST(Obstacles, PointsLeaveAMovingBoxThroughTheFaceTheyEnteredBy) {
  Obstacle plate;
  plate.type = Obstacle::Type::Box;
  plate.halfExtents = Vec3(0.3, 0.02, 0.3);
  plate.velocity = Vec3(0, -0.2, 0);
  const double dt = 0.005;
  plate.point = Vec3(0, 0.52, 0);  // now; it was 1 mm higher at the start of the step
  Positions previous(2, 3), now(2, 3), correction;
  previous << 0, 0.4995, 0, 0.1, 0.4995, 0;  // just below the plate's bottom (0.501 then)
  now << 0, 0.525, 0, 0.1, 0.51, 0;           // past the middle (0.52), and short of it
  const ContactResult result = resolveContacts({plate}, 0.001, previous, now, correction, dt);
  EXPECT_EQ(result.contactCount, 2);
  const Positions resolved = now + correction;
  EXPECT_NEAR(resolved(0, 1), 0.5 - 0.001, 1e-9) << "out of the bottom face, below the thickness band";
  EXPECT_NEAR(resolved(1, 1), 0.5 - 0.001, 1e-9);
  Vec3 n;
  const Vec3 from(0, 0.4995, 0);
  EXPECT_NEAR(signedDistance(plate, Vec3(0, 0.525, 0), &n, &from), -0.025, 1e-12);
  EXPECT_TRUE(n.isApprox(Vec3(0, -1, 0)));
  EXPECT_NEAR(signedDistance(plate, Vec3(0, 0.525, 0), &n), -0.015, 1e-12);  // no history: nearest face
  EXPECT_TRUE(n.isApprox(Vec3(0, 1, 0)));
}

namespace {
// A small cloth dropped onto one obstacle; returns the simulation after `steps`.
std::unique_ptr<Simulation> drop(const std::string& solver, const Obstacle& obstacle, int steps,
                                 double* deepest, int* mostContacts) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 9, solver, 0.55);
  scene.cloth.width = scene.cloth.height = 0.4;
  scene.pins.clear();
  scene.sim.thickness = 0.003;
  scene.obstacles = {obstacle};
  auto created = Simulation::create(scene);
  EXPECT_TRUE(created.ok()) << created.error();
  auto simulation = std::move(created).value();
  *deepest = 1e9;
  *mostContacts = 0;
  for (int i = 0; i < steps; ++i) {
    EXPECT_FALSE(simulation->step().has_value());
    *mostContacts = std::max(*mostContacts, simulation->lastStats().contacts);
    for (int v = 0; v < simulation->surface().rows(); ++v) {
      Vec3 n;
      *deepest = std::min(*deepest, signedDistance(obstacle, simulation->surface().row(v).transpose(), &n));
    }
  }
  return simulation;
}
}  // namespace

TEST(Obstacles, ClothRestsOnPlaneSphereAndBoxWithoutPenetrating) {
  Obstacle plane;
  plane.point = Vec3(0, 0.5, 0);
  const Obstacle sphere = test::sphereObstacle(Vec3(0, 0.35, 0), 0.15);
  const Obstacle box = test::boxObstacle(Vec3(0, 0.4, 0), Vec3(0.1, 0.1, 0.1));
  for (const std::string solver : {"impulse-nc", "conforming"})
    for (const Obstacle& obstacle : {plane, sphere, box}) {
      double deepest = 0;
      int contacts = 0;
      auto simulation = drop(solver, obstacle, 400, &deepest, &contacts);
      const std::string what = solver + " on " + obstacleTypeName(obstacle.type);
      EXPECT_GT(deepest, -0.002) << what;  // never more than 2 mm inside the surface
      EXPECT_GT(contacts, 0) << what;
      if (obstacle.type == Obstacle::Type::Plane) {  // settled flat on the ground
        EXPECT_LT(simulation->solver().surfaceVelocities().rowwise().norm().maxCoeff(), 0.05) << what;
      }
    }
}

// A cloth lying on a table with a fifth of it over the edge: friction 0.3 holds the four fifths
// on the table against the fifth that hangs (0.2 < 0.3 x 0.8). Once it has settled, its back edge
// must stay put: `mls-isometry` holds it still. `impulse-nc` crept off at 1.4 mm/s before the
// friction left over from the contacts acted against the slip its velocity pass gives them
// (sim/solvers/impulse); 0.2 mm/s now, which its position pass slides.
TEST(Obstacles, FrictionHoldsAClothOverATableEdge) {
  for (const std::string solver : {"impulse-nc", "mls-isometry"}) {
    Scene scene = test::hangingScene(ClothSource::Kind::Grid, 13, solver, 0.003);
    scene.name = "table-edge";
    scene.cloth.width = scene.cloth.height = 0.4;
    scene.sim.bending = SimParams{}.bending;
    scene.pins.clear();
    scene.transform.translate = Vec3(0.38, 0.003, 0);  // x from 0.18 to 0.58; the edge at 0.5
    Obstacle table = test::boxObstacle(Vec3(0, -0.5, 0), Vec3(0.5, 0.5, 0.5));
    table.friction = 0.3;
    scene.obstacles = {table};
    auto simulation = test::makeSimulation(scene);
    ASSERT_TRUE(simulation) << solver;
    auto backEdge = [&] { return simulation->surface().col(0).minCoeff(); };
    for (int i = 0; i < 500; ++i) ASSERT_FALSE(simulation->step().has_value()) << solver;
    const double settled = backEdge();
    EXPECT_LT(settled - 0.18, 0.002) << solver;  // the fall over the edge pulled it by under 2 mm
    for (int i = 0; i < 1500; ++i) ASSERT_FALSE(simulation->step().has_value()) << solver;
    EXPECT_LT(backEdge() - settled, 6e-4) << solver;  // 2.1 mm before, 0.3 now, in the same 1.5 s
  }
}

namespace {
// A square sheet (a grid of `resolution` x `resolution` vertices, `width` m across) lying 2 mm
// above a plane tilted by `degrees` (rising to +x) with `friction`, the plane moving at
// `groundVelocity`, stepped 500 times: the sheet's mean displacement along the plane [m].
struct SheetOnAPlane {
  const char* solver;
  int resolution;
  double width, degrees, friction;
  Vec3 groundVelocity = Vec3::Zero();
  std::optional<double> damping{}, dt{};  // else hangingScene's and the scene's defaults
};
Vec3 slideOnAPlane(const SheetOnAPlane& sheet) {
  const double angle = sheet.degrees * std::numbers::pi / 180;
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, sheet.resolution, sheet.solver, 0.0);
  scene.cloth.width = scene.cloth.height = sheet.width;
  scene.pins.clear();
  scene.sim.thickness = 0.002;
  if (sheet.damping) scene.sim.damping = *sheet.damping;
  if (sheet.dt) scene.sim.dt = *sheet.dt;
  scene.transform.rotateDeg = Vec3(-90, 0, sheet.degrees);  // on the plane, 2 mm above it
  scene.transform.translate = Vec3(0, 0.002, 0);
  Obstacle plane;
  plane.normal = Vec3(-std::sin(angle), std::cos(angle), 0);
  plane.friction = sheet.friction;
  plane.velocity = sheet.groundVelocity;
  scene.obstacles = {plane};
  auto simulation = test::makeSimulation(scene);
  EXPECT_TRUE(simulation) << sheet.solver;
  if (!simulation) return Vec3::Constant(1e9);
  const Vec3 start = simulation->surface().colwise().mean().transpose();
  for (int i = 0; i < 500; ++i) {
    const auto error = simulation->step();
    EXPECT_FALSE(error.has_value()) << sheet.solver << ": " << *error;
    if (error) break;
  }
  const Vec3 moved = simulation->surface().colwise().mean().transpose() - start;
  return moved - moved.dot(plane.normal) * plane.normal;
}
}  // namespace

// Every solver's friction, on a 0.3 m sheet lying on a plane with friction 0.3 for 1 s: a
// 10-degree slope (tan 10 = 0.18 < 0.3) holds it; down a 20-degree one it slides with
// g (sin 20 - 0.3 cos 20) = 0.59 m/s^2, 0.29 m in 1 s; a ground moving at 0.5 m/s under it
// carries it, 0.3 g taking it to that speed in 0.17 s (0.46 m in 1 s). strain-limit-remesh's
// projection held its nodes on the plane along the normal alone, and its contacts' pass after it
// found them on the surface with no depth to take friction from: it slid 0.85 and 1.68 m down the
// slopes and was left behind by the ground (0.002 m). Friction's part of the contacts'
// corrections now moves its projection's target (docs/measurements.md, "strain-limit-remesh on
// a plane: friction where the projection runs").
class FrictionOnAPlane : public ::testing::TestWithParam<const char*> {};

TEST_P(FrictionOnAPlane, HoldsOnAGentleSlopeSlidesOnASteepOneAndIsCarriedByAMovingGround) {
  const char* solver = GetParam();
  // 500 steps of 2 ms: 1 s, undamped.
  auto travel = [&](double degrees, const Vec3& groundVelocity) {
    return slideOnAPlane({.solver = solver,
                          .resolution = 16,
                          .width = 0.3,
                          .degrees = degrees,
                          .friction = 0.3,
                          .groundVelocity = groundVelocity,
                          .damping = 0.0,
                          .dt = 0.002});
  };
  const double gentle = travel(10, Vec3::Zero()).norm();
  const double steep = travel(20, Vec3::Zero()).norm();
  const Vec3 carried = travel(0, Vec3(0.5, 0, 0));
  std::printf("%s: 10 degrees %.4f m, 20 degrees %.3f m, carried %.3f m\n", solver, gentle, steep,
              carried.x());
  EXPECT_LT(gentle, 0.005);
  EXPECT_GT(steep, 0.15);
  EXPECT_LT(steep, 0.45);
  EXPECT_GT(carried.x(), 0.4);
  EXPECT_LT(carried.x(), 0.5);
}

INSTANTIATE_TEST_SUITE_P(Solvers, FrictionOnAPlane,
                         ::testing::Values("impulse-nc", "conforming", "mls-isometry", "xpbd",
                                           "strain-limit-remesh"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(Obstacles, FrictionHoldsOrLetsSlideOnASlope) {
  // A 0.2 m sheet for 0.5 s.
  auto slide = [](double friction) {
    return slideOnAPlane({.solver = "impulse-nc",
                          .resolution = 6,
                          .width = 0.2,
                          .degrees = 20,
                          .friction = friction})
        .norm();
  };
  const double sticky = slide(1.0), slippery = slide(0.0);
  // tan(20 deg) = 0.36 < 1: static friction holds; without friction it slides g sin(20) t^2 / 2.
  EXPECT_LT(sticky, 0.01);
  EXPECT_GT(slippery, 0.2);
}
