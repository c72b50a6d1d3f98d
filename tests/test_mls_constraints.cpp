// MLS isometry constraints: the invariants of methods 5.2 (#1 to #5).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cstdio>
#include <random>

#include "sim/generators.h"
#include "sim/material.h"
#include "sim/scene.h"
#include "sim/scene_library.h"
#include "sim/solvers/mls/mls_constraints.h"

using namespace clothlab;

namespace {
struct Fixture {
  TriangleMesh mesh = makeIrregularRectangle(1, 1, 300, 21);
  MeshTopology topology = buildTopology(mesh);
  Eigen::MatrixX2d material = mesh.positions.leftCols<2>();
  Eigen::VectorXd mass = Eigen::VectorXd::LinSpaced(mesh.vertexCount(), 1.0, 2.0);
  MlsNeighbourhoods build(int rings, MlsWeighting weighting) const {
    auto n = buildMlsNeighbourhoods(mesh, topology, material, rings, weighting, mass);
    EXPECT_TRUE(n.ok()) << n.error();
    return std::move(n).value();
  }
  // A smooth non-isometric deformation of the flat sheet.
  Positions deformed() const {
    Positions x = mesh.positions;
    for (int i = 0; i < x.rows(); ++i) {
      const double u = x(i, 0), v = x(i, 1);
      x.row(i) << u + 0.1 * u * v, v - 0.05 * u * u, 0.2 * std::sin(2 * u) + 0.1 * v * v;
    }
    return x;
  }
};
}  // namespace

TEST(MlsConstraints, DeformationGradientIsTheWeightedLeastSquaresFit) {
  Fixture f;
  for (MlsWeighting weighting : {MlsWeighting::Uniform, MlsWeighting::Mass}) {
    const MlsNeighbourhoods n = f.build(1, weighting);
    const Positions x = f.deformed();
    double worst = 0;
    for (int i = 0; i < n.sampleCount(); i += 7) {
      // Solve min sum_j w_j |F d_u - d_x|^2 independently: rows sqrt(w) d_u^T, per coordinate.
      const auto& ring = f.topology.vertexNeighbours[i];
      Eigen::MatrixXd a(ring.size(), 2), b(ring.size(), 3);
      for (size_t k = 0; k < ring.size(); ++k) {
        const double w = std::sqrt(weighting == MlsWeighting::Mass ? f.mass[ring[k]] : 1.0);
        a.row(k) = w * (f.material.row(ring[k]) - f.material.row(i));
        b.row(k) = w * (x.row(ring[k]) - x.row(i));
      }
      const Eigen::MatrixXd fit = a.colPivHouseholderQr().solve(b).transpose();  // 3 x 2
      worst = std::max(worst, (mlsDeformationGradient(n, i, x) - fit).cwiseAbs().maxCoeff());
    }
    EXPECT_LT(worst, 1e-12);
  }
}

TEST(MlsConstraints, RigidMotionsSatisfyTheConstraints) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(2, MlsWeighting::Uniform);
  const Eigen::Matrix3d rotation =
      Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  Positions x = (f.mesh.positions * rotation.transpose()).rowwise() + Eigen::RowVector3d(0.3, -1, 2);
  EXPECT_LT(mlsConstraints(n, x).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_GT(mlsConstraints(n, f.deformed()).cwiseAbs().maxCoeff(), 1e-2);
}

TEST(MlsConstraints, GradientsCoincideAtRestAndDoNotVanish) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Uniform);
  std::vector<int> particles;
  Eigen::MatrixX3d trace, determinant;
  double worstDifference = 0, smallest = 1e300;
  for (int i = 0; i < n.sampleCount(); ++i) {
    mlsConstraintGradient(n, i, f.mesh.positions, MlsRow::Trace, particles, trace);
    mlsConstraintGradient(n, i, f.mesh.positions, MlsRow::Determinant, particles, determinant);
    worstDifference = std::max(worstDifference, (trace - determinant).cwiseAbs().maxCoeff());
    smallest = std::min(smallest, trace.norm());
  }
  EXPECT_LT(worstDifference, 1e-10);  // the rank drop that fast projection must regularize
  EXPECT_GT(smallest, 1.0);          // zero is a regular value of both constraints
}

