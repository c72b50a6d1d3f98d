#pragma once
// Warp, weft and bias strain limits per triangle (seed 003, "IRM18", in the directional form of
// Ma et al. 2015 it builds on; formulas in methods 3.2, 3.5 and 3.7). Building block of the
// `strain-limit-remesh` solver.
//
// A face with material (flat rest) corners u0, u1, u2 and world corners x0, x1, x2 has
//     D_m = [u1 - u0, u2 - u0],  F = [x1 - x0, x2 - x0] D_m^-1 = sum_n x_n g_n^T     (3 x 2),
// with (g_0, g_1, g_2)^T = [-1 -1; 1 0; 0 1] D_m^-1. A material direction d is stretched by
// |F d|; the cloth's warp (d = e1), weft (e2) and both bias directions ((e1 +- e2) / sqrt 2)
// each carry limits [e^min, e^max] on |F d| - 1:
//     g^max = sqrt(a) (|F d| - 1 - e^max) <= 0,   g^min = sqrt(a) (1 + e^min - |F d|) <= 0,
//     d|F d| / dx_n = (g_n . d) (F d / |F d|),
// eight inequalities per face. The directions are the cloth's own, fixed in material space, so a
// remeshed face is limited along the same warp and weft as the face it came from.
//
// Not the principal form with IRM18's inner-product reciprocal mapping (methods 3.6), which was
// built first: its limits |V_ij| (s_j - 1) turn with the principal directions V, whose rotation
// divides by s1^2 - s2^2, so on a cloth stretched about evenly (every face of a hanging sheet at
// its limits) the gradients grew without bound, the method of multipliers met no limit within 30
// Gauss-Newton solves, and the matrix failed to factorize (docs/measurements.md).
#include <Eigen/Core>
#include <array>
#include <cmath>
#include <vector>

#include "sim/mesh.h"

namespace clothlab {

// The strain limits (dimensionless: 0.01 is 1% of stretch) along the warp, the weft and the two
// bias directions.
struct StrainLimits {
  double warpMin = -0.01, warpMax = 0.01, weftMin = -0.01, weftMax = 0.01, biasMin = -0.05,
         biasMax = 0.05;
};

// A face's material data: D_m^-1, its rest area a [m^2], sqrt(a), and what the rest alone sets of
// each limit direction d's gradients: c_n = g_n . d per corner (LimitDirection::along), in
// limitDirection's order.
struct FaceRest {
  Eigen::Matrix2d dmInverse;
  double area = 0;
  double root = 0;
  std::array<Eigen::Vector3d, 4> along;
};
// From the material offsets d1 = u1 - u0 and d2 = u2 - u0 (counter-clockwise: det > 0).
FaceRest faceRest(const Eigen::Vector2d& d1, const Eigen::Vector2d& d2);

// The material direction of each limit: warp, weft, (e1 + e2) / sqrt 2, (e1 - e2) / sqrt 2.
// Inline, as the stretches below: the strain limiting's loops over every face call them in each
// Gauss-Newton solve and line-search trial.
inline Eigen::Vector2d limitDirection(int direction) {
  switch (direction) {
    case 0:
      return {1, 0};
    case 1:
      return {0, 1};
    case 2:
      return Eigen::Vector2d(1, 1) / std::sqrt(2.0);
    default:
      return Eigen::Vector2d(1, -1) / std::sqrt(2.0);
  }
}

// F = sum_n x_n g_n^T.
struct FaceStrain {
  Eigen::Matrix<double, 3, 2> F;
  // The stretch |F d| along the warp (0), the weft (1) and the bias directions (2, 3).
  double stretch(int direction) const { return (F * limitDirection(direction)).norm(); }
};
inline FaceStrain faceStrain(const FaceRest& rest, const Vec3& x0, const Vec3& x1, const Vec3& x2) {
  Eigen::Matrix<double, 3, 2> edges;
  edges.col(0) = x1 - x0;
  edges.col(1) = x2 - x0;
  return {edges * rest.dmInverse};
}

// One limit direction d of a face and its two inequalities g(x) <= 0 [m], the upper limit's and
// the lower one's. With c_n = g_n . d and u = F d / |F d| their gradients share one form,
//     dg^max/dx_n = sqrt(a) c_n u,   dg^min/dx_n = -sqrt(a) c_n u,
// and the stretch's curvature is d^2 |F d| / dx_n dx_m = c_n c_m (I - u u^T) / |F d|, so the
// upper row carries sqrt(a) times it and the lower one minus that.
struct LimitDirection {
  double length = 0;            // |F d|
  Vec3 unit;                    // u (zero when F d is)
  Eigen::Vector3d along;        // c_n per corner (the rest alone sets it)
  double upper = 0, lower = 0;  // g^max and g^min
};
// The face's four directions: warp, weft and the two bias directions (limitDirection's order).
void faceLimitDirections(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                         std::array<LimitDirection, 4>& directions);

// The eight rows' values alone, for each direction its upper limit's, then its lower one's;
// returns the face's faceLimitViolation from the same stretches.
double faceLimitValues(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                       std::array<double, 8>& values);

// The method of multipliers' penalty on one inequality row, as a function of its shifted value
// s = g + lambda / mu: the plain max(0, s)^2 / 2, or, with band > 0, the same smoothed over
// [-band, band] (a cubic there: (s + band)^3 / (12 band); s^2 / 2 + band^2 / 6 above it). Its
// slope is the row's force over mu and the multiplier's update (lambda = mu * slope); its
// curvature weighs the row's Gauss-Newton term.
//
// Why smoothed: with the plain penalty a row gets no curvature until it pulls, so the
// Gauss-Newton model of a face near its limit is flat in the row's direction. On a refined or
// crumpled cloth in contact, where hundreds of faces lie at their limits, each step then ran into
// rows it had not modelled, the line search cut it to 1/16 to 1/128, and the 30 solves of a step
// ran out: `torus-drape` under this solver ended 119 of 300 steps above the tolerance without
// remeshing, a sheet on a box 55 to 163 of 400 (docs/measurements.md). Smoothed, a row starts
// pulling a band before its limit, gently, and the model sees it coming. At the fixed point of the
// multipliers a row that carries little force sits up to the band inside its limit, so the cloth
// uses less of the give its limits allow (on `woven-hang` 0.5 to 0.8% instead of 1% along warp
// and weft).
struct RowPenalty {
  double value = 0, slope = 0, curvature = 0;
};
inline RowPenalty rowPenalty(double shifted, double band) {
  if (shifted <= -band) return {};
  if (band <= 0 || shifted >= band) return {0.5 * shifted * shifted + band * band / 6, shifted, 1};
  const double from = shifted + band;
  return {from * from * from / (12 * band), from * from / (4 * band), from / (2 * band)};
}

// How far the face's stretches lie beyond their limits, dimensionless (0 within them).
double faceLimitViolation(const FaceStrain& strain, const StrainLimits& limits);

}  // namespace clothlab
