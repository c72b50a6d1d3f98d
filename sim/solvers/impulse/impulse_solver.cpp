#include "sim/solvers/impulse/impulse_solver.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "sim/air.h"
#include "sim/alongside.h"
#include "sim/bending.h"
#include "sim/format.h"
#include "sim/grab.h"  // kGrabPushFloor
#include "sim/linear/added_rows.h"
#include "sim/metrics.h"
#include "sim/self_collision.h"
#include "sim/steps_in_progress.h"
#include "sim/stitches.h"
#include "sim/timing.h"

namespace clothlab {

const ParamTable<ImpulseParams>& ImpulseParams::table() {
  static const ParamTable<ImpulseParams> table = {
      {"tolerance", "m", "largest position constraint error accepted", &ImpulseParams::tolerance,
       1e-10, 0.1, true},
      {"max_iterations", "", "cap on position solves per step", &ImpulseParams::maxIterations, 1,
       1000, true},
      {"regularization", "", "diagonal shift relative to max diag(A)",
       &ImpulseParams::regularization, 0, 0.01, false},
      {"backtrack_halvings", "", "halvings of a correction that increased the error",
       &ImpulseParams::backtrackHalvings, 0, 30, false},
      {"linear_solver", "", "sparse factorization", &ImpulseParams::linearSolver, 0, 0, false,
       {"auto", "cholmod", "eigen-ldlt"}},
      {"boundary_constraints", "", "nonconforming boundary constraints",
       &ImpulseParams::boundaryConstraints},
      {"max_speed", "m/s", "speed treated as divergence", &ImpulseParams::maxSpeed, 1, 1e6, true},
      {"max_refactorizations", "", "re-linearizations per step when the position pass stalls",
       &ImpulseParams::maxRefactorizations, 0, 20, false},
      {"refactorization_shift_growth", "", "factor by which each re-linearization's diagonal shift grows",
       &ImpulseParams::refactorizationShiftGrowth, 1, 1e4, true},
      {"slow_progress_gain", "", "re-linearize when a correction cuts the squared error by less than this fraction",
       &ImpulseParams::slowProgressGain, 0, 0.9, false},
      {"contact_rounds", "", "position passes per step, the later ones holding points the contacts put back",
       &ImpulseParams::contactRounds, 1, 20, false},
      {"hold_pair_corrections", "", "later passes also hold points moved by mesh obstacles' features and self-collision",
       &ImpulseParams::holdPairCorrections},
      {"hold_feature_corrections", "", "later passes hold points moved by mesh obstacles' sharp features",
       &ImpulseParams::holdFeatureCorrections},
      {"parallel_forces", "", "forces and contact prediction on a second thread while A is factorized",
       &ImpulseParams::parallelForces},
      {"skip_idle_factorization", "", "after a step that needed no impulse, factorize A only if one is needed",
       &ImpulseParams::skipIdleFactorization},
      {"geometric_stiffness", "", "re-linearizations make particles heavier by their rows' impulses (lumped geometric stiffness)",
       &ImpulseParams::geometricStiffness, 0, 10, false},
      {"local_relinearization", "", "re-linearize only around the rows above the tolerance while that pays",
       &ImpulseParams::localRelinearization},
      {"nonconforming_damping", "1/s", "damping of nonconforming (zig-zag) motion",
       &ImpulseParams::nonconformingDamping, 0, 1e4, false},
      {"nonconforming_stiffness", "", "bending_model surface: stiffness of nonconforming shapes, in k_b / (mean edge)^2",
       &ImpulseParams::nonconformingStiffness, 0, 1e4, false},
      {"collision_transfer", "", "contact corrections to NC particles",
       &ImpulseParams::collisionTransfer, 0, 0, false, {"midpoint", "bbt"}},
      {"bending_model", "", "bending energy: Crouzeix-Raviart on the particles, or the hinges of the surface drawn",
       &ImpulseParams::bendingModel, 0, 0, false, {"crouzeix-raviart", "surface"}},
      {"feature_contacts", "", "the velocity pass holds the points mesh features pushed as contacts with friction",
       &ImpulseParams::featureContacts},
  };
  return table;
}

namespace {

// Gauss-Seidel passes of the stitches over the surface's preview (stitches meeting at a corner of
// a garment pull on the same vertices).
constexpr int kStitchPasses = 4;

// The velocity pass is skipped where no row's rate of change, over a step, exceeds this fraction
// of the position tolerance (|J v| h): the impulses would be zero within rounding. Positions
// drift by no more than that per step, and a position pass puts them back past the tolerance.
constexpr double kIdleVelocityError = 1e-3;

// Local re-linearizations (ImpulseParams::localRelinearization): the rows above the tolerance
// and kLocalRings rings of particles around them move; not when that is more than kLocalMaxShare
// of all rows; one pays when its first correction, taken whole, cuts the squared error to
// kLocalFirstGain of what it was or less; one that does not pay is followed by one with twice
// the rings, up to kLocalMaxRings; a correction with the global factor that leaves fewer
// than kLocalSwitchShare of the rows above the tolerance switches to them (measured on
// `sphere-drop`, `hanging` and `corners-fine`: docs/measurements.md, "Local re-linearizations").
constexpr int kLocalRings = 3;
constexpr int kLocalMaxRings = 24;
constexpr double kLocalMaxShare = 0.5;
constexpr double kLocalFirstGain = 0.5;
constexpr double kLocalSwitchShare = 0.02;

// After the step's factor has failed as the first correction of kStartRejectionsToSkip steps in a
// row (every halving of it rejected), the next steps do not try it and go straight to what follows
// a failure (the masked correction below, or a re-linearization): 1, then twice as many after each
// further failure, up to kMaxStartSkips; one correction it takes resets the count and the run
// (measured on `sphere-drop` at 100 x 100 and 60 x 60 vertices, where it fails in 155 of 160 and
// in 9 of 54 contact steps: docs/measurements.md, "The step's factor in contact").
constexpr int kStartRejectionsToSkip = 2;
constexpr int kMaxStartSkips = 16;

// Where the step's factor fails (or is skipped), the pass tries it once more with the rows above
// kMaskedRowsFactor times the tolerance left out of the right-hand side: the errors the contact
// response leaves at the preview are a few hundred large ones the factor cannot reduce, beside
// thousands of small ones it can (second-order errors of the sheet's motion). Taken when it
// lowers the squared error of the rows it aims at; the large ones, a little larger for it, are
// then left to local re-linearizations (docs/measurements.md, "The step's factor in contact").
constexpr double kMaskedRowsFactor = 10;

// Rounds of the velocity pass with contact rows (contactVelocityPass): each after the first lets
// go of the points whose normal impulse pulled and sets sliding those whose friction exceeded its
// bound.
constexpr int kContactRounds = 4;

// Upper triangle of a symmetric sparse matrix.
SparseMatrix upperOf(const SparseMatrix& m) {
  SparseMatrix upper = m.triangularView<Eigen::Upper>();
  upper.makeCompressed();
  return upper;
}

// Factorizes matrix + shift * max diag * I (diagonalValue: where its diagonal entries are stored).
// The shift grows (x100, three tries) while the matrix is not positive definite, then the back
// end's indefinite fallback is tried.
std::optional<std::string> factorizeShifted(SparseMatrix& matrix,
                                            const std::vector<int>& diagonalValue,
                                            SpdSolver& factor, double baseShift, double& usedShift,
                                            double* absoluteShift = nullptr) {
  double* values = matrix.valuePtr();
  double maxDiagonal = 0;
  std::vector<double> diagonal(diagonalValue.size());
  for (size_t r = 0; r < diagonalValue.size(); ++r) {
    diagonal[r] = values[diagonalValue[r]];
    maxDiagonal = std::max(maxDiagonal, diagonal[r]);
  }
  const double grow = std::max(baseShift, 1e-8);
  const double shifts[3] = {baseShift, grow * 1e2, grow * 1e4};
  std::string tried;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && !factor.useIndefiniteFallback()) break;
    for (double shift : shifts) {
      for (size_t r = 0; r < diagonalValue.size(); ++r)
        values[diagonalValue[r]] = diagonal[r] + shift * maxDiagonal;
      std::string message;
      if (factor.factorize(matrix, &message) == SpdSolver::Status::Ok) {
        usedShift = shift;
        if (absoluteShift) *absoluteShift = shift * maxDiagonal;
        return std::nullopt;
      }
      tried += (tried.empty() ? "" : "; ") + factor.name() + " with relative shift " +
               nlohmann::json(shift).dump() + " (" + message + ")";
    }
  }
  return "factorization of the constraint matrix failed; tried " + tried;
}

struct LinearRow {
  double target = 0;  // [m]
  int axis = 0;
  int pin = -1;       // index into the pin list, or -1 for the grab
  bool grab = false;  // the grab is pulled, but not counted in convergence and errors
  bool contact = false;  // holds a surface vertex on an obstacle along its normal (target: n . p)
  double offset = 0;  // a pin's row: its triangle's prediction less the vertex, when set [m]
};

// Constraint rows as lists of (particle, gradient) slots (J), with J v and v += K J^T p.
struct SlotRows {
  std::vector<int> rowStart{0};  // slots of row r: [rowStart[r], rowStart[r+1])
  std::vector<int> slotParticle;
  std::vector<Vec3> slotGradient;  // dC_r / dx_particle

  int rowCount() const { return static_cast<int>(rowStart.size()) - 1; }
  // (J v)_r
  double rowVelocity(int r, const Positions& v) const {
    double value = 0;
    for (int s = rowStart[r]; s < rowStart[r + 1]; ++s)
      value += slotGradient[s].dot(v.row(slotParticle[s]).transpose());
    return value;
  }
  // J v for every row.
  void velocityErrors(const Positions& v, Eigen::VectorXd& c) const {
    c.resize(rowCount());
    for (int r = 0; r < rowCount(); ++r) c[r] = rowVelocity(r, v);
  }
  // v += K J^T (magnitude e_r)
  void applyImpulse(int r, double magnitude, const Eigen::VectorXd& inverseMass,
                    Positions& v) const {
    if (magnitude == 0) return;
    for (int s = rowStart[r]; s < rowStart[r + 1]; ++s) {
      const int particle = slotParticle[s];
      v.row(particle) += (inverseMass[particle] * magnitude) * slotGradient[s].transpose();
    }
  }
  // v += scale * K J^T p
  void applyImpulses(const Eigen::VectorXd& p, double scale, const Eigen::VectorXd& inverseMass,
                     Positions& v) const {
    for (int r = 0; r < rowCount(); ++r) applyImpulse(r, scale * p[r], inverseMass, v);
  }
};

// The constraint rows, the fixed pattern of A with the value slot of every particle-local
// contribution, and A's factorization: what a pass with contact rows sets aside and puts back as
// a whole.
struct RowStructure : SlotRows {
  // Rows: distance rows first, then linear rows (pins, grab, contacts).
  std::vector<LinearRow> linearRows;  // row distanceRows + i
  int distanceRows = 0;

  std::vector<int> slotRow;
  // The slots of each particle, in row order: slots [particleSlotStart[p], particleSlotStart[p+1])
  // of particleSlots.
  std::vector<int> particleSlotStart, particleSlots;

  // Assembly: contribution i adds k[particle] g[slotA] . g[slotB] to values[contributionValue].
  std::vector<int> contributionSlotA, contributionSlotB, contributionParticle, contributionValue;
  std::vector<int> diagonalValue;
  SparseMatrix matrix;  // upper triangle of A, fixed pattern
  std::unique_ptr<SpdSolver> factor;
  // The back end of `factor` and of every system built from these rows (with contacts appended,
  // local): "auto" resolved once, by the distance rows, so that one cloth's solves do not
  // mix back ends (mixed, a yanked grab's outcome moved with the rounding: edges 2.4 times their
  // length against 1.4 with CHOLMOD alone and 1.2 with Eigen alone).
  std::string backendId;
  double factorShift = 0;  // what factorize added to A's diagonal for `factor` (absolute)
  // Where the factor's symbolic analysis waits for the first factorization (rows with contacts
  // appended, which a pass may solve locally only): the ordering it will take.
  std::optional<std::vector<int>> pendingOrdering;
  std::string pendingOrderingMethod;

  // particleSlotStart and particleSlots from slotParticle.
  void groupSlotsByParticle(int particleCount) {
    particleSlotStart.assign(particleCount + 1, 0);
    for (int particle : slotParticle) ++particleSlotStart[particle + 1];
    for (int p = 0; p < particleCount; ++p) particleSlotStart[p + 1] += particleSlotStart[p];
    particleSlots.resize(slotParticle.size());
    std::vector<int> next(particleSlotStart.begin(), particleSlotStart.end() - 1);
    for (int s = 0; s < static_cast<int>(slotParticle.size()); ++s) particleSlots[next[slotParticle[s]]++] = s;
  }
};

}  // namespace

