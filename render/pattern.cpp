#include "render/pattern.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace clothlab {

const char* patternName(ClothPattern pattern) {
  switch (pattern) {
    case ClothPattern::Checks:
      return "checks";
    case ClothPattern::Lines:
      return "lines";
    case ClothPattern::None:
      break;
  }
  return "none";
}

std::optional<ClothPattern> patternNamed(const std::string& name) {
  for (ClothPattern p : {ClothPattern::None, ClothPattern::Checks, ClothPattern::Lines})
    if (name == patternName(p)) return p;
  return std::nullopt;
}

namespace {

// A flat rest state the pattern is printed in. A cone's unfolding is not one: printed flat, the
// pattern would break along its cut, so it is printed in the rest mesh's space, as on a cloth
// without a flat rest state. Nor are several tubes' (the shader takes one radius round).
bool hasFlatRest(const ClothModel& cloth) {
  return cloth.flatCoords && cloth.flatCoords->coords.rows() == cloth.mesh.vertexCount() &&
         cloth.mesh.vertexCount() > 0 && !cloth.flatCoords->wrap.turnsDirections() &&
         cloth.flatCoords->wrap.others.empty();
}

}  // namespace

double patternExtent(const ClothModel& cloth) {
  if (hasFlatRest(cloth)) {
    const Eigen::MatrixX2d& u = cloth.flatCoords->coords;
    const Eigen::Vector2d span = u.colwise().maxCoeff() - u.colwise().minCoeff();
    const double period = cloth.flatCoords->wrap.period;
    return period > 0 ? std::max(period, span.y()) : span.maxCoeff();
  }
  const Positions& x = cloth.mesh.positions;
  return x.rows() > 0 ? (x.colwise().maxCoeff() - x.colwise().minCoeff()).maxCoeff() : 0.0;
}

PatternCoordinates patternCoordinates(const ClothModel& cloth) {
  PatternCoordinates out;
  const int n = cloth.mesh.vertexCount();
  out.extent = patternExtent(cloth);
  out.coords.reserve(3 * static_cast<size_t>(n));
  auto put = [&out](double a, double b, double c) {
    out.coords.push_back(static_cast<float>(a));
    out.coords.push_back(static_cast<float>(b));
    out.coords.push_back(static_cast<float>(c));
  };
  if (hasFlatRest(cloth)) {
    const Eigen::MatrixX2d& u = cloth.flatCoords->coords;
    if (cloth.flatCoords->wrap.period > 0) {
      out.kind = PatternCoordinates::Kind::Tube;
      out.radius = cloth.flatCoords->wrap.period / (2 * std::numbers::pi);
      for (int i = 0; i < n; ++i)
        put(out.radius * std::cos(u(i, 0) / out.radius), u(i, 1),
            out.radius * std::sin(u(i, 0) / out.radius));
    } else {
      for (int i = 0; i < n; ++i) put(u(i, 0), u(i, 1), 0);
    }
    return out;
  }
  out.kind = PatternCoordinates::Kind::Solid;
  const Positions& x = cloth.mesh.positions;
  for (int i = 0; i < n; ++i) put(x(i, 0), x(i, 1), x(i, 2));
  return out;
}

double defaultPatternSize(double extent) {
  if (!(extent > 0) || !std::isfinite(extent)) return 0.1;
  const double target = extent / 10;
  const double decade = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * decade <= target * (1 + 1e-9)) return m * decade;
  return decade;
}

double drawnPatternSize(double requested, const PatternCoordinates& pattern) {
  if (pattern.kind != PatternCoordinates::Kind::Tube || !(requested > 0)) return requested;
  const double period = 2 * std::numbers::pi * pattern.radius;
  const double cells = std::max(2.0, 2 * std::round(period / requested / 2));
  return period / cells;
}

}  // namespace clothlab
