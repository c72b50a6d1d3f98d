// The boundary element model and the jelly bodies (methods §4, invariants of §5.4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "sim/generators.h"
#include "sim/jelly/bem2d.h"
#include "sim/jelly/jelly.h"
#include "sim/scene.h"
#include "sim/simulation.h"
#include "test_util.h"

using namespace clothlab;

namespace {

constexpr double kPi = std::numbers::pi;

std::vector<Vec2> circle(int n, double radius = 1, Vec2 center = Vec2::Zero()) {
  std::vector<Vec2> p;
  for (int i = 0; i < n; ++i)
    p.push_back(center + radius * Vec2(std::cos(2 * kPi * i / n), std::sin(2 * kPi * i / n)));
  return p;
}

BemMaterial material(double young = 1e4, double poisson = 0.3) {
  return BemMaterial{young, poisson, false};
}

// The traction error of a Dirichlet solve of the uniform strain u = (ε x, 0) on a circle of n
// elements, relative to the exact traction σ n.
double patchTestError(int n) {
  const double eps = 1e-3, young = 1e4, nu = 0.3;
  BemPolygon bem(circle(n), material(young, nu));
  const double mu = young / (2 * (1 + nu)), lambda = 2 * mu * nu / (1 - 2 * nu);
  Eigen::Matrix2d sigma;
  sigma << (lambda + 2 * mu) * eps, 0, 0, lambda * eps;
  BemPolygon::Conditions bc{std::vector<char>(2 * n, 1), Eigen::VectorXd::Zero(2 * n)};
  Eigen::VectorXd exact(2 * n);
  for (int j = 0; j < n; ++j) {
    bc.value[2 * j] = eps * bem.midpoint(j).x();
    exact.segment<2>(2 * j) = sigma * bem.normal(j);
  }
  auto solved = bem.solveDirect(bc, Vec2::Zero());
  EXPECT_TRUE(solved.has_value());
  return solved ? (solved->traction - exact).norm() / exact.norm() : 1e300;
}

// The distance from p along direction d to the boundary of a convex polygon.
double rayToBoundary(const std::vector<Vec2>& polygon, const Vec2& p, const Vec2& d) {
  double best = 1e300;
  for (size_t k = 0; k < polygon.size(); ++k) {
    const Vec2 a = polygon[k], b = polygon[(k + 1) % polygon.size()];
    // p + t d = a + s (b - a), by cross products.
    auto cross = [](const Vec2& u, const Vec2& v) { return u.x() * v.y() - u.y() * v.x(); };
    const Vec2 e = b - a;
    const double denominator = cross(d, e);
    if (denominator == 0) continue;
    const double t = cross(a - p, e) / denominator, s = cross(a - p, d) / denominator;
    if (t > 0 && s >= 0 && s <= 1) best = std::min(best, t);
  }
  return best;
}

// A plane obstacle through `point` facing `normal` (unit).
Obstacle plane(const Vec3& point, const Vec3& normal, double friction = 0.3) {
  Obstacle o;
  o.type = Obstacle::Type::Plane;
  o.point = point;
  o.normal = normal;
  o.friction = friction;
  return o;
}

Obstacle ground() { return plane(Vec3::Zero(), Vec3::UnitY()); }

}  // namespace

TEST(Bem2d, TheDiagonalFromRigidTranslationIsTheFreeTermOnASmoothBoundary) {
  // H_ii = -Σ_{j≠i} H_ij must equal ½I (the principal value vanishes on a straight element):
  // this checks the off-diagonal integration, the adjacent elements' included.
  BemPolygon bem(circle(64), material());
  for (int i = 0; i < 64; ++i)
    EXPECT_LT((bem.H().block<2, 2>(2 * i, 2 * i) - 0.5 * Eigen::Matrix2d::Identity()).norm(), 2e-3)
        << "element " << i;
}

TEST(Bem2d, KelvinsDisplacementKernelIsReciprocal) {
  BemPolygon bem(circle(16), material(1e4, 0.4));
  const Vec2 p(0.1, -0.3), q(0.7, 0.25);
  EXPECT_LT((bem.kernelU(p, q) - bem.kernelU(q, p).transpose()).norm(),
            1e-15 * bem.kernelU(p, q).norm() + 1e-20);
  EXPECT_GT(bem.kernelU(p, q).norm(), 0);
}

TEST(Bem2d, AUniformStrainPassesThePatchTestAndConvergesWithTheElements) {
  const double coarse = patchTestError(32), fine = patchTestError(128);
  EXPECT_LT(coarse, 2e-2);
  EXPECT_LT(fine, 5e-3);
  EXPECT_LT(fine, 0.5 * coarse);
}

TEST(Bem2d, TheBodyForceTermIsTheDomainIntegralOfKelvinsKernel) {
  // Methods §4.3: the boundary form with its rigid-shift correction against a direct polar
  // integration of U* b over the polygon, at an interior point and at a collocation point.
  const std::vector<Vec2> polygon = circle(48, 0.8, Vec2(0.2, -0.1));
  BemPolygon bem(polygon, material(5e3, 0.35));
  const Vec2 b(300, -1200);
  for (const Vec2& p : {Vec2(0.35, 0.05), bem.midpoint(7)}) {
    Vec2 direct = Vec2::Zero();
    const int angles = 720;
    for (int a = 0; a < angles; ++a) {
      const double theta = 2 * kPi * (a + 0.5) / angles;
      const Vec2 d(std::cos(theta), std::sin(theta));
      const double reach = rayToBoundary(polygon, p, d);
      if (reach > 1e200) continue;  // along the boundary from a boundary point
      // The midpoint rule in r (r ln r is smooth enough).
      const int steps = 400;
      for (int k = 0; k < steps; ++k) {
        const double r = (k + 0.5) / steps * reach;
        direct += (reach / steps) * r * (2 * kPi / angles) * (bem.kernelU(p, p + r * d) * b);
      }
    }
    const Vec2 boundary = bem.bodyForceTermAt(p, b);
    EXPECT_LT((boundary - direct).norm(), 2e-4 * direct.norm())
        << "at " << p.transpose() << ": boundary " << boundary.transpose() << ", direct "
        << direct.transpose();
  }
  // The term the solves use at every collocation point (integrated with the influence matrices)
  // is the same integral.
  const Eigen::VectorXd term = bem.bodyForceTerm(b);
  for (int i = 0; i < bem.elementCount(); ++i)
    EXPECT_LT((term.segment<2>(2 * i) - bem.bodyForceTermAt(bem.midpoint(i), b)).norm(),
              1e-12 * term.norm());
}