// The rows and factorizations of a step, and how they are built, assembled and solved.
struct ImpulseSolver::Impl : RowStructure {
  struct ContactRow {
    std::map<int, double> weights;  // the vertex's row of B
    Vec3 normal;
    double target = 0;  // [m]
  };

  // What the linear rows were built for: a change rebuilds the pattern.
  std::vector<int> pinnedVertices;
  int grabTriangle = -1;
  bool structureDirty = true;
  std::vector<int> distanceOrdering;  // the fill-reducing ordering of the distance rows alone
  std::string distanceOrderingMethod;  // the search that found it
  std::vector<int> baseOrdering;      // the ordering of the rows without contacts
  // The step's factor as a pass's first correction (kMaxStartSkips): rejected that many times in a
  // row, steps left whose pass skips it, and the next run's length.
  int startRejections = 0, startSkipsLeft = 0, startSkipRun = 1;
  // The last step needed no factorization of A (ImpulseParams::skipIdleFactorization).
  bool idle = false;
  // The self-collision pairs held from step to step, on the surface mesh.
  SelfPairCache selfPairs;

  // The rows, pattern and factor without contacts, kept while a pass holds contact rows.
  std::optional<RowStructure> withoutContacts;
  void swapStructure(RowStructure& other) { std::swap(static_cast<RowStructure&>(*this), other); }
  // Sets the rows without contacts aside (appendContactRows then sets every member), and back.
  void keepStructure() {
    if (withoutContacts) return;
    swapStructure(withoutContacts.emplace());
  }
  void restoreStructure() {
    if (!withoutContacts) return;
    swapStructure(*withoutContacts);
    withoutContacts.reset();
  }

  // Forces: factor of M + h c R + h^2 k_b Q, refreshed when k_b, h, density or c change (and
  // dropped when Q changes: useBendingModel).
  std::unique_ptr<SpdSolver> bendingFactor;
  std::unique_ptr<ImplicitBending> surfaceBending;  // bending_model "surface" (bendSurface)
  double bendingKey[4] = {-1, -1, -1, -1};
  // Collision transfer: factor of B B^T (nonconforming only).
  std::unique_ptr<SpdSolver> surfaceFactor;

  // Particle weights of the prediction that triangle t makes of a point with barycentric
  // coordinates b: sum_k b_k (x_e(k+1) + x_e(k+2) - x_e(k)), e(k) the edge opposite corner k
  // (the ghost-mesh rule of methods 1.8 restricted to one triangle); conforming: the vertices.
  static std::map<int, double> trianglePredictionWeights(const ImpulseModel& model,
                                                          const ClothModel& cloth, int t, const Vec3& b) {
    std::map<int, double> weights;
    for (int k = 0; k < 3; ++k) {
      if (model.conforming) weights[cloth.mesh.triangles[t][k]] += b[k];
      else weights[cloth.topology.triEdges[t][k]] += 1.0 - 2.0 * b[k];
    }
    return weights;
  }

  // Particle weights of the surface point with barycentric coordinates b in triangle t: the
  // barycentric mix of the rows of B (what the viewer shows and the user drags).
  static std::map<int, double> surfacePointWeights(const ImpulseModel& model, const ClothModel& cloth,
                                                   int t, const Vec3& b) {
    std::map<int, double> weights;
    for (int k = 0; k < 3; ++k) {
      const int vertex = cloth.mesh.triangles[t][k];
      if (model.conforming) {
        weights[vertex] += b[k];
        continue;
      }
      for (SparseMatrix::InnerIterator it(model.surfaceMapRowsTransposed, vertex); it; ++it)
        weights[it.row()] += b[k] * it.value();
    }
    return weights;
  }

  // Particle weights of surface vertex `vertex` (its row of B).
  static std::map<int, double> vertexWeights(const ImpulseModel& model, const ClothModel& cloth,
                                             int vertex) {
    const int t = cloth.topology.vertexTris[vertex].front();
    const Tri& f = cloth.mesh.triangles[t];
    const Vec3 corner(f[0] == vertex, f[1] == vertex, f[2] == vertex);
    return surfacePointWeights(model, cloth, t, corner);
  }

  // The row that holds surface vertex `vertex` at `point` along `direction`.
  static ContactRow heldRow(const ImpulseModel& model, const ClothModel& cloth, int vertex,
                            const Vec3& point, const Vec3& direction) {
    return {vertexWeights(model, cloth, vertex), direction, direction.dot(point)};
  }

  // Rebuilds all rows and the pattern of A; analyses it with the chosen back end.
  std::optional<std::string> buildRows(const ImpulseModel& model, const ClothModel& cloth,
                                       const Positions& x, const std::vector<std::pair<int, Vec3>>& pins,
                                       const std::optional<Grab>& grab, const std::string& backend) {
    rowStart.assign(1, 0);
    slotParticle.clear();
    slotGradient.clear();
    linearRows.clear();
    for (const auto& con : model.constraints) {
      slotParticle.push_back(con.a);
      slotParticle.push_back(con.b);
      slotGradient.emplace_back(0, 0, 0);
      slotGradient.emplace_back(0, 0, 0);
      rowStart.push_back(static_cast<int>(slotParticle.size()));
    }
    distanceRows = static_cast<int>(model.constraints.size());
    auto addLinearRows = [&](const std::map<int, double>& weights, const Vec3& target, int pin) {
      for (int axis = 0; axis < 3; ++axis) {
        for (const auto& [particle, w] : weights) {
          if (w == 0) continue;
          slotParticle.push_back(particle);
          Vec3 g = Vec3::Zero();
          g[axis] = w;
          slotGradient.push_back(g);
        }
        rowStart.push_back(static_cast<int>(slotParticle.size()));
        linearRows.push_back({target[axis], axis, pin, pin < 0});
      }
    };
    // A pin holds the vertex in every incident triangle (each triangle's own prediction of the
    // vertex), so the triangles around it rotate about the pin instead of tearing apart. Each
    // triangle keeps the offset its prediction has from the vertex (their mean) when the rows are
    // built: the spread that the edge-midpoint mesh's nonconformity gives the predictions there.
    // Zero at rest; a pin set on moved cloth would otherwise ask the triangles to agree, which
    // may be out of the cloth's reach (docs/measurements.md, "A pin set beyond the reach").
    pinnedVertices.clear();
    for (size_t i = 0; i < pins.size(); ++i) {
      const auto& [vertex, target] = pins[i];
      const size_t firstRow = linearRows.size();
      for (int t : cloth.topology.vertexTris[vertex]) {
        const Tri& f = cloth.mesh.triangles[t];
        const Vec3 corner(f[0] == vertex ? 1 : 0, f[1] == vertex ? 1 : 0, f[2] == vertex ? 1 : 0);
        addLinearRows(trianglePredictionWeights(model, cloth, t, corner), target, static_cast<int>(i));
        if (model.conforming) break;  // the vertex itself: one set of rows is enough
      }
      const double triangles = static_cast<double>(linearRows.size() - firstRow) / 3;
      Vec3 mean = Vec3::Zero();
      for (size_t r = firstRow; r < linearRows.size(); ++r) {
        linearRows[r].offset = linearRowValue(distanceRows + static_cast<int>(r), x);
        mean[linearRows[r].axis] += linearRows[r].offset / triangles;
      }
      for (size_t r = firstRow; r < linearRows.size(); ++r) linearRows[r].offset -= mean[linearRows[r].axis];
      pinnedVertices.push_back(vertex);
    }
    grabTriangle = -1;
    if (grab) {
      addLinearRows(surfacePointWeights(model, cloth, grab->triangle, grab->barycentric),
                    grab->target, -1);
      grabTriangle = grab->triangle;
    }

    // Pattern of A: rows r1 <= r2 that share a particle, one contribution per shared particle.
    const int particleCount = model.particleCount();
    slotRow.resize(slotParticle.size());
    for (int r = 0; r < rowCount(); ++r)
      for (int s = rowStart[r]; s < rowStart[r + 1]; ++s) slotRow[s] = r;
    groupSlotsByParticle(particleCount);
    contributionSlotA.clear();
    contributionSlotB.clear();
    contributionParticle.clear();
    std::vector<Eigen::Triplet<double>> pattern;
    for (int p = 0; p < particleCount; ++p) {
      const int* slots = particleSlots.data() + particleSlotStart[p];
      const int count = particleSlotStart[p + 1] - particleSlotStart[p];
      for (int i = 0; i < count; ++i)
        for (int j = 0; j < count; ++j) {
          int a = slots[i], b = slots[j];
          if (slotRow[a] > slotRow[b] || (slotRow[a] == slotRow[b] && j < i)) continue;
          contributionSlotA.push_back(a);
          contributionSlotB.push_back(b);
          contributionParticle.push_back(p);
          pattern.emplace_back(slotRow[a], slotRow[b], 1.0);
        }
    }
    for (int r = 0; r < rowCount(); ++r) pattern.emplace_back(r, r, 1.0);  // diagonal always
    matrix.resize(rowCount(), rowCount());
    matrix.setFromTriplets(pattern.begin(), pattern.end());
    matrix.makeCompressed();
    auto valueIndex = [&](int row, int col) {
      const int* begin = matrix.innerIndexPtr() + matrix.outerIndexPtr()[col];
      const int* end = matrix.innerIndexPtr() + matrix.outerIndexPtr()[col + 1];
      return static_cast<int>(std::lower_bound(begin, end, row) - matrix.innerIndexPtr());
    };
    contributionValue.resize(contributionSlotA.size());
    for (size_t i = 0; i < contributionSlotA.size(); ++i)
      contributionValue[i] = valueIndex(slotRow[contributionSlotA[i]], slotRow[contributionSlotB[i]]);
    diagonalValue.resize(rowCount());
    for (int r = 0; r < rowCount(); ++r) diagonalValue[r] = valueIndex(r, r);

    // By the distance rows alone, so that pinning or grabbing never switches a cloth's back end.
    backendId = spdSolverId(backend, distanceRows);
    factor = makeSpdSolver(backendId);
    if (!factor) return "unknown linear solver '" + backend + "'";
    pendingOrdering.reset();
    // The distance rows are ordered once (the search takes 230 ms on sphere-drop's 59 398 rows);
    // pin and grab rows, which change as the user pins and drags, follow their neighbours.
    // A back end that orders by itself (Eigen's) orders the whole matrix.
    if (!factor->takesOrdering()) {
      distanceOrdering.clear();
    } else if (structureDirty || distanceOrdering.size() != static_cast<size_t>(distanceRows)) {
      distanceOrdering.clear();
      if (auto e = factor->analyze(SparseMatrix(matrix.topLeftCorner(distanceRows, distanceRows)))) return e;
      distanceOrdering = factor->ordering();
      distanceOrderingMethod = factor->orderingMethod();
    }
    std::vector<int> ordering;
    if (!distanceOrdering.empty()) ordering = orderingWithRowsAfterNeighbours(matrix, distanceOrdering);
    if (auto e = factor->analyze(matrix, ordering, distanceOrderingMethod)) return e;
    baseOrdering = factor->ordering();
    structureDirty = false;
    return std::nullopt;
  }

