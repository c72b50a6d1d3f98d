// Cloth self-collision (issue 6): the exact triangle-triangle test on its own, the pair responses
// (a vertex that crossed a triangle goes back, close pairs are pushed to the thickness), and the
// fold scene: a cloth dropped onto the ground ends with no intersecting triangle pairs, for every
// solver; without self-collision it does intersect itself.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/generators.h"
#include "sim/scene_library.h"
#include "sim/self_collision.h"
#include "sim/simulation.h"

namespace clothlab {
namespace {

TEST(TriangleIntersection, ExactTestOnKnownCases) {
  const Vec3 a0(0, 0, 0), a1(1, 0, 0), a2(0, 1, 0);
  // Pierces through the middle.
  EXPECT_TRUE(trianglesIntersect(a0, a1, a2, Vec3(0.2, 0.2, -1), Vec3(0.3, 0.2, 1), Vec3(0.2, 0.3, 1)));
  // Above, parallel: no.
  EXPECT_FALSE(trianglesIntersect(a0, a1, a2, Vec3(0, 0, 0.1), Vec3(1, 0, 0.1), Vec3(0, 1, 0.1)));
  // Crossing the plane outside the triangle: no.
  EXPECT_FALSE(trianglesIntersect(a0, a1, a2, Vec3(2, 2, -1), Vec3(3, 2, 1), Vec3(2, 3, 1)));
  // Interlocked edges (each triangle's edge through the other): yes, either order.
  const Vec3 b0(0.5, -0.5, 0.0), b1(0.5, 0.5, 0.5), b2(0.5, 0.5, -0.5);
  EXPECT_TRUE(trianglesIntersect(a0, a1, a2, b0, b1, b2));
  EXPECT_TRUE(trianglesIntersect(b0, b1, b2, a0, a1, a2));
  // A flat grid does not intersect itself; folded through itself it does.
  TriangleMesh grid = makeGrid(1, 1, 6, 6, DiagonalPattern::Alternating, 1);
  EXPECT_EQ(countSelfIntersections(grid, grid.positions), 0);
  Positions folded = grid.positions;
  for (int v = 0; v < folded.rows(); ++v)
    if (folded(v, 0) > 0.05) {  // the right part rotated about the y axis past the left part
      const double x = folded(v, 0) - 0.05;
      folded(v, 0) = 0.05 - 0.9 * x;
      folded(v, 2) = 0.3 * x - 0.02;
    }
  EXPECT_GT(countSelfIntersections(grid, folded), 0);
}

TEST(SelfCollision, CrossedVertexGoesBackAndClosePairsSeparate) {
  // Two parallel 2x2-vertex squares 1 cm apart (one mesh); the upper one's corner falls through.
  TriangleMesh mesh;
  mesh.positions.resize(8, 3);
  mesh.positions << 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0,  // lower, z = 0
      0.4, 0.4, 0.01, 0.6, 0.4, 0.01, 0.6, 0.6, 0.01, 0.4, 0.6, 0.01;  // upper, z = 1 cm
  mesh.triangles = {{0, 1, 2}, {0, 2, 3}, {4, 5, 6}, {4, 6, 7}};
  const MeshTopology topology = buildTopology(mesh);
  Positions end = mesh.positions;
  end.block(4, 0, 4, 3).col(2).array() -= 0.02;  // the whole upper square moved 2 cm down: through
  const Eigen::VectorXd w = Eigen::VectorXd::Ones(8);
  const SelfCollisionResult r = resolveSelfCollisions(mesh, topology, mesh.positions, end, w, 0.004);
  EXPECT_GT(r.crossed, 0);
  for (int v = 4; v < 8; ++v) EXPECT_GT(end(v, 2) - end(0, 2), 0.004 - 1e-9) << v;
  EXPECT_EQ(countSelfIntersections(mesh, end), 0);
  // A pair closer than the thickness on its own side is pushed to the thickness.
  Positions close = mesh.positions;
  close.block(4, 0, 4, 3).col(2).array() = 0.001;
  resolveSelfCollisions(mesh, topology, mesh.positions, close, w, 0.004);
  for (int v = 4; v < 8; ++v) EXPECT_GT(close(v, 2) - close(0, 2), 0.004 - 1e-6) << v;
  // Pinned vertices (weight 0) do not move.
  Eigen::VectorXd pinned = w;
  pinned.head(4).setZero();
  Positions again = mesh.positions;
  again.block(4, 0, 4, 3).col(2).array() -= 0.02;
  resolveSelfCollisions(mesh, topology, mesh.positions, again, pinned, 0.004);
  EXPECT_EQ(again.topRows(4), mesh.positions.topRows(4));
}

int intersectionsAfterFold(const std::string& solver, bool selfCollision, int steps) {
  auto scene = resolveScene("fold-drop");
  EXPECT_TRUE(scene) << scene.error();
  useSolver(*scene, solver);
  scene->sim.selfCollision = selfCollision;
  auto sim = Simulation::create(*scene);
  EXPECT_TRUE(sim) << sim.error();
  for (int i = 0; i < steps; ++i) {
    auto e = (*sim)->step();
    EXPECT_FALSE(e.has_value()) << *e;
    if (e) return -1;
  }
  const int count = countSelfIntersections((*sim)->cloth().mesh, (*sim)->surface());
  std::printf("%s, self-collision %s: %d intersecting triangle pairs after %d steps; lowest vertex %.4f m\n",
              solver.c_str(), selfCollision ? "on" : "off", count, steps, (*sim)->surface().col(1).minCoeff());
  return count;
}

class FoldDrop : public ::testing::TestWithParam<const char*> {};

TEST_P(FoldDrop, EndsWithoutSelfIntersections) {
  EXPECT_EQ(intersectionsAfterFold(GetParam(), true, 800), 0);
}

INSTANTIATE_TEST_SUITE_P(Solvers, FoldDrop, ::testing::Values("impulse-nc", "mls-isometry", "xpbd"));

TEST(FoldDrop, WithoutSelfCollisionTheClothPassesThroughItself) {
  EXPECT_GT(intersectionsAfterFold("xpbd", false, 800), 0);
}

}  // namespace
}  // namespace clothlab

