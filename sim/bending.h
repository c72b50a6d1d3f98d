#pragma once
// Quadratic bending energies for cloth that is flat at rest (Bergou et al. 2006; Wardetzky et
// al. 2007), E_b = k_b/2 * sum over coordinates of x^T Q x, with a constant Q built on the rest
// mesh. The force is -k_b Q x, the Hessian k_b Q.
//  - hingeBendingMatrix: on mesh vertices. Per interior edge (x0, x1) with opposite vertices x2,
//    x3: Q_e = 3 / (A0 + A1) K K^T with the cotangent weights K of the hinge (methods 2.5).
//  - crBendingMatrix: on edge midpoints (Crouzeix-Raviart, the nonconforming version used by
//    impulse-nc): Q = sum over interior edges e of l_e l_e^T / M_ee, l_e a row of the CR
//    stiffness matrix, M_ee = sum of adjacent areas / 3 (methods 1.10). Boundary rows are left
//    out, otherwise a flat sheet would carry spurious in-plane forces.
// Both annihilate any flat configuration, and E_cr(midpoints(x)) equals E_hinge(x). RestBend
// (below) makes either pull toward a curved rest shape instead.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/linear/spd_solver.h"
#include "sim/mesh.h"

namespace clothlab {

SparseMatrix hingeBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology);
SparseMatrix crBendingMatrix(const TriangleMesh& rest, const MeshTopology& topology);

// One row of a quadratic bending energy: Q = sum over rows r of s_r k_r k_r^T, so that k_r x is the
// bend the row measures (a 3-vector per row: the hinge's discrete mean-curvature normal, scaled).
// The row's frame is that of its two triangles: `sides` as point triples oriented alike (their
// normals agree on a flat cloth), `axis` a pair of points along the fold between them.
struct BendingRow {
  std::vector<std::pair<int, double>> stencil;  // (point, k_rj)
  double scale = 0;                             // s_r
  std::array<std::array<int, 3>, 2> sides;
  std::array<int, 2> axis;
};
// The rows of hingeBendingMatrix (mesh vertices) and of crBendingMatrix (edge midpoints, indexed
// by edge): bendingMatrix(rows) equals those matrices up to rounding.
std::vector<BendingRow> hingeBendingRows(const TriangleMesh& rest, const MeshTopology& topology);
std::vector<BendingRow> crBendingRows(const TriangleMesh& rest, const MeshTopology& topology);
SparseMatrix bendingMatrix(const std::vector<BendingRow>& rows, int points);

// Bending toward a curved rest shape (SimParams::bendingRest "loaded"). A quadratic energy is
// zero only on flat states; this one keeps each row's bend at rest, k_r x0, in the row's frame at
// rest, and asks the row for it turned with the row's frame now, R_r(x):
//     E = k_b/2 sum_r s_r |k_r x - R_r(x) b_r|^2,   b_r = R_r(x0)^T k_r x0,
// with R_r held over a step (a lagged rotation, as co-rotational elements do). Its force is
// -k_b (Q x - f(x)) with f(x) = sum_r s_r k_r (R_r(x) b_r): the constant Hessian stays, and the
// implicit step adds k_b f(x) to the force it already takes explicitly. At rest, and at any rigid
// motion of it, f(x) = Q x. Rows whose frame degenerates (a triangle of zero area, a hinge folded
// flat on itself) take the first triangle's normal alone, or drop out when that fails too.
class RestBend {
 public:
  RestBend() = default;
  RestBend(std::vector<BendingRow> rows, const Positions& rest);
  // out += scale * f(x).
  void addForce(const Positions& x, double scale, Eigen::Ref<Eigen::MatrixXd> out) const;
  // E [J] for bending stiffness k_b [N m], with the frames R_r(x) of x itself: zero at the rest
  // state and at its rigid motions; k_b/2 x^T Q x where no row bends at rest.
  double energy(const Positions& x, double bendingStiffness) const;
  // Whether any row bends at rest (a flat rest state has none).
  bool bent() const { return bent_; }

 private:
  std::vector<BendingRow> rows_;
  std::vector<Vec3> bends_;  // b_r
  bool bent_ = false;
};
// `rest` where the simulation bends toward its shape as loaded (SimParams::bendingRest "loaded")
// and that shape bends at all, else nullptr.
inline const RestBend* restShapeFor(const std::string& bendingRest, const RestBend& rest) {
  return bendingRest == "loaded" && rest.bent() ? &rest : nullptr;
}
// R_r(x) (columns: the mean normal, the axis made normal to it, their cross product), or zero
// when the frame degenerates.
Eigen::Matrix3d bendingRowFrame(const BendingRow& row, const Positions& x);

// cot of the angle between a and b.
double cotangent(const Vec3& a, const Vec3& b);

// Why M + h^2 k_b Q (scaledBending: h^2 k_b Q) may have failed to factorize: when some vertex's
// bending term outweighs its mass by more than double precision holds (a cloth of microns, or
// a bending stiffness far too large for the time step), a clause naming the point (`point`:
// "vertex", "particle"), the ratio and what to change; empty otherwise. For a message only: it
// runs after a failure.
std::string bendingOutweighsMass(const SparseMatrix& scaledBending, const Eigen::VectorXd& mass,
                                 double bending, double h, const std::string& point);

}  // namespace clothlab

namespace clothlab {

// The implicit step for quadratic bending plus gravity on mesh vertices (methods 2.5):
//   (M + h^2 k_b Q) v* = M v + h (M g - k_b Q x),
// with pinned vertices moved to their targets over the step (their rows replaced by identity and
// their known velocities moved to the right-hand side). The matrix is factorized once and again
// only when k_b, h, the masses or the pinned set change. Used by the vertex-based solvers
// (mls-isometry, xpbd, and strain-limit-remesh on its nodes).
class ImplicitBending {
 public:
  // Q from `rows` (bendingMatrix), and their bends at `rest` for restBend(). The factor is
  // makeSolveOftenSpdSolver's, with `blasFreeSolves`.
  ImplicitBending(std::vector<BendingRow> rows, const Positions& rest, bool blasFreeSolves = false);
  // v* for the given state; an error message if the factorization fails. With `rest`, the
  // bending pulls toward that rest shape (RestBend) instead of toward flat.
  std::optional<std::string> velocities(const Eigen::VectorXd& mass, double bending, double h,
                                        const Vec3& gravity, const Positions& x, const Positions& v,
                                        const std::vector<std::pair<int, Vec3>>& pins,
                                        Positions& out, const RestBend* rest = nullptr);
  const SparseMatrix& hinge() const { return hinge_; }
  // The rows' bends at the rest state given to the constructor (none without one).
  const RestBend& restBend() const { return rest_; }

 private:
  SparseMatrix hinge_;
  RestBend rest_;
  bool blasFreeSolves_ = false;
  std::unique_ptr<SpdSolver> solver_;
  SparseMatrix system_, coupling_;
  double key_[2] = {-1, -1};  // k_b, h of the factorization
  Eigen::VectorXd keyMass_;
  std::vector<int> keyPins_;
};

}  // namespace clothlab
