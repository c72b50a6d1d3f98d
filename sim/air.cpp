#include "sim/air.h"

#include <Eigen/Dense>
#include <vector>

namespace clothlab {

Positions airVelocityChange(const TriangleMesh& mesh, const Positions& x, const Positions& v,
                            const Eigen::VectorXd& mass, const SimParams& sim, double h,
                            const std::vector<std::pair<int, Vec3>>& held) {
  const int n = static_cast<int>(x.rows());
  Positions dv = Positions::Zero(n, 3);
  if (!(sim.airDensity > 0)) return dv;
  // Per vertex, the drag's rate K (3 x 3, along its faces' normals): f = K (w - v).
  std::vector<Eigen::Matrix3d> rate(n, Eigen::Matrix3d::Zero());
  for (const Tri& t : mesh.triangles) {
    const Vec3 a = x.row(t[0]), b = x.row(t[1]), c = x.row(t[2]);
    const Vec3 doubleArea = (b - a).cross(c - a);
    const double area = 0.5 * doubleArea.norm();
    if (!(area > 0)) continue;
    const Vec3 normal = doubleArea.normalized();
    const Vec3 faceVelocity = (v.row(t[0]) + v.row(t[1]) + v.row(t[2])).transpose() / 3.0;
    const double meeting = std::abs((sim.wind - faceVelocity).dot(normal));
    const Eigen::Matrix3d share =
        (0.5 * sim.airDensity * area * meeting / 3.0) * normal * normal.transpose();
    for (int k = 0; k < 3; ++k) rate[t[k]] += share;
  }
  std::vector<char> isHeld(n, 0);
  for (const auto& pin : held) isHeld[pin.first] = 1;
  for (int i = 0; i < n; ++i) {
    if (isHeld[i] || rate[i].isZero(0)) continue;
    // (m + h K) dv = h K (w - v): backward Euler in the drag, its rate held.
    const Eigen::Matrix3d system = mass[i] * Eigen::Matrix3d::Identity() + h * rate[i];
    dv.row(i) = system.ldlt().solve(h * rate[i] * (sim.wind - v.row(i).transpose())).transpose();
  }
  return dv;
}

}  // namespace clothlab
