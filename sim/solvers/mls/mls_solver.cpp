#include "sim/solvers/mls/mls_solver.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "sim/air.h"
#include "sim/bending.h"
#include "sim/format.h"
#include "sim/grab.h"
#include "sim/metrics.h"
#include "sim/self_collision.h"
#include "sim/stitches.h"
#include "sim/timing.h"

namespace clothlab {

const ParamTable<MlsParams>& MlsParams::table() {
  static const ParamTable<MlsParams> table = {
      {"tolerance", "", "largest accepted |tr(F^T F) - 2|, |det(F^T F) - 1| (or principal strain, see stop_on)",
       &MlsParams::tolerance, 1e-8, 1, true},
      {"stop_on", "", "what the tolerance bounds: |c| (the paper) or |s - 1| of F^T F's principal values",
       &MlsParams::stopOn, 0, 0, false, {"constraints", "principal-strain"}},
      {"projection_rows", "",
       "what Fast Projection linearizes: the constraint pair, or the trace and the principal values' gap",
       &MlsParams::projectionRows, 0, 0, false, {"trace-determinant", "trace-shear-gap"}},
      {"shear_gap_softening", "", "e in sqrt(g^2 + e^2) - e, the gap row of trace-shear-gap",
       &MlsParams::shearGapSoftening, 0, 10, false},
      {"max_iterations", "", "Fast Projection iterations per step", &MlsParams::maxIterations, 1, 500, true},
      {"neighbourhood", "", "MLS neighbourhood: mesh 1-ring, 2-ring, or a material radius",
       &MlsParams::neighbourhood, 0, 0, false, {"1-ring", "2-ring", "radius"}},
      {"radius", "m", "material-space radius of 'radius' neighbourhoods (0: twice the mean rest edge length)",
       &MlsParams::radius, 0, 10, false},
      {"weighting", "", "MLS weights: uniform or the neighbour's mass", &MlsParams::weighting, 0, 0, false,
       {"uniform", "mass"}},
      {"regularization", "", "diagonal shift of J W J^T relative to its largest diagonal entry",
       &MlsParams::regularization, 0, 0.1, true},
      {"geometric_stiffness", "", "regularize with the constraint Hessians (block-diagonal)",
       &MlsParams::geometricStiffness},
      {"fallback", "", "augmented-Lagrangian projection when Fast Projection stalls", &MlsParams::fallback},
      {"fallback_on_rate", "",
       "start the fallback once Fast Projection's rate would not reach the tolerance in max_iterations",
       &MlsParams::fallbackOnRate},
      {"contact_projection", "",
       "hold contact points during the projection (Coulomb friction on the obstacles' reactions)",
       &MlsParams::contactProjection},
      {"fallback_iterations", "", "outer augmented-Lagrangian iterations", &MlsParams::fallbackIterations, 1,
       1000, true},
      {"max_speed", "m/s", "speed treated as divergence", &MlsParams::maxSpeed, 1, 1e6, true},
      {"edge_strain_limit", "", "largest stretch of an edge, |e| / |e0| - 1 (0: none)", &MlsParams::edgeStrainLimit,
       0, 1, false},
      {"lone_pin_rings", "",
       "neighbourhood rings of a vertex pinned alone (no pinned neighbour); one pinned across a crease, "
       "where its 2-ring fit is further off, keeps its 1-ring",
       &MlsParams::lonePinRings, 1, 2, false},
  };
  return table;
}

namespace {

// Contacts during the projection (MlsParams::contactProjection). A point within the thickness of
// an obstacle is held while Fast Projection runs: "stuck" where static friction keeps it (where it
// started the step, carried by the obstacle's surface), or "sliding": free along the obstacle, not
// along its normal. The obstacle's impulse on a held point,
//   R_i = m_i (x_i - x~_i) + (sum of J^T dl)_i
// (the momentum change of the point that the constraint impulses do not explain; x~ the candidate
// before contacts), follows Coulomb's law: R.n >= 0 (contacts push, never pull), tested point by
// point, and static friction, tested on all the points stuck to one obstacle together
// (slipGroups): the sum of their tangential impulses within friction x the sum of the normal
// ones. Point by point, the points on a sphere's steep sides slid under their own weight: the
// cloth's tension that holds them there reaches them only through the constraint impulses, which
// cancel inside the group and leave its pull on the rest of the cloth. Before the projection (no
// constraint impulse yet) this decides where the points start: a group outside the cone slides
// by the part of its motion friction cannot take and is then held there. After every iteration
// a point the obstacle would have to pull is let go (once per projection), and a group outside
// the cone slides from where it is (the constraint impulses on held points are not those of
// points set free, so no friction-limited move is taken from them). Free points the projection
// moves into an obstacle are put back on it and slide. Pinned points and the grabbed triangle's
// are never held: the grab pulls its point off an obstacle through the constraints like any other
// point.
struct ProjectionContacts {
  enum State : char { Free, Sliding, Stuck };
  std::vector<char> state;
  std::vector<Vec3> normal;       // outward, of the obstacle held against
  std::vector<int> obstacle;      // its index
  std::vector<int> held;          // points not Free
  std::vector<char> exempt;       // never held: pins, the grabbed triangle
  // Let go once in this projection. A point let go that the projection then moves back into the
  // obstacle is held again (sliding) and stays held: letting it go each time its summed reaction
  // pulls cycled on the crushed cylinder (2 to 20 points let go and put back every iteration,
  // 20 iterations and the fallback on every step of the crush).
  std::vector<char> released;
  // How far within the thickness each point may stay (StepContext::contactAllowance; null: none).
  const Eigen::VectorXd* allowance = nullptr;
  double restored(double thickness, int i) const { return thicknessKept(thickness, allowance, i); }

  explicit ProjectionContacts(std::vector<char> exemptPoints)
      : state(exemptPoints.size(), Free),
        normal(exemptPoints.size(), Vec3::Zero()),
        obstacle(exemptPoints.size(), -1),
        exempt(std::move(exemptPoints)),
        released(state.size(), 0) {}

  // Static friction per obstacle, on the stuck points together: the cloth does not stretch, so
  // they slide together or not at all, and the constraint impulses between them cancel in the
  // sum, which leaves the weight of the points and the pull of the cloth around them. A group
  // outside the cone slides: with `move` by the group's excess (the part of the summed tangential
  // impulse friction cannot take, over the group's mass; each point within its tangent plane),
  // staying held there; without, its points become free to slide along the obstacle.
  // `reaction(i)` is point i's impulse from the obstacle.
  template <typename Reaction>
  bool slipGroups(const std::vector<Obstacle>& obstacles, const Eigen::VectorXd& mass, Reaction reaction, bool move,
                  Positions& x) {
    bool changed = false;
    for (int k = 0; k < static_cast<int>(obstacles.size()); ++k) {
      Vec3 tangential = Vec3::Zero();
      double normalSum = 0, massSum = 0;
      for (int i : held) {
        if (state[i] != Stuck || obstacle[i] != k) continue;
        const Vec3 r = reaction(i);
        normalSum += r.dot(normal[i]);
        tangential += r - r.dot(normal[i]) * normal[i];
        massSum += mass[i];
      }
      const double over = tangential.norm() - obstacles[k].friction * normalSum;
      if (massSum == 0 || over <= 0) continue;
      const Vec3 slide = -(over / massSum / tangential.norm()) * tangential;
      for (int i : held) {
        if (state[i] != Stuck || obstacle[i] != k) continue;
        changed = true;
        if (move) x.row(i) += (slide - slide.dot(normal[i]) * normal[i]).transpose();
        else state[i] = Sliding;
      }
    }
    return changed;
  }

  // The closest obstacle within `reach` of p: its signed distance, normal and index (-1: none).
  static int closest(const std::vector<Obstacle>& obstacles, const Vec3& p, const Vec3& previous, double reach,
                     double& distance, Vec3& n) {
    int found = -1;
    distance = reach;
    for (size_t k = 0; k < obstacles.size(); ++k) {
      Vec3 normalHere;
      const double d = signedDistance(obstacles[k], p, &normalHere, &previous, reach);
      if (d < distance) {
        distance = d;
        n = normalHere;
        found = static_cast<int>(k);
      }
    }
    return found;
  }

  // Points of x (the candidate after the contacts) within the thickness of an obstacle start
  // stuck where they began the step (carried by the obstacle's surface, on it), with reactions
  // R = m (T - x~); a group outside the friction cone slides from there (slipFromCandidate, once
  // the features' points are held too). A point moving away from the obstacle is left free. A point
  // that was not in contact at the start of the step (it arrives now) starts where the contacts put
  // it.
  void start(const std::vector<Obstacle>& obstacles, double thickness, double h,
             const Positions& begin, const Positions& candidate, Positions& x) {
    const double reach = 1.001 * thickness + 1e-9;
    for (int i = 0; i < static_cast<int>(x.rows()); ++i) {
      if (exempt[i]) continue;
      const Vec3 previous = begin.row(i).transpose();
      double distance;
      Vec3 n;
      const int k = closest(obstacles, x.row(i).transpose(), previous, reach, distance, n);
      if (k < 0) continue;
      Vec3 target = x.row(i).transpose();
      const Vec3 carried = previous + h * obstacles[k].surfaceVelocity(previous);
      Vec3 carriedNormal;
      const double carriedDistance = signedDistance(obstacles[k], carried, &carriedNormal, &previous, 2 * reach);
      if (carriedDistance < 2 * reach) {
        target = carried + (restored(thickness, i) - carriedDistance) * carriedNormal;
        n = carriedNormal;
      }
      if (!((target - candidate.row(i).transpose()).dot(n) > 0)) continue;  // leaving the obstacle
      state[i] = Stuck;
      x.row(i) = target.transpose();
      normal[i] = n;
      obstacle[i] = k;
      held.push_back(i);
    }
  }

