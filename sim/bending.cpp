#include "sim/bending.h"

#include <algorithm>
#include <vector>

#include "sim/format.h"

namespace clothlab {

double cotangent(const Vec3& a, const Vec3& b) {
  const double sine = a.cross(b).norm();
  return a.dot(b) / std::max(sine, 1e-300);
}

std::string bendingOutweighsMass(const SparseMatrix& scaledBending, const Eigen::VectorXd& mass,
                                 double bending, double h, const std::string& point) {
  // Beyond about 1e12 the mass is lost in the rounding of the bending term's null space (the
  // affine motions), and the sum is no longer positive definite in floating point.
  constexpr double kLimit = 1e12;
  const Eigen::VectorXd diagonal = scaledBending.diagonal();
  double worst = 0;
  int index = -1;
  const int n = std::min(static_cast<int>(mass.size()), static_cast<int>(diagonal.size()));
  for (int i = 0; i < n; ++i) {
    if (!(mass[i] > 0)) continue;
    const double ratio = diagonal[i] / mass[i];
    if (ratio > worst) worst = ratio, index = i;
  }
  if (!(worst > kLimit)) return "";
  return "; the bending term outweighs the mass " + formatG(worst, 2) + " times at " + point + " " +
         std::to_string(index) + " (bending " + formatG(bending) + " N m, time step " + formatG(h) +
         " s, mass " + formatG(mass[index], 3) +
         " kg), more than double precision can hold: lower the bending stiffness or the time step, "
         "or make the cloth larger or denser";
}

SparseMatrix hingeBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology) {
  const int n = rest.vertexCount();
  std::vector<Eigen::Triplet<double>> triplets;
  auto opposite = [&](int t, int a, int b) {
    for (int v : rest.triangles[t])
      if (v != a && v != b) return v;
    return -1;
  };
  for (int e = 0; e < topology.edgeCount(); ++e) {
    if (topology.edgeTriCount[e] != 2) continue;
    const int v0 = topology.edges[e][0], v1 = topology.edges[e][1];
    const int v2 = opposite(topology.edgeTris[e][0], v0, v1);
    const int v3 = opposite(topology.edgeTris[e][1], v0, v1);
    const Vec3 x0 = rest.positions.row(v0), x1 = rest.positions.row(v1),
               x2 = rest.positions.row(v2), x3 = rest.positions.row(v3);
    const Vec3 e0 = x1 - x0, e1 = x2 - x0, e2 = x3 - x0, e3 = x2 - x1, e4 = x3 - x1;
    const double c01 = cotangent(e0, e1), c02 = cotangent(e0, e2);
    const double c03 = cotangent(-e0, e3), c04 = cotangent(-e0, e4);
    const double a0 = 0.5 * e0.cross(e1).norm(), a1 = 0.5 * e0.cross(e2).norm();
    const double k[4] = {c03 + c04, c01 + c02, -c01 - c03, -c02 - c04};
    const int v[4] = {v0, v1, v2, v3};
    const double scale = 3.0 / (a0 + a1);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) triplets.emplace_back(v[i], v[j], scale * k[i] * k[j]);
  }
  SparseMatrix q(n, n);
  q.setFromTriplets(triplets.begin(), triplets.end());
  return q;
}

SparseMatrix crBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology) {
  const int edgeCount = topology.edgeCount();
  std::vector<Eigen::Triplet<double>> stiffness;
  Eigen::VectorXd mass = Eigen::VectorXd::Zero(edgeCount);
  for (int t = 0; t < rest.triangleCount(); ++t) {
    const Tri& f = rest.triangles[t];
    const double area = triangleArea(rest, t);
    for (int k = 0; k < 3; ++k) {
      // Corner k: angle between the two edges leaving it; couples the other two edges' particles.
      const Vec3 p = rest.positions.row(f[k]);
      const Vec3 a = Vec3(rest.positions.row(f[(k + 1) % 3])) - p;
      const Vec3 b = Vec3(rest.positions.row(f[(k + 2) % 3])) - p;
      const double w = 2.0 * cotangent(a, b);
      const int ej = topology.triEdges[t][(k + 1) % 3], el = topology.triEdges[t][(k + 2) % 3];
      stiffness.emplace_back(ej, el, -w);
      stiffness.emplace_back(el, ej, -w);
      stiffness.emplace_back(ej, ej, w);
      stiffness.emplace_back(el, el, w);
      mass[topology.triEdges[t][k]] += area / 3.0;
    }
  }
  SparseMatrix l(edgeCount, edgeCount);
  l.setFromTriplets(stiffness.begin(), stiffness.end());
  Eigen::VectorXd inverseMass = Eigen::VectorXd::Zero(edgeCount);
  for (int e = 0; e < edgeCount; ++e)
    if (topology.edgeTriCount[e] == 2) inverseMass[e] = 1.0 / mass[e];
  SparseMatrix q = SparseMatrix(l.transpose()) * inverseMass.asDiagonal() * l;
  q.prune(0.0);
  return q;
}

}  // namespace clothlab

