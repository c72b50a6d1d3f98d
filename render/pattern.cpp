#include "render/pattern.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

// A flat rest state the pattern is printed in.
bool hasFlatRest(const ClothModel& cloth) {
  return cloth.flatCoords && cloth.flatCoords->coords.rows() == cloth.mesh.vertexCount() &&
         cloth.mesh.vertexCount() > 0;
}

}  // namespace

double patternExtent(const ClothModel& cloth) {
  // A cloth in several pieces: the largest piece's rest shape. A garment's panels may lie far
  // apart (as laid out to be sewn, or unfolded beside each other), and a tenth of the whole
  // would give a sleeve two cells round.
  const Positions& x = cloth.mesh.positions;
  const MeshTopology& topology = cloth.topology;
  if (topology.componentCount > 1 &&
      topology.vertexComponent.size() == static_cast<size_t>(x.rows())) {
    std::vector<Vec3> lo(topology.componentCount,
                         Vec3::Constant(std::numeric_limits<double>::infinity())),
        hi(topology.componentCount, Vec3::Constant(-std::numeric_limits<double>::infinity()));
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const int piece = topology.vertexComponent[static_cast<size_t>(i)];
      if (piece < 0) continue;
      lo[piece] = lo[piece].cwiseMin(x.row(i).transpose());
      hi[piece] = hi[piece].cwiseMax(x.row(i).transpose());
    }
    double largest = 0;
    for (int piece = 0; piece < topology.componentCount; ++piece)
      if (lo[piece].x() <= hi[piece].x())
        largest = std::max(largest, (hi[piece] - lo[piece]).maxCoeff());
    return largest;
  }
  if (hasFlatRest(cloth)) {
    const MaterialWrap& wrap = cloth.flatCoords->wrap;
    const Eigen::MatrixX2d& u = cloth.flatCoords->coords;
    const Eigen::Vector2d span = u.colwise().maxCoeff() - u.colwise().minCoeff();
    if (wrap.rounds().empty()) return span.maxCoeff();
    // A tube: once round it, or along it. A cone's sector is not its size, nor is the plane
    // several pieces are laid apart in (where the topology did not size them above): the rest
    // shape's.
    if (wrap.period > 0 && wrap.others.empty()) return std::max(wrap.period, span.y());
  }
  return x.rows() > 0 ? (x.colwise().maxCoeff() - x.colwise().minCoeff()).maxCoeff() : 0.0;
}