  // The rows of `base` (the rows without contacts) with one row per contact after them. They
  // come last in A, so A's columns (upper triangle) and the contributions to them are base's
  // as they stand, and each contact row adds one column; the ordering is base's with each
  // contact row right after its last neighbour there (no new search). Every value sums its
  // contributions in the order a full rebuild would (by particle), so the factor is the same
  // bit for bit.
  std::optional<std::string> appendContactRows(const RowStructure& base,
                                               const std::vector<ContactRow>& contacts) {
    rowStart = base.rowStart;
    slotParticle = base.slotParticle;
    slotGradient = base.slotGradient;
    linearRows = base.linearRows;
    distanceRows = base.distanceRows;
    slotRow = base.slotRow;
    contributionSlotA = base.contributionSlotA;
    contributionSlotB = base.contributionSlotB;
    contributionParticle = base.contributionParticle;
    contributionValue = base.contributionValue;
    diagonalValue = base.diagonalValue;

    const int baseRows = base.rowCount();
    const int rows = baseRows + static_cast<int>(contacts.size());
    std::vector<int> outer(base.matrix.outerIndexPtr(), base.matrix.outerIndexPtr() + baseRows + 1);
    std::vector<int> inner(base.matrix.innerIndexPtr(), base.matrix.innerIndexPtr() + base.matrix.nonZeros());
    std::vector<int> contactSlotsHead(base.particleSlotStart.size(), -1), contactSlotsNext;  // per particle
    std::vector<int> columnRows;
    for (int i = 0; i < static_cast<int>(contacts.size()); ++i) {
      const int row = baseRows + i;
      const int firstSlot = static_cast<int>(slotParticle.size());
      for (const auto& [particle, w] : contacts[i].weights) {
        if (w == 0) continue;
        slotParticle.push_back(particle);
        slotGradient.push_back(w * contacts[i].normal);
        slotRow.push_back(row);
      }
      rowStart.push_back(static_cast<int>(slotParticle.size()));
      linearRows.push_back({contacts[i].target, 0, -1, false, true});
      contactSlotsNext.resize(slotParticle.size(), -1);
      for (int s = firstSlot; s < rowStart.back(); ++s) {
        contactSlotsNext[s] = contactSlotsHead[slotParticle[s]];
        contactSlotsHead[slotParticle[s]] = s;
      }
      // Column `row`: a contribution from each slot that shares a particle with the row's slots,
      // its own included (the diagonal).
      const size_t firstContribution = contributionSlotA.size();
      columnRows.assign(1, row);
      for (int b = firstSlot; b < rowStart.back(); ++b) {
        const int particle = slotParticle[b];
        auto add = [&](int a) {
          contributionSlotA.push_back(a);
          contributionSlotB.push_back(b);
          contributionParticle.push_back(particle);
          columnRows.push_back(slotRow[a]);
        };
        for (int k = base.particleSlotStart[particle]; k < base.particleSlotStart[particle + 1]; ++k)
          add(base.particleSlots[k]);
        for (int a = contactSlotsHead[particle]; a >= 0; a = contactSlotsNext[a]) add(a);
      }
      std::sort(columnRows.begin(), columnRows.end());
      columnRows.erase(std::unique(columnRows.begin(), columnRows.end()), columnRows.end());
      const int columnStart = static_cast<int>(inner.size());
      inner.insert(inner.end(), columnRows.begin(), columnRows.end());
      outer.push_back(static_cast<int>(inner.size()));
      for (size_t i = firstContribution; i < contributionSlotA.size(); ++i) {
        const int r = slotRow[contributionSlotA[i]];
        contributionValue.push_back(
            columnStart + static_cast<int>(std::lower_bound(columnRows.begin(), columnRows.end(), r) - columnRows.begin()));
      }
      diagonalValue.push_back(static_cast<int>(inner.size()) - 1);
    }
    matrix.resize(rows, rows);
    matrix.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
    std::copy(outer.begin(), outer.end(), matrix.outerIndexPtr());
    std::copy(inner.begin(), inner.end(), matrix.innerIndexPtr());
    std::fill(matrix.valuePtr(), matrix.valuePtr() + inner.size(), 0.0);
    groupSlotsByParticle(static_cast<int>(base.particleSlotStart.size()) - 1);  // for local re-linearizations

    backendId = base.backendId;
    factor = makeSpdSolver(backendId);
    if (!factor) return "unknown linear solver '" + backendId + "'";
    // Analysed when first factorized (a pass that holds contacts may solve locally only).
    pendingOrdering.emplace();
    if (base.factor && baseOrdering.size() == static_cast<size_t>(baseRows))
      pendingOrdering = orderingWithRowsAfterNeighbours(matrix, baseOrdering);
    pendingOrderingMethod = base.factor ? base.factor->orderingMethod() : "";
    return std::nullopt;
  }

  // The fill-reducing ordering of all rows (empty where not known), analysed or pending, and the
  // search it came from.
  std::vector<int> fullOrdering() const {
    if (pendingOrdering) return *pendingOrdering;
    return factor ? factor->ordering() : std::vector<int>{};
  }
  std::string fullOrderingMethod() const {
    if (pendingOrdering) return pendingOrderingMethod;
    return factor ? factor->orderingMethod() : std::string();
  }

  void updateDistanceGradient(const ImpulseModel& model, const Positions& x, int c) {
    const auto& con = model.constraints[c];
    const Vec3 d = (x.row(con.b) - x.row(con.a)).transpose();
    const double length = d.norm();
    const Vec3 n = length > 1e-300 ? Vec3(d / length) : Vec3(1, 0, 0);
    slotGradient[rowStart[c]] = -n;
    slotGradient[rowStart[c] + 1] = n;
  }
  void updateDistanceGradients(const ImpulseModel& model, const Positions& x) {
    for (int c = 0; c < distanceRows; ++c) updateDistanceGradient(model, x, c);
  }

  // A = J K J^T into the fixed pattern (no shift).
  void assemble(const Eigen::VectorXd& inverseMass) {
    double* values = matrix.valuePtr();
    std::fill(values, values + matrix.nonZeros(), 0.0);
    for (size_t i = 0; i < contributionValue.size(); ++i)
      values[contributionValue[i]] += inverseMass[contributionParticle[i]] *
                                      slotGradient[contributionSlotA[i]].dot(slotGradient[contributionSlotB[i]]);
  }

  std::optional<std::string> factorize(double baseShift, double& usedShift) {
    if (pendingOrdering) {
      if (auto e = factor->analyze(matrix, *pendingOrdering, pendingOrderingMethod)) return e;
      pendingOrdering.reset();
    }
    return factorizeShifted(matrix, diagonalValue, *factor, baseShift, usedShift, &factorShift);
  }

  // Impulse directions at x, A = J K J^T, and its factorization (shift reported in usedShift).
  std::optional<std::string> linearize(const ImpulseModel& model, const Positions& x,
                                       const Eigen::VectorXd& inverseMass, double baseShift,
                                       double& usedShift) {
    updateDistanceGradients(model, x);
    return assembleAndFactorize(inverseMass, baseShift, usedShift);
  }
  // A = J K J^T at the impulse directions last updated, and its factorization.
  std::optional<std::string> assembleAndFactorize(const Eigen::VectorXd& inverseMass,
                                                  double baseShift, double& usedShift) {
    assemble(inverseMass);
    return factorize(baseShift, usedShift);
  }

  // The velocity pass: solve A p = -J v, v += K J^T p. Returns the impulses p.
  Eigen::VectorXd velocityPass(const Eigen::VectorXd& inverseMass, Positions& v) {
    Eigen::VectorXd errors;
    velocityErrors(v, errors);
    return velocityPass(inverseMass, v, std::move(errors));
  }
  // The same with J v given (`errors`).
  Eigen::VectorXd velocityPass(const Eigen::VectorXd& inverseMass, Positions& v,
                               Eigen::VectorXd errors) {
    Eigen::VectorXd rhs = -errors;
    solve(rhs);
    applyImpulses(rhs, 1.0, inverseMass, v);
    return rhs;
  }

  // A point of the surface resting on an obstacle, held in the velocity pass: its velocity along
  // the obstacle's normal no less than `normalTarget`, and along the surface the obstacle's, with
  // an impulse there of at most friction x the normal one.
  struct ContactPoint {
    int vertex = 0;
    Vec3 normal{0, 0, 1};
    Vec3 obstacleVelocity{0, 0, 0};  // [m/s]
    double normalTarget = 0;         // [m/s]
    double friction = 0;
  };

  // The velocity pass with `points` held beside J v = 0, three rows per point (its normal, two
  // along the surface): Coulomb contacts met as an active set. A point whose normal impulse pulls
  // lets go (its rows cut out). Friction bounds each patch of points, the points joined by the
  // cloth's edges: where the patch's impulse along the surface exceeds the sum of friction x
  // normal impulse over its points, each of them slides along the patch's impulse (its own
  // bound friction x its normal impulse, as the round before solved it, applied as a known
  // impulse, its rows along the surface cut out). A patch, not each point, because the rows of
  // the corners of a triangle that a tip pokes also carry the cloth's tension pulling them
  // apart: opposite impulses along the surface that cancel in the patch (a cloth on a bed of
  // spikes tilted by 15 degrees slid at friction 0.4 with a bound per point when the contacts were
  // the points pushed in the steps before, and with the contacts from the prediction slid off at
  // 0.3 at h = 1 ms; with patches it holds, also somewhat below Coulomb's bound, since each corner
  // is held along the push and the triangle cannot turn about the tip; docs/measurements.md,
  // "Friction per patch", "Feature contacts from the prediction"). Up to kContactRounds rounds.
  //
  // Solved on the step's factor of A at x(t) through the contact rows' Schur complement
  // (AddedRows, with B = J K J_c^T for the contact rows J_c and D = J_c K J_c^T): a cut row no
  // longer acts on the others, so each round factorizes only the dense complement of the rows
  // left, where A with the rows appended was factorized again before (docs/measurements.md, "The
  // features' contacts on the step's factor"). The contact rows take the step factor's diagonal
  // shift too. Returns the distance rows' impulses; `released` and `sliding` count the points,
  // `factorizations` the complements factorized.
  std::optional<std::string> contactVelocityPass(const ImpulseModel& model, const ClothModel& cloth,
                                                 const std::vector<ContactPoint>& points,
                                                 const Eigen::VectorXd& inverseMass, Positions& v,
                                                 Eigen::VectorXd& distanceImpulse, int& released,
                                                 int& sliding, int& factorizations) {
    const int n = rowCount();
    const int k = 3 * static_cast<int>(points.size());
    // The contact rows, and the obstacle's velocity along each.
    SlotRows rows;
    Eigen::VectorXd target(k);
    // Each point's two directions along the surface.
    std::vector<std::array<Vec3, 2>> tangent(points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      const ContactPoint& point = points[i];
      tangent[i][0] = point.normal.unitOrthogonal();
      tangent[i][1] = point.normal.cross(tangent[i][0]);
      const Vec3 directions[3] = {point.normal, tangent[i][0], tangent[i][1]};
      const std::map<int, double> weights = vertexWeights(model, cloth, point.vertex);
      for (int a = 0; a < 3; ++a) {
        for (const auto& [particle, w] : weights) {
          if (w == 0) continue;
          rows.slotParticle.push_back(particle);
          rows.slotGradient.push_back(w * directions[a]);
        }
        rows.rowStart.push_back(static_cast<int>(rows.slotParticle.size()));
        target[3 * i + a] = a == 0 ? point.normalTarget : directions[a].dot(point.obstacleVelocity);
      }
    }
    // B from A's slots at each contact slot's particle; D from the contact slots sharing one.
    std::vector<Eigen::Triplet<double>> bEntries;
    std::map<int, std::vector<int>> contactSlotsAt;  // particle -> contact slots
    std::vector<int> slotContactRow(rows.slotParticle.size());
    for (int c = 0; c < k; ++c)
      for (int s = rows.rowStart[c]; s < rows.rowStart[c + 1]; ++s) {
        const int particle = rows.slotParticle[s];
        slotContactRow[s] = c;
        contactSlotsAt[particle].push_back(s);
        for (int b = particleSlotStart[particle]; b < particleSlotStart[particle + 1]; ++b) {
          const int slot = particleSlots[b];
          bEntries.emplace_back(
              slotRow[slot], c,
              inverseMass[particle] * slotGradient[slot].dot(rows.slotGradient[s]));
        }
      }
    SparseMatrix B(n, k);
    B.setFromTriplets(bEntries.begin(), bEntries.end());
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(k, k);
    for (const auto& [particle, slots] : contactSlotsAt)
      for (int a : slots)
        for (int b : slots)
          D(slotContactRow[a], slotContactRow[b]) +=
              inverseMass[particle] * rows.slotGradient[a].dot(rows.slotGradient[b]);
    D.diagonal().array() += factorShift;

    // A's rows' right-hand side -J v at the pass's start; a round's known impulses q' (the
    // sliding points') are applied to v and moved to the right-hand side as AddedRows says.
    const Positions v0 = v;
    Eigen::VectorXd r0;
    velocityErrors(v0, r0);
    const AddedRows contacts(*factor, std::move(B), D, -r0);
    enum State : char { Stuck, Sliding, Released };
    std::vector<char> state(points.size(), Stuck);
    std::vector<Vec3> slip(points.size(), Vec3::Zero());  // a sliding point's direction (t1, t2, 0)
    std::vector<double> normalImpulse(points.size(), 0.0);
    auto cut = [&](int c) {  // whether contact row c is out of the solve
      const int i = c / 3;
      return state[i] == Released || (state[i] == Sliding && c % 3 > 0);
    };
    // The patches: the points joined by the cloth's edges, each named by one of its points
    // (union-find).
    std::vector<int> patch(points.size()), pointAt(cloth.mesh.positions.rows(), -1);
    for (size_t i = 0; i < points.size(); ++i)
      patch[i] = pointAt[points[i].vertex] = static_cast<int>(i);
    auto root = [&](int i) {
      while (patch[i] != i) i = patch[i] = patch[patch[i]];
      return i;
    };
    for (size_t i = 0; i < points.size(); ++i)
      for (int neighbour : cloth.topology.vertexNeighbours[points[i].vertex])
        if (pointAt[neighbour] >= 0) patch[root(static_cast<int>(i))] = root(pointAt[neighbour]);
    for (size_t i = 0; i < points.size(); ++i) patch[i] = root(static_cast<int>(i));
    std::vector<double> patchBound(points.size());  // friction x normal impulse, summed per patch
    std::vector<Vec3> patchAlong(points.size());    // impulse along the surface, summed per patch

    Eigen::VectorXd known(k);
    std::vector<int> kept;
    for (int round = 0;; ++round) {
      v = v0;
      known.setZero();
      for (size_t i = 0; i < points.size(); ++i)
        if (state[i] == Sliding) {
          const int c = 3 * static_cast<int>(i);
          const double f = points[i].friction * normalImpulse[i];
          known[c + 1] = f * slip[i][0];
          known[c + 2] = f * slip[i][1];
          rows.applyImpulse(c + 1, known[c + 1], inverseMass, v);
          rows.applyImpulse(c + 2, known[c + 2], inverseMass, v);
        }
      Eigen::VectorXd s;
      rows.velocityErrors(v, s);
      s = target - s;
      kept.clear();
      for (int c = 0; c < k; ++c)
        if (!cut(c)) kept.push_back(c);
      ++factorizations;
      std::optional<Eigen::VectorXd> solved = contacts.solveAdded(kept, s, known);
      if (!solved) return "the contact rows' Schur complement could not be factorized";
      Eigen::VectorXd& q = *solved;
      bool changed = false;
      const bool last = round + 1 >= kContactRounds;
      std::fill(patchBound.begin(), patchBound.end(), 0.0);
      std::fill(patchAlong.begin(), patchAlong.end(), Vec3::Zero());
      for (size_t i = 0; i < points.size(); ++i) {
        const int c = 3 * static_cast<int>(i);
        if (state[i] == Released) continue;
        if (q[c] < 0) {  // pulls: lets go
          q[c] = q[c + 1] = q[c + 2] = 0;
          if (last) continue;
          state[i] = Released;
          changed = true;
          continue;
        }
        if (state[i] == Sliding) {
          normalImpulse[i] = q[c];
          continue;
        }
        patchBound[patch[i]] += points[i].friction * q[c];
        patchAlong[patch[i]] += q[c + 1] * tangent[i][0] + q[c + 2] * tangent[i][1];
      }
      for (size_t i = 0; i < points.size(); ++i) {
        const int c = 3 * static_cast<int>(i);
        if (state[i] != Stuck) continue;
        const Vec3& along = patchAlong[patch[i]];
        if (!(along.norm() > patchBound[patch[i]])) continue;
        // Along the patch's impulse, in the point's own surface directions.
        Vec3 direction(along.dot(tangent[i][0]), along.dot(tangent[i][1]), 0);
        if (!(direction.norm() > 0)) continue;
        direction.normalize();
        if (last) {  // at the bound
          q[c + 1] = points[i].friction * q[c] * direction[0];
          q[c + 2] = points[i].friction * q[c] * direction[1];
          continue;
        }
        state[i] = Sliding;
        slip[i] = direction;
        normalImpulse[i] = q[c];
        changed = true;
      }
      if (changed && !last) continue;
      // A's rows' impulses for the contacts' kept (a round that changed nothing left them as
      // solved) and known ones; the known ones are in v already.
      const Eigen::VectorXd p = contacts.solveBase(q + known);
      applyImpulses(p, 1.0, inverseMass, v);
      rows.applyImpulses(q, 1.0, inverseMass, v);
      distanceImpulse = p.head(distanceRows);
      break;
    }
    released = static_cast<int>(std::count(state.begin(), state.end(), Released));
    sliding = static_cast<int>(std::count(state.begin(), state.end(), Sliding));
    return std::nullopt;
  }