// Every row, the shear gap also softened.
struct RowCase {
  MlsRow row;
  double softening;
};
constexpr RowCase kRows[] = {
    {MlsRow::Trace, 0}, {MlsRow::Determinant, 0}, {MlsRow::ShearGap, 0}, {MlsRow::ShearGap, 0.05}};

TEST(MlsConstraints, GradientsMatchFiniteDifferences) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Mass);
  const Positions x0 = f.deformed();
  const double step = 1e-6;
  std::vector<int> particles;
  Eigen::MatrixX3d gradient;
  for (const auto [row, softening] : kRows) {
    double worst = 0, scale = 0;
    for (int i = 0; i < n.sampleCount(); i += 11) {
      mlsConstraintGradient(n, i, x0, row, particles, gradient, softening);
      for (size_t k = 0; k < particles.size(); ++k)
        for (int d = 0; d < 3; ++d) {
          Positions plus = x0, minus = x0;
          plus(particles[k], d) += step;
          minus(particles[k], d) -= step;
          const double fd = (mlsRow(mlsDeformationGradient(n, i, plus), row, softening).value -
                             mlsRow(mlsDeformationGradient(n, i, minus), row, softening).value) /
                            (2 * step);
          worst = std::max(worst, std::abs(fd - gradient(k, d)));
          scale = std::max(scale, std::abs(gradient(k, d)));
        }
    }
    EXPECT_GT(scale, 0.1) << "row " << static_cast<int>(row) << ", softening " << softening;
    EXPECT_LT(worst, 1e-6 * scale) << "row " << static_cast<int>(row) << ", softening " << softening;
  }
  // The constraint pair itself, as the solver reports it.
  EXPECT_NEAR(mlsConstraints(n, x0)(1, 5), mlsRow(mlsDeformationGradient(n, 5, x0), MlsRow::Determinant).value,
              1e-15);
}

TEST(MlsConstraints, HessiansMatchFiniteDifferences) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Uniform);
  const Positions x0 = f.deformed();
  const int sample = 40;
  const int count = n.start[sample + 1] - n.start[sample];
  const double step = 1e-6;
  std::vector<int> particles;
  Eigen::MatrixX3d plusGradient, minusGradient;
  for (const MlsRow row : {MlsRow::Trace, MlsRow::Determinant}) {
    double worst = 0, scale = 0;
    for (int l = 0; l < count; ++l)
      for (int d = 0; d < 3; ++d) {
        Positions plus = x0, minus = x0;
        const int particle = n.neighbour[n.start[sample] + l];
        plus(particle, d) += step;
        minus(particle, d) -= step;
        mlsConstraintGradient(n, sample, plus, row, particles, plusGradient);
        mlsConstraintGradient(n, sample, minus, row, particles, minusGradient);
        for (int j = 0; j < count; ++j) {
          const Vec3 fd = (plusGradient.row(j + 1) - minusGradient.row(j + 1)).transpose() / (2 * step);
          const Vec3 exact = mlsHessianBlock(n, sample, x0, row, j, l).col(d);
          worst = std::max(worst, (fd - exact).cwiseAbs().maxCoeff());
          scale = std::max(scale, exact.cwiseAbs().maxCoeff());
        }
      }
    EXPECT_GT(scale, 0) << "row " << static_cast<int>(row);
    EXPECT_LT(worst, 1e-5 * scale) << "row " << static_cast<int>(row);
  }
}