TEST(Bem2d, CapacitanceUpdatesGiveTheDirectSolution) {
  // Methods §4.5: switching columns against a held reference matches a fresh factorization.
  const int n = 40;
  BemPolygon bem(circle(n, 0.5), material(2e4, 0.45));
  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(-1e-3, 1e-3);
  auto conditions = [&](int from, int to) {
    BemPolygon::Conditions bc{std::vector<char>(2 * n, 0), Eigen::VectorXd::Zero(2 * n)};
    for (int j = 0; j < n; ++j) {
      const bool held = j >= from && j < to;
      bc.displacementKnown[2 * j] = bc.displacementKnown[2 * j + 1] = held;
      bc.value[2 * j] = held ? value(random) : 0;
      bc.value[2 * j + 1] = held ? value(random) : 0;
    }
    return bc;
  };
  const Vec2 b(0, 5000);
  int checked = 0;
  for (auto [from, to] : {std::pair{25, 35}, {24, 36}, {27, 31}, {20, 38}, {0, 30}}) {
    const auto bc = conditions(from, to);
    auto fast = bem.solve(bc, b);
    auto direct = bem.solveDirect(bc, b);
    ASSERT_TRUE(fast && direct);
    EXPECT_LT((fast->displacement - direct->displacement).norm(),
              1e-9 * direct->displacement.norm());
    EXPECT_LT((fast->traction - direct->traction).norm(), 1e-9 * direct->traction.norm());
    checked += bem.lastSwitched() > 0;
  }
  EXPECT_GE(checked, 3);               // most went through the capacitance matrix
  EXPECT_EQ(bem.factorizations(), 2);  // the last pattern is too far from the reference
}

TEST(Bem2d, AFreeBodyWithoutHeldElementsIsRefusedAsSingular) {
  BemPolygon bem(circle(24), material());
  BemPolygon::Conditions bc{std::vector<char>(48, 0), Eigen::VectorXd::Zero(48)};
  EXPECT_FALSE(bem.solve(bc, Vec2(0, -1)).has_value());
}

TEST(Bem2d, AContactSolveIsInEquilibrium) {
  // A disk pressed onto a floor: elements below y = -0.92 pushed up onto it, the rest free,
  // the d'Alembert body force; the tractions must balance it (methods §5.4 #5).
  const int n = 96;
  BemPolygon bem(circle(n), material(1e4, 0.3));
  BemPolygon::Conditions bc{std::vector<char>(2 * n, 0), Eigen::VectorXd::Zero(2 * n)};
  for (int j = 0; j < n; ++j)
    if (bem.midpoint(j).y() < -0.92) {
      bc.displacementKnown[2 * j] = bc.displacementKnown[2 * j + 1] = 1;
      bc.value[2 * j + 1] = -0.92 - bem.midpoint(j).y();
    }
  const Vec2 b(0, -700);
  auto solved = bem.solve(bc, b);
  ASSERT_TRUE(solved);
  Vec2 resultant = b * bem.area();
  double scale = 0;
  for (int j = 0; j < n; ++j) {
    resultant += bem.length(j) * solved->traction.segment<2>(2 * j);
    scale += bem.length(j) * solved->traction.segment<2>(2 * j).norm();
  }
  EXPECT_LT(resultant.norm(), 2e-3 * scale) << resultant.transpose();
  // The floor pushes up, and the free elements carry nothing.
  Vec2 floor = Vec2::Zero();
  for (int j = 0; j < n; ++j) {
    if (bc.displacementKnown[2 * j])
      floor += bem.length(j) * solved->traction.segment<2>(2 * j);
    else
      EXPECT_EQ(solved->traction.segment<2>(2 * j).norm(), 0);
  }
  EXPECT_NEAR(floor.y(), 700 * bem.area(), 2e-3 * 700 * bem.area());
}

TEST(Jelly, TheVolumeBeyondAPlaneIsASphericalCap) {
  JellyBody body(test::jellyBall(0.1, Vec3(0, 0.5, 0), 64, 32));
  const double depth = 0.03, r = 0.1;
  const auto b = body.beyond(Vec3(0, 0.5, 0), Vec3(0, 0.5 - r + depth, 0), Vec3::UnitY());
  const double cap = kPi * depth * depth * (3 * r - depth) / 3;
  EXPECT_NEAR(b.volume, cap, 0.03 * cap);
  // A cap's centroid lies 3 (2r - h)² / (4 (3r - h)) from the sphere's centre.
  EXPECT_NEAR(b.centroid.y(), 0.5 - 3 * std::pow(2 * r - depth, 2) / (4 * (3 * r - depth)), 5e-4);
  EXPECT_NEAR(b.centroid.x(), 0, 1e-6);
  // Its second moment across: ∫ π ρ(z)⁴ / 4 dz over the cap, ρ² = r² - z².
  auto integral = [r](double z) {
    return std::pow(r, 4) * z - 2 * r * r * std::pow(z, 3) / 3 + std::pow(z, 5) / 5;
  };
  const double across = kPi / 4 * (integral(r) - integral(r - depth));
  EXPECT_NEAR(b.spread(0, 0), across, 0.03 * across);
  EXPECT_NEAR(b.spread(2, 2), across, 0.03 * across);
  EXPECT_LT(std::abs(b.spread(0, 1)) + std::abs(b.spread(0, 2)), 1e-3 * across);
  // The same far from the origin (it is summed relative to the centre).
  const auto far = body.beyond(Vec3(1e4, 0.5, 0), Vec3(1e4, 0.5 - r + depth, 0), Vec3::UnitY());
  EXPECT_LT((far.spread - b.spread).norm(), 1e-9 * across);
  EXPECT_EQ(body.beyond(Vec3(0, 0.5, 0), Vec3::Zero(), Vec3::UnitY()).volume, 0);
  EXPECT_NEAR(body.volume(), 4.0 / 3 * kPi * r * r * r, 0.02 * body.volume());
}