  // Inverse masses with a lumped geometric stiffness: each particle heavier by
  // gain * h * sum |P_c| / d_c over its distance rows, P_c the impulse applied along row c so far
  // in the step (force P_c / h, transverse stiffness P_c / (h d_c), as mass h^2 times that).
  Eigen::VectorXd stiffenedInverseMass(const ImpulseModel& model, const Eigen::VectorXd& inverseMass,
                                       const Eigen::VectorXd& rowImpulse, double gain, double h) const {
    Eigen::VectorXd mass = inverseMass.cwiseInverse();
    for (int r = 0; r < distanceRows; ++r) {
      const auto& con = model.constraints[r];
      const double added = gain * h * std::abs(rowImpulse[r]) / con.restLength;
      mass[con.a] += added;
      mass[con.b] += added;
    }
    return mass.cwiseInverse();
  }

  // The linear momentum that scale * p along the distance rows adds when applied with stiffened
  // inverse masses K' (massShare_i = m_i K'_i; 0 for a particle a local linearization holds)
  // instead of the true ones, which add none.
  Vec3 spuriousMomentum(const Eigen::VectorXd& p, double scale, const Eigen::VectorXd& massShare) const {
    Vec3 momentum = Vec3::Zero();
    forChangedRows([&](int r) {  // p is zero outside them
      if (r >= distanceRows || p[r] == 0) return;
      for (int s = rowStart[r]; s < rowStart[r + 1]; ++s)
        momentum += ((massShare[slotParticle[s]] - 1) * scale * p[r]) * slotGradient[s];
    });
    return momentum;
  }

  // The pins' rows aim at their targets, the grab's at this step's grab target; contact rows keep
  // theirs.
  void setLinearTargets(const std::vector<std::pair<int, Vec3>>& pins, const Vec3& grabTarget) {
    for (auto& row : linearRows)
      if (!row.contact) row.target = row.pin >= 0 ? pins[row.pin].second[row.axis] + row.offset : grabTarget[row.axis];
  }

  // sum over slots of g . x: w x_(axis) of a pin's or the grab's row, w n . x of a contact's.
  double linearRowValue(int r, const Positions& x) const {
    double value = 0;
    for (int s = rowStart[r]; s < rowStart[r + 1]; ++s) value += slotGradient[s].dot(x.row(slotParticle[s]).transpose());
    return value;
  }

  // C(x) of one row.
  double rowError(const ImpulseModel& model, const Positions& x, int r) const {
    if (r >= distanceRows) return linearRowValue(r, x) - linearRows[r - distanceRows].target;
    const auto& con = model.constraints[r];
    return (x.row(con.b) - x.row(con.a)).norm() - con.restLength;
  }
  // C(x) for every row.
  void evaluate(const ImpulseModel& model, const Positions& x, Eigen::VectorXd& c) const {
    c.resize(rowCount());
    for (int r = 0; r < rowCount(); ++r) c[r] = rowError(model, x, r);
  }

  // Largest |C| over the rows; the grab's rows drive the iteration but are not reported as a
  // constraint error (withGrab = false).
  double maxError(const Eigen::VectorXd& c, bool withGrab = true) const {
    double worst = distanceRows > 0 ? c.head(distanceRows).cwiseAbs().maxCoeff() : 0.0;  // vectorized
    for (int r = distanceRows; r < rowCount(); ++r)
      if (withGrab || !linearRows[r - distanceRows].grab) worst = std::max(worst, std::abs(c[r]));
    return worst;
  }
  // Sum of C^2 over all rows: the Gauss-Newton correction is a descent direction for it.
  static double squaredError(const Eigen::VectorXd& c) { return c.squaredNorm(); }

  void solve(Eigen::VectorXd& rhs) {
    Eigen::MatrixXd column = rhs;
    factor->solve(column);
    rhs = column.col(0);
  }

  // A linearization where the errors are (ImpulseParams::localRelinearization): the particles of
  // the rows whose |C| exceeds `threshold`, and `rings` more rings of particles around them
  // (through shared rows), move; every other particle is held (inverse mass 0 in
  // `movingInverseMass`). The system has every row that touches a moving particle, so a
  // correction from it changes no other row's C.
  struct LocalSystem {
    std::vector<int> rows;       // of the full system, ascending
    std::vector<int> particles;  // the moving ones, ascending
    SparseMatrix matrix;         // upper triangle of A restricted to `rows`
    std::vector<int> diagonalValue;
    std::unique_ptr<SpdSolver> factor;
    double outsideSquared = 0;  // sum of C^2 over the other rows, which its corrections keep
  };
  std::optional<LocalSystem> local;  // the position pass's current linearization, when local
  Positions savedV, savedPreview;    // of the particles a trial moves, before it
  Eigen::VectorXd trialC;            // a trial's C on the rows it changes

  // The rows and the particles a correction from the current linearization changes: a local
  // system's, or all of them.
  template <class F>
  void forChangedRows(F f) const {
    if (local) {
      for (int r : local->rows) f(r);
    } else {
      for (int r = 0; r < rowCount(); ++r) f(r);
    }
  }
  template <class F>
  void forMovedParticles(int particleCount, F f) const {
    if (local) {
      for (int q : local->particles) f(q);
    } else {
      for (int q = 0; q < particleCount; ++q) f(q);
    }
  }

  // False, with the current linearization kept, when the system would have more than maxShare of
  // all rows or cannot be factorized.
  bool linearizeLocally(const ImpulseModel& model, const Positions& x, const Eigen::VectorXd& c,
                        double threshold, int rings, double maxShare,
                        const Eigen::VectorXd& inverseMass, double baseShift, double& usedShift,
                        Eigen::VectorXd& movingInverseMass) {
    const int particles = static_cast<int>(inverseMass.size());
    const std::vector<int>& start = particleSlotStart;
    const std::vector<int>& bySlot = particleSlots;
    std::vector<char> moving(particles, 0);
    std::vector<int> frontier, ring;
    auto addParticlesOf = [&](int r) {
      for (int k = rowStart[r]; k < rowStart[r + 1]; ++k)
        if (!moving[slotParticle[k]]) {
          moving[slotParticle[k]] = 1;
          frontier.push_back(slotParticle[k]);
        }
    };
    for (int r = 0; r < rowCount(); ++r)
      if (std::abs(c[r]) > threshold) addParticlesOf(r);
    for (int k = 0; k < rings; ++k) {
      ring.swap(frontier);
      frontier.clear();
      for (int p : ring)
        for (int i = start[p]; i < start[p + 1]; ++i) addParticlesOf(slotRow[bySlot[i]]);
    }
    std::vector<int> localRow(rowCount(), -1);
    for (int p = 0; p < particles; ++p)
      if (moving[p])
        for (int i = start[p]; i < start[p + 1]; ++i) localRow[slotRow[bySlot[i]]] = 0;
    LocalSystem system;
    for (int r = 0; r < rowCount(); ++r)
      if (localRow[r] == 0) {
        localRow[r] = static_cast<int>(system.rows.size());
        system.rows.push_back(r);
      } else {
        system.outsideSquared += c[r] * c[r];
      }
    const int n = static_cast<int>(system.rows.size());
    if (n == 0 || n > maxShare * rowCount()) return false;

    // Only the system's rows take new directions: corrections from it apply no other row.
    for (int r : system.rows)
      if (r < distanceRows) updateDistanceGradient(model, x, r);
    std::vector<Eigen::Triplet<double>> entries;
    for (int i = 0; i < n; ++i) entries.emplace_back(i, i, 0.0);  // every diagonal entry stored
    for (int p = 0; p < particles; ++p) {
      if (!moving[p]) continue;
      for (int i = start[p]; i < start[p + 1]; ++i)
        for (int j = i; j < start[p + 1]; ++j) {
          const int a = bySlot[i], b = bySlot[j];
          const int ra = localRow[slotRow[a]], rb = localRow[slotRow[b]];
          entries.emplace_back(std::min(ra, rb), std::max(ra, rb),
                               inverseMass[p] * slotGradient[a].dot(slotGradient[b]));
        }
    }
    system.matrix.resize(n, n);
    system.matrix.setFromTriplets(entries.begin(), entries.end());
    system.matrix.makeCompressed();
    system.diagonalValue.resize(n);
    for (int col = 0; col < n; ++col)  // the last entry of its column in the upper triangle
      system.diagonalValue[col] = system.matrix.outerIndexPtr()[col + 1] - 1;
    // From kNestedDissectionRows rows, the full system's ordering restricted to these rows: the
    // search would take a nested dissection's time (230 ms at 59 000 rows) on every
    // re-linearization. Smaller systems take AMD's ordering without a search's symbolic analysis,
    // which they are factorized once after (sphere-drop's systems above 10 000 rows: analysis 5.7
    // → 2.1 ms, factorization 2.1 → 2.4 ms; restricted orderings there took as long as a search).
    // Eigen's back end orders by itself.
    system.factor = makeSpdSolver(backendId);
    if (!system.factor) return false;
    std::vector<int> ordering;
    std::string method = "AMD";
    if (factor && n >= kNestedDissectionRows) {
      const std::vector<int> full = fullOrdering();
      if (full.size() == static_cast<size_t>(rowCount())) {
        ordering.reserve(n);
        for (int r : full)
          if (localRow[r] >= 0) ordering.push_back(localRow[r]);
      }
      method = fullOrderingMethod();
    } else if (n < kNestedDissectionRows && system.factor->takesOrdering()) {
      ordering = amdOrdering(system.matrix);  // empty if AMD failed: analyze searches then
    }
    if (system.factor->analyze(system.matrix, ordering, method) ||
        factorizeShifted(system.matrix, system.diagonalValue, *system.factor, baseShift, usedShift))
      return false;
    movingInverseMass = inverseMass;
    for (int p = 0; p < particles; ++p) {
      if (moving[p]) system.particles.push_back(p);
      else movingInverseMass[p] = 0;
    }
    local = std::move(system);
    return true;
  }

