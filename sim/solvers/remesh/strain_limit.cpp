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
  FaceRest rest;
  rest.dmInverse = dm.inverse();
  rest.area = 0.5 * dm.determinant();
  rest.root = std::sqrt(rest.area);
  // g_1 and g_2 are D_m^-1's rows, g_0 = -g_1 - g_2.
  const Eigen::Vector2d g1 = rest.dmInverse.row(0).transpose(),
                        g2 = rest.dmInverse.row(1).transpose(), g0 = -g1 - g2;
  for (int direction = 0; direction < 4; ++direction) {
    const Eigen::Vector2d d = limitDirection(direction);
    rest.along[direction] = Eigen::Vector3d(g0.dot(d), g1.dot(d), g2.dot(d));
  }
  return rest;
}

void faceLimitDirections(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                         std::array<LimitDirection, 4>& directions) {
  for (int direction = 0; direction < 4; ++direction) {
    LimitDirection& out = directions[direction];
    const Vec3 w = strain.F * limitDirection(direction);
    out.length = w.norm();
    out.unit = out.length > 0 ? Vec3(w / out.length) : Vec3::Zero();
    out.along = rest.along[direction];
    out.upper = upperValue(rest.root, out.length, limits, direction);
    out.lower = lowerValue(rest.root, out.length, limits, direction);
  }
}

double faceLimitValues(const FaceRest& rest, const FaceStrain& strain, const StrainLimits& limits,
                       std::array<double, 8>& values) {
  double worst = 0;
  for (int direction = 0; direction < 4; ++direction) {
    const double length = strain.stretch(direction);
    values[2 * direction] = upperValue(rest.root, length, limits, direction);
    values[2 * direction + 1] = lowerValue(rest.root, length, limits, direction);
    worst = std::max(worst, violationAlong(length, limits, direction));
  }
  return worst;
}

double faceLimitViolation(const FaceStrain& strain, const StrainLimits& limits) {
  double worst = 0;
  for (int direction = 0; direction < 4; ++direction)
    worst = std::max(worst, violationAlong(strain.stretch(direction), limits, direction));
  return worst;
}

}  // namespace clothlab
