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
// Both annihilate any flat configuration, and E_cr(midpoints(x)) equals E_hinge(x).
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
// (mls-isometry, xpbd).
class ImplicitBending {
 public:
  explicit ImplicitBending(SparseMatrix hinge);
  // v* for the given state; an error message if the factorization fails.
  std::optional<std::string> velocities(const Eigen::VectorXd& mass, double bending, double h,
                                        const Vec3& gravity, const Positions& x, const Positions& v,
                                        const std::vector<std::pair<int, Vec3>>& pins, Positions& out);
  const SparseMatrix& hinge() const { return hinge_; }

 private:
  SparseMatrix hinge_;
  std::unique_ptr<SpdSolver> solver_;
  SparseMatrix system_, coupling_;
  double key_[2] = {-1, -1};  // k_b, h of the factorization
  Eigen::VectorXd keyMass_;
  std::vector<int> keyPins_;
};

}  // namespace clothlab
