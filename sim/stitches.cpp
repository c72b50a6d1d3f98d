#include "sim/stitches.h"

#include <algorithm>

#include "sim/solver.h"

namespace clothlab {

Eigen::VectorXd stitchGaps(const std::vector<Stitch>& stitches, const Positions& x) {
  Eigen::VectorXd gaps(static_cast<Eigen::Index>(stitches.size()));
  for (size_t k = 0; k < stitches.size(); ++k)
    gaps[static_cast<Eigen::Index>(k)] = stitchVector(stitches[k], x).norm();
  return gaps;
}

Eigen::VectorXd stitchAllowances(const Eigen::VectorXd& restGaps, double sewn) {
  return (restGaps.array() - sewn).max(0.0).matrix();
}

double projectStitches(const std::vector<Stitch>& stitches, const Eigen::VectorXd& allowance,
                       const Eigen::VectorXd& w, Positions& x) {
  double worst = 0;
  for (size_t k = 0; k < stitches.size(); ++k) {
    const Stitch& s = stitches[k];
    const Vec3 d = -stitchVector(s, x);  // from the point to the vertex
    const double gap = d.norm();
    const double excess = gap - allowance[static_cast<Eigen::Index>(k)];
    if (excess <= 0) continue;
    worst = std::max(worst, excess);
    // C = |x_v - p| - allowance, with gradient n at x_v and -(1 - t) n, -t n at x_a, x_b.
    const double weight = w[s.vertex] + (1 - s.t) * (1 - s.t) * w[s.a] + s.t * s.t * w[s.b];
    if (weight <= 0) continue;
    const Vec3 n = gap > 0 ? Vec3(d / gap) : Vec3::Zero();
    const double dl = excess / weight;
    x.row(s.vertex) -= (w[s.vertex] * dl) * n.transpose();
    x.row(s.a) += ((1 - s.t) * w[s.a] * dl) * n.transpose();
    x.row(s.b) += (s.t * w[s.b] * dl) * n.transpose();
  }
  return worst;
}

void recordStitches(const std::vector<Stitch>& stitches, const Eigen::VectorXd& allowance,
                    const Positions& x, StepStats& stats) {
  if (stitches.empty()) return;
  const Eigen::VectorXd gaps = stitchGaps(stitches, x);
  stats.extra["max_stitch_gap"] = gaps.maxCoeff();
  stats.extra["max_stitch_excess"] = std::max(0.0, (gaps - allowance).maxCoeff());
}

}  // namespace clothlab
