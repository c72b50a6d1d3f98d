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

std::vector<BendingRow> hingeBendingRows(const TriangleMesh& rest, const MeshTopology& topology) {
  std::vector<BendingRow> rows;
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
    BendingRow row;
    row.stencil = {{v0, c03 + c04}, {v1, c01 + c02}, {v2, -c01 - c03}, {v3, -c02 - c04}};
    row.scale = 3.0 / (a0 + a1);
    row.sides = {{{v0, v1, v2}, {v0, v3, v1}}};
    row.axis = {v0, v1};
    rows.push_back(std::move(row));
  }
  return rows;
}

SparseMatrix bendingMatrix(const std::vector<BendingRow>& rows, int points) {
  std::vector<Eigen::Triplet<double>> triplets;
  for (const BendingRow& row : rows)
    for (const auto& [i, ki] : row.stencil)
      for (const auto& [j, kj] : row.stencil) triplets.emplace_back(i, j, row.scale * ki * kj);
  SparseMatrix q(points, points);
  q.setFromTriplets(triplets.begin(), triplets.end());
  return q;
}

SparseMatrix hingeBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology) {
  return bendingMatrix(hingeBendingRows(rest, topology), rest.vertexCount());
}

namespace {

// The Crouzeix-Raviart stiffness matrix L on the edge midpoints, and each interior edge's
// 1 / M_ee (0 on boundary edges, whose rows are left out: methods 1.10).
std::pair<SparseMatrix, Eigen::VectorXd> crStiffness(const TriangleMesh& rest,
                                                     const MeshTopology& topology) {
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
  return {std::move(l), std::move(inverseMass)};
}

}  // namespace

SparseMatrix crBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology) {
  const auto [l, inverseMass] = crStiffness(rest, topology);
  SparseMatrix q = SparseMatrix(l.transpose()) * inverseMass.asDiagonal() * l;
  q.prune(0.0);
  return q;
}

std::vector<BendingRow> crBendingRows(const TriangleMesh& rest, const MeshTopology& topology) {
  const auto [l, inverseMass] = crStiffness(rest, topology);
  // The midpoint of the edge opposite `corner` in triangle t.
  auto across = [&](int t, int corner) {
    const Tri& f = rest.triangles[t];
    return topology.triEdges[t][f[0] == corner ? 0 : f[1] == corner ? 1 : 2];
  };
  std::vector<BendingRow> rows;
  for (int e = 0; e < topology.edgeCount(); ++e) {
    if (topology.edgeTriCount[e] != 2) continue;
    BendingRow row;
    for (SparseMatrix::InnerIterator it(l, e); it; ++it)  // L is symmetric: column e is row e
      row.stencil.emplace_back(static_cast<int>(it.row()), it.value());
    row.scale = inverseMass[e];
    // The hinge (v0, v1) between apexes vA and vB, as hingeBendingRows frames it, on the two
    // midpoint triangles: each is its triangle turned by half a turn and halved, so it keeps the
    // triangle's orientation, and the midpoints of (vA, v0) and (v1, vA) lie along the hinge.
    const int tA = topology.edgeTris[e][0], tB = topology.edgeTris[e][1];
    const int v0 = topology.edges[e][0], v1 = topology.edges[e][1];
    const int a1 = across(tA, v0), a0 = across(tA, v1);  // (v1, vA), (vA, v0)
    const int b1 = across(tB, v0), b0 = across(tB, v1);  // (vB, v1), (v0, vB)
    row.sides = {{{e, a1, a0}, {b0, b1, e}}};
    row.axis = {a0, a1};
    rows.push_back(std::move(row));
  }
  return rows;
}

