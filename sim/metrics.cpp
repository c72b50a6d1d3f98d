#include "sim/metrics.h"

#include <cmath>
#include <functional>
#include <limits>
#include <queue>

#include "sim/solver.h"

namespace clothlab {
namespace {
// | |e| / |e0| - 1 | of edge e with rest length e0.
double edgeStrain(const Positions& current, const std::array<int, 2>& e, double restLength) {
  return std::abs((current.row(e[1]) - current.row(e[0])).norm() / restLength - 1.0);
}
double edgeStrain(const TriangleMesh& rest, const Positions& current, const std::array<int, 2>& e) {
  return edgeStrain(current, e, (rest.positions.row(e[1]) - rest.positions.row(e[0])).norm());
}
// Per vertex, the largest strain(k) of its edges `edges[k]`.
template <typename Strain>
Eigen::VectorXd vertexMaxima(Eigen::Index vertices, const std::vector<std::array<int, 2>>& edges,
                             Strain strain) {
  Eigen::VectorXd out = Eigen::VectorXd::Zero(vertices);
  for (size_t k = 0; k < edges.size(); ++k) {
    const double value = strain(k);
    out[edges[k][0]] = std::max(out[edges[k][0]], value);
    out[edges[k][1]] = std::max(out[edges[k][1]], value);
  }
  return out;
}
}  // namespace

Eigen::VectorXd FineMesh::nodeStrain(const Positions& x) const {
  return vertexMaxima(nodeCount(), edges, [&](size_t k) {
    return edgeStrain(x, edges[k], edgeLengths[static_cast<Eigen::Index>(k)]);
  });
}

double FineMesh::maxEdgeStrain(const Positions& x) const {
  return nodeCount() > 0 ? nodeStrain(x).maxCoeff() : 0.0;
}

double maxEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology, const Positions& current) {
  double worst = 0;
  for (const auto& e : topology.edges) worst = std::max(worst, edgeStrain(rest, current, e));
  return worst;
}

Eigen::VectorXd vertexEdgeStrain(const TriangleMesh& rest, const MeshTopology& topology,
                                 const Positions& current) {
  return vertexMaxima(rest.vertexCount(), topology.edges,
                      [&](size_t k) { return edgeStrain(rest, current, topology.edges[k]); });
}

double pinnedSag(const TriangleMesh& rest, const Positions& current, int pinA, int pinB,
                 const Vec3& up) {
  const Vec3 restMiddle = 0.5 * (rest.positions.row(pinA) + rest.positions.row(pinB)).transpose();
  const int reference = nearestVertex(rest.positions, restMiddle);
  const double pinHeight = 0.5 * (current.row(pinA) + current.row(pinB)).dot(up.transpose());
  return pinHeight - current.row(reference).dot(up.transpose());
}

double meanHeight(const Positions& current, const std::vector<int>& vertices, const Vec3& up) {
  if (vertices.empty()) return 0;
  double sum = 0;
  for (int v : vertices) sum += current.row(v).dot(up.transpose());
  return sum / static_cast<double>(vertices.size());
}

double bendingEnergy(const SparseMatrix& hinge, double bendingStiffness, const Positions& current) {
  // Q is positive semi-definite and annihilates translations: taken about the centroid, the
  // rounding shrinks with the cloth's size instead of its distance from the origin, and what is
  // left of it cannot make a flat cloth's energy negative (-1.5e-14 J was printed for one).
  const Positions centred = current.rowwise() - current.colwise().mean();
  return std::max(0.0, 0.5 * bendingStiffness * (centred.transpose() * (hinge * centred)).trace());
}

Eigen::VectorXd restDistancesFrom(const TriangleMesh& rest, const MeshTopology& topology,
                                  int reference) {
  const int count = rest.vertexCount();
  Eigen::VectorXd geodesic(count);
  if (fitPlane(rest.positions).flatWithin(1e-9)) {  // straight distances are the geodesics
    for (int j = 0; j < count; ++j) geodesic[j] = (rest.positions.row(j) - rest.positions.row(reference)).norm();
    return geodesic;
  }
  // Dijkstra along rest edges
  geodesic.setConstant(std::numeric_limits<double>::infinity());
  geodesic[reference] = 0;
  using Item = std::pair<double, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  queue.emplace(0.0, reference);
  while (!queue.empty()) {
    const auto [d, v] = queue.top();
    queue.pop();
    if (d > geodesic[v]) continue;
    for (int w : topology.vertexNeighbours[v]) {
      const double candidate = d + (rest.positions.row(w) - rest.positions.row(v)).norm();
      if (candidate < geodesic[w]) {
        geodesic[w] = candidate;
        queue.emplace(candidate, w);
      }
    }
  }
  return geodesic;
}

double maxDistanceIncrease(const Eigen::VectorXd& restDistance, const Positions& current,
                           int reference, double minDistance) {
  double worst = 0;
  for (int j = 0; j < restDistance.size(); ++j) {
    const double rest = restDistance[j];
    if (!(rest >= minDistance) || !std::isfinite(rest)) continue;
    const double now = (current.row(j) - current.row(reference)).norm();
    worst = std::max(worst, (now - rest) / rest);
  }
  return worst;
}

double maxDistanceIncrease(const TriangleMesh& rest, const MeshTopology& topology,
                           const Positions& current, int reference, double minDistance) {
  return maxDistanceIncrease(restDistancesFrom(rest, topology, reference), current, reference,
                             minDistance);
}

}  // namespace clothlab
