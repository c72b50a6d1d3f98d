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
//
// The shear gap g = s1 - s2 >= 0, the difference of the principal values of F^T F,
//     g = sqrt((C11 - C22)^2 + 4 C12^2),   dg/dx_j = (2 / g) F [C11 - C22, 2 C12; 2 C12, C22 - C11] a_ij,
// has the same zero set together with c_tr (s1 + s2 = 2 and s1 = s2), and spans the same rows:
// grad c_det = (tr C / 2) grad c_tr - (g / 2) grad g. Linearized, the pair (c_tr, c_det) asks a
// pure shear (s = 1 +- d, c_det = -d^2) to shrink only by half (its zero is a double root), the
// pair (c_tr, g) asks it to vanish (g is homogeneous of degree one in the deviator of F^T F; it
// bounds only the deviator's size, so a step may leave some shear along other axes). At g = 0
// its gradient has no direction. The softened gap with softening e > 0,
//     g_e = sqrt(g^2 + e^2) - e,   dg_e/dx_j = (2 / sqrt(g^2 + e^2)) F [...] a_ij,
// is smooth: like g where g >> e, like g^2 / (2 e) (a double root, as c_det) where g << e.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/material_wrap.h"
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
  MaterialWrap wrap;  // how the coordinates close round a tube (none: a sheet)
  // Per vertex, 1: that sample takes the 2-ring whatever `rings` says (MlsSolver: lone pins).
  std::vector<char> twoRingSamples;
  // The most neighbours all samples together may have: beyond it the build stops with an error
  // (a material radius spanning a fine sheet would not fit in memory).
  size_t maxNeighbours = SIZE_MAX;
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

Mat32 mlsDeformationGradient(const MlsNeighbourhoods& n, int sample, const Positions& x);

// c (2 x sampleCount): row 0 trace constraints, row 1 determinant constraints.
Eigen::Matrix2Xd mlsConstraints(const MlsNeighbourhoods& n, const Positions& x);

// Which function of F^T F: the two constraints, or the (softened) shear gap g_e (above).
enum class MlsRow { Trace = 0, Determinant = 1, ShearGap = 2 };

// The value of `row` at the deformation gradient f (c_tr, c_det or g_e; `softening` e >= 0 is
// used by ShearGap only) and its derivative d row / d F (3 x 2): 2 F, 2 F adj(F^T F), or
// (2 / sqrt(g^2 + e^2)) F [p, q; q, -p] with p = C11 - C22, q = 2 C12 (zero where e = 0 and
// g <= 1e-12, where it has no direction).
struct MlsRowEvaluation {
  double value = 0;
  Mat32 derivative = Mat32::Zero();
};
MlsRowEvaluation mlsRow(const Mat32& f, MlsRow row, double softening = 0);

// Gradient of `row` of `sample` with respect to the positions of the sample and its neighbours:
// one row per involved sample, in the order [sample, neighbours...] (particle indices in
// `particles`).
void mlsConstraintGradient(const MlsNeighbourhoods& n, int sample, const Positions& x, MlsRow row,
                           std::vector<int>& particles, Eigen::MatrixX3d& gradient, double softening = 0);

// A Hessian with respect to the columns f1, f2 of F. block(a_j, a_l) is d^2 c / (d d_j d d_l)
// for neighbour offsets d_j, d_l with coefficients a_j, a_l (bilinear, so sums of coefficients
// give the centre's blocks).
struct MetricHessian {
  Eigen::Matrix3d h11, h22, h12;  // d^2/df1^2, d^2/df2^2, d^2/(df1 df2)
  Eigen::Matrix3d block(const Eigen::Vector2d& a, const Eigen::Vector2d& b) const {
    return a[0] * b[0] * h11 + a[1] * b[1] * h22 + a[0] * b[1] * h12 + a[1] * b[0] * h12.transpose();
  }
};
// The determinant constraint's (methods 2.4): H11 = 2|f2|^2 I - 2 f2 f2^T,
// H22 = 2|f1|^2 I - 2 f1 f1^T, H12 = 4 f1 f2^T - 2 f2 f1^T - 2 (f1.f2) I.
MetricHessian mlsDeterminantHessian(const Mat32& f);

// Hessian block d^2 c / (d x_j d x_l) of the trace (2 (a_ij . a_il) I) or determinant
// constraint for two neighbours j, l of `sample` (by local index into the sample's neighbour
// list).
Eigen::Matrix3d mlsHessianBlock(const MlsNeighbourhoods& n, int sample, const Positions& x, MlsRow row,
                                int localJ, int localL);

}  // namespace clothlab
