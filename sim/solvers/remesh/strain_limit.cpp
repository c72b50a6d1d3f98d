#include "sim/solvers/remesh/strain_limit.h"

#include <algorithm>
#include <cmath>

namespace clothlab {

namespace {
double lower(const StrainLimits& limits, int direction) {
  return direction == 0 ? limits.warpMin : direction == 1 ? limits.weftMin : limits.biasMin;
}
double upper(const StrainLimits& limits, int direction) {
  return direction == 0 ? limits.warpMax : direction == 1 ? limits.weftMax : limits.biasMax;
}
// A direction's two row values [m] from its stretch |F d|, scaled by sqrt(area).
double upperValue(double root, double length, const StrainLimits& limits, int direction) {
  return root * (length - 1 - upper(limits, direction));
}
double lowerValue(double root, double length, const StrainLimits& limits, int direction) {
  return root * (1 + lower(limits, direction) - length);
}
// How far the stretch `length` along a direction lies beyond its limits (negative within them).
double violationAlong(double length, const StrainLimits& limits, int direction) {
  const double strainAlong = length - 1;
  return std::max(strainAlong - upper(limits, direction), lower(limits, direction) - strainAlong);
}
}  // namespace

FaceRest faceRest(const Eigen::Vector2d& d1, const Eigen::Vector2d& d2) {
  Eigen::Matrix2d dm;
  dm.col(0) = d1;
  dm.col(1) = d2;
  return {dm.inverse(), 0.5 * dm.determinant()};
}

Eigen::Vector2d limitDirection(int direction) {
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

double FaceStrain::stretch(int direction) const { return (F * limitDirection(direction)).norm(); }

FaceStrain faceStrain(const FaceRest& rest, const Vec3& x0, const Vec3& x1, const Vec3& x2) {
  FaceStrain out;
  Eigen::Matrix<double, 3, 2> edges;
  edges.col(0) = x1 - x0;
  edges.col(1) = x2 - x0;
  out.F = edges * rest.dmInverse;
  out.g[1] = rest.dmInverse.row(0).transpose();
  out.g[2] = rest.dmInverse.row(1).transpose();
  out.g[0] = -out.g[1] - out.g[2];
  return out;
}

void faceLimitDirections(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                         std::array<LimitDirection, 4>& directions) {
  const double root = std::sqrt(rest.area);
  for (int direction = 0; direction < 4; ++direction) {
    const Eigen::Vector2d d = limitDirection(direction);
    LimitDirection& out = directions[direction];
    const Vec3 w = strain.F * d;
    out.length = w.norm();
    out.unit = out.length > 0 ? Vec3(w / out.length) : Vec3::Zero();
    for (int n = 0; n < 3; ++n) out.along(n) = strain.g[n].dot(d);
    out.upper = upperValue(root, out.length, limits, direction);
    out.lower = lowerValue(root, out.length, limits, direction);
  }
}

double faceLimitValues(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                       std::array<double, 8>& values) {
  const double root = std::sqrt(rest.area);
  double worst = 0;
  for (int direction = 0; direction < 4; ++direction) {
    const double length = strain.stretch(direction);
    values[2 * direction] = upperValue(root, length, limits, direction);
    values[2 * direction + 1] = lowerValue(root, length, limits, direction);
    worst = std::max(worst, violationAlong(length, limits, direction));
  }
  return worst;
}

RowPenalty rowPenalty(double shifted, double band) {
  if (shifted <= -band) return {};
  if (band <= 0 || shifted >= band) return {0.5 * shifted * shifted + band * band / 6, shifted, 1};
  const double from = shifted + band;
  return {from * from * from / (12 * band), from * from / (4 * band), from / (2 * band)};
}

double faceLimitViolation(const FaceStrain& strain, const StrainLimits& limits) {
  double worst = 0;
  for (int direction = 0; direction < 4; ++direction)
    worst = std::max(worst, violationAlong(strain.stretch(direction), limits, direction));
  return worst;
}

}  // namespace clothlab