Eigen::Matrix3d bendingRowFrame(const BendingRow& row, const Positions& x) {
  Vec3 normals[2];
  for (int s = 0; s < 2; ++s) {
    const auto& [p0, p1, p2] = row.sides[s];
    const Vec3 n = (x.row(p1) - x.row(p0)).cross(x.row(p2) - x.row(p0));
    const double length = n.norm();
    normals[s] = length > 0 ? Vec3(n / length) : Vec3::Zero();
  }
  Vec3 normal = normals[0] + normals[1];
  // A hinge folded flat on itself (or a side of zero area) has no mean normal: the first side's.
  if (normal.norm() < 1e-6) normal = normals[0];
  if (normal.isZero()) return Eigen::Matrix3d::Zero();
  normal.normalize();
  Vec3 axis = x.row(row.axis[1]) - x.row(row.axis[0]);
  axis -= axis.dot(normal) * normal;
  const double length = axis.norm();
  if (!(length > 0)) return Eigen::Matrix3d::Zero();
  axis /= length;
  Eigen::Matrix3d frame;
  frame << normal, axis, normal.cross(axis);
  return frame;
}

namespace {

// k_r x: the bend the row measures at x.
Vec3 rowBend(const BendingRow& row, const Positions& x) {
  Vec3 bend = Vec3::Zero();
  for (const auto& [j, k] : row.stencil) bend += k * x.row(j).transpose();
  return bend;
}

}  // namespace

RestBend::RestBend(std::vector<BendingRow> rows, const Positions& rest) : rows_(std::move(rows)) {
  bends_.reserve(rows_.size());
  for (const BendingRow& row : rows_) {
    Vec3 bend = rowBend(row, rest);
    // A row of a flat rest state measures rounding alone; it asks for nothing.
    double size = 0;
    for (const auto& [j, k] : row.stencil) size += std::abs(k) * rest.row(j).norm();
    if (bend.norm() <= 1e-9 * size) bend.setZero();
    bends_.push_back(bendingRowFrame(row, rest).transpose() * bend);
    bent_ = bent_ || !bends_.back().isZero();
  }
}

void RestBend::addForce(const Positions& x, double scale, Eigen::Ref<Eigen::MatrixXd> out) const {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (bends_[r].isZero()) continue;
    const Vec3 bend = rows_[r].scale * scale * (bendingRowFrame(rows_[r], x) * bends_[r]);
    for (const auto& [j, k] : rows_[r].stencil) out.row(j) += k * bend.transpose();
  }
}

double RestBend::energy(const Positions& x, double bendingStiffness) const {
  // The stencils sum to zero (they annihilate translations): about the centroid, the rounding
  // shrinks with the cloth's size instead of its distance from the origin.
  const Positions centred = x.rowwise() - x.colwise().mean();
  double sum = 0;
  for (size_t r = 0; r < rows_.size(); ++r) {
    Vec3 bend = rowBend(rows_[r], centred);
    if (!bends_[r].isZero()) bend -= bendingRowFrame(rows_[r], centred) * bends_[r];
    sum += rows_[r].scale * bend.squaredNorm();
  }
  return 0.5 * bendingStiffness * sum;
}

}  // namespace clothlab

namespace clothlab {

ImplicitBending::ImplicitBending(std::vector<BendingRow> rows, const Positions& rest,
                                 bool blasFreeSolves)
    : hinge_(bendingMatrix(rows, static_cast<int>(rest.rows()))),  // before rows move on
      rest_(std::move(rows), rest),
      blasFreeSolves_(blasFreeSolves),
      solver_(makeSolveOftenSpdSolver(static_cast<int>(rest.rows()), blasFreeSolves)) {}

std::optional<std::string> ImplicitBending::velocities(
    const Eigen::VectorXd& mass, double bending, double h, const Vec3& gravity, const Positions& x,
    const Positions& v, const std::vector<std::pair<int, Vec3>>& pins, Positions& out,
    const RestBend* rest) {
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
      solver_ = makeSolveOftenSpdSolver(static_cast<int>(hinge_.rows()), blasFreeSolves_);
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
  if (bending > 0 && rest) rest->addForce(x, h * bending, rhs);
  Eigen::MatrixXd pinVelocity = Eigen::MatrixXd::Zero(n, 3);
  for (const auto& [vertex, target] : pins) pinVelocity.row(vertex) = (target - Vec3(x.row(vertex))).transpose() / h;
  rhs -= coupling_ * pinVelocity;
  for (const auto& [vertex, target] : pins) rhs.row(vertex) = pinVelocity.row(vertex);
  solver_->solve(rhs);
  out = rhs;
  return std::nullopt;
}

}  // namespace clothlab