TEST(Jelly, ASectionThroughTheCentreIsTheEllipse) {
  TriangleMesh mesh = makeEllipsoid(Vec3(0.2, 0.1, 0.15), 48, 24);
  JellySpec spec;
  spec.surface = std::make_shared<const TriangleMesh>(mesh);
  JellyBody body(spec);
  const auto polygon = body.section(Vec3::UnitX(), -Vec3::UnitY(), 40);
  ASSERT_EQ(polygon.size(), 40u);
  EXPECT_FALSE(checkBemPolygon(polygon).has_value());  // counter-clockwise
  for (const Vec2& p : polygon) EXPECT_NEAR(std::hypot(p.x() / 0.2, p.y() / 0.1), 1, 0.01);
}

TEST(Jelly, ALineThroughAPointMeetsOnlyTheElementsOfItsSlab) {
  // A star-shaped (non-convex) section: every element that the line through a point along either
  // axis crosses, by the crossing rule WOKT eq. 18's spreads use, is listed in the point's slab,
  // including points level with the section's vertices, its top and its bottom.
  std::vector<Vec2> star;
  for (int k = 0; k < 40; ++k) {
    const double angle = 2 * kPi * k / 40, radius = k % 2 ? 0.05 : 0.12;
    star.push_back(Vec2(0.3 + radius * std::cos(angle), -0.1 + radius * std::sin(angle)));
  }
  const BemPolygon bem(star, material());
  std::mt19937 random(5);
  std::uniform_real_distribution<double> coordinate(-0.15, 0.15);
  for (int axis : {0, 1}) {
    const JellyBody::ElementSlabs slabs = JellyBody::elementSlabs(bem, axis);
    const int other = 1 - axis;
    std::vector<Vec2> points;
    for (int i = 0; i < 400; ++i)
      points.push_back(Vec2(0.3 + coordinate(random), -0.1 + coordinate(random)));
    for (const Vec2& v : star) points.push_back(v);  // level with every vertex
    for (const Vec2& p : points) {
      const std::span<const int> listed = slabs.at(p);
      for (int k = 0; k < bem.elementCount(); ++k) {
        const Vec2& a = star[k];
        const Vec2& b = star[(k + 1) % star.size()];
        if ((a[other] >= p[other]) == (b[other] >= p[other])) continue;  // not crossed
        ASSERT_FALSE(listed.empty()) << "axis " << axis << ", point " << p.transpose();
        EXPECT_TRUE(std::find(listed.begin(), listed.end(), k) != listed.end())
            << "axis " << axis << ", point " << p.transpose() << ", element " << k;
      }
      EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
    }
  }
}

TEST(Jelly, ABadJellyIsRefusedNamingItsKey) {
  JellySpec spec = test::jellyBall(0.1, Vec3::Zero());
  EXPECT_FALSE(validateJelly(spec, "jellies[0]").has_value());
  spec.material.poisson = 0.5;
  EXPECT_NE(validateJelly(spec, "jellies[0]").value_or("").find("jellies[0].poisson"),
            std::string::npos);
  spec = test::jellyBall(0.1, Vec3::Zero());
  auto open = std::make_shared<TriangleMesh>(*spec.surface);
  open->triangles.pop_back();
  spec.surface = open;
  EXPECT_NE(validateJelly(spec, "jellies[1]").value_or("").find("must be closed"),
            std::string::npos);
  auto inward = std::make_shared<TriangleMesh>(*test::jellyBall(0.1, Vec3::Zero()).surface);
  for (Tri& t : inward->triangles) std::swap(t[1], t[2]);
  spec.surface = inward;
  EXPECT_NE(validateJelly(spec, "jellies[1]").value_or("").find("inwards"), std::string::npos);
}

TEST(Jelly, ADroppedBallBouncesSquashesAndComesToRestOnTheFloor) {
  JellySpec spec = test::jellyBall(0.1, Vec3(0, 0.4, 0));
  JellyBody body(spec);
  const std::vector<Obstacle> obstacles = {ground()};
  const Vec3 g(0, -9.81, 0);
  double lowest = 1e300, squash = 0, flattest = 1e300;
  bool bounced = false;
  const double dt = 1e-3;
  for (int k = 0; k < 4000; ++k) {
    const double vy = body.velocity().y();
    body.step(dt, g, obstacles);
    if (vy < 0 && body.velocity().y() > 0) bounced = true;
    lowest = std::min(lowest, body.center().y());
    squash = std::max(squash, body.lastStep().maxDisplacement);
    const Positions s = body.surface();
    ASSERT_TRUE(s.allFinite()) << "step " << k;
    flattest = std::min(flattest, s.col(1).minCoeff());
    if (body.lastStep().walls > 0) {
      // The deformed surface sits on the floor: nothing beyond it by more than a millimetre.
      EXPECT_GT(s.col(1).minCoeff(), -1e-3) << "step " << k;
    }
  }
  EXPECT_TRUE(bounced);
  EXPECT_GT(squash, 0.003);  // visibly squashed
  EXPECT_GT(lowest, 0);      // the centre never reaches the floor
  // At rest the wall carries the weight: k_c V / (1 - V / volume) = m g, and the body is still.
  EXPECT_LT(body.velocity().norm(), 1e-3);
  const double v = body.lastStep().penetration;
  EXPECT_NEAR(body.contactStiffness() * v / (1 - v / body.volume()), body.mass() * 9.81,
              0.01 * body.mass() * 9.81);
  EXPECT_NEAR(body.lastStep().contactForce, body.mass() * 9.81, 0.01 * body.mass() * 9.81);
  EXPECT_GT(body.lastStep().sectionSolves, 0);
}