  // A correction scale * p (zero outside the rows of a local system) tried in place: the
  // velocities and previews of the particles it moves change (v + dv, x + h (v + dv)), and so do
  // the C of the rows it changes (forChangedRows, in that order in trialC). Returns the squared
  // error over all rows. undoTrial puts back what it changed; acceptTrial writes trialC into c.
  double tryCorrection(const ImpulseModel& model, const Eigen::VectorXd& p, double scale,
                       const Eigen::VectorXd& inverseMass, double h, const Positions& x, Positions& v,
                       Positions& preview) {
    int k = 0;
    const int moved = local ? static_cast<int>(local->particles.size()) : static_cast<int>(v.rows());
    savedV.resize(moved, 3);
    savedPreview.resize(moved, 3);
    forMovedParticles(static_cast<int>(v.rows()), [&](int q) {
      savedV.row(k) = v.row(q);
      savedPreview.row(k++) = preview.row(q);
    });
    forChangedRows([&](int r) { applyImpulse(r, scale * p[r], inverseMass, v); });
    forMovedParticles(static_cast<int>(v.rows()), [&](int q) { preview.row(q) = x.row(q) + h * v.row(q); });
    trialC.resize(local ? static_cast<Eigen::Index>(local->rows.size()) : rowCount());
    k = 0;
    forChangedRows([&](int r) { trialC[k++] = rowError(model, preview, r); });
    return (local ? local->outsideSquared : 0.0) + trialC.squaredNorm();
  }
  void undoTrial(Positions& v, Positions& preview) const {
    int k = 0;
    forMovedParticles(static_cast<int>(v.rows()), [&](int q) {
      v.row(q) = savedV.row(k);
      preview.row(q) = savedPreview.row(k++);
    });
  }
  void acceptTrial(Eigen::VectorXd& c) const {
    int k = 0;
    forChangedRows([&](int r) { c[r] = trialC[k++]; });
  }

  // rhs (a value per row) becomes the local system's solution, 0 on the rows outside it.
  void solveLocally(Eigen::VectorXd& rhs) {
    Eigen::MatrixXd column(local->rows.size(), 1);
    for (size_t i = 0; i < local->rows.size(); ++i) column(i, 0) = rhs[local->rows[i]];
    local->factor->solve(column);
    rhs.setZero();
    for (size_t i = 0; i < local->rows.size(); ++i) rhs[local->rows[i]] = column(i, 0);
  }
};

ImpulseSolver::ImpulseSolver(Mode mode) : impl_(std::make_unique<Impl>()), mode_(mode) {}
ImpulseSolver::~ImpulseSolver() = default;

namespace {
// ImpulseSolver's state beyond the particles (SolverState::more).
struct ImpulseMemory {
  int startRejections, startSkipsLeft, startSkipRun;
  double grabGain;
  bool idle;
};
}  // namespace

SolverState ImpulseSolver::state() const {
  return {x_, v_,
          std::make_shared<const ImpulseMemory>(
              ImpulseMemory{impl_->startRejections, impl_->startSkipsLeft, impl_->startSkipRun,
                            grabGain_, impl_->idle})};
}

void ImpulseSolver::setState(const SolverState& state) {
  setParticleState(state.x, state.v);
  if (!state.more) return;
  const auto& memory = *static_cast<const ImpulseMemory*>(state.more.get());
  impl_->startRejections = memory.startRejections;
  impl_->startSkipsLeft = memory.startSkipsLeft;
  impl_->startSkipRun = memory.startSkipRun;
  grabGain_ = memory.grabGain;
  impl_->idle = memory.idle;
}

std::string ImpulseSolver::id() const {
  return mode_ == Mode::Nonconforming ? "impulse-nc" : "conforming";
}

nlohmann::json ImpulseSolver::params() const { return writeParams(ImpulseParams::table(), params_); }

SolverCounts ImpulseSolver::counts() const {
  return {model_.particleCount(), static_cast<int>(model_.constraints.size()), model_.boundaryConstraintCount,
          model_.duplicateBoundaryConstraints};
}

void ImpulseSolver::debugGeometry(Positions& points,
                                  std::vector<std::pair<int, int>>& lines) const {
  points = x_;
  lines.clear();
  lines.reserve(model_.constraints.size());
  for (const auto& c : model_.constraints) lines.emplace_back(c.a, c.b);
}

std::optional<std::string> ImpulseSolver::reset(std::shared_ptr<const ClothModel> cloth,
                                                const SimParams& sim, const nlohmann::json& params) {
  ImpulseParams parsed;
  // On the conforming mesh, whose edges over-determine its vertices, the held surroundings of a
  // local re-linearization leave it no room: on `hanging` and `corners-coarse` it saved no
  // factorization and was slower, so that baseline re-linearizes globally unless asked.
  parsed.localRelinearization = mode_ == Mode::Nonconforming;
  if (auto e = readParams(params, ImpulseParams::table(), parsed, "solver")) return e;
  params_ = parsed;
  cloth_ = std::move(cloth);
  model_ = mode_ == Mode::Nonconforming ? buildNonconformingModel(cloth_->mesh, cloth_->topology,
                                                                  params_.boundaryConstraints)
                                        : buildConformingModel(cloth_->mesh, cloth_->topology);
  x_ = model_.restPositions;
  v_ = Positions::Zero(x_.rows(), 3);
  // Point masses: on the vertex itself (conforming), or shared by the midpoints of its edges.
  extraMass_ = Eigen::VectorXd::Zero(model_.particleCount());
  for (const auto& [vertex, mass] : cloth_->pointMasses) {
    if (model_.conforming) {
      extraMass_[vertex] += mass;
      continue;
    }
    std::vector<int> incident;
    for (int e = 0; e < static_cast<int>(cloth_->topology.edges.size()); ++e)
      if (cloth_->topology.edges[e][0] == vertex || cloth_->topology.edges[e][1] == vertex) incident.push_back(e);
    for (int e : incident) extraMass_[e] += mass / incident.size();
  }
  surface_ = surfaceFromParticles(model_, x_);
  vertexAreaShare_ = vertexAreaShares(cloth_->mesh);
  vertexPointMass_ = vertexPointMasses(*cloth_);
  grabGain_ = 1;
  meanEdgeLength_ = meanEdgeLength(cloth_->mesh.positions, cloth_->topology.edges);
  impl_ = std::make_unique<Impl>();
  useBendingModel();
  inverseMass_ = (sim.density * model_.areaShare + extraMass_).cwiseInverse();
  if (!model_.conforming) {
    // Simplicial: its solves call no BLAS, so they run alongside the factorization of A
    // (parallel_forces) without waiting for the BLAS lock it holds.
    impl_->surfaceFactor = makeSpdSolver("cholmod-simplicial");
    const SparseMatrix bbt = upperOf(SparseMatrix(model_.surfaceMap * model_.surfaceMap.transpose()));
    std::string message;
    if (auto e = impl_->surfaceFactor->analyze(bbt)) return *e;
    if (impl_->surfaceFactor->factorize(bbt, &message) != SpdSolver::Status::Ok)
      return "B B^T factorization failed: " + message;
  }
  return std::nullopt;
}

std::optional<std::string> ImpulseSolver::setParams(const nlohmann::json& params) {
  ImpulseParams parsed = params_;
  if (auto e = readParams(params, ImpulseParams::table(), parsed, "solver")) return e;
  if (!cloth_) {  // before reset: nothing built yet to change
    params_ = parsed;
    return std::nullopt;
  }
  const bool rebuild = parsed.boundaryConstraints != params_.boundaryConstraints;
  if (parsed.linearSolver != params_.linearSolver || rebuild) impl_->structureDirty = true;
  const bool bendingChanged = parsed.bendingModel != params_.bendingModel ||
                              parsed.nonconformingStiffness != params_.nonconformingStiffness;
  params_ = parsed;
  if (bendingChanged) useBendingModel();
  if (rebuild && mode_ == Mode::Nonconforming) {
    ImpulseModel rebuilt =
        buildNonconformingModel(cloth_->mesh, cloth_->topology, params_.boundaryConstraints);
    model_.constraints = std::move(rebuilt.constraints);
    model_.boundaryConstraintCount = rebuilt.boundaryConstraintCount;
    model_.duplicateBoundaryConstraints = rebuilt.duplicateBoundaryConstraints;
  }
  return std::nullopt;
}

void ImpulseSolver::useBendingModel() {
  setBendingModel(model_, params_.bendingModel, params_.nonconformingStiffness, cloth_->mesh,
                  cloth_->topology);
  // A new pattern for the force system: analysed and factorized again at the next step.
  impl_->bendingFactor.reset();
  impl_->surfaceBending =
      model_.bendingOnSurface ? surfaceBending(cloth_->mesh, cloth_->topology) : nullptr;
}

void ImpulseSolver::setParticleState(const Positions& x, const Positions& v) {
  x_ = x;
  v_ = v;
  surface_ = surfaceFromParticles(model_, x_);
}

Positions ImpulseSolver::surfaceVelocities() const { return surfaceFromParticles(model_, v_); }

Eigen::VectorXd ImpulseSolver::distanceErrors() const {
  Eigen::VectorXd c(model_.constraints.size());
  for (size_t i = 0; i < model_.constraints.size(); ++i) {
    const auto& con = model_.constraints[i];
    c[i] = (x_.row(con.b) - x_.row(con.a)).norm() - con.restLength;
  }
  return c;
}

