#include "sim/metrics.h"

#include <cmath>

namespace clothlab {

double maxEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology, const Positions& current) {
  double worst = 0;
  for (const auto& e : topology.edges) {
    const double rest0 = (rest.positions.row(e[1]) - rest.positions.row(e[0])).norm();
    const double now = (current.row(e[1]) - current.row(e[0])).norm();
    worst = std::max(worst, std::abs(now / rest0 - 1.0));
  }
  return worst;
}

Eigen::VectorXd vertexEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology,
                                 const Positions& current) {
  Eigen::VectorXd strain = Eigen::VectorXd::Zero(rest.vertexCount());
  for (const auto& e : topology.edges) {
    const double rest0 = (rest.positions.row(e[1]) - rest.positions.row(e[0])).norm();
    const double value = std::abs((current.row(e[1]) - current.row(e[0])).norm() / rest0 - 1.0);
    strain[e[0]] = std::max(strain[e[0]], value);
    strain[e[1]] = std::max(strain[e[1]], value);
  }
  return strain;
}

}  // namespace clothlab