TEST(Jelly, ASofterJellySinksAndSquashesMore) {
  auto rest = [](double young) {
    JellySpec spec = test::jellyBall(0.1, Vec3(0, 0.1, 0));
    spec.material.young = young;
    JellyBody body(spec);
    for (int k = 0; k < 3000; ++k) body.step(1e-3, Vec3(0, -9.81, 0), {ground()});
    return std::pair{body.center().y(), body.lastStep().maxDisplacement};
  };
  const auto [softY, softSquash] = rest(5e3);
  const auto [firmY, firmSquash] = rest(5e4);
  EXPECT_LT(softY, firmY);
  EXPECT_GT(softSquash, 2 * firmSquash);
}

TEST(Jelly, AThrownBallRollsTheWallSendsItBackAndItsRollingSlows) {
  const Obstacle wall = plane(Vec3(0.5, 0, 0), -Vec3::UnitX());
  JellySpec spec = test::jellyBall(0.1, Vec3(0, 0.1, 0));
  spec.velocity = Vec3(2, 0, 0);
  JellyBody body(spec);
  double farthest = 0, back = 0, slipAfterWall = 0;
  for (int k = 0; k < 3000; ++k) {
    body.step(1e-3, Vec3(0, -9.81, 0), {ground(), wall});
    farthest = std::max(farthest, body.center().x());
    back = std::min(back, body.velocity().x());
    // Where the ball meets the floor: its speed there.
    const Vec3 bottom = Vec3(0, -(body.center().y()), 0);
    if (k > 2000)
      slipAfterWall =
          std::max(slipAfterWall, (body.velocity() + body.angularVelocity().cross(bottom)).norm());
  }
  EXPECT_LT(farthest, 0.5);  // the centre never passed the wall
  EXPECT_LT(back, -0.3);     // it came back
  EXPECT_GT(back, -2.0);     // slower than it went
  // The floor's friction turned the slide into rolling: the bottom does not slip, and the ball
  // turns about the floor's normal's perpendicular (z) as it rolls back along -x.
  EXPECT_LT(slipAfterWall, 0.02);
  EXPECT_GT(body.angularVelocity().z(), 1);
  // The damping resists rolling: slower than just after the wall, but still rolling.
  EXPECT_GT(body.velocity().x(), back);
  EXPECT_LT(body.velocity().x(), -0.05);
}

TEST(Jelly, TheInertiaIsTheEllipsoidsAndTurnsWithTheBody) {
  const Vec3 radii(0.2, 0.1, 0.05);
  JellySpec spec;
  spec.surface = std::make_shared<const TriangleMesh>(makeEllipsoid(radii, 96, 48));
  JellyBody body(spec);
  const double m = body.mass();
  EXPECT_NEAR(m, 1000 * 4.0 / 3 * std::numbers::pi * radii.prod(), 0.01 * m);
  const Eigen::Matrix3d inertia = body.inertia();
  const Vec3 expected(m / 5 * (radii.y() * radii.y() + radii.z() * radii.z()),
                      m / 5 * (radii.x() * radii.x() + radii.z() * radii.z()),
                      m / 5 * (radii.x() * radii.x() + radii.y() * radii.y()));
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(inertia(k, k), expected[k], 0.01 * expected[k]) << k;
  EXPECT_LT((inertia - Eigen::Matrix3d(inertia.diagonal().asDiagonal())).norm(),
            1e-6 * inertia.norm());
}

TEST(Jelly, ASpinningBodyInFlightKeepsItsAngularMomentum) {
  JellySpec spec;
  spec.surface = std::make_shared<const TriangleMesh>(makeEllipsoid(Vec3(0.2, 0.1, 0.05), 32, 16));
  spec.angularVelocity = Vec3(3, 1, 0.5);
  JellyBody body(spec);
  const Vec3 momentum = body.inertia() * body.angularVelocity();
  const double energy = 0.5 * body.angularVelocity().dot(momentum);
  for (int k = 0; k < 2000; ++k) body.step(1e-3, Vec3::Zero(), {});
  const Vec3 after = body.inertia() * body.angularVelocity();
  EXPECT_LT((after - momentum).norm(), 1e-9 * momentum.norm());
  EXPECT_NEAR(0.5 * body.angularVelocity().dot(after), energy, 0.02 * energy);
  // It tumbles: the spin's axis moved (the spin is not about a principal axis).
  EXPECT_LT(body.angularVelocity().normalized().dot(spec.angularVelocity.normalized()), 0.99);
  const Eigen::Matrix3d r = body.rotation();
  EXPECT_LT((r * r.transpose() - Eigen::Matrix3d::Identity()).norm(), 1e-12);
  EXPECT_LT((body.center() - Vec3::Zero()).norm(), 1e-12);
}

