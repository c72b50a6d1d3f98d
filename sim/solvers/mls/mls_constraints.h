#pragma once
// Meshless isometry constraints on moving-least-squares strain (Chen, Kry, Vouga 2019; formulas
// in methods 2.2-2.4). Building block of the `mls-isometry` solver.
//
// Samples are mesh vertices with material (flat rest) coordinates u_i. For a neighbourhood N_i
// with weights w_ij, the MLS deformation gradient is
//     F_i = sum_j (x_j - x_i) a_ij^T,   a_ij = w_ij (U_i W_i U_i^T)^-1 (u_j - u_i)   (3 x 2),
// the weighted least-squares fit of x_j - x_i ~ F (u_j - u_i). Two constraints per sample,
//     c_tr  = tr(F^T F) - 2 = 0,   c_det = det(F^T F) - 1 = 0,
// hold both eigenvalues of F^T F at 1 (Green strain zero). Gradients (methods 2.4):
//     dc_tr/dx_j = 2 F a_ij,  dc_det/dx_j = 2 F adj(F^T F) a_ij,  dc/dx_i = -sum_j dc/dx_j.
// At rest F^T F = I and the two gradients coincide (the constraint Jacobian loses rank there).
#include <Eigen/Core>
#include <string>
#include <vector>

#include "sim/mesh.h"
#include "sim/result.h"

namespace clothlab {

enum class MlsWeighting { Uniform, Mass };

struct MlsNeighbourhoods {
  // Neighbours of sample i: entries [start[i], start[i+1]) of neighbour / coefficient.
  std::vector<int> start;
  std::vector<int> neighbour;
  std::vector<Eigen::Vector2d> coefficient;  // a_ij [1/m]
  int sampleCount() const { return static_cast<int>(start.size()) - 1; }
};

struct MlsNeighbourhoodOptions {
  int rings = 1;         // graph distance on the mesh (1 or 2), used when radius == 0
  double radius = 0;     // > 0: every sample within this material distance [m]
  MlsWeighting weighting = MlsWeighting::Uniform;
  double periodU = 0;    // > 0: the first material coordinate is periodic (a closed tube) [m]
};

// Neighbourhoods by options (see above); `mass` per vertex is used only for MlsWeighting::Mass.
// Fails, naming the sample, when a neighbourhood cannot define F.
Result<MlsNeighbourhoods> buildMlsNeighbourhoods(const TriangleMesh& mesh, const MeshTopology& topology,
                                                 const Eigen::MatrixX2d& material,
                                                 const MlsNeighbourhoodOptions& options,
                                                 const Eigen::VectorXd& mass);

// Neighbourhoods of graph distance `rings` (1 or 2) on the mesh. Weights uniform or the
// neighbour's mass (`mass`, per vertex, used only for MlsWeighting::Mass). Fails, naming the
// sample, when a neighbourhood cannot define F (fewer than two non-collinear offsets).
Result<MlsNeighbourhoods> buildMlsNeighbourhoods(const TriangleMesh& mesh, const MeshTopology& topology,
                                                 const Eigen::MatrixX2d& material, int rings,
                                                 MlsWeighting weighting, const Eigen::VectorXd& mass);

using Mat32 = Eigen::Matrix<double, 3, 2>;

// u_j - u_i, with the first coordinate wrapped into [-period/2, period/2] when period > 0.
Eigen::Vector2d materialOffset(const Eigen::MatrixX2d& u, int i, int j, double period);

Mat32 mlsDeformationGradient(const MlsNeighbourhoods& n, int sample, const Positions& x);

// c (2 x sampleCount): row 0 trace constraints, row 1 determinant constraints.
Eigen::Matrix2Xd mlsConstraints(const MlsNeighbourhoods& n, const Positions& x);

// Gradient of the trace (which = 0) or determinant (which = 1) constraint of `sample` with
// respect to the positions of the sample and its neighbours: one row per involved sample, in
// the order [sample, neighbours...] (particle indices in `particles`).
void mlsConstraintGradient(const MlsNeighbourhoods& n, int sample, const Positions& x, int which,
                           std::vector<int>& particles, Eigen::MatrixX3d& gradient);

// The determinant constraint's Hessian with respect to the columns f1, f2 of F (methods 2.4):
// H11 = 2|f2|^2 I - 2 f2 f2^T, H22 = 2|f1|^2 I - 2 f1 f1^T, H12 = 4 f1 f2^T - 2 f2 f1^T - 2 (f1.f2) I.
// block(a_j, a_l) is d^2 c_det / (d d_j d d_l) for neighbour offsets d_j, d_l with coefficients
// a_j, a_l (bilinear, so sums of coefficients give the centre's blocks).
struct DeterminantHessian {
  Eigen::Matrix3d h11, h22, h12;
  Eigen::Matrix3d block(const Eigen::Vector2d& a, const Eigen::Vector2d& b) const {
    return a[0] * b[0] * h11 + a[1] * b[1] * h22 + a[0] * b[1] * h12 + a[1] * b[0] * h12.transpose();
  }
};
DeterminantHessian mlsDeterminantHessian(const Mat32& f);

// Hessian block d^2 c_det / (d x_j d x_l) for two neighbours j, l of `sample` (by local index
// into the sample's neighbour list), methods 2.4. The trace constraint's is 2 (a_ij . a_il) I.
Eigen::Matrix3d mlsDeterminantHessianBlock(const MlsNeighbourhoods& n, int sample, const Positions& x,
                                           int localJ, int localL);

}  // namespace clothlab
