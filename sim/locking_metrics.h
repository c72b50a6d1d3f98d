#pragma once
// The locking metrics of compare mode, one definition shared by the viewer, `clothlab-cli
// compare` and the tests. Reference points are chosen once from the rest mesh and the pins at the
// start of a run (MetricProbe), so every solver and mesh variant of a scene is measured alike.
//
//   sag              [m]  how far the point that starts midway between the two pinned vertices
//                         has dropped below the pins' mean height (metrics.h pinnedSag); for
//                         scenes with exactly two pinned vertices
//   tip_height       [m]  mean height of the tip, relative to the pins' mean height: the vertices
//                         whose rest distance to the nearest pin is at least 98% of the largest
//                         such distance (the free edge of a cantilever); needs a pin
//   bending_energy   [J]  k_b/2 sum_d x_d^T Q x_d with the hinge Q of the rest mesh, the energy of
//                         bending toward flat; where the simulation bends toward the cloth's
//                         shape as loaded (bending_rest "loaded"), that energy instead
//                         (sim/bending.h RestBend::energy), zero in the shape as loaded; where
//                         the solver simulates on a finer mesh, that mesh's own (FineMesh::hinge,
//                         restBend) at its nodes
//   max_edge_strain  [1]  largest | |e|/|e0| - 1 | over the mesh edges; where the solver
//                         simulates on a finer mesh (Solver::fineMesh, strain-limit-remesh),
//                         over that mesh's edges against their material lengths (the cloth's
//                         own edges' chords cut across its folds and read as compression)
//   residual       [m|1]  the solver's own: mls-isometry's largest |c| (dimensionless), else the
//                         largest constraint error [m]
//   max_distance_increase [1]  largest relative increase of the distance from the reference
//                         vertex (the highest pinned vertex, else vertex 0) to any other vertex
//                         over its rest geodesic distance (CKV19's shear test)
//   max_stitch_gap   [m]  the widest of a garment's stitches (sim/stitches.h); cloth with stitches
//   ms_per_step     [ms]  median wall time of the steps so far
// Heights are along "up", the direction opposite gravity. A metric that does not apply is NaN.
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/bending.h"
#include "sim/linear/spd_solver.h"
#include "sim/mesh.h"
#include "sim/solver.h"

namespace clothlab {

class Simulation;

struct MetricDefinition {
  std::string key, unit, meaning;
  // Measured on a state, so averaged over states by `compare --average` and the viewer's recent
  // means; false: a statistic of the run so far (ms_per_step), shown as it is.
  bool ofState = true;
};
const std::vector<MetricDefinition>& lockingMetricDefinitions();
// The position of `key` in lockingMetricDefinitions(); throws std::out_of_range for an unknown key.
size_t lockingMetricIndex(std::string_view key);

struct MetricProbe {
  Vec3 up{0, 1, 0};
  int pinA = -1, pinB = -1;  // sag: the two pinned vertices (scenes with exactly two)
  std::vector<int> pinned;   // the pinned vertices
  std::vector<int> tip;      // tip_height: the vertices farthest from the pins at rest
  int reference = 0;         // max_distance_increase: the highest pinned vertex, else 0
  Eigen::VectorXd referenceDistance;  // the rest distances from `reference` (restDistancesFrom)
  SparseMatrix hinge;        // bending_energy toward flat
  RestBend restBend;         // bending_energy toward the shape as loaded: the hinge rows
};
MetricProbe makeMetricProbe(const ClothModel& cloth, const std::vector<int>& pinnedVertices, const Vec3& gravity);
// The probe of a simulation as it stands (its cloth, its pins now, its gravity).
MetricProbe makeMetricProbe(const Simulation& simulation);

// One metric over several measurements (compare --average, the viewer's recent means): its mean,
// lowest and highest value, leaving out the measurements where it does not apply (NaN). NaN
// where none had it.
// Each measurement counts by its `weight` in the mean (1: a plain mean).
class MetricSummary {
 public:
  void add(double value, double weight = 1);
  int samples() const { return samples_; }
  double mean() const { return samples_ > 0 ? sum_ / weight_ : nan(); }
  double lowest() const { return samples_ > 0 ? lowest_ : nan(); }
  double highest() const { return samples_ > 0 ? highest_ : nan(); }

 private:
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  double sum_ = 0, weight_ = 0, lowest_ = 0, highest_ = 0;
  int samples_ = 0;
};

// Measurements of every metric (lockingMetricDefinitions' order) at increasing simulated times.
using MetricSeries = std::deque<std::pair<double, std::vector<double>>>;
// Each metric of `series` averaged over the time it spans: a measurement weighs half the time to
// the one before it plus half the time to the one after it (a lone one weighs 1). The viewer
// measures on a clock of wall time while the panes' speed varies (a slow step in contact, an
// edit), so its measurements lie unevenly in simulated time: a plain mean would count a slow
// stretch of the run several times over.
std::vector<MetricSummary> summarizeOverTime(const MetricSeries& series);

// Values in the order of lockingMetricDefinitions(); `sim` gives the bending's stiffness and its
// rest shape; `fine` and `fineNodes` the finer mesh the solver simulates on and its nodes'
// positions, where it has one.
std::vector<double> measureLockingMetrics(const MetricProbe& probe, const ClothModel& cloth,
                                          const Positions& surface, const StepStats& last,
                                          const SimParams& sim, double msPerStep,
                                          const FineMesh* fine = nullptr,
                                          const Positions* fineNodes = nullptr);

}  // namespace clothlab