TEST(Jelly, ABallRollsDownASlopeAsASolidBallDoes) {
  // A 15° slope: friction 0.6 would hold a sliding block (tan 15° = 0.27), but a ball rolls, its
  // centre accelerating at g sin θ / (1 + I / (m r²)), r the centre's height above the slope
  // (5/7 g sin θ for a rigid solid ball); the damping's resistance to rolling takes a little off.
  const double theta = 15 * std::numbers::pi / 180, g = 9.81;
  const Obstacle slope = plane(Vec3::Zero(), Vec3(std::sin(theta), std::cos(theta), 0), 0.6);
  const Vec3 downhill(std::cos(theta), -std::sin(theta), 0);
  struct Roll {
    double acceleration, expected, slip;
  };
  auto roll = [&](double damping) {
    JellySpec spec = test::jellyBall(0.1, 0.098 * slope.normal);
    spec.material.young = 1e5;
    JellyBody body(spec);
    for (int k = 0; k < 300; ++k) body.step(1e-3, Vec3(0, -g, 0), {slope});  // settles on it
    JellyMaterial material = spec.material;
    material.damping = damping;  // (undamped, it would bounce on the slope as it rolls)
    body.setMaterial(material);
    const Vec3 start = body.center();
    const double v0 = body.velocity().dot(downhill), t = 0.5;
    const double r = start.dot(slope.normal), inertia = body.inertia()(2, 2);
    for (int k = 0; k < 500; ++k) body.step(1e-3, Vec3(0, -g, 0), {slope});
    const double travelled = (body.center() - start).dot(downhill);
    const Vec3 bottom = -body.center().dot(slope.normal) * slope.normal;
    return Roll{2 * (travelled - v0 * t) / (t * t),
                g * std::sin(theta) / (1 + inertia / (body.mass() * r * r)),
                std::abs((body.velocity() + body.angularVelocity().cross(bottom)).dot(downhill))};
  };
  const Roll undamped = roll(0), damped = roll(0.5);
  EXPECT_NEAR(undamped.acceleration, undamped.expected, 0.03 * undamped.expected);
  EXPECT_LT(undamped.slip, 0.01);  // the point on the slope does not slip
  EXPECT_LT(damped.acceleration, 0.98 * undamped.acceleration);
  EXPECT_GT(damped.acceleration, 0.85 * undamped.acceleration);
  EXPECT_LT(damped.slip, 0.01);
}

TEST(Jelly, ATiltedEllipsoidTipsOverAndLiesFlat) {
  // A cigar standing at 60° from the floor on its end falls over onto its side and rocks there,
  // less and less.
  const double tilt = 60 * std::numbers::pi / 180;
  const Eigen::Matrix3d turn = Eigen::AngleAxisd(tilt, Vec3::UnitZ()).toRotationMatrix();
  TriangleMesh cigar = makeEllipsoid(Vec3(0.15, 0.05, 0.05), 32, 16);
  cigar.positions = cigar.positions * turn.transpose();
  const double lowest = cigar.positions.col(1).minCoeff();
  cigar.positions.rowwise() += Vec3(0, 0.002 - lowest, 0).transpose();
  JellySpec spec;
  spec.surface = std::make_shared<const TriangleMesh>(std::move(cigar));
  spec.material.young = 5e4;
  JellyBody body(spec);
  double early = 0, late = 0;  // the long axis' largest slope in [1.5, 2.5) and [4, 5) s
  for (int k = 0; k < 5000; ++k) {
    body.step(1e-3, Vec3(0, -9.81, 0), {ground()});
    ASSERT_TRUE(body.surface().allFinite()) << k;
    const double slope = std::abs((body.rotation() * turn * Vec3::UnitX()).y());
    if (k >= 1500 && k < 2500) early = std::max(early, slope);
    if (k >= 4000) late = std::max(late, slope);
  }
  EXPECT_LT(early, 0.2);               // it lies on its side,
  EXPECT_LT(late, 0.75 * early);       // rocking less and less
  EXPECT_LT(body.center().y(), 0.05);  // as low as its short radius
  EXPECT_GT(body.surface().col(1).minCoeff(), -2e-3);
}

TEST(Jelly, HardLightAndTooSoftJelliesStayBoundedAndAboveTheFloor) {
  // A tumbling flat body thrown at the floor and a wall, at the material's extremes: a hard light
  // one (its contact rings at tens of kHz) bounces without gaining speed; one too soft to carry
  // its weight lies squashed on the floor instead of sinking through it.
  struct Case {
    double young, density, damping;
  };
  for (const Case c : {Case{1e9, 1000, 0}, Case{1e9, 1, 0.5}, Case{1e7, 1, 100}, Case{1, 1000, 0.5},
                       Case{1e3, 1e5, 0}}) {
    const Eigen::Matrix3d turn =
        Eigen::AngleAxisd(0.7, Vec3(1, 0.3, 0.2).normalized()).toRotationMatrix();
    TriangleMesh flat = makeEllipsoid(Vec3(0.15, 0.04, 0.08), 24, 12);
    flat.positions = flat.positions * turn.transpose();
    flat.positions.rowwise() += Vec3(0, 0.3, 0).transpose();
    JellySpec spec;
    spec.surface = std::make_shared<const TriangleMesh>(std::move(flat));
    spec.material.young = c.young;
    spec.material.density = c.density;
    spec.material.damping = c.damping;
    spec.velocity = Vec3(1, -3, 0.5);
    spec.angularVelocity = Vec3(5, -20, 3);
    JellyBody body(spec);
    const Obstacle wall = plane(Vec3(0.3, 0, 0), -Vec3::UnitX());
    double fastest = 0, lowest = 1e300;
    for (int k = 0; k < 2000; ++k) {
      body.step(1e-3, Vec3(0, -9.81, 0), {ground(), wall});
      ASSERT_TRUE(body.surface().allFinite()) << c.young << " " << c.density << ", step " << k;
      fastest = std::max(fastest, body.velocity().norm());
      lowest = std::min(lowest, body.center().y());
    }
    const std::string what =
        "E " + std::to_string(c.young) + ", density " + std::to_string(c.density);
    EXPECT_LT(fastest, 4.5) << what;  // it came at 3.9 m/s at most
    EXPECT_GT(lowest, 0) << what;
    EXPECT_LT(body.center().x(), 0.3) << what;
    EXPECT_LT(body.angularVelocity().norm(), 60) << what;  // thrown at 21 rad/s
  }
}