namespace clothlab {
namespace {

// Friction acts relative to the obstacle's surface: a cloth dropped on a sphere spinning about
// the vertical turns with it (issue 6's rotating-sphere scene).
TEST(SpinningSphere, FrictionTurnsTheClothWithTheSphere) {
  auto scene = resolveScene("spinning-sphere");
  ASSERT_TRUE(scene) << scene.error();
  const double spin = scene->obstacles.front().angularVelocity.y();
  ASSERT_GT(spin, 0);
  useSolver(*scene, "xpbd");
  auto sim = Simulation::create(*scene);
  ASSERT_TRUE(sim) << sim.error();
  double turned = 0;  // about +y, right-handed [rad]
  Positions previous = (*sim)->surface();
  for (int i = 1; i <= 500; ++i) {
    ASSERT_FALSE((*sim)->step().has_value());
    if (i % 25) continue;
    const Positions& now = (*sim)->surface();
    double sum = 0;
    int count = 0;
    for (int v = 0; v < now.rows(); ++v) {
      const double r = std::hypot(now(v, 0), now(v, 2));
      if (r < 0.05 || r > 0.2 || now(v, 1) < 0.45) continue;  // on top of the sphere
      double angle = std::atan2(-now(v, 2), now(v, 0)) - std::atan2(-previous(v, 2), previous(v, 0));
      angle = std::remainder(angle, 2 * M_PI);
      sum += angle;
      ++count;
    }
    if (count) turned += sum / count;
    previous = now;
  }
  const double sphere = spin * 500 * scene->sim.dt;
  std::printf("the cloth on top turned %.2f rad while the sphere turned %.2f rad\n", turned, sphere);
  EXPECT_GT(turned, 0.6 * sphere);
  EXPECT_LT(turned, 1.05 * sphere);
  EXPECT_EQ(countSelfIntersections((*sim)->cloth().mesh, (*sim)->surface()), 0);
}

}  // namespace
}  // namespace clothlab
