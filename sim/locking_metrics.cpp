#include "sim/locking_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/bending.h"
#include "sim/metrics.h"
#include "sim/simulation.h"
#include "sim/stitches.h"

namespace clothlab {

const std::vector<MetricDefinition>& lockingMetricDefinitions() {
  static const std::vector<MetricDefinition> definitions = {
      {"sag", "m", "drop of the point midway between the two pins below them (two pins only)"},
      {"tip_height", "m",
       "mean height of the vertices farthest from the pins, relative to the pins"},
      {"bending_energy", "J",
       "hinge bending energy k_b/2 sum x^T Q x (toward the shape as loaded where bending_rest is "
       "loaded; the solver's finer mesh where it has one)"},
      {"max_edge_strain", "1",
       "largest | |e|/|e0| - 1 | over mesh edges (the solver's finer mesh where it has one)"},
      {"residual", "m or 1",
       "the solver's own largest constraint error (mls-isometry: dimensionless)"},
      {"max_distance_increase", "1",
       "largest relative increase of distance from the reference vertex"},
      {"max_stitch_gap", "m", "widest stitch of a garment (cloth with stitches only)"},
      {"ms_per_step", "ms", "median wall time per step", false},
  };
  return definitions;
}

size_t lockingMetricIndex(std::string_view key) {
  const auto& definitions = lockingMetricDefinitions();
  for (size_t m = 0; m < definitions.size(); ++m)
    if (definitions[m].key == key) return m;
  throw std::out_of_range("no locking metric named " + std::string(key));
}

void MetricSummary::add(double value, double weight) {
  if (!std::isfinite(value)) return;
  lowest_ = samples_ == 0 ? value : std::min(lowest_, value);
  highest_ = samples_ == 0 ? value : std::max(highest_, value);
  sum_ += weight * value;
  weight_ += weight;
  ++samples_;
}

std::vector<MetricSummary> summarizeOverTime(const MetricSeries& series) {
  std::vector<MetricSummary> summary(series.empty() ? 0 : series.front().second.size());
  for (size_t i = 0; i < series.size(); ++i) {
    const double before = i > 0 ? series[i].first - series[i - 1].first : 0;
    const double after = i + 1 < series.size() ? series[i + 1].first - series[i].first : 0;
    const double weight = series.size() == 1 ? 1 : 0.5 * (before + after);
    for (size_t m = 0; m < summary.size() && m < series[i].second.size(); ++m)
      summary[m].add(series[i].second[m], weight);
  }
  return summary;
}

MetricProbe makeMetricProbe(const ClothModel& cloth, const std::vector<int>& pinnedVertices, const Vec3& gravity) {
  MetricProbe probe;
  const Positions& rest = cloth.mesh.positions;
  probe.up = gravity.norm() > 0 ? Vec3(-gravity.normalized()) : Vec3(0, 1, 0);
  probe.pinned = pinnedVertices;
  std::sort(probe.pinned.begin(), probe.pinned.end());
  probe.pinned.erase(std::unique(probe.pinned.begin(), probe.pinned.end()), probe.pinned.end());
  if (probe.pinned.size() == 2) {
    probe.pinA = probe.pinned[0];
    probe.pinB = probe.pinned[1];
  }
  if (!probe.pinned.empty()) {
    const int n = static_cast<int>(rest.rows());
    std::vector<double> distance(n, std::numeric_limits<double>::max());
    for (int v = 0; v < n; ++v)
      for (int p : probe.pinned) distance[v] = std::min(distance[v], (rest.row(v) - rest.row(p)).norm());
    const double largest = *std::max_element(distance.begin(), distance.end());
    for (int v = 0; v < n; ++v)
      if (distance[v] >= 0.98 * largest) probe.tip.push_back(v);
    probe.reference = probe.pinned.front();
    for (int p : probe.pinned)
      if (rest.row(p).dot(probe.up) > rest.row(probe.reference).dot(probe.up) + 1e-12) probe.reference = p;
  }
  probe.referenceDistance = restDistancesFrom(cloth.mesh, cloth.topology, probe.reference);
  std::vector<BendingRow> rows = hingeBendingRows(cloth.mesh, cloth.topology);
  probe.hinge = bendingMatrix(rows, cloth.mesh.vertexCount());
  probe.restBend = RestBend(std::move(rows), rest);
  return probe;
}

MetricProbe makeMetricProbe(const Simulation& simulation) {
  std::vector<int> pinned;
  for (const auto& pin : simulation.pins()) pinned.push_back(pin.first);
  return makeMetricProbe(simulation.cloth(), pinned, simulation.sim().gravity);
}

std::vector<double> measureLockingMetrics(const MetricProbe& probe, const ClothModel& cloth,
                                          const Positions& surface, const StepStats& last,
                                          const SimParams& sim, double msPerStep,
                                          const FineMesh* fine, const Positions* fineNodes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double sag = nan, tip = nan;
  if (probe.pinA >= 0) sag = pinnedSag(cloth.mesh, surface, probe.pinA, probe.pinB, probe.up);
  if (!probe.tip.empty())
    tip = meanHeight(surface, probe.tip, probe.up) - meanHeight(surface, probe.pinned, probe.up);
  const double residual = reportedConstraintError(last);
  // On a finer mesh, its own bending and strain at its nodes.
  const bool onFine = fine && fineNodes;
  const Positions& bent = onFine ? *fineNodes : surface;
  const RestBend* shape = restShapeFor(sim.bendingRest, onFine ? fine->restBend : probe.restBend);
  return {
      sag,
      tip,
      shape ? shape->energy(bent, sim.bending)
            : bendingEnergy(onFine ? fine->hinge : probe.hinge, sim.bending, bent),
      onFine ? fine->maxEdgeStrain(*fineNodes) : maxEdgeStrain(cloth.mesh, cloth.topology, surface),
      residual,
      maxDistanceIncrease(probe.referenceDistance, surface, probe.reference),
      cloth.stitches.empty() ? nan : stitchGaps(cloth.stitches, surface).maxCoeff(),
      msPerStep};
}

}  // namespace clothlab