  // After start() and holdFeatures(): each group outside the friction cone slides by the part of
  // its motion friction cannot take (slipGroups), with the reactions R = m (x - x~) of where the
  // points are held against the candidate x~ before the contacts. Run before the features were
  // held, it left their points stuck where they began the step whatever the friction: a cloth on
  // a 15-degree bed of spikes did not move at friction 0.
  void slipFromCandidate(const std::vector<Obstacle>& obstacles, const Positions& candidate,
                         const Eigen::VectorXd& mass, Positions& x) {
    slipGroups(obstacles, mass,
               [&](int i) { return Vec3(mass[i] * (x.row(i) - candidate.row(i)).transpose()); }, true, x);
  }

  // Mesh obstacles' sharp features (a spike's tip, a horn, a ridge) against the cloth's
  // triangles and edges (resolveObstacleFeatures), on x after start(): the points they push are
  // held too, stuck where they began the step plus this step's motion along the push, in the
  // friction groups of their obstacle like the other contacts (so that a drag pulls the cloth
  // over the tip). Pushed only after the projection, the points a tip held up every step were
  // pulled down again by the next projection and the cloth around them stretched: a sheet
  // dropped on a pyramid's apex stretched its edges by 78% and was flung off, and on Spot 17 of
  // 520 steps met the tolerance. Running the pass again after the projection, with its new points
  // held in a further projection, met it on more steps but pumped a coarse sheet up the apex
  // (its top rose from 0.31 to 0.68 m in 300 steps).
  void holdFeatures(const TriangleMesh& mesh, const MeshTopology& topology, const std::vector<Obstacle>& obstacles,
                    double thickness, const Positions& begin, const Eigen::VectorXd& mass, Positions& x) {
    // The points start() stuck on the obstacle's faces take their share of the push like any
    // other. Held still (weight 0), they left a poked triangle's free corners the whole push, up
    // to 4 times the gap, and those corners were then held there: every such step threw energy
    // into the cloth. A 1000-triangle sheet dropped on a pyramid's apex gained up to 2.3 J/kg
    // after landing (kinetic and potential, from 2.3 to 4.6 J/kg, more than it was dropped
    // with), its top climbed 13 cm above the apex and its corners whipped at 26 m/s; now it gains
    // 0.2 J/kg (0.18 to 0.49 dropped from 0.04 to 0.08 m) and stays on the apex
    // (docs/measurements.md, "Energy on a point support").
    Eigen::VectorXd weights = mass.cwiseInverse();
    for (int i = 0; i < static_cast<int>(x.rows()); ++i)
      if (exempt[i]) weights[i] = 0;
    for (int k = 0; k < static_cast<int>(obstacles.size()); ++k) {
      const Obstacle& ob = obstacles[k];
      if (ob.type != Obstacle::Type::Mesh || !ob.shape) continue;
      const Positions before = x;
      if (resolveObstacleFeatures(mesh, topology, begin, x, weights, thickness, {ob}, 4, allowance).resolved == 0)
        continue;
      // Points of cloth edges that passed through the obstacle at the start of the step (a sheet
      // started through Spot's ears, or dragged through a horn) are pushed, not held: the pass
      // keeps such a tangle on the sides it started on, and holding its points there every step
      // ran away (1000 m/s within 51 steps on Spot).
      std::vector<char> tangled(x.rows(), 0);
      const Eigen::AlignedBox3d box(ob.shape->lo(), ob.shape->hi());
      for (const auto& [a, b] : topology.edges) {
        const Vec3 pa = ob.toShape(begin.row(a).transpose()), pb = ob.toShape(begin.row(b).transpose());
        if (box.exteriorDistance(pa) > 0 && box.exteriorDistance(pb) > 0) continue;
        if (ob.shape->crosses(pa, pb)) tangled[a] = tangled[b] = 1;
      }
      for (int i = 0; i < static_cast<int>(x.rows()); ++i) {
        const Vec3 push = (x.row(i) - before.row(i)).transpose();
        if (push.squaredNorm() == 0 || tangled[i]) continue;
        if (state[i] == Free) held.push_back(i);
        state[i] = Stuck;
        normal[i] = push.normalized();
        // Stuck: only the motion along the push is kept of this step's.
        const Vec3 moved = (x.row(i) - begin.row(i)).transpose();
        x.row(i) = begin.row(i) + moved.dot(normal[i]) * normal[i].transpose();
        obstacle[i] = k;
      }
    }
  }

  // The inverse mass a held point moves with.
  void restrict(int i, Eigen::Matrix3d& w) const {
    if (state[i] == Stuck) {
      w.setZero();
    } else if (state[i] == Sliding) {
      const Eigen::Matrix3d p = Eigen::Matrix3d::Identity() - normal[i] * normal[i].transpose();
      w = p * w * p;
    }
  }

  // Coulomb on the reactions, then free points inside obstacles. Returns whether a point moved
  // or changed state (the constraints must then be evaluated and the matrix assembled again).
  bool update(const std::vector<Obstacle>& obstacles, double thickness, const Positions& begin,
              const Eigen::VectorXd& mass, const Positions& candidate, const Positions& impulse, Positions& x) {
    bool changed = false;
    std::vector<int> still;
    for (int i : held) {
      const Vec3 reaction = mass[i] * (x.row(i) - candidate.row(i)).transpose() + impulse.row(i).transpose();
      const double normalPart = reaction.dot(normal[i]);
      if (normalPart < 0 && !released[i]) {
        released[i] = 1;
        state[i] = Free;
        changed = true;
        continue;
      }
      still.push_back(i);
    }
    held = std::move(still);
    changed |= slipGroups(obstacles, mass, [&](int i) {
      return Vec3(mass[i] * (x.row(i) - candidate.row(i)).transpose() + impulse.row(i).transpose());
    }, false, x);
    return holdPenetrating(obstacles, thickness, begin, x) || changed;
  }