TEST(Jelly, ABallSpinningOnTheFloorLikeATopSlowsDown) {
  JellySpec spec = test::jellyBall(0.1, Vec3(0, 0.095, 0));
  spec.angularVelocity = Vec3(0, 20, 0);
  JellyBody body(spec);
  const Obstacle floor = plane(Vec3::Zero(), Vec3::UnitY(), 0.5);
  for (int k = 0; k < 1000; ++k) body.step(1e-3, Vec3(0, -9.81, 0), {floor});
  EXPECT_LT(std::abs(body.angularVelocity().y()), 10);  // the patch's friction twists against it
  for (int k = 0; k < 4000; ++k) body.step(1e-3, Vec3(0, -9.81, 0), {floor});
  EXPECT_LT(body.angularVelocity().norm(), 0.01);
}

TEST(Jelly, TheClothMeetsTheDeformedSurfaceMovingWithTheBody) {
  JellySpec spec = test::jellyBall(0.1, Vec3(0, 0.095, 0));
  spec.material.friction = 0.7;
  JellyBody body(spec);
  for (int k = 0; k < 200; ++k) body.step(1e-3, Vec3(0, -9.81, 0), {ground()});
  const Obstacle o = body.asObstacle();
  ASSERT_EQ(o.type, Obstacle::Type::Mesh);
  EXPECT_EQ(o.friction, 0.7);
  EXPECT_LT((o.velocity - body.velocity()).norm(), 1e-9);
  // The obstacle's surface is the body's surface: the top of the jelly, from above.
  const Positions s = body.surface();
  Eigen::Index top;
  s.col(1).maxCoeff(&top);
  Vec3 normal;
  const Vec3 above = s.row(top).transpose() + Vec3(0, 0.01, 0);
  EXPECT_NEAR(signedDistance(o, above, &normal), 0.01, 1e-3);
  EXPECT_GT(normal.y(), 0.9);
}

TEST(Jelly, WhatComesNowhereNearItMeetsItsRestSurfaceAndFindsItAsFar) {
  // A ball squashed on the floor: its deformed surface stays within its reach, and something
  // that stays out of that reach meets the rest surface instead (no deformed shape built), which
  // is as far from it as the deformed one; anything within reach meets the deformed surface.
  JellyBody body(test::jellyBall(0.1, Vec3(0, 0.095, 0)));
  for (int k = 0; k < 200; ++k) body.step(1e-3, Vec3(0, -9.81, 0), {ground()});
  ASSERT_GT(body.lastStep().maxDisplacement, 1e-3);
  const Positions s = body.surface();
  EXPECT_LE((s.rowwise() - body.center().transpose()).rowwise().norm().maxCoeff(),
            body.reach() + 1e-12);
  const Obstacle deformed = body.asObstacle();
  const Eigen::AlignedBox3d far(Vec3(0.5, 0, -0.2), Vec3(0.9, 0.4, 0.2));
  const Obstacle rest = body.asObstacleFor(far);
  EXPECT_NE(rest.shape, deformed.shape);
  for (const Vec3& p : {Vec3(0.5, 0.1, 0), Vec3(0.6, 0.4, 0.2), Vec3(0.9, 0, -0.2)}) {
    Vec3 normal;
    const double toRest = signedDistance(rest, p, &normal),
                 toDeformed = signedDistance(deformed, p, &normal);
    EXPECT_GT(toRest, 0.3);
    EXPECT_NEAR(toRest, toDeformed, body.lastStep().maxDisplacement + 1e-9);
  }
  // A box reaching the squashed side, or all around the body, meets the deformed surface.
  const Eigen::AlignedBox3d side(Vec3(0.1, 0, -0.05), Vec3(0.3, 0.1, 0.05));
  EXPECT_EQ(body.asObstacleFor(side).shape, deformed.shape);
  EXPECT_EQ(body.asObstacleFor(Eigen::AlignedBox3d(Vec3(-1, -1, -1), Vec3(1, 1, 1))).shape,
            deformed.shape);
}