// The shear gap spans the same rows as the determinant (grad c_det = (tr C / 2) grad c_tr -
// (g / 2) grad g), but a Newton step on (c_tr, g) removes most of a pure shear where one on
// (c_tr, c_det) only halves it: c_det = -d^2 has a double root at d = 0. (g bounds only the size
// of the deviator of F^T F, so the step may leave some shear along other axes.)
TEST(MlsConstraints, ANewtonStepOnTheShearGapRemovesAPureShear) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Uniform);
  const int sample = 40;
  const double d = 0.04;  // F^T F = diag(1 + d, 1 - d)
  Positions x = f.mesh.positions;
  for (int i = 0; i < x.rows(); ++i)
    x.row(i) << std::sqrt(1 + d) * f.material(i, 0), std::sqrt(1 - d) * f.material(i, 1), 0.0;
  std::vector<int> particles;
  Eigen::MatrixX3d trace, determinant, gap;
  mlsConstraintGradient(n, sample, x, MlsRow::Trace, particles, trace);
  mlsConstraintGradient(n, sample, x, MlsRow::Determinant, particles, determinant);
  mlsConstraintGradient(n, sample, x, MlsRow::ShearGap, particles, gap);
  const Mat32 f0 = mlsDeformationGradient(n, sample, x);
  const double tr = mlsRow(f0, MlsRow::Trace).value + 2, g = mlsRow(f0, MlsRow::ShearGap).value;
  EXPECT_NEAR(g, 2 * d, 1e-12);
  EXPECT_LT((determinant - (0.5 * tr * trace - 0.5 * g * gap)).cwiseAbs().maxCoeff(), 1e-12);
  // The least-norm Newton step on the sample's two rows, then the shear left.
  auto shearAfterNewton = [&](const Eigen::MatrixX3d& second, MlsRow secondRow) {
    const int k = static_cast<int>(particles.size());
    Eigen::MatrixXd jacobian(2, 3 * k);
    for (int p = 0; p < k; ++p) {
      jacobian.block<1, 3>(0, 3 * p) = trace.row(p);
      jacobian.block<1, 3>(1, 3 * p) = second.row(p);
    }
    const Eigen::Vector2d c(mlsRow(f0, MlsRow::Trace).value, mlsRow(f0, secondRow).value);
    const Eigen::VectorXd dx = -jacobian.transpose() * (jacobian * jacobian.transpose()).ldlt().solve(c);
    Positions moved = x;
    for (int p = 0; p < k; ++p) moved.row(particles[p]) += dx.segment<3>(3 * p).transpose();
    return mlsRow(mlsDeformationGradient(n, sample, moved), MlsRow::ShearGap).value;
  };
  const double afterDeterminant = shearAfterNewton(determinant, MlsRow::Determinant);
  const double afterGap = shearAfterNewton(gap, MlsRow::ShearGap);
  std::printf("shear gap %.4f: %.4f after a Newton step on (c_tr, c_det), %.4f on (c_tr, g)\n", g,
              afterDeterminant, afterGap);
  EXPECT_NEAR(afterDeterminant, 0.5 * g, 0.05 * g);
  EXPECT_LT(afterGap, 0.1 * g);  // 0.0625 g here: what is left is a shear along other axes
  // At rest the gap is zero and its gradient is taken as zero.
  EXPECT_EQ(mlsRow(mlsDeformationGradient(n, sample, f.mesh.positions), MlsRow::ShearGap).derivative, Mat32::Zero());
}

TEST(MlsConstraints, DegenerateNeighbourhoodIsReported) {
  Fixture f;
  Eigen::MatrixX2d collinear = f.material;
  collinear.col(1).setZero();  // every material offset on one line: F is undefined
  auto n = buildMlsNeighbourhoods(f.mesh, f.topology, collinear, 1, MlsWeighting::Uniform, f.mass);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().find("MLS neighbourhood of vertex 0"), std::string::npos) << n.error();
  EXPECT_FALSE(buildMlsNeighbourhoods(f.mesh, f.topology, f.material, 3, MlsWeighting::Uniform, f.mass).ok());
}