std::optional<std::string> ImpulseSolver::step(const StepContext& ctx, StepStats& stats) {
  const auto stepStart = Clock::now();
  Impl& s = *impl_;
  const double h = ctx.sim.dt;

  // Parameters that changed since the last step.
  inverseMass_ = (ctx.sim.density * model_.areaShare + extraMass_).cwiseInverse();
  std::vector<int> pinned;
  for (const auto& pin : ctx.pins) pinned.push_back(pin.first);
  const int grabTriangle = ctx.grab ? ctx.grab->triangle : -1;
  if (s.structureDirty || pinned != s.pinnedVertices || grabTriangle != s.grabTriangle) {
    if (auto e = s.buildRows(model_, *cloth_, x_, ctx.pins, ctx.grab, params_.linearSolver)) return e;
  }
  // Targets move without changing the pattern. The grab's target approaches the mouse at a
  // bounded rate, so that a far jump of the mouse pulls instead of teleporting the cloth, and at
  // a fraction of it while the cloth cannot follow (grabGain_).
  Vec3 grabTarget = Vec3::Zero();
  double grabPush = 0;  // [m]
  if (ctx.grab) {
    // The rate limit starts from the quantity the grab rows constrain: the surface point.
    Vec3 point = Vec3::Zero();
    for (int r = s.distanceRows; r < s.rowCount(); ++r) {
      const auto& row = s.linearRows[r - s.distanceRows];
      if (row.grab) point[row.axis] = s.linearRowValue(r, x_);
    }
    const double rate = std::min(1.0, h / std::max(ctx.grab->timeConstant, 1e-9));
    const Vec3 push = (grabGain_ * rate) * (ctx.grab->target - point);
    grabPush = push.norm();
    grabTarget = point + push;
  }
  s.setLinearTargets(ctx.pins, grabTarget);
  const Positions x0 = x_, v0 = v_;
  auto restore = [&](const std::string& why) {
    x_ = x0;
    v_ = v0;
    surface_ = surfaceFromParticles(model_, x_);
    return std::optional<std::string>(why);
  };

  // Surface corrections reach the particles through a right inverse of B: the obstacles' through
  // the one collision_transfer names, the cloth's own (`own`: stitches, self-collision, and the
  // mesh obstacles' features that the same sweeps resolve) through the midpoint map M. Those are
  // split between surface vertices by inverse mass, which keeps the surface's momentum
  // sum_i m_i dx_i, and through M the particles keep it too: an edge's particle moves by the mean
  // of its two vertices' corrections, and half an edge's mass summed over a vertex's edges is the
  // vertex's mass (both are a third of the area of each incident triangle; point masses aside).
  // The paper's least-change transfer does not keep it: on `fold-drop`'s pile it left a twentieth
  // to a quarter of the momentum that the pushes made when they were also split evenly between
  // the vertices (as here until 2026-12-05; the test ImpulseSolver.SelfCollisionKeepsTheMomentum,
  // docs/measurements.md).
  auto toParticles = [&](const Positions& surfaceCorrection, bool own) -> Positions {
    if (model_.conforming) return surfaceCorrection;
    if (own || params_.collisionTransfer == "midpoint")
      return model_.midpointMap * surfaceCorrection;
    Eigen::MatrixXd lambda = surfaceCorrection;
    s.surfaceFactor->solve(lambda);
    return model_.surfaceMap.transpose() * lambda;
  };
  // The surface vertices' masses (the air and the surface's bending) and inverse masses, 0 at
  // pins (the cloth's own corrections).
  const Eigen::VectorXd vertexMass = ctx.sim.density * vertexAreaShare_ + vertexPointMass_;
  const Eigen::VectorXd vertexInverseMass = [&] {
    Eigen::VectorXd w = vertexMass.cwiseInverse();
    for (const auto& pin : ctx.pins) w[pin.first] = 0;
    return w;
  }();

  // 1. A at x(t), one factorization. After a step that needed none (ImpulseParams::
  // skipIdleFactorization) only the impulse directions: A is assembled and factorized when a pass
  // first has something to solve (factorNow).
  double shift = 0;
  bool factorPending = params_.skipIdleFactorization && s.idle;
  auto linearizeAtStart = [&]() -> std::optional<std::string> {
    const auto t0 = Clock::now();
    if (factorPending) {
      s.updateDistanceGradients(model_, x_);
    } else if (auto e = s.linearize(model_, x_, inverseMass_, params_.regularization, shift)) {
      return e;
    }
    stats.msFactor = msSince(t0);
    return std::nullopt;
  };
  auto factorNow = [&]() -> std::optional<std::string> {
    if (!factorPending) return std::nullopt;
    factorPending = false;
    const auto t0 = Clock::now();
    const std::optional<std::string> e =
        s.assembleAndFactorize(inverseMass_, params_.regularization, shift);
    stats.msFactor += msSince(t0);
    stats.regularization = shift;
    return e;
  };
  // Whether the step needed A at x(t): its velocity pass or its first position pass had something
  // to solve. After a step that did not, the next one puts the factorization off.
  bool neededFactor = false;

  // 2. Forces: gravity, implicit quadratic bending, damping. 3. Contacts predicted on the
  // preview: velocities of surface points that would end up inside an obstacle are changed so
  // they land on it (with friction), before the position pass, so that the pass resolves the
  // constraints around the contacts. Neither uses A.
  const Positions previousSurface = surface_;
  std::vector<FrictionLeft> frictionLeft;  // per surface vertex, from the contacts' prediction
  auto forcesAndContacts = [&]() -> std::optional<std::string> {
    auto t0 = Clock::now();
    if (ctx.sim.airDensity > 0) {
      // The air's change of the surface's velocities (sim/air.h), to the particles at the edges'
      // midpoints.
      const Positions dv =
          airVelocityChange(cloth_->mesh, surface_, surfaceFromParticles(model_, v_), vertexMass,
                            ctx.sim, h, ctx.pins);
      v_ += model_.conforming ? dv : Positions(model_.midpointMap * dv);
    }
    const Eigen::RowVector3d gravityStep = h * ctx.sim.gravity.transpose();
    const double ncDamping = model_.conforming ? 0.0 : params_.nonconformingDamping;
    if (ctx.sim.bending > 0 || ncDamping > 0) {
      // A supernodal factor solved without BLAS (SupernodalSolve, on this thread): alongside
      // the factorization of A, which holds the BLAS lock (lockBlas: the serial OpenBLAS has
      // none), it does not wait for the lock, and on sphere-drop it takes 13.4 to 13.7 ms
      // instead of the simplicial factor's 15.2 to 15.7. The same solver with and without
      // parallel_forces, so that the results never depend on other simulations.
      const double key[4] = {ctx.sim.bending, h, ctx.sim.density, ncDamping};
      const Eigen::VectorXd mass = ctx.sim.density * model_.areaShare + extraMass_;
      if (!s.bendingFactor || !std::equal(key, key + 4, s.bendingKey)) {
        const SparseMatrix scaledBending = (h * h * ctx.sim.bending) * model_.bending;
        SparseMatrix system = scaledBending;
        if (ncDamping > 0) system += (h * ncDamping * mass.mean()) * model_.nonconformity;
        system += SparseMatrix(mass.asDiagonal());
        const SparseMatrix upper = upperOf(system);
        // A new bending stiffness, time step or density keeps the pattern: factorized again
        // without a new analysis (on a 100 000-triangle disk 3.2 s of nested dissection, which
        // every edit of those in the viewer repeated).
        if (!s.bendingFactor || !s.bendingFactor->analysedFor(upper)) {
          s.bendingFactor = makeSpdSolver("cholmod-blas-free-solves");
          if (auto e = s.bendingFactor->analyze(upper)) return e;
        }
        std::string message;
        if (s.bendingFactor->factorize(upper, &message) != SpdSolver::Status::Ok) {
          s.bendingFactor.reset();
          return "force system (M + h c R + h^2 k_b Q) factorization failed: " + message +
                 bendingOutweighsMass(scaledBending, mass, ctx.sim.bending, h, "particle");
        }
        std::copy(key, key + 4, s.bendingKey);
      }
      Eigen::MatrixXd rhs = mass.asDiagonal() * (v_.rowwise() + gravityStep);
      if (ctx.sim.bending > 0) rhs -= (h * ctx.sim.bending) * (model_.bending * x_);
      if (const RestBend* rest = restShapeFor(ctx.sim.bendingRest, model_.restBend);
          rest && ctx.sim.bending > 0)
        rest->addForce(x_, h * ctx.sim.bending, rhs);
      s.bendingFactor->solve(rhs);
      v_ = rhs;
      if (model_.bendingOnSurface && ctx.sim.bending > 0) {
        if (auto e = bendSurface(model_, *s.surfaceBending, vertexMass, ctx.sim.bending, h,
                                 ctx.sim.bendingRest, surface_, v_))
          return e;
      }
    } else {
      v_.rowwise() += gravityStep;
    }
    if (ctx.sim.damping > 0) v_ /= 1.0 + h * ctx.sim.damping;
    stats.msForces = msSince(t0);

    t0 = Clock::now();
    // A garment's stitches (sim/stitches.h): the surface's preview brought within their
    // allowance, as a change of the particles' velocities; the passes then keep the edges
    // inextensible, so a seam closes as far as the cloth lets it.
    if (ctx.stitchAllowance) {
      const Positions predicted = surface_ + h * surfaceFromParticles(model_, v_);
      Positions sewn = predicted;
      for (int pass = 0; pass < kStitchPasses; ++pass)
        projectStitches(cloth_->stitches, *ctx.stitchAllowance, vertexInverseMass, sewn);
      v_ += toParticles(sewn - predicted, /*own=*/true) / h;
    }
    if (!ctx.obstacles.empty()) {
      const Positions predicted = surface_ + h * surfaceFromParticles(model_, v_);
      Positions correction;
      const ContactResult contacts =
          resolveContacts(ctx.obstacles, ctx.sim.thickness, previousSurface, predicted, correction,
                          h, nullptr, nullptr, ctx.contactAllowance, &frictionLeft);
      stats.contacts = contacts.contactCount;
      if (contacts.contactCount > 0) v_ += toParticles(correction, /*own=*/false) / h;
    }
    stats.msCollision = msSince(t0);
    return std::nullopt;
  };

  // 1 on this thread, 2 and 3 offered to a second one at the same time (they touch disjoint
  // state), while a hardware thread is free (other simulations may be stepping beside this one);
  // one after the other otherwise, when no thread can be reached, or when no helper has begun 2
  // and 3 by the time 1 is done (sim/alongside.h: this thread then takes them back).
  Alongside<std::optional<std::string>> worker(
      forcesAndContacts, params_.parallelForces && StepInProgress::threadToSpare());
  const std::optional<std::string> linearizeError = linearizeAtStart();
  const std::optional<std::string> forcesError = worker.get();
  const bool forcesAlongside = worker.offered(),
             forcesTakenBack = forcesAlongside && !worker.ranByHelper();
  if (linearizeError) return restore(*linearizeError);
  if (forcesError) return restore(*forcesError);
  stats.regularization = shift;
  stats.linearSolver = s.factor->name();

  // 4. Velocity pass, after the contact filter so that its velocity jumps are made
  // consistent with the constraints: J v = 0 after one solve.
  auto t0 = Clock::now();
  // Impulses along the distance rows in this step so far, for the geometric stiffness. With the
  // factorization put off, none where J v is zero within rounding (kIdleVelocityError).
  Eigen::VectorXd rowImpulse;
  {
    Eigen::VectorXd velocityError;
    s.velocityErrors(v_, velocityError);
    const bool velocityIdle =
        velocityError.size() == 0 ||
        velocityError.lpNorm<Eigen::Infinity>() * h <= kIdleVelocityError * params_.tolerance;
    neededFactor = !velocityIdle;
    if (factorPending && velocityIdle) {
      rowImpulse = Eigen::VectorXd::Zero(s.distanceRows);
    } else {
      if (auto e = factorNow()) return restore(*e);
      rowImpulse = s.velocityPass(inverseMass_, v_, std::move(velocityError)).head(s.distanceRows);
    }
  }
  // The friction the contacts' prediction left (resolveContacts' FrictionLeft). The velocity pass
  // pulls the points resting on an obstacle along it (the cloth beyond them hangs on them) after
  // the prediction's friction has acted, so each step slid them by what it added: a cloth lying
  // over a table's edge crept off it under a load that static friction holds (a fifth of it
  // overhanging at friction 0.3: 15 mm in 6 s; `xpbd` and `mls-isometry` held it). Against that
  // slip, what each point's friction can still cancel, as a change of the surface's velocities
  // through the midpoint map (B M = I: the surface changes by exactly that, and carries its
  // momentum; T cost 2 ms more per step on sphere-drop), then the velocity pass again
  // (`clothlab-cli bench`: sphere-drop's contact steps 43.9 → 46.5 ms, tablecloth 6.4 → 7.3 ms).
  // Measured: that cloth holds still; a 0.4 m one of 13 x 13 vertices creeps 0.2 mm/s
  // instead of 1.4 (the position pass slides it). Friction once more after the second velocity
  // pass left J v off zero, and a sheet rising out of its thickness on a plane bucked up at
  // 0.07 m/s; with a third velocity pass the small cloth held still too, at 2.3 ms more.
  auto frictionAgainstSlip = [&] {
    const Positions surfaceVelocity = surfaceFromParticles(model_, v_);
    Positions change = Positions::Zero(surfaceVelocity.rows(), 3);
    bool changed = false;
    for (Eigen::Index i = 0; i < surfaceVelocity.rows(); ++i) {
      const FrictionLeft& f = frictionLeft[i];
      if (!(f.left > 0)) continue;
      const Vec3 relative = surfaceVelocity.row(i).transpose() - f.obstacleVelocity;
      const Vec3 tangential = relative - relative.dot(f.normal) * f.normal;
      const double slip = h * tangential.norm();
      if (!(slip > 0)) continue;
      change.row(i) = -(std::min(slip, f.left) / slip) * tangential.transpose();  // a velocity
      changed = true;
    }
    if (changed) v_ += toParticles(change, /*own=*/true);
    return changed;
  };
  // The features' contacts inside the solve (ImpulseParams::featureContacts): the points the
  // features would push at the velocities' prediction, each along its push, as the contacts'
  // prediction (step 3) finds the points an obstacle's triangles hold. A point resting on a tip
  // comes within the thickness in the prediction whenever it is not moving off. The pairs found
  // here, over the step with the thickness as a margin, serve the position passes too.
  std::optional<ObstacleFeaturePairs> featurePairs;
  const bool features = hasMeshObstacle(ctx.obstacles);
  std::vector<Impl::ContactPoint> contactPoints;
  if (params_.featureContacts && features) {
    const Positions predicted = surface_ + h * surfaceFromParticles(model_, v_);
    featurePairs.emplace(cloth_->mesh, cloth_->topology, previousSurface, predicted,
                         vertexInverseMass, ctx.sim.thickness, ctx.obstacles, ctx.sim.thickness);
    Positions pushed = predicted;
    std::vector<int> pushedBy;  // the obstacle whose feature pushed each point the most
    featurePairs->resolve(pushed, 4, ctx.contactAllowance, &pushedBy);
    for (int vertex = 0; vertex < surface_.rows(); ++vertex) {
      const Vec3 push = (pushed.row(vertex) - predicted.row(vertex)).transpose();
      const double distance = push.norm();
      if (!(distance > 0) || vertexInverseMass[vertex] == 0 || pushedBy[vertex] < 0) continue;
      const Obstacle& pusher = ctx.obstacles[pushedBy[vertex]];
      const Vec3 normal = push / distance;
      const Vec3 obstacleVelocity = pusher.surfaceVelocity(surface_.row(vertex).transpose());
      contactPoints.push_back(
          {vertex, normal, obstacleVelocity, normal.dot(obstacleVelocity), pusher.friction});
    }
  }
  const bool slipCancelled = stats.contacts > 0 && frictionAgainstSlip();
  if (slipCancelled || !contactPoints.empty()) {
    neededFactor = true;
    if (auto e = factorNow()) return restore(*e);
  }
  if (!contactPoints.empty()) {
    Eigen::VectorXd impulse;
    int released = 0, sliding = 0, factorizations = 0;
    if (auto e = s.contactVelocityPass(model_, *cloth_, contactPoints, inverseMass_, v_, impulse,
                                       released, sliding, factorizations))
      return restore(*e);
    rowImpulse += impulse;
    stats.extra["contact_points"] = static_cast<int>(contactPoints.size());
    stats.extra["contact_points_released"] = released;
    stats.extra["contact_points_sliding"] = sliding;
    stats.extra["contact_factorizations"] = factorizations;
  } else if (slipCancelled) {  // no contact, no friction: nothing to look at
    rowImpulse += s.velocityPass(inverseMass_, v_).head(s.distanceRows);
  }
  stats.msVelocity = msSince(t0);

  // 5. Position pass on the preview x~ = x + h v.
  t0 = Clock::now();
  Eigen::VectorXd c;
  Positions preview = x_ + h * v_;
  double error = 0;
  int iterations = 0;
  bool stalled = false;
  int refactorizations = 0, localFactorizations = 0;
  // The inverse masses of the pass's current linearization: once a correction has been rejected
  // in this step, each re-linearization stiffens them (ImpulseParams::geometricStiffness); a
  // local one holds the particles outside it (inverse mass 0).
  Eigen::VectorXd passInverseMass;
  bool rejected = false, stiffened = false, shiftMomentum = false;
  int stiffenedFactorizations = 0;
  Eigen::VectorXd massShare;  // m K' of the pass's inverse masses
  double totalMass = 0;        // summed when the first pass that shifts momentum needs it
  // The first pass's first correction with the step's factor, A at x(t). In contact it can fail:
  // the contact response leaves errors at the preview that A(x(t)) cannot reduce (`sphere-drop`:
  // 155 of 160 contact steps rejected it after all its halvings, about 7 ms each), so after
  // failures in a row the next steps start as they would once it had failed: with the masked
  // correction or a re-linearization (kStartRejectionsToSkip, kMaxStartSkips, kMaskedRowsFactor).
  bool firstPass = true, startTried = false;
  const char* startCorrection = nullptr;   // the stats' start_correction: taken, rejected or skipped
  const char* maskedCorrection = nullptr;  // the stats' masked_correction: taken or rejected
  bool maskNext = false;  // the next correction is the step factor's with large rows masked
  // The rows a masked correction leaves out: above kMaskedRowsFactor times the tolerance.
  const double maskAbove = kMaskedRowsFactor * params_.tolerance;
  const auto maskedOut = [&](Eigen::Index r) { return std::abs(c[r]) > maskAbove; };
  // A pass that can re-linearize locally tries the masked correction before re-linearizing, where
  // there are rows to mask and rows above the tolerance left to aim at.
  auto maskingHelps = [&] {
    if (!params_.localRelinearization) return false;
    bool large = false, aimed = false;
    for (Eigen::Index r = 0; r < c.size() && !(large && aimed); ++r) {
      if (maskedOut(r)) large = true;
      else aimed = aimed || std::abs(c[r]) > params_.tolerance;
    }
    return large && aimed;
  };
  // No factor of the current rows at the current linearization: a pass holding contacts starts
  // so, and re-linearizes before its first correction (locally where it can).
  bool globalStale = false;
  bool stopped = false;  // the pass saw a stop request (StepContext::stop)
  std::optional<std::string> factorError;  // of a factorization put off to the first pass
  auto positionPass = [&] {
    passInverseMass = inverseMass_;
    stiffened = shiftMomentum = false;
    s.local.reset();
    s.evaluate(model_, preview, c);
    error = s.maxError(c);
    stalled = maskNext = false;
    if (firstPass && error > params_.tolerance) {
      neededFactor = true;
      if ((factorError = factorNow())) return;
      if (s.startSkipsLeft > 0 && (params_.maxRefactorizations > 0 || params_.localRelinearization)) {
        --s.startSkipsLeft;
        startCorrection = "skipped";
        // The masked correction first, or a re-linearization (stiffened) before the first solve.
        rejected = true;
        if (maskingHelps()) maskNext = true;
        else stalled = true;
      } else {
        startTried = true;
      }
    }
    firstPass = false;
    bool slow = false;      // the last correction gained less than slowProgressGain
    bool fewLeft = false;   // few rows are left above the tolerance (see kLocalSwitchShare)
    bool localFailed = false;
    int localRings = kLocalRings;
    std::optional<bool> localPaid;  // of the current local linearization, by its first correction
    double squared = Impl::squaredError(c);
    for (int passIterations = 0; error > params_.tolerance && passIterations < params_.maxIterations;) {
      if (ctx.stopRequested()) {
        stopped = true;
        break;
      }
      const bool noFactor = globalStale && !s.local;
      if (stalled || slow || fewLeft || noFactor) {
        // Re-linearize at the preview: new impulse directions, one more factorization. Where
        // the errors are confined, only around them (ImpulseParams::localRelinearization). A
        // local linearization pays when its first correction is taken whole and at least halves
        // the squared error; the held surroundings cannot give way to a stretch that needs the
        // cloth around to move (near point pins), so one that does not is followed by one
        // reaching twice as far, and past kLocalMaxRings by global ones for the rest of the pass.
        if (s.local && !localPaid.value_or(false)) {
          if (localRings < kLocalMaxRings) localRings *= 2;
          else localFailed = true;
        }
        const bool tryLocal = params_.localRelinearization && !localFailed;
        const bool globalLeft = noFactor || (refactorizations < params_.maxRefactorizations && (stalled || slow));
        bool linearized = false;
        if (tryLocal || globalLeft) {
          // A shift that grows with each (Levenberg-Marquardt) makes the steps shorter and safer.
          const double damped = std::max(params_.regularization, 1e-8) *
                                std::pow(params_.refactorizationShiftGrowth, refactorizations + localFactorizations);
          // Once the step has rejected a correction, the particles that taut rows hold are made
          // heavier (geometric stiffness); a re-linearization for slow progress alone keeps the
          // true masses (`spinning-sphere` with held self-collision corrections ended 107 to 132
          // of 300 steps above the tolerance with every re-linearization stiffened, 53 to 80 so,
          // 61 to 70 without).
          rejected = rejected || stalled;
          const bool stiffen = params_.geometricStiffness > 0 && rejected;
          const Eigen::VectorXd linearizationInverseMass =
              stiffen ? s.stiffenedInverseMass(model_, inverseMass_, rowImpulse, params_.geometricStiffness, h)
                      : inverseMass_;
          if (tryLocal && s.linearizeLocally(model_, preview, c, params_.tolerance, localRings,
                                             kLocalMaxShare, linearizationInverseMass,
                                             std::min(damped, 1.0), shift, passInverseMass)) {
            ++localFactorizations;
            linearized = true;
          } else if (globalLeft) {
            ++refactorizations;
            s.local.reset();
            passInverseMass = linearizationInverseMass;
            if (s.linearize(model_, preview, passInverseMass, std::min(damped, 1.0), shift)) break;  // keep the residual
            linearized = true;
            globalStale = false;
          }
          if (linearized) {
            stiffened = stiffen;
            stiffenedFactorizations += stiffen;
            // Stiffened masses make the distance rows' impulses push the cloth as a whole, and so
            // do rows whose far particles are held; without pins, a grab or held contacts (whose
            // rows take outside impulses) nothing else may, so that push is taken back as a
            // uniform velocity, which no distance row sees. With such rows the shift would fight
            // them (8000-triangle `hanging`: 5.2 instead of 3.9 factorizations per step).
            shiftMomentum = (stiffened || s.local) && s.linearRows.empty();
            if (shiftMomentum) {
              massShare = passInverseMass.cwiseQuotient(inverseMass_);
              if (totalMass == 0) totalMass = inverseMass_.cwiseInverse().sum();
            }
            localPaid.reset();
            if (s.local) squared = s.local->outsideSquared + Impl::squaredError(c(s.local->rows));
          }
        }
        if (!linearized && (stalled || noFactor)) break;
        stalled = slow = fewLeft = false;  // slow progress goes on with the last directions
      }
      Eigen::VectorXd p = -c / h;
      const bool masked = maskNext;
      maskNext = false;
      double aimedSquared = 0;  // of the rows a masked correction aims at, before it
      if (masked) {
        for (Eigen::Index r = 0; r < p.size(); ++r) {
          if (maskedOut(r)) p[r] = 0;
          else aimedSquared += c[r] * c[r];
        }
      }
      if (s.local) s.solveLocally(p);
      else s.solve(p);
      ++iterations;
      ++passIterations;
      // Back-tracking: halve the correction while it makes the squared error grow (the solve's
      // direction decreases it for a small enough step); if it still does after all halvings the
      // correction is rejected.
      // A correction is tried in place on the particles and rows it changes (Impl::tryCorrection;
      // a local one's only); the uniform velocity taking back its momentum changes no distance
      // row and is applied once the correction is taken.
      double scale = 1.0;
      for (int halving = 0;; ++halving) {
        const double trialSquared = s.tryCorrection(model_, p, scale, passInverseMass, h, x_, v_, preview);
        bool gains = trialSquared < squared;
        if (masked) {  // a global correction: trialC holds every row, in order
          double aimedAfter = 0;
          for (Eigen::Index r = 0; r < c.size(); ++r)
            if (!maskedOut(r)) aimedAfter += s.trialC[r] * s.trialC[r];
          gains = aimedAfter < aimedSquared;
        }
        if (gains) {
          if (masked) maskedCorrection = "taken";
          if (startTried) {
            s.startRejections = 0;
            s.startSkipRun = 1;
            startCorrection = "taken";
          }
          startTried = false;
          slow = !masked && trialSquared > (1.0 - params_.slowProgressGain) * squared;
          if (s.local && !localPaid) localPaid = scale == 1.0 && trialSquared <= kLocalFirstGain * squared;
          // With few rows left above the tolerance a local linearization costs less than more
          // solves with the global factor, unless those solves are converging fast.
          if (masked) {
            fewLeft = true;  // the large rows and the few left beside them: a local re-linearization
          } else if (params_.localRelinearization && !s.local && !localFailed && !slow &&
                     trialSquared > 0.01 * squared) {
            const long above = (s.trialC.array().abs() > params_.tolerance).count();
            fewLeft = above > 0 && above < kLocalSwitchShare * s.trialC.size();
          }
          squared = trialSquared;
          s.acceptTrial(c);
          if (shiftMomentum) {
            const Vec3 shiftBack = s.spuriousMomentum(p, scale, massShare) / totalMass;
            v_.rowwise() -= shiftBack.transpose();
            preview = x_ + h * v_;
          }
          s.forChangedRows([&](int r) {
            if (r < s.distanceRows) rowImpulse[r] += scale * p[r];
          });
          error = s.maxError(c);
          break;
        }
        s.undoTrial(v_, preview);
        if (halving >= params_.backtrackHalvings) {
          if (masked) maskedCorrection = "rejected";
          if (startTried) {
            startCorrection = "rejected";
            if (++s.startRejections >= kStartRejectionsToSkip) {
              s.startSkipsLeft = s.startSkipRun;
              s.startSkipRun = std::min(2 * s.startSkipRun, kMaxStartSkips);
            }
            if (maskingHelps()) {  // the same factor once more, masked, before re-linearizing
              startTried = false;
              rejected = true;
              maskNext = true;
              break;
            }
          }
          startTried = false;
          stalled = true;
          break;
        }
        scale *= 0.5;
        ++stats.backtracks;
      }
    }
  };
  positionPass();
  if (factorError) return restore(*factorError);
  if (stopped) return restore(kStepStopped);
  stats.msPosition = msSince(t0);

  // 6. Points the pass moved inside an obstacle (not just into the thickness band, which the
  // next step's prediction handles) are put back on its surface. 7. Mesh obstacles' features and
  // self-collision on the ghost surface (split by inverse mass, pins held), sent back through
  // the midpoint map (toParticles).
  // Where these corrections break constraints that the pass met, the points they moved are held
  // (along the obstacle's normal, or the direction they were pushed) in a further pass, and the
  // corrections run again, up to contact_rounds passes.
  t0 = Clock::now();
  double heldPassMs = 0;
  std::vector<Impl::ContactRow> held;
  std::vector<char> isHeld(surface_.rows(), 0);
  size_t heldRows = 0;  // the held points the rows were last built for
  int heldPasses = 0, heldPassFactorizations = 0;  // the passes after the first, and their full factorizations
  // A surface correction moves the preview (and so the velocity) through the particles.
  auto correctPreview = [&](const Positions& surfaceCorrection, bool own) {
    const Positions particleCorrection = toParticles(surfaceCorrection, own);
    preview += particleCorrection;
    v_ += particleCorrection / h;
    surface_ = surfaceFromParticles(model_, preview);
  };
  // Pair corrections (mesh obstacles' features, self-collision) applied to the preview; their
  // surface correction in `pairCorrection`.
  // The features' pairs (found with the contacts above, or on the first pass here) are found
  // once, with the thickness as a margin for what the later passes move, and searched again where
  // a point moved farther.
  auto correctPairs = [&](int round, bool features, bool self, Positions& pairCorrection) {
    const Eigen::VectorXd& weights = vertexInverseMass;
    Positions corrected = surface_;
    const double selfMs = stats.extra.value("ms_self_collision", 0.0);
    int resolved = 0;
    // The features first, on their pairs found once, then self-collision (what
    // resolveFeaturesAndSelfCollisions does in one call).
    if (features) {
      if (!featurePairs || !featurePairs->covers(corrected))
        featurePairs.emplace(cloth_->mesh, cloth_->topology, previousSurface, corrected, weights,
                             ctx.sim.thickness, ctx.obstacles, ctx.sim.thickness);
      resolved += featurePairs->resolve(corrected, 4, ctx.contactAllowance).resolved;
    }
    if (self)
      resolved += resolveFeaturesAndSelfCollisions(
          cloth_->mesh, cloth_->topology, previousSurface, corrected, weights, ctx.sim.thickness,
          true, {}, stats, nullptr, ctx.contactAllowance, &cloth_->stitches, nullptr, &s.selfPairs);
    if (resolved > 0) {
      pairCorrection = corrected - surface_;
      correctPreview(pairCorrection, /*own=*/true);
    }
    if (round > 1 && self)
      stats.extra["ms_self_collision"] = selfMs + stats.extra.value("ms_self_collision", 0.0);
  };
  const bool holdFeatures = features && (params_.holdFeatureCorrections || params_.holdPairCorrections);
  const bool holdSelf = ctx.sim.selfCollision && params_.holdPairCorrections;
  const bool holdPairs = holdFeatures || holdSelf;
  // The passes move points little: each point's nearby mesh triangles are gathered once.
  ContactCache contactCache(ctx.sim.thickness);
  for (int round = 1;; ++round) {
    const bool passMet = error <= params_.tolerance;
    surface_ = surfaceFromParticles(model_, preview);
    Positions contactCorrection, contactNormals, pairCorrection;
    const bool contacted =
        !ctx.obstacles.empty() &&
        resolveContacts(ctx.obstacles, 0.0, previousSurface, surface_, contactCorrection, h, &contactNormals,
                        &contactCache)
                .contactCount > 0;
    if (contacted) correctPreview(contactCorrection, /*own=*/false);
    if (holdPairs) correctPairs(round, holdFeatures, holdSelf, pairCorrection);
    if (!contacted && pairCorrection.rows() == 0) break;
    if (round >= params_.contactRounds || !passMet) break;
    s.evaluate(model_, preview, c);
    if (s.maxError(c, /*withGrab=*/false) <= params_.tolerance) break;
    // The corrections broke constraints the pass met: hold the points they moved, along the
    // obstacle's normal or the direction they were pushed, and run the pass again.
    auto hold = [&](int vertex, const Vec3& direction) {
      if (isHeld[vertex]) return;
      held.push_back(Impl::heldRow(model_, *cloth_, vertex, surface_.row(vertex).transpose(), direction));
      isHeld[vertex] = 1;
    };
    for (int vertex = 0; contacted && vertex < contactCorrection.rows(); ++vertex)
      if (contactCorrection.row(vertex).squaredNorm() > 0) hold(vertex, contactNormals.row(vertex).transpose());
    for (int vertex = 0; vertex < pairCorrection.rows(); ++vertex) {
      const double pushed = pairCorrection.row(vertex).norm();
      if (pushed > 0) hold(vertex, pairCorrection.row(vertex).transpose() / pushed);
    }
    const auto passStart = Clock::now();
    if (held.size() != heldRows) {  // else the last pass's rows, pattern and analysis serve again
      s.keepStructure();
      if (auto e = s.appendContactRows(*s.withoutContacts, held)) {
        s.restoreStructure();
        return restore(*e);
      }
      heldRows = held.size();
    }
    s.setLinearTargets(ctx.pins, grabTarget);
    ++heldPasses;
    const int refactorizationsBefore = refactorizations;
    // The errors the corrections left are around the points they moved: with local
    // re-linearizations the pass starts with one there (a full factorization cost 17 ms and the
    // analysis of the appended rows 11 ms on `sphere-drop`), and factorizes A with the held rows
    // only where it has to re-linearize globally.
    if (params_.localRelinearization) {
      globalStale = true;
    } else {
      ++refactorizations;
      if (s.linearize(model_, preview, inverseMass_, params_.regularization, shift)) break;
    }
    positionPass();
    if (stopped) return restore(kStepStopped);
    heldPassFactorizations += refactorizations - refactorizationsBefore;
    heldPassMs += msSince(passStart);
  }
  s.restoreStructure();  // the next step's rows hold no contacts
  if ((features && !holdFeatures) || (ctx.sim.selfCollision && !holdSelf)) {
    Positions pairCorrection;
    correctPairs(1, features && !holdFeatures, ctx.sim.selfCollision && !holdSelf, pairCorrection);
  }
  stats.extra["held_contacts"] = static_cast<int>(held.size());
  stats.extra["held_passes"] = heldPasses;
  stats.extra["held_pass_factorizations"] = heldPassFactorizations;
  x_ = preview;
  stats.positionIterations = iterations;
  stats.msPosition += heldPassMs;
  stats.msCollision += msSince(t0) - heldPassMs;

  // Divergence: caught here, at the step that produced it.
  if (!x_.allFinite() || !v_.allFinite() || !surface_.allFinite())
    return restore("the state became non-finite (position iterations " + std::to_string(iterations) +
                   ", last max |C| " + nlohmann::json(error).dump() + " m)");
  const double maxSpeed = v_.rowwise().norm().maxCoeff();
  if (maxSpeed > params_.maxSpeed)
    return restore(runawaySpeedMessage("a particle", maxSpeed, params_.maxSpeed));

  s.evaluate(model_, x_, c);
  stats.maxPositionError = s.maxError(c, /*withGrab=*/false);
  // Of the state handed on: contacts and self-collision after the pass can leave it above the
  // tolerance even when the pass reached it.
  stats.converged = stats.maxPositionError <= params_.tolerance;
  // The grab's push halves after a step whose position pass ended with a constraint error above
  // kGrabPushFloor mean edge lengths (the grab tears the cloth: yanked over the table,
  // `tablecloth` stretched edges by 2.9 and kept errors of 5 cm), unless the push was already
  // below that floor, and doubles after any other step, up to the full rate. The errors the
  // contacts leave after a pass that met the tolerance are not the grab's and do not count.
  const double tearing = std::max(params_.tolerance, kGrabPushFloor * meanEdgeLength_);
  if (!ctx.grab) grabGain_ = 1;
  else if (error <= tearing) grabGain_ = std::min(1.0, 2 * grabGain_);
  else if (grabPush > kGrabPushFloor * meanEdgeLength_) grabGain_ *= 0.5;
  if (ctx.grab) stats.extra["grab_gain"] = grabGain_;
  stats.extra["stalled"] = stalled;
  if (startCorrection) stats.extra["start_correction"] = startCorrection;
  if (maskedCorrection) stats.extra["masked_correction"] = maskedCorrection;
  stats.extra["forces_alongside"] = forcesAlongside;
  stats.extra["forces_taken_back"] = forcesTakenBack;
  stats.extra["factorizations"] = (factorPending ? 0 : 1) + refactorizations;
  s.idle = !neededFactor;
  stats.extra["stiffened_factorizations"] = stiffenedFactorizations;
  stats.extra["local_factorizations"] = localFactorizations;
  stats.maxEdgeStrain = maxEdgeStrain(cloth_->mesh, cloth_->topology, surface_);
  stats.extra["max_speed"] = maxSpeed;
  if (ctx.stitchAllowance) recordStitches(cloth_->stitches, *ctx.stitchAllowance, surface_, stats);
  stats.msTotal = msSince(stepStart);
  return std::nullopt;
}

