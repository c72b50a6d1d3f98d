// MLS isometry constraints: the invariants of methods 5.2 (#1 to #5).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <random>

#include "sim/generators.h"
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
    mlsConstraintGradient(n, i, f.mesh.positions, 0, particles, trace);
    mlsConstraintGradient(n, i, f.mesh.positions, 1, particles, determinant);
    worstDifference = std::max(worstDifference, (trace - determinant).cwiseAbs().maxCoeff());
    smallest = std::min(smallest, trace.norm());
  }
  EXPECT_LT(worstDifference, 1e-10);  // the rank drop that fast projection must regularize
  EXPECT_GT(smallest, 1.0);          // zero is a regular value of both constraints
}

TEST(MlsConstraints, GradientsMatchFiniteDifferences) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Mass);
  const Positions x0 = f.deformed();
  const double step = 1e-6;
  double worst = 0, scale = 0;
  std::vector<int> particles;
  Eigen::MatrixX3d gradient;
  for (int i = 0; i < n.sampleCount(); i += 11)
    for (int which = 0; which < 2; ++which) {
      mlsConstraintGradient(n, i, x0, which, particles, gradient);
      for (size_t k = 0; k < particles.size(); ++k)
        for (int d = 0; d < 3; ++d) {
          Positions plus = x0, minus = x0;
          plus(particles[k], d) += step;
          minus(particles[k], d) -= step;
          const double fd = (mlsConstraints(n, plus)(which, i) - mlsConstraints(n, minus)(which, i)) / (2 * step);
          worst = std::max(worst, std::abs(fd - gradient(k, d)));
          scale = std::max(scale, std::abs(gradient(k, d)));
        }
    }
  EXPECT_LT(worst, 1e-6 * scale);
}

TEST(MlsConstraints, DeterminantHessianMatchesFiniteDifferences) {
  Fixture f;
  const MlsNeighbourhoods n = f.build(1, MlsWeighting::Uniform);
  const Positions x0 = f.deformed();
  const int sample = 40;
  const int count = n.start[sample + 1] - n.start[sample];
  const double step = 1e-6;
  double worst = 0, scale = 0;
  std::vector<int> particles;
  Eigen::MatrixX3d plusGradient, minusGradient;
  for (int l = 0; l < count; ++l)
    for (int d = 0; d < 3; ++d) {
      Positions plus = x0, minus = x0;
      const int particle = n.neighbour[n.start[sample] + l];
      plus(particle, d) += step;
      minus(particle, d) -= step;
      mlsConstraintGradient(n, sample, plus, 1, particles, plusGradient);
      mlsConstraintGradient(n, sample, minus, 1, particles, minusGradient);
      for (int j = 0; j < count; ++j) {
        const Vec3 fd = (plusGradient.row(j + 1) - minusGradient.row(j + 1)).transpose() / (2 * step);
        const Vec3 exact = mlsDeterminantHessianBlock(n, sample, x0, j, l).col(d);
        worst = std::max(worst, (fd - exact).cwiseAbs().maxCoeff());
        scale = std::max(scale, exact.cwiseAbs().maxCoeff());
      }
    }
  EXPECT_GT(scale, 0);
  EXPECT_LT(worst, 1e-5 * scale);
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