namespace clothlab {

ImplicitBending::ImplicitBending(SparseMatrix hinge)
    : hinge_(std::move(hinge)), solver_(makeSolveOftenSpdSolver(static_cast<int>(hinge_.rows()))) {}

std::optional<std::string> ImplicitBending::velocities(const Eigen::VectorXd& mass, double bending, double h,
                                                       const Vec3& gravity, const Positions& x,
                                                       const Positions& v,
                                                       const std::vector<std::pair<int, Vec3>>& pins,
                                                       Positions& out) {
  const int n = static_cast<int>(x.rows());
  std::vector<char> pinned(n, 0);
  std::vector<int> pinList;
  for (const auto& pin : pins) {
    pinned[pin.first] = 1;
    pinList.push_back(pin.first);
  }
  std::sort(pinList.begin(), pinList.end());
  if (key_[0] != bending || key_[1] != h || keyPins_ != pinList || keyMass_.size() != mass.size() ||
      keyMass_ != mass) {
    std::vector<Eigen::Triplet<double>> system, coupling;
    const SparseMatrix scaled = (h * h * bending) * hinge_;
    const SparseMatrix full = SparseMatrix(mass.asDiagonal()) + scaled;
    for (int c = 0; c < full.outerSize(); ++c)
      for (SparseMatrix::InnerIterator it(full, c); it; ++it) {
        const int r = static_cast<int>(it.row());
        if (pinned[r] || pinned[c]) {
          if (!pinned[r] && pinned[c]) coupling.emplace_back(r, c, it.value());
          continue;
        }
        if (r <= c) system.emplace_back(r, c, it.value());
      }
    for (int p : pinList) system.emplace_back(p, p, 1.0);
    system_.resize(n, n);
    system_.setFromTriplets(system.begin(), system.end());
    coupling_.resize(n, n);
    coupling_.setFromTriplets(coupling.begin(), coupling.end());
    key_[0] = -1;  // invalid until the factorization succeeds
    // A new k_b, h or mass keeps the pattern (the pins set it): no new analysis then.
    if (!solver_->analysedFor(system_))
      if (auto e = solver_->analyze(system_)) return e;
    std::string message;
    if (solver_->factorize(system_, &message) != SpdSolver::Status::Ok) {
      // A fresh solver next time: a failed factor is not reused.
      solver_ = makeSolveOftenSpdSolver(static_cast<int>(hinge_.rows()));
      return "bending system: " + message +
             bendingOutweighsMass(scaled, mass, bending, h, "vertex");
    }
    key_[0] = bending;
    key_[1] = h;
    keyMass_ = mass;
    keyPins_ = pinList;
  }
  Eigen::MatrixXd rhs(n, 3);
  for (int i = 0; i < n; ++i) rhs.row(i) = mass[i] * (v.row(i) + h * gravity.transpose());
  if (bending > 0) rhs -= (h * bending) * (hinge_ * x);
  Eigen::MatrixXd pinVelocity = Eigen::MatrixXd::Zero(n, 3);
  for (const auto& [vertex, target] : pins) pinVelocity.row(vertex) = (target - Vec3(x.row(vertex))).transpose() / h;
  rhs -= coupling_ * pinVelocity;
  for (const auto& [vertex, target] : pins) rhs.row(vertex) = pinVelocity.row(vertex);
  solver_->solve(rhs);
  out = rhs;
  return std::nullopt;
}

}  // namespace clothlab