  // Free points inside the thickness of an obstacle are put back on it and slide. Returns whether
  // any was.
  bool holdPenetrating(const std::vector<Obstacle>& obstacles, double thickness, const Positions& begin,
                       Positions& x) {
    bool changed = false;
    const double reach = thickness + 1e-9;
    for (int i = 0; i < static_cast<int>(x.rows()); ++i) {
      if (exempt[i] || state[i] != Free) continue;
      double distance;
      Vec3 n;
      const int k = closest(obstacles, x.row(i).transpose(), begin.row(i).transpose(), reach, distance, n);
      if (k < 0 || distance >= restored(thickness, i)) continue;
      x.row(i) += ((restored(thickness, i) - distance) * n).transpose();
      state[i] = Sliding;
      normal[i] = n;
      obstacle[i] = k;
      held.push_back(i);
      changed = true;
    }
    return changed;
  }
};

// A length that Fast Projection may hold at a limit (an inequality): an edge under the edge
// strain limit, or a garment's stitch (sim/stitches.h). Its vector is d = sum of weight_p x_p over
// its points (an edge a -> b: x_b - x_a; a stitch: its point on the other panel minus the vertex
// sewn), its row |d| - limit while held, with gradient weight_p d / |d| at point p.
struct LimitRow {
  std::array<int, 3> vertex{};
  std::array<double, 3> weight{};
  int points = 0;
  Vec3 vector(const Positions& x) const {
    Vec3 d = Vec3::Zero();
    for (int p = 0; p < points; ++p) d += weight[p] * x.row(vertex[p]).transpose();
    return d;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Per-step machinery. Constraint rows: 2 per sample (trace, determinant or shear gap), then one
// per length that may be held at a limit (LimitRow: an edge under the edge strain limit, a
// garment's stitch; |d| - limit while held, else 0 with a zero gradient). A row's gradient is a
// list of (vertex, 3-vector) slots: sample s has slot 0 for itself and one per neighbour. The
// Schur matrix A = J W J^T is assembled from per-vertex contributions into a pattern computed
// once per set of neighbourhoods and of limit rows.
struct MlsSolver::Impl {
  // Incidence: for vertex i, the (row, slot) pairs whose gradient involves it.
  struct Incidence {
    int row;
    int slot;  // index into gradient storage
  };
  std::vector<std::vector<Incidence>> incidence;
  std::vector<Vec3> gradient;      // per slot
  std::vector<int> slotVertex;     // per slot
  std::vector<int> rowSlotStart;   // row r: slots [rowSlotStart[r], rowSlotStart[r+1])
  int rows = 0;
  MlsRow secondRow = MlsRow::Determinant;  // row 2s + 1 (MlsParams::projectionRows)
  double softening = 0;                    // of the shear gap row
  SparseMatrix schur;              // upper triangle, fixed pattern
  // The samples' rows (buildSampleRows): incidence, slots, columns of the pattern (compressed),
  // and per (vertex, pair) in assembly order the index into the values.
  std::vector<std::vector<Incidence>> sampleIncidence;
  std::vector<Vec3> gathered;  // assemble(): one vertex's gradients
  int sampleSlots = 0;
  std::vector<int> sampleOuter, sampleInner, sampleDestination;
  bool sampleRowsBuilt = false;
  // The limit rows' incidence, and per (vertex, pair with a limit row) the index into the values.
  std::vector<std::vector<Incidence>> limitIncidence;
  std::vector<int> limitDestination;
  bool patternBuilt = false;
  std::unique_ptr<SpdSolver> schurSolver;
  bool schurAnalyzed = false;

  // The symbolic analysis of J W J^T, once per pattern (buildSlots asks for a new one). With limit
  // rows the samples' rows keep the ordering found for them alone, and each limit row is
  // eliminated right after the last of the samples' rows it shares a vertex with: no search for
  // an ordering each time the held edges change (ckv-corners hanging with the limit 0.1: 24.8
  // instead of 27.3 ms per frame). Many limit rows side by side fill in more that way than in
  // AMD's ordering of the whole matrix (no search either): a cloth draped over Codim-IPC's bunny
  // held 400 to 1000 edge rows, and each factorization took 12.5 ms instead of 7. Which of the
  // two factorizes in fewer flops is found by analysing both. That costs as much as a few
  // factorizations, and with limit rows under a twentieth of the samples' the two differ by a
  // few per cent (ckv-corners-fine, ckv-drape-fine: 1 to 30 rows, whose patterns change up to 6
  // times a step, and which ran 5 to 10% slower for the comparisons), so the rows after their
  // neighbours are kept there. From a twentieth on, the two are compared again only when the
  // number of limit rows has changed by a quarter since they last were.
  std::vector<int> sampleOrdering;  // of the samples' rows alone, once known
  std::string sampleOrderingMethod;  // the search that found it
  bool wholeOrdering = false;    // AMD's of the whole matrix had the fewer flops when last compared
  int comparedAtLimitRows = -1;  // how many limit rows there were then (-1: not yet compared)
  std::optional<std::string> analyzeSchur() {
    if (schurAnalyzed) return std::nullopt;
    const int sampleRows = rows - static_cast<int>(limitRows.size());
    if (limitRows.empty() || static_cast<int>(sampleOrdering.size()) != sampleRows) {
      if (auto e = schurSolver->analyze(schur)) return e;
      if (limitRows.empty()) {
        sampleOrdering = schurSolver->ordering();
        sampleOrderingMethod = schurSolver->orderingMethod();
        comparedAtLimitRows = -1;
      }
    } else {
      const int limits = static_cast<int>(limitRows.size());
      const bool few = 20 * limits < sampleRows;
      if (few) comparedAtLimitRows = -1;
      const NamedOrdering afterNeighbours{orderingWithRowsAfterNeighbours(schur, sampleOrdering),
                                          sampleOrderingMethod};
      if (!few && (comparedAtLimitRows < 0 || 4 * std::abs(limits - comparedAtLimitRows) > comparedAtLimitRows)) {
        auto chosen =
            analyzeFewestFlops(*schurSolver, schur, {afterNeighbours, {amdOrdering(schur), "AMD"}});
        if (!chosen) return chosen.error();
        wholeOrdering = *chosen == 1;
        comparedAtLimitRows = limits;
      } else if (auto e = !few && wholeOrdering
                              ? schurSolver->analyze(schur, amdOrdering(schur), "AMD")
                              : schurSolver->analyze(schur, afterNeighbours.ordering, afterNeighbours.method)) {
        return e;
      }
    }
    schurAnalyzed = true;
    return std::nullopt;
  }

  std::unique_ptr<ImplicitBending> bending;

  Eigen::VectorXd areaShare;       // per vertex [m^2]
  Eigen::VectorXd restEdgeLength;  // per topology edge [m]
  // The lengths that may be held at a limit: the topology's edges, then the garment's stitches
  // (limitCandidates), with their limits this step [m] and the scale of their acceptance [m].
  std::vector<LimitRow> limitCandidates;
  Eigen::VectorXd limitLength, limitScale;
  std::vector<int> limitRows;      // candidates with rows after the samples' (in the pattern)
  std::vector<char> limitHeld;     // per limit row: held at its limit now
  Eigen::VectorXd extraMass;       // point masses [kg]

  // The index of entry (row, column) in a compressed column pattern with sorted rows.
  static int entryIndex(const std::vector<int>& outer, const std::vector<int>& inner, int row, int column) {
    return static_cast<int>(
        std::lower_bound(inner.begin() + outer[column], inner.begin() + outer[column + 1], row) - inner.begin());
  }

  // The samples' rows: their slots, incidence and the pattern of their columns of J W J^T (once
  // per set of neighbourhoods; the limit rows come after them and only add columns).
  void buildSampleRows(const MlsNeighbourhoods& n, int vertexCount) {
    const int samples = n.sampleCount();
    rowSlotStart.assign(1, 0);
    slotVertex.clear();
    for (int s = 0; s < samples; ++s)
      for (int t = 0; t < 2; ++t) {
        slotVertex.push_back(s);
        for (int k = n.start[s]; k < n.start[s + 1]; ++k) slotVertex.push_back(n.neighbour[k]);
        rowSlotStart.push_back(static_cast<int>(slotVertex.size()));
      }
    sampleSlots = static_cast<int>(slotVertex.size());
    sampleIncidence.assign(vertexCount, {});
    for (int r = 0; r < 2 * samples; ++r)
      for (int k = rowSlotStart[r]; k < rowSlotStart[r + 1]; ++k) sampleIncidence[slotVertex[k]].push_back({r, k});
    // Pattern of the upper triangle: rows sharing a vertex.
    std::vector<std::vector<int>> columns(2 * samples);
    for (const auto& list : sampleIncidence)
      for (const auto& a : list)
        for (const auto& b : list)
          if (a.row <= b.row) columns[b.row].push_back(a.row);
    sampleOuter.assign(1, 0);
    sampleInner.clear();
    for (auto& col : columns) {
      std::sort(col.begin(), col.end());
      col.erase(std::unique(col.begin(), col.end()), col.end());
      sampleInner.insert(sampleInner.end(), col.begin(), col.end());
      sampleOuter.push_back(static_cast<int>(sampleInner.size()));
    }
    sampleDestination.clear();
    for (const auto& list : sampleIncidence)
      for (const auto& a : list)
        for (const auto& b : list)
          if (a.row <= b.row) sampleDestination.push_back(entryIndex(sampleOuter, sampleInner, a.row, b.row));
    sampleRowsBuilt = true;
  }

  // The rows and the pattern of J W J^T for the samples and the candidates `rowCandidates`, all
  // held.
  void buildSlots(const MlsNeighbourhoods& n, int vertexCount, std::vector<int> rowCandidates) {
    if (!sampleRowsBuilt) buildSampleRows(n, vertexCount);
    const int sampleRows = 2 * n.sampleCount();
    limitRows = std::move(rowCandidates);
    limitHeld.assign(limitRows.size(), 1);
    rows = sampleRows + static_cast<int>(limitRows.size());
    rowSlotStart.resize(sampleRows + 1);
    slotVertex.resize(sampleSlots);
    incidence = sampleIncidence;
    limitIncidence.assign(vertexCount, {});
    for (size_t k = 0; k < limitRows.size(); ++k) {
      const int row = sampleRows + static_cast<int>(k);
      const LimitRow& limit = limitCandidates[limitRows[k]];
      for (int p = 0; p < limit.points; ++p) {
        const int vertex = limit.vertex[p], slot = static_cast<int>(slotVertex.size());
        slotVertex.push_back(vertex);
        incidence[vertex].push_back({row, slot});
        limitIncidence[vertex].push_back({row, slot});
      }
      rowSlotStart.push_back(static_cast<int>(slotVertex.size()));
    }
    gradient.assign(slotVertex.size(), Vec3::Zero());
    // The samples' columns as they are, then a column per limit row: the rows up to it that
    // share one of its vertices.
    std::vector<int> outer = sampleOuter, inner = sampleInner;
    for (size_t k = 0; k < limitRows.size(); ++k) {
      const int column = sampleRows + static_cast<int>(k);
      const LimitRow& limit = limitCandidates[limitRows[k]];
      std::vector<int> col;
      for (int p = 0; p < limit.points; ++p)
        for (const auto& a : incidence[limit.vertex[p]])
          if (a.row <= column) col.push_back(a.row);
      std::sort(col.begin(), col.end());
      col.erase(std::unique(col.begin(), col.end()), col.end());
      inner.insert(inner.end(), col.begin(), col.end());
      outer.push_back(static_cast<int>(inner.size()));
    }
    std::vector<double> zeros(inner.size(), 0.0);
    schur = Eigen::Map<SparseMatrix>(rows, rows, static_cast<Eigen::Index>(inner.size()), outer.data(), inner.data(),
                                     zeros.data());
    limitDestination.clear();
    for (size_t i = 0; i < limitIncidence.size(); ++i)
      for (const auto& b : limitIncidence[i])
        for (const auto& a : incidence[i])
          if (a.row <= b.row) limitDestination.push_back(entryIndex(outer, inner, a.row, b.row));
    patternBuilt = true;
    schurAnalyzed = false;
  }

  // Row values and gradients at x (rows 2s: c_tr, 2s + 1: `secondRow`, then the limit rows).
  void evaluate(const MlsNeighbourhoods& n, const Positions& x, Eigen::VectorXd& c) {
    const int samples = n.sampleCount();
    c.resize(rows);
    for (int s = 0; s < samples; ++s) {
      const Mat32 f = mlsDeformationGradient(n, s, x);
      const MlsRowEvaluation evaluated[2] = {mlsRow(f, MlsRow::Trace), mlsRow(f, secondRow, softening)};
      for (int t = 0; t < 2; ++t) {
        c[2 * s + t] = evaluated[t].value;
        const Mat32& g = evaluated[t].derivative;
        const int base = rowSlotStart[2 * s + t];
        Vec3 centre = Vec3::Zero();
        for (int k = n.start[s], slot = base + 1; k < n.start[s + 1]; ++k, ++slot) {
          gradient[slot] = g * n.coefficient[k];
          centre -= gradient[slot];
        }
        gradient[base] = centre;
      }
    }
    for (size_t k = 0; k < limitRows.size(); ++k) {
      const int candidate = limitRows[k], row = 2 * samples + static_cast<int>(k);
      const LimitRow& limit = limitCandidates[candidate];
      const Vec3 d = limit.vector(x);
      const double length = d.norm();
      c[row] = limitHeld[k] ? length - limitLength[candidate] : 0.0;
      const Vec3 direction = limitHeld[k] && length > 0 ? Vec3(d / length) : Vec3::Zero();
      for (int p = 0; p < limit.points; ++p)
        gradient[rowSlotStart[row] + p] = limit.weight[p] * direction;
    }
  }

  // A = J W J^T with per-vertex 3x3 inverse-mass blocks: the samples' rows, then the pairs with
  // a limit row.
  void assemble(const std::vector<Eigen::Matrix3d>& inverseMass) {
    double* values = schur.valuePtr();
    std::fill(values, values + schur.nonZeros(), 0.0);
    size_t d = 0, e = 0;
    for (size_t i = 0; i < sampleIncidence.size(); ++i) {
      const auto& list = sampleIncidence[i];
      const Eigen::Matrix3d& w = inverseMass[i];
      const bool zero = w.isZero(0);
      // A vertex's list is sorted by row without repeats (buildSampleRows), so the pairs with
      // a.row <= b.row are those with b at or after a; the gradients are gathered once.
      const size_t count = list.size();
      if (zero) {
        d += count * (count + 1) / 2;
      } else {
        gathered.resize(count);
        for (size_t k = 0; k < count; ++k) gathered[k] = gradient[list[k].slot];
        for (size_t a = 0; a < count; ++a) {
          const Vec3 wa = w * gathered[a];
          for (size_t b = a; b < count; ++b) values[sampleDestination[d++]] += wa.dot(gathered[b]);
        }
      }
      for (const auto& b : limitIncidence[i]) {
        const Vec3 wb = w * gradient[b.slot];
        for (const auto& a : incidence[i])
          if (a.row <= b.row) {
            if (!zero) values[limitDestination[e]] += wb.dot(gradient[a.slot]);
            ++e;
          }
      }
    }
  }

  // (J u)_r for a per-vertex field u: the sum over row r's slots of g_rp . u_p.
  Eigen::VectorXd applyGradients(const Positions& u) const {
    Eigen::VectorXd out(rows);
    for (int r = 0; r < rows; ++r) {
      double sum = 0;
      for (int p = rowSlotStart[r]; p < rowSlotStart[r + 1]; ++p) sum += gradient[p].dot(u.row(slotVertex[p]));
      out[r] = sum;
    }
    return out;
  }

  // (J^T lambda)_i for every vertex: the sum over rows r at i of g_ri * lambda_r.
  void impulses(const Eigen::VectorXd& lambda, Positions& out) const {
    out.resize(static_cast<Eigen::Index>(incidence.size()), 3);
    for (size_t i = 0; i < incidence.size(); ++i) {
      Vec3 sum = Vec3::Zero();
      for (const auto& a : incidence[i]) sum += gradient[a.slot] * lambda[a.row];
      out.row(static_cast<Eigen::Index>(i)) = sum.transpose();
    }
  }
};

MlsSolver::MlsSolver() : impl_(std::make_unique<Impl>()) {}
MlsSolver::~MlsSolver() = default;

namespace {
// What SolverState::more holds for this solver.
struct MlsMemory {
  std::vector<int> limitRows;
  GrabPull grabPull;
  std::vector<int> lonePins, twoRingPins;
  int lonePinRings;
};
}  // namespace

SolverState MlsSolver::state() const {
  return {x_, v_,
          std::make_shared<const MlsMemory>(MlsMemory{impl_->limitRows, grabPull_, lonePins_,
                                                      twoRingPins_, params_.lonePinRings})};
}

void MlsSolver::setState(const SolverState& state) {
  VertexSolver::setState(state);
  if (!state.more) return;
  const auto& memory = *static_cast<const MlsMemory*>(state.more.get());
  grabPull_ = memory.grabPull;
  // Which lone pins took their 2-ring depended on the state when they were set: the moment's
  // choice, for the same steps to follow, unless lone_pin_rings was changed since. The
  // neighbourhoods were built on this cloth before, so the build does not fail; if it did, the
  // current ones would stay.
  lonePins_ = memory.lonePins;
  const bool sameRings = memory.lonePinRings == params_.lonePinRings;
  const std::vector<int> wanted = sameRings ? memory.twoRingPins : std::vector<int>{};
  if (wanted != twoRingPins_) {
    std::vector<int> current = std::exchange(twoRingPins_, wanted);
    if (rebuild(params_)) twoRingPins_ = std::move(current);
  }
  if (!sameRings && params_.lonePinRings == 2) followLonePins(lonePins_, params_, true);
  // The pattern the step starts from decides which lengths it holds: the same rows, not only the
  // same positions, for the same steps to follow (rebuilt only where they differ).
  if (!impl_->patternBuilt || memory.limitRows != impl_->limitRows)
    impl_->buildSlots(neighbourhoods_, static_cast<int>(x_.rows()), memory.limitRows);
}

SolverCounts MlsSolver::counts() const {
  return {static_cast<int>(x_.rows()), 2 * neighbourhoods_.sampleCount(), 0};
}

nlohmann::json MlsSolver::params() const { return writeParams(MlsParams::table(), params_); }

namespace {

// The most (row, row, vertex) products one assembly of J W J^T may walk. Each vertex adds one
// for every pair of rows through it, and their destinations are held (4 bytes each, and as
// much again while the pattern is built): 1e8 is about 0.8 GB and a fifth of a second per
// Fast Projection iteration. A material radius spanning the sheet exceeds it by far: 0.4 m on
// ckv-corners (662 vertices) took 4 s and 0.9 GB to build, and the memory grows with the sixth
// power of the radius.
constexpr double kMaxAssemblyProducts = 1e8;

// With E neighbours in all over V samples the products are at least 2 (E + V)^2 / V (each
// vertex lies in the rows of the samples that hold it, and its own): more than this many
// neighbours cannot pass the check below, so the build stops there.
size_t maxNeighbours(int vertexCount) {
  return static_cast<size_t>(std::sqrt(kMaxAssemblyProducts * vertexCount / 2));
}

// Why neighbourhoods `n` (built by `options` for `params`) are too large, if they are.
std::optional<std::string> tooLargeToAssemble(const MlsNeighbourhoods& n, const MlsParams& params,
                                              const MlsNeighbourhoodOptions& options) {
  std::vector<double> rowsThrough(n.sampleCount(), 0.0);
  for (int s = 0; s < n.sampleCount(); ++s) {
    rowsThrough[s] += 2;
    for (int k = n.start[s]; k < n.start[s + 1]; ++k) rowsThrough[n.neighbour[k]] += 2;
  }
  double products = 0;
  for (double m : rowsThrough) products += m * (m + 1) / 2;
  if (products <= kMaxAssemblyProducts) return std::nullopt;
  const double perSample = static_cast<double>(n.neighbour.size()) / std::max(1, n.sampleCount());
  const bool radius = params.neighbourhood == "radius";
  return (radius ? "solver.radius: " + formatG(options.radius, 3) + " m" : "solver.neighbourhood: the " + params.neighbourhood) +
         " gives each sample " + formatG(perSample, 3) +
         " neighbours on average, too many: one assembly of J W J^T would walk " + formatG(products, 4) +
         " products (at most " + formatG(kMaxAssemblyProducts, 3) + ", which take about 0.8 GB); choose " +
         (radius ? "a smaller radius" : "smaller neighbourhoods");
}

// A 'radius' neighbourhood's radius where none is given, in mean rest edge lengths: about the
// 1-ring and half the 2-ring (13 neighbours per sample on the irregular built-in sheets), so that
// choosing 'radius' alone works.
constexpr double kAutomaticRadius = 2.0;

}  // namespace

std::optional<std::string> MlsSolver::rebuild(const MlsParams& params) {
  MlsNeighbourhoodOptions options;
  options.rings = params.neighbourhood == "2-ring" ? 2 : 1;
  if (params.neighbourhood == "radius")
    options.radius = params.radius > 0 ? params.radius : kAutomaticRadius * impl_->restEdgeLength.mean();
  options.weighting = params.weighting == "mass" ? MlsWeighting::Mass : MlsWeighting::Uniform;
  options.wrap = cloth_->flatCoords->wrap;
  if (!twoRingPins_.empty()) {
    options.twoRingSamples.assign(cloth_->mesh.vertexCount(), 0);
    for (int vertex : twoRingPins_) options.twoRingSamples[vertex] = 1;
  }
  options.maxNeighbours = maxNeighbours(cloth_->mesh.vertexCount());
  auto n = buildMlsNeighbourhoods(cloth_->mesh, cloth_->topology, materialCoordinates(), options,
                                  impl_->areaShare);
  if (!n) return (params.neighbourhood == "radius" ? "solver.radius: " : "mls-isometry: ") + n.error();
  if (auto e = tooLargeToAssemble(*n, params, options)) return e;
  neighbourhoods_ = std::move(n).value();
  impl_->sampleRowsBuilt = false;
  impl_->sampleOrdering.clear();
  impl_->patternBuilt = false;  // rebuild the Schur pattern at the next step
  return std::nullopt;
}

std::vector<int> MlsSolver::lonePins(const std::vector<std::pair<int, Vec3>>& pins) const {
  std::vector<int> pinnedVertices;
  for (const auto& pin : pins) pinnedVertices.push_back(pin.first);
  std::sort(pinnedVertices.begin(), pinnedVertices.end());
  std::vector<int> lone;
  for (int vertex : pinnedVertices) {
    const auto& around = cloth_->topology.vertexNeighbours[vertex];
    if (std::none_of(around.begin(), around.end(), [&](int j) {
          return std::binary_search(pinnedVertices.begin(), pinnedVertices.end(), j);
        }))
      lone.push_back(vertex);
  }
  return lone;
}

std::optional<std::string> MlsSolver::followLonePins(std::vector<int> lone, const MlsParams& params,
                                                     bool retest) {
  auto has = [](const std::vector<int>& sorted, int vertex) {
    return std::binary_search(sorted.begin(), sorted.end(), vertex);
  };
  std::vector<int> twoRing, tried;
  if (params.lonePinRings == 2)
    for (int vertex : lone) {
      const bool wasLone = !retest && has(lonePins_, vertex);
      if (!wasLone) tried.push_back(vertex);
      if (!wasLone || has(twoRingPins_, vertex)) twoRing.push_back(vertex);
    }
  if (twoRing == twoRingPins_) {
    lonePins_ = std::move(lone);
    return std::nullopt;
  }
  // How far sample `vertex`'s fit at the current state is off the constraints.
  auto off = [&](int vertex) {
    const Mat32 f = mlsDeformationGradient(neighbourhoods_, vertex, x_);
    return std::max(std::abs(mlsRow(f, MlsRow::Trace).value),
                    std::abs(mlsRow(f, MlsRow::Determinant).value));
  };
  std::vector<double> allowed;
  for (int vertex : tried) allowed.push_back(std::max(params.tolerance, off(vertex)));
  const MlsNeighbourhoods previous = neighbourhoods_;
  std::vector<int> previousLone = std::exchange(lonePins_, std::move(lone));
  std::vector<int> previousTwoRing = std::exchange(twoRingPins_, std::move(twoRing));
  auto undo = [&](const std::string& why) {
    neighbourhoods_ = previous;
    lonePins_ = std::move(previousLone);
    twoRingPins_ = std::move(previousTwoRing);
    return std::optional<std::string>(why);
  };
  if (auto e = rebuild(params)) return undo(*e);
  std::vector<int> refused;
  for (size_t k = 0; k < tried.size(); ++k)
    if (off(tried[k]) > allowed[k]) refused.push_back(tried[k]);
  if (refused.empty()) return std::nullopt;
  std::erase_if(twoRingPins_, [&](int vertex) { return has(refused, vertex); });
  if (auto e = rebuild(params)) return undo(*e);
  return std::nullopt;
}

std::optional<std::string> MlsSolver::reset(std::shared_ptr<const ClothModel> cloth,
                                            const SimParams& sim, const nlohmann::json& params) {
  MlsParams parsed;
  if (auto e = readParams(params, MlsParams::table(), parsed, "solver")) return e;
  cloth_ = std::move(cloth);
  if (!cloth_->flatCoords)
    return "mls-isometry needs the flat rest state of the cloth: " + cloth_->flatCoords.error();
  const TriangleMesh& mesh = cloth_->mesh;
  impl_->areaShare = vertexAreaShares(mesh);
  impl_->restEdgeLength = edgeLengths(mesh.positions, cloth_->topology.edges);
  // The limit rows' candidates: every edge, then every stitch, whose allowance is held within
  // the tolerance times the mean rest edge length.
  auto& candidates = impl_->limitCandidates;
  candidates.clear();
  for (const auto& [a, b] : cloth_->topology.edges)
    candidates.push_back({{a, b, 0}, {-1.0, 1.0, 0.0}, 2});
  for (const Stitch& s : cloth_->stitches) {
    const StitchVertices sewn = stitchVertices(s);
    candidates.push_back({sewn.vertex, sewn.weight, 3});
  }
  impl_->limitScale.resize(static_cast<Eigen::Index>(candidates.size()));
  impl_->limitScale << impl_->restEdgeLength,
      Eigen::VectorXd::Constant(static_cast<Eigen::Index>(cloth_->stitches.size()),
                                impl_->restEdgeLength.mean());
  impl_->limitLength = Eigen::VectorXd::Zero(impl_->limitScale.size());
  impl_->extraMass = vertexPointMasses(*cloth_);
  x_ = mesh.positions;
  v_ = Positions::Zero(mesh.vertexCount(), 3);
  // Every sample's own neighbourhood first: the lone pins' 2-rings are weighed against it.
  lonePins_.clear();
  twoRingPins_.clear();
  if (auto e = rebuild(parsed)) return e;
  if (auto e = followLonePins(lonePins(cloth_->pins), parsed, true)) return e;
  params_ = parsed;
  impl_->bending =
      std::make_unique<ImplicitBending>(hingeBendingRows(mesh, cloth_->topology), mesh.positions);
  impl_->schurSolver = makeSpdSolver("cholmod");
  grabPull_ = GrabPull(impl_->restEdgeLength.mean());
  return settle(sim);
}

std::optional<std::string> MlsSolver::settle(const SimParams& sim) {
  if (maxResidual() <= params_.tolerance) return std::nullopt;
  // Steps with nothing acting (no gravity, bending, damping or air, no obstacles), the pins held
  // where they are, and the velocity each leaves dropped: only the projection moves the cloth.
  // Its long time step keeps the speeds the step checks small.
  SimParams still = sim;
  still.gravity.setZero();
  still.bending = still.damping = still.airDensity = 0;
  still.dt = 0.1;
  std::vector<std::pair<int, Vec3>> held;
  for (const auto& [vertex, target] : cloth_->pins)
    held.emplace_back(vertex, x_.row(vertex).transpose());
  const std::vector<Obstacle> none;
  const std::optional<Grab> noGrab;
  const StepContext ctx{still, none, held, noGrab};
  constexpr int kSettleSteps = 5;
  for (int k = 0; k < kSettleSteps && maxResidual() > params_.tolerance; ++k) {
    StepStats ignored;
    if (auto e = step(ctx, ignored))
      return "mls-isometry: the cloth's shape does not meet its isometry constraints (its MLS fits "
             "cannot follow a crease this sharp on this mesh), and laying it onto them failed: " +
             *e;
    v_.setZero();
  }
  return std::nullopt;
}

std::optional<std::string> MlsSolver::setParams(const nlohmann::json& params) {
  MlsParams parsed = params_;
  if (auto e = readParams(params, MlsParams::table(), parsed, "solver")) return e;
  if (cloth_ &&
      (parsed.neighbourhood != params_.neighbourhood || parsed.radius != params_.radius ||
       parsed.weighting != params_.weighting || parsed.lonePinRings != params_.lonePinRings)) {
    const MlsNeighbourhoods previous = neighbourhoods_;
    const std::vector<int> previousTwoRing = twoRingPins_;
    // Turned on, the lone pins' 2-rings are weighed against their neighbourhoods without them.
    const bool turnedOn = parsed.lonePinRings == 2 && params_.lonePinRings != 2;
    if (parsed.lonePinRings != 2 || turnedOn) twoRingPins_.clear();
    std::optional<std::string> e = rebuild(parsed);
    if (!e && turnedOn) e = followLonePins(lonePins_, parsed, true);
    if (e) {
      neighbourhoods_ = previous;
      twoRingPins_ = previousTwoRing;
      return e;
    }
  }
  params_ = parsed;
  return std::nullopt;
}

double MlsSolver::maxResidual() const {
  return mlsConstraints(neighbourhoods_, x_).cwiseAbs().maxCoeff();
}

std::optional<std::string> MlsSolver::step(const StepContext& ctx, StepStats& stats) {
  Impl& m = *impl_;
  m.secondRow = params_.projectionRows == "trace-shear-gap" ? MlsRow::ShearGap : MlsRow::Determinant;
  m.softening = params_.shearGapSoftening;
  const auto stepStart = Clock::now();
  const double h = ctx.sim.dt;
  const int n = static_cast<int>(x_.rows());
  const Positions x0 = x_, v0 = v_;
  auto restore = [&](const std::string& why) {
    x_ = x0;
    v_ = v0;
    return std::optional<std::string>(why);
  };
  const Eigen::VectorXd mass = ctx.sim.density * m.areaShare + m.extraMass;
  std::vector<char> pinned(n, 0);
  for (const auto& [vertex, target] : ctx.pins) pinned[vertex] = 1;
  // The neighbourhoods follow the lone pins (MlsParams::lonePinRings): rebuilt when they change.
  if (std::vector<int> lone = lonePins(ctx.pins); lone != lonePins_)
    if (auto e = followLonePins(std::move(lone), params_, false)) return restore(*e);

  // 1. Implicit bending and external forces.
  auto t = Clock::now();
  if (ctx.sim.airDensity > 0)
    v_ += airVelocityChange(cloth_->mesh, x_, v_, mass, ctx.sim, h, ctx.pins);
  if (auto e = m.bending->velocities(mass, ctx.sim.bending, h, ctx.sim.gravity, x_, v_, ctx.pins,
                                     v_, restShapeFor(ctx.sim.bendingRest, m.bending->restBend())))
    return restore(*e);
  if (ctx.sim.damping > 0) v_ /= 1.0 + h * ctx.sim.damping;
  Positions x = x_ + h * v_;
  for (const auto& [vertex, target] : ctx.pins) x.row(vertex) = target.transpose();
  stats.msForces = msSince(t);

  // 2. Contacts on the candidate.
  t = Clock::now();
  const Positions candidate = x;
  Positions correction;
  auto contacts =
      resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x, correction, h, nullptr, nullptr, ctx.contactAllowance);
  for (int i = 0; i < n; ++i)
    if (!pinned[i]) x.row(i) += correction.row(i);
  // The grab (sim/grab.h): its corners are never held by contacts, so that it pulls its point
  // off an obstacle through the constraints like any other.
  std::vector<char> exempt = pinned;
  Eigen::VectorXd projectionMass = mass;
  if (ctx.grab) {
    const auto moved = grabPull_.move(*ctx.grab, cloth_->mesh.triangles[ctx.grab->triangle], h, x_, x,
                                      [&](int vertex) { return pinned[vertex] != 0; });
    const double clothMass = mass.sum();
    for (int vertex : moved) {
      exempt[vertex] = 1;
      projectionMass[vertex] = grabbedCornerMass(mass[vertex], clothMass);
    }
  } else {
    grabPull_.release();
  }
  ProjectionContacts holds(std::move(exempt));
  holds.allowance = ctx.contactAllowance;
  const bool holding = params_.contactProjection && !ctx.obstacles.empty();
  if (holding) {
    holds.start(ctx.obstacles, ctx.sim.thickness, h, x_, candidate, x);
    holds.holdFeatures(cloth_->mesh, cloth_->topology, ctx.obstacles, ctx.sim.thickness, x_, mass, x);
    holds.slipFromCandidate(ctx.obstacles, candidate, mass, x);
  }
  stats.msCollision = msSince(t);

  // 3. Fast Projection.
  t = Clock::now();
  if (!m.patternBuilt) m.buildSlots(neighbourhoods_, n, {});
  // The inverse mass point i moves with: 0 when pinned or stuck, none along the obstacle's
  // normal when sliding (Fast Projection without geometric stiffness, and the fallback).
  auto heldInverseMass = [&](int i) {
    Eigen::Matrix3d w =
        pinned[i] ? Eigen::Matrix3d::Zero() : Eigen::Matrix3d(Eigen::Matrix3d::Identity() / projectionMass[i]);
    holds.restrict(i, w);
    return w;
  };
  std::vector<Eigen::Matrix3d> inverseMass(n);
  auto plainInverseMasses = [&] {
    for (int i = 0; i < n; ++i) inverseMass[i] = heldInverseMass(i);
  };
  plainInverseMasses();
  const int samples = neighbourhoods_.sampleCount();
  Eigen::VectorXd c;  // row values (Impl::evaluate): c_tr, and c_det or the softened gap g_e
  // The principal values' sum s1 + s2 = c_tr + 2 and gap s1 - s2 of sample s's F^T F.
  const bool gapRows = m.secondRow == MlsRow::ShearGap;
  auto sumAndGap = [&](const Eigen::VectorXd& values, int s) {
    const double sum = values[2 * s] + 2;
    if (gapRows) {
      const double r = values[2 * s + 1] + m.softening;  // sqrt(g^2 + e^2)
      return std::make_pair(sum, std::sqrt(std::max(r * r - m.softening * m.softening, 0.0)));
    }
    return std::make_pair(sum, std::sqrt(std::max(sum * sum - 4 * (values[2 * s + 1] + 1), 0.0)));
  };
  // The largest |c_tr|, |c_det| (what the tolerance bounds, whichever rows are projected).
  auto residual = [&](const Eigen::VectorXd& values) {
    if (!gapRows) return samples > 0 ? values.head(2 * samples).cwiseAbs().maxCoeff() : 0.0;
    double worst = 0;
    for (int s = 0; s < samples; ++s) {
      const auto [sum, gap] = sumAndGap(values, s);
      worst = std::max({worst, std::abs(values[2 * s]), std::abs(0.25 * (sum * sum - gap * gap) - 1)});
    }
    return worst;
  };
  // The largest |s - 1| over the principal values s1, s2 of the samples' F^T F.
  auto principalStrain = [&](const Eigen::VectorXd& values) {
    double worst = 0;
    for (int s = 0; s < samples; ++s) {
      const auto [sum, gap] = sumAndGap(values, s);
      worst = std::max({worst, std::abs(0.5 * (sum + gap) - 1), std::abs(0.5 * (sum - gap) - 1)});
    }
    return worst;
  };
  // How far the constraints are from accepted: at most 1 when they are.
  const bool onStrain = params_.stopOn == "principal-strain";
  auto excess = [&](const Eigen::VectorXd& values) {
    return (onStrain ? principalStrain(values) : residual(values)) / params_.tolerance;
  };
  // The edge strain limit (MlsParams::edgeStrainLimit), an inequality: an edge longer than its
  // limit length gets a row that holds it at the limit, in the same Newton system as the samples'
  // rows, and is held while the row's multiplier shortens it and it stays at the limit; the
  // projection ends when the held edges are within kLimitAcceptance times the tolerance times
  // their rest length of the limit too (accepted within 1 instead of 3, ckv-drape took 22.8
  // instead of 11.9 iterations per frame, 54 instead of 22 ms, and ckv-drape-fine 443 instead of
  // 246 ms). An edge is held as soon as it passes the limit: held only once past the acceptance,
  // the edges joined a few per iteration as each solve pushed the next ones over, and
  // ckv-drape-fine ran up to 19 of its 20 iterations per sub-step while it settled on the sphere
  // (30.6 instead of 18.4 iterations per frame over 120 frames). Rows of edges let go stay in the
  // pattern (as zero rows) so that edges held on and off do not cost a symbolic analysis each
  // time: a pattern of the edges at the limit when a step starts, grown by the edges that go over
  // the acceptance.
  // A garment's stitches are held the same way at their allowance (sim/stitches.h), within the
  // tolerance times the mean rest edge length: the seams close inside the projection, with the
  // constraints, instead of being pulled shut before it and stretched open again by it.
  const int edgeCount = static_cast<int>(cloth_->topology.edges.size());
  const bool limiting = params_.edgeStrainLimit > 0, sewing = ctx.stitchAllowance != nullptr;
  if (limiting) m.limitLength.head(edgeCount) = (1 + params_.edgeStrainLimit) * m.restEdgeLength;
  if (sewing) m.limitLength.tail(ctx.stitchAllowance->size()) = *ctx.stitchAllowance;
  const int candidateCount = static_cast<int>(m.limitCandidates.size());
  auto active = [&](int k) { return k < edgeCount ? limiting : sewing; };
  // Beyond the limit by `tolerances` times the tolerance times the scale (< 0: short of it).
  // Lengths between pinned or stuck points cannot be shortened and get no row.
  auto fixed = [&](int i) { return pinned[i] || (holding && holds.state[i] == ProjectionContacts::Stuck); };
  auto movable = [&](int k) {
    const LimitRow& limit = m.limitCandidates[k];
    for (int p = 0; p < limit.points; ++p)
      if (limit.weight[p] != 0 && !fixed(limit.vertex[p])) return true;
    return false;
  };
  auto beyond = [&](int k, double tolerances) {
    return active(k) && movable(k) &&
           m.limitCandidates[k].vector(x).norm() >
               m.limitLength[k] + tolerances * params_.tolerance * m.limitScale[k];
  };
  // Rows are made for the lengths within kNearLimit tolerances of the limit too, so that the
  // next ones to reach it find their rows in the pattern.
  constexpr double kNearLimit = 6;
  constexpr double kLimitAcceptance = 3;
  int heldEdgesMost = 0;
  Eigen::VectorXd lastMultipliers;  // of the last solve, rows as in the pattern then
  // Which lengths are held at x; true when that changed (and c must be evaluated again).
  auto updateHeld = [&] {
    bool changed = false;
    std::vector<char> inPattern(candidateCount, 0);
    for (size_t k = 0; k < m.limitRows.size(); ++k) {
      const int candidate = m.limitRows[k];
      inPattern[candidate] = 1;
      const bool shortens = lastMultipliers.size() != m.rows || lastMultipliers[2 * samples + k] > 0;
      const char held =
          beyond(candidate, 0) || (m.limitHeld[k] && shortens && beyond(candidate, -1));
      changed |= held != m.limitHeld[k];
      m.limitHeld[k] = held;
    }
    bool over = false;
    for (int k = 0; k < candidateCount && !over; ++k)
      over = !inPattern[k] && beyond(k, kLimitAcceptance);
    if (over) {
      std::vector<int> rows = m.limitRows;
      std::vector<char> held = m.limitHeld;
      for (int k = 0; k < candidateCount; ++k)
        if (!inPattern[k] && beyond(k, -kNearLimit)) {
          rows.push_back(k);
          held.push_back(beyond(k, 0));
        }
      m.buildSlots(neighbourhoods_, n, std::move(rows));
      m.limitHeld = std::move(held);
      changed = true;
    }
    int heldNow = 0;
    for (size_t k = 0; k < m.limitRows.size(); ++k)
      heldNow += m.limitHeld[k] && m.limitRows[k] < edgeCount;
    heldEdgesMost = std::max(heldEdgesMost, heldNow);
    return changed;
  };
  // How far the held lengths are beyond their limit, in tolerances times their scale. Rows that
  // became immovable (every point held since) are left out.
  auto limitExcess = [&](const Eigen::VectorXd& values) {
    double worst = 0;
    for (size_t k = 0; k < m.limitRows.size(); ++k)
      if (movable(m.limitRows[k]))
        worst = std::max(
            worst, values[2 * samples + k] / (params_.tolerance * m.limitScale[m.limitRows[k]]));
    return worst;
  };
  const bool holdingLengths = limiting || sewing;
  if (holdingLengths) {
    // The last step's pattern, unless most of its rows are no longer near the limit; held are
    // the lengths at it.
    int near = 0;
    for (int k : m.limitRows) near += beyond(k, -kNearLimit);
    if (2 * near < static_cast<int>(m.limitRows.size())) {
      std::vector<int> rows;
      for (int k = 0; k < candidateCount; ++k)
        if (beyond(k, -kNearLimit)) rows.push_back(k);
      m.buildSlots(neighbourhoods_, n, std::move(rows));
    }
    for (size_t k = 0; k < m.limitRows.size(); ++k) m.limitHeld[k] = beyond(m.limitRows[k], -1);
    updateHeld();
  } else if (!m.limitRows.empty()) {
    m.buildSlots(neighbourhoods_, n, {});
  }
  m.evaluate(neighbourhoods_, x, c);
  int iterations = 0, stalls = 0, backtracks = 0;
  constexpr int kMaxHalvings = 6;
  // Stalled: two iterations in a row that cut the squared residual (the quantity the back-tracking
  // decreases; the largest |c| may rise while it falls) by less than kProgress.
  constexpr int kStallIterations = 2;
  constexpr double kProgress = 0.05;
  double factorMs = 0;
  Eigen::VectorXd accumulated = Eigen::VectorXd::Zero(m.rows);  // sum of multipliers (geometric stiffness)
  Positions totalImpulse = Positions::Zero(n, 3);                // sum of J^T dl (contact reactions)
  std::vector<char> immovable;                                    // per row, of the current matrix
  bool stalled = false;
  // Handing a crawling projection to the fallback (MlsParams::fallbackOnRate). The squared
  // residual is kept at the start and after each iteration. At the rate of the last
  // kRateIterations the norm falls by sqrt(rate) per iteration; if at that pace the largest |c|
  // (`excessNow` tolerances) would still be above the tolerance when max_iterations run out, the
  // fallback starts now. Only within kHandOverWithin tolerances: the fallback projects the point
  // Fast Projection reached and is a local method. Handed points further out, ckv-cylinder-fine
  // ended steps with errors of up to 0.44 instead of 0.044 (tolerance 0.001); within 10, 0.024.
  // The pillowcase with its seams closed (5 to 10% of the squared residual per iteration) then
  // hands over after 3 to 5 iterations instead of 20. Converging projections are seldom cut
  // short: none in 60 to 600 steps of ckv-corners(-fine, -regular), ckv-drape, ckv-shear,
  // torus-drape and hanging; one in 60 frames of ckv-drape-fine (1092 instead of 1062 iterations,
  // every step within the tolerance).
  constexpr int kRateIterations = 2, kFirstRateCheck = 3;
  constexpr double kHandOverWithin = 10;
  std::vector<double> squaredResiduals{c.squaredNorm()};
  auto tooSlowToFinish = [&](double excessNow) {
    const int done = static_cast<int>(squaredResiduals.size()) - 1;
    if (done < kFirstRateCheck || excessNow <= 1 || excessNow > kHandOverWithin) return false;
    const double rate = std::pow(squaredResiduals[done] / squaredResiduals[done - kRateIterations],
                                 1.0 / kRateIterations);
    if (!(rate < 1)) return true;
    return std::log(excessNow) / (-0.5 * std::log(rate)) > params_.maxIterations - done;
  };
  bool handedOver = false;
  while (iterations < params_.maxIterations) {
    if (ctx.stopRequested()) return restore(kStepStopped);
    if (holdingLengths && updateHeld()) {
      m.evaluate(neighbourhoods_, x, c);
      accumulated.conservativeResize(m.rows);  // the samples' rows keep their place
      accumulated.tail(m.rows - 2 * samples).setZero();
    }
    if (excess(c) <= 1 && limitExcess(c) <= kLimitAcceptance) break;
    if (params_.geometricStiffness && iterations > 0) {
      // M + PSD part of the diagonal blocks of sum_k lambda_k Hess c_k.
      std::vector<Eigen::Matrix3d> blocks(n, Eigen::Matrix3d::Zero());
      for (int s = 0; s < samples; ++s) {
        const double lt = accumulated[2 * s], ld = accumulated[2 * s + 1];
        const int first = neighbourhoods_.start[s], last = neighbourhoods_.start[s + 1];
        Eigen::Vector2d sumA = Eigen::Vector2d::Zero();
        for (int k = first; k < last; ++k) sumA += neighbourhoods_.coefficient[k];
        // The gap row's own curvature (about 1 / sqrt(g^2 + e^2), large near isotropic states) is
        // left out: with it ckv-corners-fine took 75 instead of 30 iterations per frame (34
        // instead of 24 with softening 0.1).
        const MetricHessian second = gapRows ? MetricHessian{Eigen::Matrix3d::Zero(), Eigen::Matrix3d::Zero(),
                                                             Eigen::Matrix3d::Zero()}
                                             : mlsDeterminantHessian(mlsDeformationGradient(neighbourhoods_, s, x));
        auto block = [&](const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
          // trace: 2 (a . b) I (methods 2.4); determinant: the blocks above.
          return Eigen::Matrix3d(lt * 2 * a.dot(b) * Eigen::Matrix3d::Identity() + ld * second.block(a, b));
        };
        blocks[s] += block(sumA, sumA);  // the centre: minus-sum rule on both sides
        for (int k = first; k < last; ++k)
          blocks[neighbourhoods_.neighbour[k]] += block(neighbourhoods_.coefficient[k], neighbourhoods_.coefficient[k]);
      }
      for (int i = 0; i < n; ++i) {
        if (pinned[i]) continue;
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig;
        eig.computeDirect(blocks[i]);  // closed form, cheaper than the iterative 3x3 solver
        const Eigen::Vector3d values = eig.eigenvalues().cwiseMax(0.0).array() + projectionMass[i];
        inverseMass[i] = eig.eigenvectors() * values.cwiseInverse().asDiagonal() * eig.eigenvectors().transpose();
        holds.restrict(i, inverseMass[i]);
      }
    }
    const auto factorStart = Clock::now();
    m.assemble(inverseMass);
    double maxDiagonal = 0;
    // Rows whose every vertex is held (pins, stuck contacts) move nothing: their diagonal is 0
    // and their multipliers, c / shift, say nothing about the forces on the held points.
    immovable.assign(m.rows, 0);
    for (int col = 0; col < m.rows; ++col) {
      const double diagonal = m.schur.coeff(col, col);
      maxDiagonal = std::max(maxDiagonal, diagonal);
      immovable[col] = diagonal == 0;
    }
    const double shift = std::max(params_.regularization * maxDiagonal, 1e-300);
    for (int col = 0; col < m.rows; ++col) m.schur.coeffRef(col, col) += shift;
    if (auto e = m.analyzeSchur()) return restore(*e);
    std::string message;
    if (m.schurSolver->factorize(m.schur, &message) != SpdSolver::Status::Ok) {
      if (!m.schurSolver->useIndefiniteFallback() ||
          m.schurSolver->factorize(m.schur, &message) != SpdSolver::Status::Ok)
        return restore("Fast Projection: factorization of J W J^T failed (" + message + ")" +
                       (params_.regularization < 1e-9
                            ? "; at regularization " + formatG(params_.regularization) +
                                  " J W J^T is singular wherever the cloth is flat (the trace and determinant "
                                  "gradients coincide there): the default is 1e-6"
                            : ""));
    }
    Eigen::MatrixXd lambda = c;
    m.schurSolver->solve(lambda);
    lastMultipliers = lambda.col(0);
    factorMs += msSince(factorStart);
    // Back-tracking: far from the constraint manifold (large steps, impacts) the linearized
    // projection can overshoot; halve it while it increases the squared residual.
    const Positions start = x;
    Positions impulse;  // J^T dl, with J at `start`
    Eigen::VectorXd acting = lambda.col(0);
    for (int r = 0; r < m.rows; ++r)
      if (immovable[r]) acting[r] = 0;
    m.impulses(acting, impulse);
    Positions correction = Positions::Zero(n, 3);  // -W J^T dl
    for (int i = 0; i < n; ++i)
      if (!inverseMass[i].isZero(0)) correction.row(i) = -(inverseMass[i] * impulse.row(i).transpose()).transpose();
    const double before = c.squaredNorm();
    double scale = 1.0;
    for (int halving = 0; halving <= kMaxHalvings; ++halving, scale *= 0.5) {
      x = start + scale * correction;
      m.evaluate(neighbourhoods_, x, c);
      if (std::isfinite(c.squaredNorm()) && c.squaredNorm() < before) break;
      ++backtracks;
    }
    accumulated += scale * lambda.col(0);
    if (holding) totalImpulse += scale * impulse;
    ++iterations;
    if (!std::isfinite(residual(c))) return restore("Fast Projection produced a non-finite state");
    if (c.squaredNorm() < (1 - kProgress) * before) {
      stalls = 0;
    } else if (++stalls >= kStallIterations) {
      stalled = true;
      break;
    }
    squaredResiduals.push_back(c.squaredNorm());
    if (params_.fallback && params_.fallbackOnRate && tooSlowToFinish(excess(c))) {
      stalled = handedOver = true;
      break;
    }
    if (holding && holds.update(ctx.obstacles, ctx.sim.thickness, x_, mass, candidate, totalImpulse, x)) {
      m.evaluate(neighbourhoods_, x, c);
      if (!params_.geometricStiffness) plainInverseMasses();
    }
  }
  stats.msPosition = msSince(t) - factorMs;
  stats.msFactor += factorMs;

  // 4. Augmented-Lagrangian fallback.
  int alIterations = 0;
  bool fallbackUsed = false;
  double fallbackFrom = 0;  // where Fast Projection stopped (what the tolerance bounds)
  if (params_.fallback && excess(c) > 1 && (stalled || iterations >= params_.maxIterations)) {
    fallbackUsed = true;
    t = Clock::now();
    const Positions target = x;  // project the current point, in the mass metric
    Eigen::VectorXd multipliers = Eigen::VectorXd::Zero(m.rows);
    // Penalty scaled so that mu |grad c|^2 starts at 100 x the mean mass: strong enough to pull
    // the constraints in, mild enough to keep M + mu J^T J well conditioned.
    double gradientScale = 0;
    for (const Vec3& g : m.gradient) gradientScale += g.squaredNorm();
    gradientScale /= std::max<size_t>(m.gradient.size(), 1);
    double mu = 1e2 * mass.mean() / std::max(gradientScale, 1e-300);
    const double muCap = 1e6 * mu;  // beyond this I / mu no longer regularizes J W J^T
    bool alFailed = false;
    // The fallback moves points as held in Fast Projection: pins and stuck contacts stay, sliding
    // contacts (and points it moves into an obstacle, held from then on) stay on the obstacle;
    // without that the push back onto the obstacles after the fallback undid it (ckv-cylinder:
    // median residual 0.026 instead of 0.001).
    std::vector<Eigen::Matrix3d> freeInverseMass(n);
    for (int i = 0; i < n; ++i) freeInverseMass[i] = heldInverseMass(i);
    auto lagrangian = [&](const Positions& at, const Eigen::VectorXd& values) {
      double value = 0;
      for (int i = 0; i < n; ++i) value += 0.5 * projectionMass[i] * (at.row(i) - target.row(i)).squaredNorm();
      return value + multipliers.dot(values) + 0.5 * mu * values.squaredNorm();
    };
    fallbackFrom = onStrain ? principalStrain(c) : residual(c);
    double previous = excess(c);
    // The best state seen (Fast Projection's to begin with) is the one kept; the fallback stops
    // after kNoProgress outer iterations that do not improve on it by 5%.
    constexpr int kNoProgress = 3;
    Positions best = x;
    double bestExcess = excess(c);
    int noProgress = 0;
    while (alIterations < params_.fallbackIterations && excess(c) > 1) {
      if (ctx.stopRequested()) return restore(kStepStopped);
      ++alIterations;
      for (int newton = 0; newton < 3; ++newton) {
        // Gauss-Newton on 1/2|x - target|_M^2 + l.c + mu/2|c|^2: (M + mu J^T J) dx = -g, solved
        // in its dual form (Woodbury's identity): with W = M^-1 (as held: freeInverseMass),
        //   dx = -W g + W J^T y,   (J W J^T + I / mu) y = J W g.
        // J W J^T has Fast Projection's pattern, already analysed, and 2 rows per sample against
        // 3 per vertex (ckv-cylinder-fine: 2.6e9 instead of 8.7e9 flops per factorization).
        Eigen::VectorXd weights = multipliers + mu * c;
        Positions wg;  // W g
        m.impulses(weights, wg);
        for (int i = 0; i < n; ++i)
          wg.row(i) = (freeInverseMass[i] *
                       (projectionMass[i] * (x.row(i) - target.row(i)) + wg.row(i)).transpose()).transpose();
        m.assemble(freeInverseMass);
        for (int r = 0; r < m.rows; ++r) m.schur.coeffRef(r, r) += 1.0 / mu;
        if (auto e = m.analyzeSchur()) return restore("augmented-Lagrangian projection: " + *e);
        std::string message;
        if (m.schurSolver->factorize(m.schur, &message) != SpdSolver::Status::Ok) {
          // Numerically singular at a large penalty: keep the best point reached (reported as
          // not converged) rather than fail the step.
          alFailed = true;
          break;
        }
        Eigen::MatrixXd y = m.applyGradients(wg);
        m.schurSolver->solve(y);
        Positions dx;
        m.impulses(y.col(0), dx);
        for (int i = 0; i < n; ++i)
          dx.row(i) = (freeInverseMass[i] * dx.row(i).transpose()).transpose() - wg.row(i);
        // Back-tracking on the augmented Lagrangian itself: Gauss-Newton steps can overshoot.
        const double before = lagrangian(x, c);
        const Positions start = x;
        double stepLength = 1.0;
        for (int halving = 0; halving <= 12; ++halving, stepLength *= 0.5) {
          x = start;
          x += stepLength * dx;  // 0 at pins and stuck contacts
          m.evaluate(neighbourhoods_, x, c);
          if (std::isfinite(residual(c)) && lagrangian(x, c) <= before) break;
        }
        if (!std::isfinite(residual(c))) return restore("augmented-Lagrangian projection: non-finite state");
        if (holding && holds.holdPenetrating(ctx.obstacles, ctx.sim.thickness, x_, x)) {
          for (int i : holds.held) freeInverseMass[i] = heldInverseMass(i);
          m.evaluate(neighbourhoods_, x, c);
        }
      }
      if (excess(c) < 0.95 * bestExcess) {
        best = x;
        bestExcess = excess(c);
        noProgress = 0;
      } else {
        ++noProgress;
      }
      if (alFailed || noProgress >= kNoProgress) break;
      multipliers += mu * c;
      if (excess(c) > 0.25 * previous) mu = std::min(10 * mu, muCap);
      previous = excess(c);
    }
    if (excess(c) > bestExcess) {
      x = best;
      m.evaluate(neighbourhoods_, x, c);
    }
    stats.msPosition += msSince(t);
  }


  // 5. Points the projection pushed into obstacles go back on them.
  t = Clock::now();
  const int pushedBack =
      resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x, correction, h, nullptr, nullptr, ctx.contactAllowance)
          .contactCount;
  contacts.contactCount += pushedBack;
  for (int i = 0; i < n; ++i)
    if (!pinned[i]) x.row(i) += correction.row(i);
  Eigen::VectorXd collisionWeights = mass.cwiseInverse();  // pins stay
  for (int i = 0; i < n; ++i)
    if (pinned[i]) collisionWeights[i] = 0;
  const int separated = resolveFeaturesAndSelfCollisions(
      cloth_->mesh, cloth_->topology, x_, x, collisionWeights, ctx.sim.thickness,
      ctx.sim.selfCollision, ctx.obstacles, stats, nullptr, ctx.contactAllowance, &cloth_->stitches,
      nullptr, &selfPairs_);
  stats.msCollision += msSince(t);
  // The residual of the state handed on: evaluated again only when the corrections above moved it.
  if (pushedBack > 0 || separated > 0) m.evaluate(neighbourhoods_, x, c);

