#include "sim/material.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace clothlab {

Eigen::Vector2d wrapOffset(Eigen::Vector2d d, double period) {
  if (period > 0) d.x() = std::remainder(d.x(), period);
  return d;
}

Eigen::Vector2d materialOffset(const Eigen::MatrixX2d& u, int i, int j, double period) {
  return wrapOffset(u.row(j).transpose() - u.row(i).transpose(), period);
}

Result<FlatRest> flatMaterialCoordinates(const ClothModel& cloth) {
  const TriangleMesh& mesh = cloth.mesh;
  const auto& edges = cloth.topology.edges;
  // Relative edge-length mismatch between rest mesh and coordinates after the best uniform scale.
  auto mismatch = [&](const Eigen::MatrixX2d& u, double period, double& scale) {
    std::vector<double> ratios;  // rest length / material length, per edge
    for (const auto& e : edges) {
      const double material = materialOffset(u, e[0], e[1], period).norm();
      if (!(material > 0)) return 1e300;
      ratios.push_back((mesh.positions.row(e[1]) - mesh.positions.row(e[0])).norm() / material);
    }
    if (ratios.empty()) return 1e300;
    std::vector<double> sorted = ratios;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    scale = sorted[sorted.size() / 2];
    double worst = 0;
    for (double ratio : ratios) worst = std::max(worst, std::abs(scale / ratio - 1));
    return worst;
  };
  double scale = 1;
  std::string why = cloth.materialCoordsDropped;
  if (cloth.materialCoords) {
    const double m = mismatch(*cloth.materialCoords, cloth.materialPeriod, scale);
    if (m <= 0.01) return FlatRest{scale * *cloth.materialCoords, scale * cloth.materialPeriod};
    why = "its texture coordinates are not a flattening (edge lengths differ by up to " +
          std::to_string(static_cast<int>(std::round(std::min(m, 99.0) * 100))) + "%)";
  }
  // Plane fit.
  const Eigen::RowVector3d centroid = mesh.positions.colwise().mean();
  const Eigen::MatrixX3d centred = mesh.positions.rowwise() - centroid;
  Eigen::JacobiSVD<Eigen::MatrixX3d> svd(centred, Eigen::ComputeThinV);
  const Eigen::Matrix3d basis = svd.matrixV();
  const double size = (mesh.positions.colwise().maxCoeff() - mesh.positions.colwise().minCoeff()).norm();
  const double offPlane = (centred * basis.col(2)).cwiseAbs().maxCoeff();
  if (offPlane <= 1e-3 * size) {
    Eigen::MatrixX2d u = centred * basis.leftCols<2>();
    if (mismatch(u, 0, scale) <= 0.01) return FlatRest{u, 0, true};
  }
  return Error{"the mesh is curved (up to " + std::to_string(offPlane) + " m off its best-fit plane)" +
               (why.empty() ? " and has no texture coordinates" : " and " + why) +
               "; give a flat mesh or one whose texture coordinates flatten it"};
}

}  // namespace clothlab