namespace {

// The pattern's coordinates of points of `cloth` at `u` in its flat rest state (flatCoords's
// frame), with rest positions `rest` for a pattern in space; the rounds are the cloth's, each
// cone's sector read from the cloth's own vertices.
PatternCoordinates coordinatesAt(const ClothModel& cloth, const Eigen::MatrixX2d& u,
                                 const Positions& rest) {
  PatternCoordinates out;
  const Eigen::Index n = u.rows();
  out.coords.reserve(4 * static_cast<size_t>(n));
  auto put = [&out](double a, double b, double c, int round) {
    out.coords.push_back(static_cast<float>(a));
    out.coords.push_back(static_cast<float>(b));
    out.coords.push_back(static_cast<float>(c));
    out.coords.push_back(static_cast<float>(round));
  };
  const std::vector<const MaterialWrap*> wraps =
      hasFlatRest(cloth) ? cloth.flatCoords->wrap.rounds() : std::vector<const MaterialWrap*>{};
  if (hasFlatRest(cloth) && wraps.size() <= static_cast<size_t>(kMaxPatternRounds)) {
    const MaterialWrap& wrap = cloth.flatCoords->wrap;
    // Each point's round: 1 + its wrap's place in `wraps`, 0 where none holds.
    auto roundsOf = [&](const Eigen::MatrixX2d& points) {
      std::vector<int> roundOf(static_cast<size_t>(points.rows()), 0);
      for (Eigen::Index i = 0; i < points.rows(); ++i) {
        const Eigen::Vector2d ui = points.row(i).transpose();
        if (!wrap.holds(ui)) continue;
        const auto it = std::find(wraps.begin(), wraps.end(), &wrap.at(ui));
        if (it != wraps.end()) roundOf[i] = 1 + static_cast<int>(it - wraps.begin());
      }
      return roundOf;
    };
    const Eigen::MatrixX2d& vertices = cloth.flatCoords->coords;
    const std::vector<int> vertexRound = roundsOf(vertices);
    const std::vector<int> roundOf = &u == &vertices ? vertexRound : roundsOf(u);
    // A cone's points' angles from its cut round the apex are taken from the least of its
    // vertices' (its sector's first side), so the vertices on that side are at 0, not at 2 pi by
    // a rounding.
    std::vector<double> first(wraps.size(), 0.0);
    for (size_t k = 0; k < wraps.size(); ++k) {
      const MaterialWrap& w = *wraps[k];
      PatternRound round;
      if (w.period > 0) {
        round.period = w.period;
      } else {
        // The sector's first side: the least angle from the cut round the apex of its vertices
        // (the apex itself has none).
        round.angle = std::abs(w.angle);
        round.apex = w.apex;
        double least = 2 * std::numbers::pi;
        for (Eigen::Index i = 0; i < vertices.rows(); ++i)
          if (vertexRound[i] == static_cast<int>(k) + 1 &&
              (vertices.row(i).transpose() - w.apex).norm() > 1e-12)
            least = std::min(least, w.angleFromCut(vertices.row(i).transpose()));
        first[k] = least < 2 * std::numbers::pi ? least : 0.0;
        round.from = w.cut + first[k];
      }
      out.rounds.push_back(round);
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      if (roundOf[i] == 0) {
        put(u(i, 0), u(i, 1), 0, 0);
        continue;
      }
      const PatternRound& round = out.rounds[roundOf[i] - 1];
      if (round.period > 0) {
        const double r = round.period / (2 * std::numbers::pi);
        put(r * std::cos(u(i, 0) / r), u(i, 1), r * std::sin(u(i, 0) / r), roundOf[i]);
      } else {
        const double r = (u.row(i).transpose() - round.apex).norm();
        // From the first side; a point added before it (beside the cut, seen from a vertex on
        // the last side) lies at a negative angle, which is its place once round. A vertex on
        // the first side is at 0, not a rounding below it.
        double a =
            wraps[roundOf[i] - 1]->angleFromCut(u.row(i).transpose()) - first[roundOf[i] - 1];
        if (a < 0 && a > -1e-9) a = 0;
        const double phi = 2 * std::numbers::pi * a / round.angle;
        put(r * std::cos(phi), r * std::sin(phi), 0, roundOf[i]);
      }
    }
    return out;
  }
  out.kind = PatternCoordinates::Kind::Solid;
  for (Eigen::Index i = 0; i < n; ++i) put(rest(i, 0), rest(i, 1), rest(i, 2), 0);
  return out;
}

}  // namespace

PatternCoordinates patternCoordinates(const ClothModel& cloth) {
  if (hasFlatRest(cloth))
    return coordinatesAt(cloth, cloth.flatCoords->coords, cloth.mesh.positions);
  return coordinatesAt(cloth, Eigen::MatrixX2d::Zero(cloth.mesh.vertexCount(), 2),
                       cloth.mesh.positions);
}

PatternCoordinates patternCoordinates(const ClothModel& cloth, const FineMesh& fine) {
  return coordinatesAt(cloth, fine.flat, fine.rest);
}

double defaultPatternSize(double extent) {
  if (!(extent > 0) || !std::isfinite(extent)) return 0.1;
  const double target = extent / 10;
  const double decade = std::pow(10.0, std::floor(std::log10(target)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * decade <= target * (1 + 1e-9)) return m * decade;
  return decade;
}

double drawnPatternSize(double requested, const PatternRound& round) {
  if (!(round.period > 0) || !(requested > 0)) return requested;
  const double cells = std::max(2.0, 2 * std::round(round.period / requested / 2));
  return round.period / cells;
}

}  // namespace clothlab
