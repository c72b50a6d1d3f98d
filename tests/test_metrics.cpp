// Locking metrics: each on a configuration whose value is known.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <numbers>

#include "sim/bending.h"
#include "sim/generators.h"
#include "sim/metrics.h"
#include "tests/test_util.h"

using namespace clothlab;

TEST(Metrics, PinnedSagAndMeanHeight) {
  const TriangleMesh rest = makeGrid(1, 1, 11, 11, DiagonalPattern::Alternating);
  const int left = 10 * 11, right = 10 * 11 + 10;  // the two corners of the y = +0.5 edge
  Positions now = rest.positions;
  const Vec3 up(0, 1, 0);
  EXPECT_NEAR(pinnedSag(rest, now, left, right, up), 0.0, 1e-15);
  now(10 * 11 + 5, 1) -= 0.2;  // the edge's middle vertex drops 20 cm
  EXPECT_NEAR(pinnedSag(rest, now, left, right, up), 0.2, 1e-12);
  EXPECT_NEAR(meanHeight(now, {0, 1, 2}, up), -0.5, 1e-12);
  EXPECT_NEAR(meanHeight(now, {0, 1, 2}, Vec3(0, 0, 1)), 0.0, 1e-12);
}

TEST(Metrics, BendingEnergyIsZeroFlatAndMatchesACylinder) {
  const TriangleMesh rest = makeGrid(1, 1, 33, 33, DiagonalPattern::Same);
  const MeshTopology topology = buildTopology(rest);
  const SparseMatrix q = hingeBendingMatrix(rest, topology);
  EXPECT_NEAR(bendingEnergy(q, 1.0, rest.positions), 0.0, 1e-12);
  // Continuum: k_b/2 * integral of curvature^2 = k_b/2 * area / r^2. The hinge energy on
  // right-triangle grids is 3x that (methods 1.10 calibration).
  const double radius = 0.5;
  const double energy = bendingEnergy(q, 1.0, test::wrappedOntoCylinder(rest.positions, radius));
  EXPECT_NEAR(energy / (0.5 * 1.0 / (radius * radius)), 3.0, 0.3);
  EXPECT_NEAR(bendingEnergy(q, 2.0, test::wrappedOntoCylinder(rest.positions, radius)), 2 * energy,
              1e-9 * energy);
}

// Q annihilates translations, so a cloth far from the origin has the energy it has at the origin,
// and a flat one about none (Q's own rounding leaves about 1e-11 J here): never a negative energy.
TEST(Metrics, BendingEnergyDoesNotDependOnWhereTheClothIs) {
  const TriangleMesh rest = makeIrregularRectangle(1, 1, 2000, 3);
  const MeshTopology topology = buildTopology(rest);
  const SparseMatrix q = hingeBendingMatrix(rest, topology);
  const Eigen::RowVector3d far(1000, -2000, 500);
  for (const Eigen::RowVector3d& flip : {Eigen::RowVector3d(1, 1, 1), Eigen::RowVector3d(-1, 1, 1)}) {
    const Positions flat = rest.positions.array().rowwise() * flip.array();
    const Positions flatFar = flat.rowwise() + far;
    EXPECT_GE(bendingEnergy(q, 1.0, flatFar), 0.0);
    EXPECT_NEAR(bendingEnergy(q, 1.0, flatFar), bendingEnergy(q, 1.0, flat), 1e-10);
  }
  const Positions bent = test::wrappedOntoCylinder(rest.positions, 0.5);
  const double energy = bendingEnergy(q, 1.0, bent);
  EXPECT_NEAR(bendingEnergy(q, 1.0, Positions(bent.rowwise() + far)), energy, 1e-9 * energy);
}

TEST(Metrics, DistanceIncreaseIsZeroForIsometriesAndMeasuresStretch) {
  const TriangleMesh rest = makeIrregularRectangle(1, 1, 400, 3);
  const MeshTopology topology = buildTopology(rest);
  const Eigen::Matrix3d rotation = Eigen::AngleAxisd(1.0, Vec3(0, 1, 1).normalized()).toRotationMatrix();
  const Positions moved = (rest.positions * rotation.transpose()).rowwise() + Eigen::RowVector3d(1, 2, 3);
  EXPECT_LT(std::abs(maxDistanceIncrease(rest, topology, moved, 0)), 1e-12);
  Positions stretched = rest.positions;
  stretched.col(0) *= 1.02;  // 2% along x
  EXPECT_NEAR(maxDistanceIncrease(rest, topology, stretched, 0), 0.02, 1e-9);
  // Bending is an isometry for geodesics but shortens straight distances: no increase.
  EXPECT_LE(maxDistanceIncrease(rest, topology, test::wrappedOntoCylinder(rest.positions, 0.4), 0),
            1e-12);
  // A curved rest mesh uses path lengths along edges.
  TriangleMesh curved = rest;
  curved.positions = test::wrappedOntoCylinder(rest.positions, 0.4);
  EXPECT_LE(maxDistanceIncrease(curved, topology, curved.positions, 0), 1e-12);
  // Rest distances computed once give the same figures: straight ones on the flat mesh, paths
  // along the edges (never shorter than the chord, longer than it somewhere) on the curved one.
  const Eigen::VectorXd straight = restDistancesFrom(rest, topology, 0);
  EXPECT_NEAR(maxDistanceIncrease(straight, stretched, 0), 0.02, 1e-9);
  const Eigen::VectorXd path = restDistancesFrom(curved, topology, 0);
  double longest = 0;
  for (int j = 0; j < rest.vertexCount(); ++j) {
    const double chord = (curved.positions.row(j) - curved.positions.row(0)).norm();
    EXPECT_GE(path[j], chord - 1e-12);
    longest = std::max(longest, path[j] / std::max(chord, 1e-9));
  }
  EXPECT_GT(longest, 1.01);
  EXPECT_NEAR(maxDistanceIncrease(path, stretched, 0),
              maxDistanceIncrease(curved, topology, stretched, 0), 1e-15);
}