// Radius neighbourhoods found through the grid are exactly those of a test of every pair, in the
// same order: on a sheet, and on a tube whose first material coordinate wraps (radii that span
// one, two and more cells around it).
TEST(MlsConstraints, RadiusNeighbourhoodsAreEveryPointWithinTheRadius) {
  auto check = [](const Scene& scene, double radius) {
    auto cloth = buildClothModel(scene);
    ASSERT_TRUE(cloth) << cloth.error();
    const Eigen::MatrixX2d& u = cloth->flatCoords->coords;
    MlsNeighbourhoodOptions options;
    options.radius = radius;
    options.wrap = cloth->flatCoords->wrap;
    const auto n = buildMlsNeighbourhoods(cloth->mesh, cloth->topology, u, options,
                                          Eigen::VectorXd::Ones(cloth->mesh.vertexCount()));
    ASSERT_TRUE(n) << n.error();
    for (int i = 0; i < cloth->mesh.vertexCount(); ++i) {
      std::vector<int> within;
      for (int j = 0; j < cloth->mesh.vertexCount(); ++j)
        if (j != i && materialOffset(u, i, j, options.wrap).norm() <= radius) within.push_back(j);
      const std::vector<int> found(n->neighbour.begin() + n->start[i], n->neighbour.begin() + n->start[i + 1]);
      ASSERT_EQ(found, within) << scene.name << ", radius " << radius << ", vertex " << i;
    }
  };
  auto sheet = resolveScene("ckv-corners");
  auto tube = resolveScene("ckv-cylinder");
  ASSERT_TRUE(sheet && tube);
  ASSERT_GT(buildClothModel(*tube)->flatCoords->wrap.period, 0.9);  // 0.94 m around
  check(*sheet, 0.07);
  check(*sheet, 0.2);
  check(*tube, 0.07);
  check(*tube, 0.35);  // two cells around the tube
  check(*tube, 0.5);   // one
}

// Texture coordinates may lay a garment's panels over each other: a radius reaches only within
// the sample's own piece.
TEST(MlsConstraints, RadiusNeighbourhoodsStayWithinTheirPiece) {
  // Two 5 x 5 grids of 1 m, one above the other, with the same material coordinates.
  const int m = 5;
  TriangleMesh mesh;
  mesh.positions.resize(2 * m * m, 3);
  Eigen::MatrixX2d material(2 * m * m, 2);
  for (int piece = 0; piece < 2; ++piece)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int v = piece * m * m + j * m + i;
        material.row(v) << i / double(m - 1), j / double(m - 1);
        mesh.positions.row(v) << i / double(m - 1), piece * 0.5, j / double(m - 1);
      }
  for (int piece = 0; piece < 2; ++piece)
    for (int j = 0; j + 1 < m; ++j)
      for (int i = 0; i + 1 < m; ++i) {
        const int a = piece * m * m + j * m + i;
        mesh.triangles.push_back({a, a + m, a + 1});
        mesh.triangles.push_back({a + 1, a + m, a + m + 1});
      }
  const MeshTopology topology = buildTopology(mesh);
  ASSERT_EQ(topology.componentCount, 2);
  MlsNeighbourhoodOptions options;
  options.radius = 0.4;
  const auto n =
      buildMlsNeighbourhoods(mesh, topology, material, options, Eigen::VectorXd::Ones(2 * m * m));
  ASSERT_TRUE(n) << n.error();
  for (int i = 0; i < 2 * m * m; ++i) {
    std::vector<int> within;  // every vertex of i's piece within the radius
    for (int j = 0; j < 2 * m * m; ++j)
      if (j != i && j / (m * m) == i / (m * m) && (material.row(j) - material.row(i)).norm() <= 0.4)
        within.push_back(j);
    const std::vector<int> found(n->neighbour.begin() + n->start[i],
                                 n->neighbour.begin() + n->start[i + 1]);
    ASSERT_EQ(found, within) << "vertex " << i;
  }
}
