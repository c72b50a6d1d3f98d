// Mesh topology and generators.
#include <gtest/gtest.h>

#include <set>

#include "sim/generators.h"
#include "sim/mesh.h"

using namespace clothlab;

namespace {
double totalArea(const TriangleMesh& mesh) {
  double area = 0;
  for (int t = 0; t < mesh.triangleCount(); ++t) area += triangleArea(mesh, t);
  return area;
}
int earTriangles(const TriangleMesh& mesh, const MeshTopology& topology) {
  int ears = 0;
  for (int t = 0; t < mesh.triangleCount(); ++t) {
    int boundary = 0;
    for (int e : topology.triEdges[t]) boundary += topology.edgeTriCount[e] == 1;
    ears += boundary >= 2;
  }
  return ears;
}
}  // namespace

TEST(Topology, GridCounts) {
  const TriangleMesh mesh = makeGrid(1, 1, 5, 4, DiagonalPattern::Same);
  const MeshTopology topo = buildTopology(mesh);
  EXPECT_EQ(mesh.vertexCount(), 20);
  EXPECT_EQ(mesh.triangleCount(), 2 * 4 * 3);
  EXPECT_EQ(topo.edgeCount(), 4 * 4 + 5 * 3 + 4 * 3);  // horizontal + vertical + diagonals
  EXPECT_EQ(topo.boundaryEdges.size(), 2u * (4 + 3));
  EXPECT_EQ(topo.boundaryLoops.size(), 1u);
  EXPECT_EQ(topo.boundaryLoops[0].size(), 14u);
  EXPECT_EQ(topo.componentCount, 1);
  EXPECT_EQ(topo.nonManifoldEdgeCount, 0);
  EXPECT_EQ(topo.degenerateTriangleCount, 0);
  // Euler characteristic of a disk.
  EXPECT_EQ(mesh.vertexCount() - topo.edgeCount() + mesh.triangleCount(), 1);
  // One-ring of an interior vertex of a "same" grid has 6 neighbours.
  EXPECT_EQ(topo.vertexNeighbours[6].size(), 6u);
  // triEdges: edge opposite corner k does not contain that corner.
  for (int t = 0; t < mesh.triangleCount(); ++t)
    for (int k = 0; k < 3; ++k) {
      const auto& e = topo.edges[topo.triEdges[t][k]];
      EXPECT_NE(e[0], mesh.triangles[t][k]);
      EXPECT_NE(e[1], mesh.triangles[t][k]);
    }
}