TEST(Jelly, ATurningBodysObstacleIsItsSurfaceMovingAsItTurns) {
  // A cigar spun and thrown onto the floor: while it tumbles and squashes, the obstacle the cloth
  // meets has its deformed surface where the body has it, moving with the body's material.
  JellySpec spec;
  TriangleMesh cigar = makeEllipsoid(Vec3(0.15, 0.05, 0.05), 24, 12);
  cigar.positions.rowwise() += Vec3(0.3, 0.2, -0.1).transpose();
  spec.surface = std::make_shared<const TriangleMesh>(std::move(cigar));
  spec.velocity = Vec3(0.5, -1, 0);
  spec.angularVelocity = Vec3(1, 2, 8);
  JellyBody body(spec);
  int checked = 0;
  for (int k = 0; k < 400; ++k) {
    body.step(1e-3, Vec3(0, -9.81, 0), {ground()});
    if (k % 50 != 0 && !(body.lastStep().walls > 0 && k % 10 == 0)) continue;
    const Obstacle o = body.asObstacle();
    const Positions s = body.surface();
    for (Eigen::Index i = 0; i < s.rows(); i += 7) {
      const Vec3 x = s.row(i).transpose();
      Vec3 normal;
      EXPECT_LT(std::abs(signedDistance(o, x, &normal)), 1e-9) << "step " << k << ", vertex " << i;
      const Vec3 expected = body.velocity() + body.angularVelocity().cross(x - body.center());
      EXPECT_LT((o.surfaceVelocity(x) - expected).norm(), 1e-9) << "step " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(body.rotation().trace(), -1.5);  // it has turned (R = I has trace 3)
  EXPECT_LT(body.rotation().trace(), 2.9);
}

namespace {

nlohmann::json jellyScene() {
  return nlohmann::json::parse(R"({
    "cloth": {"generator": {"type": "grid", "width": 0.6, "height": 0.6, "columns": 13, "rows": 13},
              "transform": {"rotate_deg": [-90, 0, 0], "translate": [0, 0.45, 0]}},
    "simulation": {"dt": 0.002, "thickness": 0.004},
    "obstacles": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
    "jellies": [{"generator": {"type": "ellipsoid", "radii": [0.12, 0.12, 0.12], "segments": 24, "rings": 12},
                 "transform": {"translate": [0, 0.2, 0]}, "young": 3e4, "damping": 1}]
  })");
}

}  // namespace

TEST(JellyScene, AJellyIsReadSavedAndReadAgain) {
  auto scene = parseScene(jellyScene(), "jelly.json", "");
  ASSERT_TRUE(scene) << scene.error();
  ASSERT_EQ(scene->jellies.size(), 1u);
  EXPECT_EQ(scene->jellies[0].material.young, 3e4);
  EXPECT_EQ(scene->jellies[0].material.damping, 1);
  EXPECT_NEAR(scene->jellies[0].surface->positions.col(1).maxCoeff(), 0.32, 1e-9);
  scene->jellies[0].angularVelocity = Vec3(0, 0, -4);
  auto again = parseScene(sceneToJson(*scene), "again.json", "");
  ASSERT_TRUE(again) << again.error();
  ASSERT_EQ(again->jellies.size(), 1u);
  EXPECT_EQ(again->jellies[0].material.young, 3e4);
  EXPECT_EQ(again->jellies[0].angularVelocity, Vec3(0, 0, -4));
  EXPECT_LT((again->jellies[0].surface->positions - scene->jellies[0].surface->positions).norm(),
            1e-12);
}

TEST(JellyScene, BadJelliesAreRefusedNamingTheKey) {
  auto refused = [](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = jellyScene();
    j["jellies"][0][key] = value;
    auto scene = parseScene(j, "jelly.json", "");
    return scene ? std::string("accepted") : scene.error();
  };
  EXPECT_NE(refused("poisson", 0.7).find("jellies[0].poisson"), std::string::npos);
  EXPECT_NE(refused("young", "soft").find("jellies[0].young"), std::string::npos);
  EXPECT_NE(refused("elements", 3).find("jellies[0].elements"), std::string::npos);
  EXPECT_NE(refused("colour", 1).find("colour"), std::string::npos);
  EXPECT_NE(refused("angular_velocity", {0, 2e3, 0}).find("jellies[0].angular_velocity"),
            std::string::npos);
  EXPECT_NE(refused("angular_velocity", {0, 1}).find("jellies[0].angular_velocity"),
            std::string::npos);
  EXPECT_NE(refused("generator", nlohmann::json{{"type", "cube"}}).find("unknown shape 'cube'"),
            std::string::npos);
  EXPECT_NE(refused("obj", "/no/such.obj").find("jellies[0]"), std::string::npos);
  // The same reading of "obj" or "generator" serves mesh obstacles.
  nlohmann::json j = jellyScene();
  j["obstacles"].push_back({{"type", "mesh"}, {"generator", {{"type", "cube"}}}});
  auto scene = parseScene(j, "jelly.json", "");
  ASSERT_FALSE(scene);
  EXPECT_NE(
      scene.error().find("obstacles[1].generator.type: unknown shape 'cube' (expected \"torus\")"),
      std::string::npos)
      << scene.error();
  j["obstacles"][1] = {{"type", "mesh"}, {"generator", {{"type", "torus"}}}, {"obj", "x.obj"}};
  scene = parseScene(j, "jelly.json", "");
  ASSERT_FALSE(scene);
  EXPECT_NE(scene.error().find("obstacles[1]: give exactly one of"), std::string::npos)
      << scene.error();
}

TEST(JellyScene, EverySolversClothDrapesOverAJellyOnTheGround) {
  auto parsed = parseScene(jellyScene(), "jelly.json", "");
  ASSERT_TRUE(parsed) << parsed.error();
  for (const char* solver : {"impulse-nc", "xpbd", "mls-isometry", "conforming"}) {
    Scene scene = *parsed;
    useSolver(scene, solver);
    auto simulation = Simulation::create(scene);
    ASSERT_TRUE(simulation) << simulation.error();
    Simulation& s = **simulation;
    for (int k = 0; k < 250; ++k) ASSERT_FALSE(s.step().has_value()) << solver << " step " << k;
    const JellyBody& jelly = s.jellies()[0];
    EXPECT_GT(jelly.lastStep().walls, 0) << solver;  // resting on the ground
    // The cloth lies over the jelly: its centre above the jelly's top, no vertex inside it.
    const Positions& x = s.surface();
    const Obstacle o = jelly.asObstacle();
    Vec3 normal;
    double deepest = 1e300;
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      deepest = std::min(deepest, signedDistance(o, x.row(i).transpose(), &normal));
    EXPECT_GT(deepest, -0.005) << solver;
    EXPECT_GT(x.col(1).maxCoeff(), jelly.surface().col(1).maxCoeff()) << solver;
    EXPECT_GT(s.lastStats().extra.value("jelly_walls", 0), 0) << solver;
  }
}

TEST(JellyScene, AnEditedJellyKeepsItsMotionAndTakesTheNewMaterial) {
  auto parsed = parseScene(jellyScene(), "jelly.json", "");
  ASSERT_TRUE(parsed) << parsed.error();
  auto simulation = Simulation::create(*parsed);
  ASSERT_TRUE(simulation) << simulation.error();
  Simulation& s = **simulation;
  for (int k = 0; k < 20; ++k) ASSERT_FALSE(s.step().has_value());
  const Vec3 center = s.jellies()[0].center(), velocity = s.jellies()[0].velocity();
  auto specs = s.jellySpecs();
  specs[0].material.young = 5e3;
  ASSERT_FALSE(s.setJellies(specs).has_value());
  EXPECT_EQ(s.jellies()[0].center(), center);
  EXPECT_EQ(s.jellies()[0].velocity(), velocity);
  EXPECT_EQ(s.jellies()[0].material().young, 5e3);
  EXPECT_LT(s.jellies()[0].contactStiffness(),
            jellyContactStiffness(parsed->jellies[0].material, s.jellies()[0].volume()));
  specs[0].material.poisson = 0.6;
  EXPECT_NE(s.setJellies(specs).value_or("").find("jellies[0].poisson"), std::string::npos);
  EXPECT_EQ(s.jellies()[0].material().young, 5e3);  // refused, nothing changed
  // The scene as it stands keeps the edit, and starts the jelly from where the scene put it.
  const Scene current = s.currentScene();
  ASSERT_EQ(current.jellies.size(), 1u);
  EXPECT_EQ(current.jellies[0].material.young, 5e3);
  ASSERT_FALSE(s.setJellies({}).has_value());
  EXPECT_TRUE(s.jellies().empty());
}

TEST(JellyScene, TwoJelliesThrownAtEachOtherBounceApart) {
  nlohmann::json j = jellyScene();
  j["jellies"] = nlohmann::json::parse(R"([
    {"generator": {"type": "ellipsoid", "radii": [0.1, 0.1, 0.1], "segments": 24, "rings": 12},
     "transform": {"translate": [-0.35, 0.098, 0]}, "velocity": [1.5, 0, 0]},
    {"generator": {"type": "ellipsoid", "radii": [0.1, 0.1, 0.1], "segments": 24, "rings": 12},
     "transform": {"translate": [0.35, 0.098, 0]}, "velocity": [-1.5, 0, 0]}])");
  j["cloth"]["transform"]["translate"] = {0, 1.5, 3};  // far away
  auto parsed = parseScene(j, "two.json", "");
  ASSERT_TRUE(parsed) << parsed.error();
  auto simulation = Simulation::create(*parsed);
  ASSERT_TRUE(simulation) << simulation.error();
  Simulation& s = **simulation;
  double closest = 1e300;
  for (int k = 0; k < 500; ++k) {
    ASSERT_FALSE(s.step().has_value());
    closest = std::min(closest, (s.jellies()[1].center() - s.jellies()[0].center()).norm());
  }
  EXPECT_GT(closest, 0.1);  // they met (0.2 apart at touching) but did not pass through each other
  EXPECT_LT(closest, 0.2);
  // Pushed apart again (the floor's friction stops them soon after): in their order, farther
  // apart than when they met, and no longer overlapping much.
  const double final = (s.jellies()[1].center() - s.jellies()[0].center()).norm();
  EXPECT_LT(s.jellies()[0].center().x(), s.jellies()[1].center().x());
  EXPECT_GT(final, closest + 0.02);
  EXPECT_GT(final, 0.19);
}