  Positions v = (x - x_) / h;
  if (!x.allFinite() || !v.allFinite()) return restore("non-finite state");
  const double speed = v.rowwise().norm().maxCoeff();
  if (speed > params_.maxSpeed)
    return restore(runawaySpeedMessage("a vertex", speed, params_.maxSpeed));
  if (ctx.grab) grabPull_.settle(*ctx.grab, cloth_->mesh.triangles[ctx.grab->triangle], x, stats);
  x_ = std::move(x);
  v_ = std::move(v);

  const double finalResidual = residual(c);
  stats.positionIterations = iterations;
  stats.backtracks = backtracks;
  stats.converged = excess(c) <= 1;
  stats.contacts = contacts.contactCount;
  double pinError = 0;
  for (const auto& [vertex, target] : ctx.pins) pinError = std::max(pinError, (Vec3(x_.row(vertex)) - target).norm());
  stats.maxPositionError = pinError;
  stats.maxEdgeStrain = maxEdgeStrain(cloth_->mesh, cloth_->topology, x_);
  stats.linearSolver = m.schurSolver->name();
  stats.extra["fp_iterations"] = iterations;
  stats.extra["max_isometry_residual"] = finalResidual;
  stats.extra["max_principal_strain"] = principalStrain(c);
  stats.extra["fallback_used"] = fallbackUsed;
  stats.extra["fallback_iterations"] = alIterations;
  stats.extra["fp_handed_over"] = handedOver ? 1 : 0;  // by its rate (MlsParams::fallbackOnRate)
  stats.extra["max_edges_held"] = heldEdgesMost;
  if (sewing) recordStitches(cloth_->stitches, *ctx.stitchAllowance, x_, stats);
  if (holding) {
    int stuck = 0;
    for (int i : holds.held) stuck += holds.state[i] == ProjectionContacts::Stuck;
    // max_: the largest over the sub-steps of a frame (accumulateSubstep).
    stats.extra["max_contacts_stuck"] = stuck;
    stats.extra["max_contacts_sliding"] = static_cast<int>(holds.held.size()) - stuck;
  }
  // max_: sub-steps keep the largest (accumulateSubstep).
  if (fallbackUsed) stats.extra["max_residual_before_fallback"] = fallbackFrom;
  stats.extra["max_speed"] = speed;
  stats.msTotal = msSince(stepStart);
  return std::nullopt;
}

}  // namespace clothlab