std::optional<std::string> ImpulseSolver::projectVelocities(const StepContext& ctx) {
  Impl& s = *impl_;
  inverseMass_ = (ctx.sim.density * model_.areaShare + extraMass_).cwiseInverse();
  if (auto e = s.buildRows(model_, *cloth_, x_, ctx.pins, ctx.grab, params_.linearSolver)) return e;
  double shift = 0;
  if (auto e = s.linearize(model_, x_, inverseMass_, params_.regularization, shift)) return e;
  s.velocityPass(inverseMass_, v_);
  return std::nullopt;
}

template <typename Inspect>
auto ImpulseSolver::inspectRows(const std::vector<std::pair<int, Vec3>>& held, Inspect inspect) const {
  Impl& s = *impl_;
  if (s.structureDirty) s.buildRows(model_, *cloth_, x_, {}, std::nullopt, params_.linearSolver);
  if (held.empty()) return inspect();
  std::vector<Impl::ContactRow> rows;
  for (const auto& [vertex, direction] : held)
    rows.push_back(Impl::heldRow(model_, *cloth_, vertex, surface_.row(vertex).transpose(), direction));
  s.keepStructure();
  s.appendContactRows(*s.withoutContacts, rows);
  auto result = inspect();
  s.restoreStructure();
  return result;
}

SparseMatrix ImpulseSolver::jacobian(const std::vector<std::pair<int, Vec3>>& held) const {
  Impl& s = *impl_;
  return inspectRows(held, [&] {
    s.updateDistanceGradients(model_, x_);
    std::vector<Eigen::Triplet<double>> t;
    for (int r = 0; r < s.rowCount(); ++r)
      for (int slot = s.rowStart[r]; slot < s.rowStart[r + 1]; ++slot)
        for (int d = 0; d < 3; ++d) t.emplace_back(r, 3 * s.slotParticle[slot] + d, s.slotGradient[slot][d]);
    SparseMatrix j(s.rowCount(), 3 * model_.particleCount());
    j.setFromTriplets(t.begin(), t.end());
    return j;
  });
}

SparseMatrix ImpulseSolver::constraintMatrix(const std::vector<std::pair<int, Vec3>>& held) const {
  Impl& s = *impl_;
  return inspectRows(held, [&] {
    s.updateDistanceGradients(model_, x_);
    s.assemble(inverseMass_);
    return SparseMatrix(s.matrix.selfadjointView<Eigen::Upper>());
  });
}

}  // namespace clothlab