TEST(Topology, ComponentsNonManifoldAndDegenerate) {
  TriangleMesh mesh;
  mesh.positions.resize(8, 3);
  mesh.positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, -1, 0, 5, 5, 5, 6, 5, 5, 7, 5, 5;
  // Three triangles on edge (0,1): non-manifold; a separate collinear (degenerate) triangle.
  mesh.triangles = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}, {5, 6, 7}};
  const MeshTopology topo = buildTopology(mesh);
  EXPECT_EQ(topo.nonManifoldEdgeCount, 1);
  EXPECT_EQ(topo.componentCount, 2);
  EXPECT_EQ(topo.vertexComponent, std::vector<int>({0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(topo.degenerateTriangleCount, 1);
}

TEST(Generators, GridPatternsDiffer) {
  const auto same = makeGrid(1, 1, 6, 6, DiagonalPattern::Same);
  const auto alternating = makeGrid(1, 1, 6, 6, DiagonalPattern::Alternating);
  const auto random1 = makeGrid(1, 1, 6, 6, DiagonalPattern::Random, 1);
  const auto random2 = makeGrid(1, 1, 6, 6, DiagonalPattern::Random, 2);
  EXPECT_NE(same.triangles, alternating.triangles);
  EXPECT_NE(random1.triangles, random2.triangles);
  EXPECT_EQ(random1.triangles, makeGrid(1, 1, 6, 6, DiagonalPattern::Random, 1).triangles);
  for (const auto* mesh : {&same, &alternating, &random1}) {
    EXPECT_NEAR(totalArea(*mesh), 1.0, 1e-12);
    EXPECT_EQ(earTriangles(*mesh, buildTopology(*mesh)), 0);
  }
  EXPECT_FALSE(parseDiagonalPattern("zigzag").ok());
}

TEST(Generators, IrregularRectangleHitsCountAndIsReproducible) {
  const TriangleMesh a = makeIrregularRectangle(1.6, 1.6, 4722, 3);
  const TriangleMesh b = makeIrregularRectangle(1.6, 1.6, 4722, 3);
  const TriangleMesh c = makeIrregularRectangle(1.6, 1.6, 4722, 4);
  EXPECT_NEAR(a.triangleCount(), 4722, 0.03 * 4722);
  EXPECT_TRUE(a.positions == b.positions);
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_FALSE(a.positions.rows() == c.positions.rows() && a.positions == c.positions);
  const MeshTopology topo = buildTopology(a);
  EXPECT_NEAR(totalArea(a), 1.6 * 1.6, 1e-9);  // covers the rectangle exactly
  EXPECT_EQ(topo.boundaryLoops.size(), 1u);
  EXPECT_EQ(topo.componentCount, 1);
  EXPECT_EQ(topo.nonManifoldEdgeCount, 0);
  EXPECT_EQ(topo.degenerateTriangleCount, 0);
  EXPECT_EQ(earTriangles(a, topo), 0);
  // Irregular: valences vary.
  std::set<size_t> valences;
  for (const auto& ring : topo.vertexNeighbours) valences.insert(ring.size());
  EXPECT_GE(valences.size(), 4u);
}

TEST(Generators, IrregularDisk) {
  const TriangleMesh disk = makeIrregularDisk(0.5, 1500, 11);
  const MeshTopology topo = buildTopology(disk);
  EXPECT_NEAR(disk.triangleCount(), 1500, 0.05 * 1500);
  EXPECT_EQ(topo.boundaryLoops.size(), 1u);
  EXPECT_EQ(disk.vertexCount() - topo.edgeCount() + disk.triangleCount(), 1);
  EXPECT_NEAR(totalArea(disk), 3.14159265 * 0.25, 0.01);  // inscribed polygon
  for (int i = 0; i < disk.vertexCount(); ++i) EXPECT_LE(disk.positions.row(i).norm(), 0.5 + 1e-12);
}

TEST(Generators, DelaunayEmptyCircumcircle) {
  Eigen::MatrixX2d points(60, 2);
  std::srand(3);
  for (int i = 0; i < 60; ++i) points.row(i) << std::rand() / double(RAND_MAX), std::rand() / double(RAND_MAX);
  const auto tris = delaunayTriangulate(points);
  for (const Tri& t : tris) {
    const Eigen::Vector2d a = points.row(t[0]), b = points.row(t[1]), c = points.row(t[2]);
    // Circumcentre.
    const double d = 2 * (a.x() * (b.y() - c.y()) + b.x() * (c.y() - a.y()) + c.x() * (a.y() - b.y()));
    ASSERT_GT(d, 0) << "counter-clockwise";
    const Eigen::Vector2d centre(
        (a.squaredNorm() * (b.y() - c.y()) + b.squaredNorm() * (c.y() - a.y()) + c.squaredNorm() * (a.y() - b.y())) / d,
        (a.squaredNorm() * (c.x() - b.x()) + b.squaredNorm() * (a.x() - c.x()) + c.squaredNorm() * (b.x() - a.x())) / d);
    const double r = (a - centre).norm();
    for (int i = 0; i < 60; ++i) EXPECT_GE((points.row(i).transpose() - centre).norm(), r - 1e-9);
  }
}

TEST(Topology, PlaneFitFindsATiltedSheetsNormalAndItsFarthestPoint) {
  // A 2 m by 1 m grid in a plane turned away from every axis, one point lifted 3 mm off it.
  const Eigen::Matrix3d turn =
      (Eigen::AngleAxisd(0.4, Vec3(1, 2, 3).normalized())).toRotationMatrix();
  const Vec3 offset(5, -2, 1);
  Positions points(66, 3);
  for (int i = 0; i <= 10; ++i)
    for (int j = 0; j <= 5; ++j)
      points.row(i * 6 + j) = (turn * Vec3(0.2 * i, 0.2 * j, 0) + offset).transpose();
  points.row(20) += 0.003 * turn.col(2).transpose();
  const PlaneFit fit = fitPlane(points);
  EXPECT_GT(std::abs(fit.normal().dot(turn.col(2))), 1 - 1e-5);
  EXPECT_GT(std::abs(fit.basis.col(0).dot(turn.col(0))), 1 - 1e-5) << "the longer side first";
  EXPECT_NEAR((fit.basis.transpose() * fit.basis - Eigen::Matrix3d::Identity()).norm(), 0, 1e-12);
  // The fit leans a little toward the lifted point and passes through the centroid, which the
  // point moved by 3 mm / 66: the point ends up nearly, but not quite, 3 mm off it.
  EXPECT_GT(fit.offPlane, 0.0028);
  EXPECT_LT(fit.offPlane, 0.003);
  EXPECT_NEAR(fit.size, boxDiagonal(points), 0);
  EXPECT_TRUE(fit.flatWithin(0.002));
  EXPECT_FALSE(fit.flatWithin(0.001));  // 2.93 mm of the turned grid's 2.73 m box diagonal: 0.107%
  points.row(20) -= 0.003 * turn.col(2).transpose();
  EXPECT_TRUE(fitPlane(points).flatWithin(1e-12));
}