TEST(Jelly, AShapeTheTwoSectionsDoNotSuitIsWarnedOf) {
  EXPECT_FALSE(jellyShapeWarning(test::jellyBall(0.1, Vec3(0, 1, 0)), "jellies[0]").has_value());
  JellySpec ellipsoid;
  ellipsoid.surface =
      std::make_shared<const TriangleMesh>(makeEllipsoid(Vec3(0.3, 0.1, 0.2), 32, 16));
  EXPECT_FALSE(jellyShapeWarning(ellipsoid, "jellies[0]").has_value());
  // A torus: compact by its fill, but a vertical section through its centre cuts the ring twice.
  JellySpec ring;
  ring.surface = std::make_shared<const TriangleMesh>(makeTorus(0.3, 0.1, 48, 24));
  const auto warned = jellyShapeWarning(ring, "jellies[1]");
  ASSERT_TRUE(warned.has_value());
  EXPECT_NE(warned->find("jellies[1]"), std::string::npos);
  EXPECT_NE(warned->find("falls in 2 pieces"), std::string::npos) << *warned;
  // Two balls joined by a thin neck fill little of their bounding ellipsoid.
  TriangleMesh dumbbell = makeEllipsoid(Vec3(0.5, 0.05, 0.05), 64, 16);
  for (Eigen::Index i = 0; i < dumbbell.positions.rows(); ++i) {
    const double x = dumbbell.positions(i, 0), bulge = std::abs(x) > 0.3 ? 3.0 : 1.0;
    dumbbell.positions(i, 1) *= bulge;
    dumbbell.positions(i, 2) *= bulge;
  }
  JellySpec limbs;
  limbs.surface = std::make_shared<const TriangleMesh>(dumbbell);
  const auto thin = jellyShapeWarning(limbs, "jellies[2]");
  ASSERT_TRUE(thin.has_value());
  EXPECT_NE(thin->find("% of the ellipsoid in its bounding box"), std::string::npos) << *thin;
}

TEST(Jelly, OneFallingWithNothingBelowStopsWhereAnObstacleWould) {
  JellySpec spec = test::jellyBall(0.1, Vec3(0, 0, 0));
  spec.velocity = Vec3(0, -kMaxObstacleSpeed, 0);
  JellyBody body(spec);
  for (int k = 0; k < 1200; ++k) body.step(1.0, Vec3(0, -9.81, 0), {});
  EXPECT_TRUE(body.surface().allFinite());
  EXPECT_LE(body.surface().cwiseAbs().maxCoeff(), kMaxObstacleCoordinate);
  EXPECT_EQ(body.velocity().y(), 0);
}
