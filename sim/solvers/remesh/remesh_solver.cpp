#include "sim/solvers/remesh/remesh_solver.h"

#include <algorithm>
#include <cmath>

#include "sim/air.h"
#include "sim/format.h"
#include "sim/material.h"
#include "sim/self_collision.h"
#include "sim/stitches.h"
#include "sim/timing.h"

namespace clothlab {

namespace {

// What SolverState::more holds for this solver.
struct MeshState {
  std::shared_ptr<const AdaptiveMesh> mesh;
  int stepsSinceRemesh = 0;
  GrabPull grabPull;  // the grab's push rate
};

// Gauss-Newton solves per update of the multipliers at most: the method of multipliers needs each
// L_A minimized, not merely lowered. With 3 (ARCSim's budget is about that) the multipliers ran
// away on hanging, 866 of 1000 steps above the tolerance; with 10, none (7.6 solves per step).
constexpr int kInnerSolves = 10;
// The penalty's first value and its ceiling (methods 3.7).
constexpr double kFirstPenalty = 1e3, kMaxPenalty = 1e8;
// Back-tracking halvings of a Gauss-Newton step that does not lower L_A.
constexpr int kHalvings = 10;
// Levenberg-Marquardt damping of the Gauss-Newton matrix's diagonal, relative: none while full
// steps are taken; once the line search cuts a step below half, at least kDampingFloor and
// kDampingFactor times the last; a full step divides it by kDampingFactor again. Undamped, the
// nearly singular directions of a fine or refined mesh (moving a node across its flat
// neighbours) made steps that the line search cut to 1/128: a sheet dropped on a box ended 190 to
// 221 of 400 steps above the tolerance, damped 60 to 144 (docs/measurements.md).
constexpr double kDampingFloor = 3e-3, kDampingFactor = 4;
// The floor of a Gauss-Newton step that goes on minimizing L_A, in tolerances of the mean edge.
// The solves converge linearly, each step about half the last, so what is left after a step of
// 0.2 moves nodes by about as much again, a fifth of the tolerance's strain over an edge. At
// 1e-3, every projection in contact took its 10 solves, the last ones moving nodes by microns:
// over 15 drapes, 15.9 solves per step and 270 steps above the tolerance; at 0.2, 11.8 solves
// and 152 above (docs/measurements.md).
constexpr double kStepFloor = 0.2;
// The least pull of a face's row within its smoothing band, in tolerances, for which a step
// whose limits all hold still projects (RemeshSolver::project's pullInBands). Any pull at all
// would project in every step that stretches the cloth at all (a hanging 8 x 8 grid from its
// first step, far from its limits); below this floor, a step that skips the pull leaves out less
// than a tenth of the tolerance.
constexpr double kBandPullFloor = 0.1;
// Projections per step at most while contacts appear: the candidate's, then the result's new ones.
constexpr int kContactRounds = 3;
// The Gauss-Newton solves of each contact round after the first at most, as a share of
// `iterations` (the first's). When the rounds shared one budget, the first projection of a step
// in contact spent it (on fold-drop's pile, 162 of 300 steps): the contacts and self-collision
// pairs found at its result were never projected, and the friction pass pushed those nodes out, by
// up to 12 mm, across faces a few millimetres wide. fold-drop ended 155 of 300 steps above the
// tolerance and torus-drape 11, against 37 and 4 (docs/measurements.md).
constexpr double kLaterRoundShare = 0.5;
// The self-collision pairs held in the projection: those within this many thicknesses, so that
// pairs that are near are kept from closing as well as those within the thickness pushed apart.
// At 1 instead, fold-drop ended 105 of 300 steps beyond its limits by more than 0.2, against 35.
constexpr double kPairReach = 1.5;
// Elements within this many thicknesses of each other in the flat rest state are no
// self-collision pair (FlatNearness in sim/self_collision.h: pi / 2 of them at the least, and a
// fold's turn is not a perfect half circle). fold-drop's steps beyond its limits by more than 0.2:
// 145 of 300 with none left out, 74 at 1, 35 at 2, 76 at 3.
constexpr double kFlatNear = 2;

}  // namespace

const ParamTable<RemeshParams>& RemeshParams::table() {
  static const ParamTable<RemeshParams> table = {
      {"warp_min", "", "strain limit along the warp (material axis 1) in compression",
       &RemeshParams::warpMin, -0.5, 0, false},
      {"warp_max", "", "strain limit along the warp in stretch", &RemeshParams::warpMax, 0, 1,
       false},
      {"weft_min", "", "strain limit along the weft (material axis 2) in compression",
       &RemeshParams::weftMin, -0.5, 0, false},
      {"weft_max", "", "strain limit along the weft in stretch", &RemeshParams::weftMax, 0, 1,
       false},
      {"bias_min", "", "strain limit along the diagonals (the bias) in compression",
       &RemeshParams::biasMin, -0.5, 0, false},
      {"bias_max", "", "strain limit along the diagonals in stretch", &RemeshParams::biasMax, 0, 1,
       false},
      {"tolerance", "", "allowed violation of a strain limit", &RemeshParams::tolerance, 1e-6, 0.1,
       true},
      {"limit_smoothing", "",
       "strain band about each limit over which its pull sets in (0: only beyond the limit)",
       &RemeshParams::limitSmoothing, 0, 0.1, false},
      {"iterations", "", "Gauss-Newton solves per projection at most", &RemeshParams::iterations, 1,
       1000, true},
      {"remesh", "", "adapt the mesh (off: the limits on the cloth's own mesh)",
       &RemeshParams::remesh},
      {"remesh_interval", "", "steps between remeshes", &RemeshParams::remeshInterval, 1, 1000,
       true},
      {"min_edge", "m", "shortest edge the remesher makes", &RemeshParams::minEdge, 1e-4, 10, true},
      {"refine_angle", "rad", "bend across an edge that asks for refinement",
       &RemeshParams::refineAngle, 0.01, 3, true},
      {"refine_velocity", "m/s", "velocity jump across an edge that asks for refinement",
       &RemeshParams::refineVelocity, 1e-3, 1e3, true},
      {"refine_compression", "", "compression scale that asks for refinement",
       &RemeshParams::refineCompression, 1e-4, 1, true},
      {"max_nodes", "", "the remesher stops splitting at this many nodes", &RemeshParams::maxNodes,
       3, 1000000, true},
      {"max_speed", "m/s", "speed treated as divergence", &RemeshParams::maxSpeed, 1, 1e6, true},
  };
  return table;
}

RemeshSizing RemeshParams::sizing() const {
  RemeshSizing out;
  out.minEdge = minEdge;
  out.maxEdge = std::max(minEdge, out.maxEdge);
  out.refineAngle = refineAngle;
  out.refineVelocity = refineVelocity;
  out.refineCompression = refineCompression;
  out.maxNodes = maxNodes;
  // New edges within half the tightest limit.
  out.maxNewEdgeStrain = 0.5 * std::min({-warpMin, warpMax, -weftMin, weftMax, -biasMin, biasMax});
  out.limits = limits();
  out.maxNewFaceViolation = tolerance;  // what the step hands on is held to the same
  return out;
}

std::optional<std::string> RemeshSolver::reset(std::shared_ptr<const ClothModel> cloth,
                                               const SimParams&, const nlohmann::json& params) {
  RemeshParams parsed;
  if (auto e = readParams(params, RemeshParams::table(), parsed, "solver")) return e;
  if (!cloth->flatCoords)
    return "strain-limit-remesh needs the cloth's flat rest state: " + cloth->flatCoords.error();
  auto mesh = AdaptiveMesh::fromCloth(cloth->mesh, *cloth->flatCoords);
  if (!mesh) return "strain-limit-remesh: " + mesh.error();
  cloth_ = std::move(cloth);
  params_ = parsed;
  mesh_ = std::make_shared<const AdaptiveMesh>(std::move(*mesh));
  stepsSinceRemesh_ = 0;
  x_ = cloth_->mesh.positions;
  v_ = Positions::Zero(x_.rows(), 3);
  surface_ = x_;
  meanEdge_ = meanEdgeLength(cloth_->mesh.positions, cloth_->topology.edges);
  grabPull_ = GrabPull(meanEdge_);
  meshChanged();
  return std::nullopt;
}

void RemeshSolver::meshChanged() {
  const TriangleMesh& rest = mesh_->restMesh();
  areaShare_ = vertexAreaShares(rest);
  extraMass_ = Eigen::VectorXd::Zero(rest.vertexCount());
  extraMass_.head(mesh_->preservedCount()) = vertexPointMasses(*cloth_);
  // The rows' bends at the nodes' rest positions: the cloth's shape as loaded at its own
  // vertices, and the remesher's added nodes on its chords (a split puts one at the mean of its
  // edge's ends), so that the shape as loaded, refined or not, is at rest (bending_rest "loaded").
  bending_ =
      std::make_unique<ImplicitBending>(hingeBendingRows(rest, mesh_->topology()), rest.positions);
  projection_.reset();
  buildPattern();
  FineMesh fine = mesh_->fineMesh();
  fine.hinge = bending_->hinge();
  fine.restBend = bending_->restBend();
  fine_ = std::make_shared<const FineMesh>(std::move(fine));
}

void RemeshSolver::buildPattern() {
  const auto& tris = mesh_->restMesh().triangles;
  const int n = mesh_->nodeCount();
  // Faces and stitches alike couple three nodes (a stitch's vertex and its point's two; the
  // cloth's vertices keep their indices as nodes).
  std::vector<Tri> triples = tris;
  for (const Stitch& stitch : cloth_->stitches)
    triples.push_back({stitch.vertex, stitch.a, stitch.b});
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(45 * triples.size() + 6 * n);
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < 3; ++p)
      for (int q = p; q < 3; ++q) entries.emplace_back(3 * i + p, 3 * i + q, 0.0);
  for (const Tri& t : triples)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q)
            if (3 * t[a] + p <= 3 * t[b] + q) entries.emplace_back(3 * t[a] + p, 3 * t[b] + q, 0.0);
  SparseMatrix& m = pattern_.matrix;
  m.resize(3 * n, 3 * n);
  m.setFromTriplets(entries.begin(), entries.end());
  m.makeCompressed();
  // The entry (row, col), row <= col, among the values; -1 below the diagonal.
  const auto at = [&m](int row, int col) {
    if (row > col) return -1;
    const int* begin = m.innerIndexPtr() + m.outerIndexPtr()[col];
    const int* end = m.innerIndexPtr() + m.outerIndexPtr()[col + 1];
    return static_cast<int>(std::lower_bound(begin, end, row) - m.innerIndexPtr());
  };
  pattern_.node.resize(n);
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) pattern_.node[i][3 * p + q] = at(3 * i + p, 3 * i + q);
  pattern_.face.resize(triples.size());
  for (size_t f = 0; f < triples.size(); ++f)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q)
            pattern_.face[f][9 * (3 * a + p) + 3 * b + q] =
                at(3 * triples[f][a] + p, 3 * triples[f][b] + q);
}

std::optional<std::string> RemeshSolver::setParams(const nlohmann::json& params) {
  RemeshParams parsed = params_;
  if (auto e = readParams(params, RemeshParams::table(), parsed, "solver")) return e;
  params_ = parsed;
  return std::nullopt;
}

nlohmann::json RemeshSolver::params() const { return writeParams(RemeshParams::table(), params_); }

Positions RemeshSolver::surfaceVelocities() const { return v_.topRows(mesh_->preservedCount()); }

SolverState RemeshSolver::state() const {
  return {x_, v_,
          std::make_shared<const MeshState>(MeshState{mesh_, stepsSinceRemesh_, grabPull_})};
}

void RemeshSolver::setState(const SolverState& state) {
  if (state.more) {
    const auto& more = *static_cast<const MeshState*>(state.more.get());
    stepsSinceRemesh_ = more.stepsSinceRemesh;
    grabPull_ = more.grabPull;
    if (more.mesh != mesh_) {
      mesh_ = more.mesh;
      meshChanged();
    }
  }
  x_ = state.x;
  v_ = state.v;
  surface_ = x_.topRows(mesh_->preservedCount());
}

SolverCounts RemeshSolver::counts() const {
  return {mesh_ ? mesh_->nodeCount() : 0, mesh_ ? 8 * mesh_->faceCount() : 0, 0};
}

void RemeshSolver::debugGeometry(Positions& points, std::vector<std::pair<int, int>>& lines) const {
  points = x_;
  lines.clear();
  for (const auto& e : mesh_->topology().edges) lines.emplace_back(e[0], e[1]);
}

std::shared_ptr<const FineMesh> RemeshSolver::fineMesh(Positions& nodes) const {
  nodes = x_;
  return fine_;
}

double RemeshSolver::worstViolation(const Positions& x) const {
  const StrainLimits limits = params_.limits();
  double worst = 0;
  const auto& tris = mesh_->restMesh().triangles;
  for (int f = 0; f < mesh_->faceCount(); ++f) {
    const Tri& t = tris[f];
    worst = std::max(worst, faceLimitViolation(faceStrain(mesh_->faceRests()[f], x.row(t[0]),
                                                          x.row(t[1]), x.row(t[2])),
                                               limits));
  }
  return worst;
}

std::optional<std::string> RemeshSolver::project(Positions& x, const Eigen::VectorXd& mass,
                                                 const std::vector<char>& fixed,
                                                 const std::vector<ContactRow>& contacts,
                                                 const std::vector<SelfCollisionRow>& pairs,
                                                 const StepContext& ctx, bool pullInBands,
                                                 int limit, int& solves, double& violation) {
  // A contact's row, n . (p - x) <= 0 [m]: how far its node lies behind the contact plane.
  const auto contactValue = [&](const Positions& at, size_t c) {
    return contacts[c].normal.dot(contacts[c].point - at.row(contacts[c].node).transpose());
  };
  const auto contactGap = [&](const Positions& at) {
    double worst = 0;
    for (size_t c = 0; c < contacts.size(); ++c) worst = std::max(worst, contactValue(at, c));
    return worst;
  };
  // A garment's stitches (sim/stitches.h), held like the contacts: |d| - allowance <= 0 [m], d
  // the stitch's point minus its vertex.
  const std::vector<Stitch>& stitches = cloth_->stitches;
  const size_t stitchCount = ctx.stitchAllowance ? stitches.size() : 0;
  const auto allowance = [&](size_t k) {
    return (*ctx.stitchAllowance)[static_cast<Eigen::Index>(k)];
  };
  const auto stitchValue = [&](const Positions& at, size_t k) {
    return stitchVector(stitches[k], at).norm() - allowance(k);
  };
  // A self-collision pair's row, gap - n . sum_k c_k x_k <= 0 [m].
  const auto pairValue = [&](const Positions& at, size_t k) { return pairs[k].shortfall(at); };
  // Within the tolerance times the mean edge of every contact plane, stitch allowance and pair.
  const auto rowsMet = [&](const Positions& at) {
    double worst = contactGap(at);
    for (size_t k = 0; k < stitchCount; ++k) worst = std::max(worst, stitchValue(at, k));
    for (size_t k = 0; k < pairs.size(); ++k) worst = std::max(worst, pairValue(at, k));
    return worst <= params_.tolerance * meanEdge_;
  };
  const int n = static_cast<int>(x.rows());
  const auto& tris = mesh_->restMesh().triangles;
  const auto& rests = mesh_->faceRests();
  const StrainLimits limits = params_.limits();
  // Each face's penalty band (rowPenalty) in its rows' units: the strain band times sqrt(area).
  std::vector<double> bands(tris.size());
  for (size_t f = 0; f < tris.size(); ++f) bands[f] = params_.limitSmoothing * rests[f].root;
  std::array<double, 8> values;
  // Whether the smoothed penalty pulls some face's row from within its band of a limit, with no
  // multiplier yet, by more than kBandPullFloor tolerances (its slope is the shift it asks of the
  // row's value).
  const auto bandsPull = [&](const Positions& at) {
    if (params_.limitSmoothing <= 0) return false;
    for (size_t f = 0; f < tris.size(); ++f) {
      const Tri& t = tris[f];
      faceLimitValues(rests[f], faceStrain(rests[f], at.row(t[0]), at.row(t[1]), at.row(t[2])),
                      limits, values);
      const double floor = kBandPullFloor * params_.tolerance * rests[f].root;
      for (double value : values)
        if (rowPenalty(value, bands[f]).slope > floor) return true;
    }
    return false;
  };
  if (violation <= params_.tolerance && rowsMet(x) && !(pullInBands && bandsPull(x)))
    return std::nullopt;
  // m~ = m mean(1/m) (methods 3.4): the objective in m^2.
  const Eigen::VectorXd scaled = mass * mass.cwiseInverse().mean();
  const Positions target = x;
  std::vector<double> lambda(8 * tris.size(), 0.0), contactLambda(contacts.size(), 0.0),
      stitchLambda(stitchCount, 0.0), pairLambda(pairs.size(), 0.0);
  double mu = kFirstPenalty;

  // L_A at x; with `gradient`, also its gradient and the Gauss-Newton matrix (upper triangle,
  // into pattern_'s values).
  std::array<LimitDirection, 4> directions;
  auto evaluate = [&](const Positions& at, Eigen::VectorXd* gradient) {
    double* hessian = gradient ? pattern_.matrix.valuePtr() : nullptr;
    // weight n n^T into node i's own block (its upper triangle).
    const auto addAlong = [&](int i, double weight, const Vec3& normal) {
      for (int p = 0; p < 3; ++p)
        for (int q = p; q < 3; ++q)
          hessian[pattern_.node[i][3 * p + q]] += weight * normal(p) * normal(q);
    };
    double value = 0;
    for (int i = 0; i < n; ++i)
      if (!fixed[i]) value += 0.5 * scaled[i] * (at.row(i) - target.row(i)).squaredNorm();
    if (gradient) {
      gradient->setZero(3 * n);
      std::fill(hessian, hessian + pattern_.matrix.nonZeros(), 0.0);
      for (int i = 0; i < n; ++i) {
        if (!fixed[i])
          gradient->segment<3>(3 * i) = scaled[i] * (at.row(i) - target.row(i)).transpose();
        for (int c = 0; c < 3; ++c)
          hessian[pattern_.node[i][4 * c]] += fixed[i] ? 1.0 : scaled[i];
      }
    }
    // Contacts and stitches take the plain penalty (band 0): smoothing them gained nothing.
    for (size_t c = 0; c < contacts.size(); ++c) {
      const ContactRow& row = contacts[c];
      const RowPenalty penalty = rowPenalty(contactValue(at, c) + contactLambda[c] / mu, 0);
      if (penalty.curvature <= 0) continue;
      value += mu * penalty.value;
      if (!gradient) continue;
      gradient->segment<3>(3 * row.node) -= mu * penalty.slope * row.normal;
      addAlong(row.node, mu, row.normal);
    }
    // The pairs take the plain penalty as the contacts do. Their four nodes need not share a face,
    // so the pattern has no entries coupling them: each node's own block takes the diagonal
    // majorant |c_k| (sum_j |c_j|) n n^T of the row's Gauss-Newton term (c c^T) x (n n^T), which
    // leaves the matrix positive definite and a step along it one that does not overshoot the row.
    for (size_t k = 0; k < pairs.size(); ++k) {
      const SelfCollisionRow& row = pairs[k];
      const RowPenalty penalty = rowPenalty(pairValue(at, k) + pairLambda[k] / mu, 0);
      if (penalty.curvature <= 0) continue;
      value += mu * penalty.value;
      if (!gradient) continue;
      double sum = 0;
      for (int j = 0; j < 4; ++j)
        if (!fixed[row.vertices[j]]) sum += std::abs(row.coefficients[j]);
      for (int j = 0; j < 4; ++j) {
        const int node = row.vertices[j];
        if (fixed[node]) continue;
        gradient->segment<3>(3 * node) -= mu * penalty.slope * row.coefficients[j] * row.normal;
        addAlong(node, mu * std::abs(row.coefficients[j]) * sum, row.normal);
      }
    }
    for (size_t f = 0; f < tris.size(); ++f) {
      const Tri& t = tris[f];
      const FaceStrain strain = faceStrain(rests[f], at.row(t[0]), at.row(t[1]), at.row(t[2]));
      if (!gradient) {
        // The line search's trials need the rows' values alone, not their directions.
        faceLimitValues(rests[f], strain, limits, values);
        for (int r = 0; r < 8; r += 2)
          value += mu * (rowPenalty(values[r] + lambda[8 * f + r] / mu, bands[f]).value +
                         rowPenalty(values[r + 1] + lambda[8 * f + r + 1] / mu, bands[f]).value);
        continue;
      }
      faceLimitDirections(rests[f], strain, limits, directions);
      const double root = rests[f].root;
      // The face's block for each pair of corners a <= b; the pair (b, a)'s is its transpose.
      std::array<Eigen::Matrix3d, 6> block;
      bool any = false;
      for (int d = 0; d < 4; ++d) {
        const LimitDirection& limit = directions[d];
        const RowPenalty upper = rowPenalty(limit.upper + lambda[8 * f + 2 * d] / mu, bands[f]);
        const RowPenalty lower = rowPenalty(limit.lower + lambda[8 * f + 2 * d + 1] / mu, bands[f]);
        if (upper.curvature <= 0 && lower.curvature <= 0) continue;
        value += mu * (upper.value + lower.value);
        // Both rows' gradients are +-sqrt(a) c_n u (strain_limit.h): their Gauss-Newton terms
        // together are mu a (curvatures) (c c^T) x (u u^T), and the upper limit's own curvature
        // adds mu slope sqrt(a) / |F d| (c c^T) x (I - u u^T), positive semidefinite (a lower
        // limit's is negative and left out, as Gauss-Newton leaves out all of it).
        const double pull = mu * root * (upper.slope - lower.slope);
        Eigen::Vector3d c = limit.along;
        for (int k = 0; k < 3; ++k) {
          if (fixed[t[k]])
            c(k) = 0;
          else
            gradient->segment<3>(3 * t[k]) += pull * c(k) * limit.unit;
        }
        const Eigen::Matrix3d normal = limit.unit * limit.unit.transpose();
        Eigen::Matrix3d m = mu * rests[f].area * (upper.curvature + lower.curvature) * normal;
        if (upper.curvature > 0 && limit.length > 0)
          m += mu * upper.slope * root / limit.length * (Eigen::Matrix3d::Identity() - normal);
        if (!any)
          for (Eigen::Matrix3d& b : block) b.setZero();
        any = true;
        for (int a = 0, k = 0; a < 3; ++a)
          for (int b = a; b < 3; ++b) block[k++] += c(a) * c(b) * m;
      }
      if (!any) continue;
      // Each entry goes where the upper triangle holds it: at (a, b) or, transposed, at (b, a).
      const auto& where = pattern_.face[f];
      for (int a = 0, k = 0; a < 3; ++a)
        for (int b = a; b < 3; ++b, ++k)
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) {
              const int at = where[9 * (3 * a + p) + 3 * b + q];
              const int mirrored = where[9 * (3 * b + q) + 3 * a + p];
              if (at >= 0) hessian[at] += block[k](p, q);
              if (a != b && mirrored >= 0) hessian[mirrored] += block[k](p, q);
            }
    }
    for (size_t k = 0; k < stitchCount; ++k) {
      const Vec3 d = stitchVector(stitches[k], at);
      const double length = d.norm();
      const RowPenalty penalty = rowPenalty(length - allowance(k) + stitchLambda[k] / mu, 0);
      if (penalty.curvature <= 0 || length == 0) continue;
      value += mu * penalty.value;
      if (!gradient) continue;
      const auto [node, weight] = stitchVertices(stitches[k]);
      const Vec3 unit = d / length;
      Eigen::Matrix<double, 9, 1> grad;
      for (int a = 0; a < 3; ++a) {
        grad.segment<3>(3 * a) = fixed[node[a]] ? Vec3::Zero() : Vec3(weight[a] * unit);
        gradient->segment<3>(3 * node[a]) += mu * penalty.slope * grad.segment<3>(3 * a);
      }
      // |d|'s own curvature, (I - u u^T) / |d| times the weights, positive semidefinite while
      // the row pulls.
      Eigen::Matrix<double, 9, 9> block = mu * grad * grad.transpose();
      const Eigen::Matrix3d across =
          mu * penalty.slope / length * (Eigen::Matrix3d::Identity() - unit * unit.transpose());
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          if (!fixed[node[a]] && !fixed[node[b]])
            block.block<3, 3>(3 * a, 3 * b) += weight[a] * weight[b] * across;
      const auto& where = pattern_.face[tris.size() + k];
      for (int e = 0; e < 81; ++e)
        if (where[e] >= 0) hessian[where[e]] += block(e / 9, e % 9);
    }
    return value;
  };
  // A Gauss-Newton step moving no node farther than this ends the minimization of L_A [m].
  const double stepFloor = kStepFloor * params_.tolerance * meanEdge_;
  Eigen::VectorXd gradient;
  double previous = violation, damping = 0;
  const int last = solves + limit;
  while (solves < last) {
    for (int inner = 0; inner < kInnerSolves && solves < last; ++inner) {
      if (ctx.stopRequested()) return std::string(kStepStopped);
      const double value = evaluate(x, &gradient);
      if (damping > 0)
        for (int i = 0; i < n; ++i)
          for (int c = 0; c < 3; ++c) pattern_.matrix.valuePtr()[pattern_.node[i][4 * c]] *= 1 + damping;
      if (!projection_) {
        projection_ = makeSpdSolver("cholmod");
        if (auto e = projection_->analyze(pattern_.matrix)) return "strain limiting: " + *e;
      }
      std::string message;
      if (projection_->factorize(pattern_.matrix, &message) != SpdSolver::Status::Ok)
        return "strain limiting: the Gauss-Newton matrix did not factorize (" + message + ")";
      Eigen::MatrixXd step = -gradient;
      projection_->solve(step);
      ++solves;
      Positions moved;
      double alpha = 1;
      bool lowered = false;
      for (int halving = 0; halving <= kHalvings; ++halving, alpha /= 2) {
        moved =
            x + alpha * Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>>(
                            step.data(), n, 3);
        if (evaluate(moved, nullptr) < value) {
          lowered = true;
          break;
        }
      }
      if (alpha < 0.5)
        damping = std::max(kDampingFloor, damping * kDampingFactor);
      else if (alpha == 1)
        damping /= kDampingFactor;
      if (!lowered) break;
      x = moved;
      if (alpha * step.cwiseAbs().maxCoeff() < stepFloor) break;  // L_A is close to its minimum
    }
    // The multipliers, and the violation from the same strains.
    violation = 0;
    for (size_t f = 0; f < tris.size(); ++f) {
      const Tri& t = tris[f];
      const FaceStrain strain = faceStrain(rests[f], x.row(t[0]), x.row(t[1]), x.row(t[2]));
      violation = std::max(violation, faceLimitValues(rests[f], strain, limits, values));
      for (int r = 0; r < 8; ++r)
        lambda[8 * f + r] = mu * rowPenalty(values[r] + lambda[8 * f + r] / mu, bands[f]).slope;
    }
    for (size_t c = 0; c < contacts.size(); ++c)
      contactLambda[c] = mu * rowPenalty(contactValue(x, c) + contactLambda[c] / mu, 0).slope;
    for (size_t k = 0; k < stitchCount; ++k)
      stitchLambda[k] = mu * rowPenalty(stitchValue(x, k) + stitchLambda[k] / mu, 0).slope;
    // The pairs' part in the penalty's growth: their worst row in mean edges, as a strain.
    double progress = violation;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const double value = pairValue(x, k);
      pairLambda[k] = mu * rowPenalty(value + pairLambda[k] / mu, 0).slope;
      progress = std::max(progress, value / meanEdge_);
    }
    if (violation <= params_.tolerance && rowsMet(x)) break;
    if (progress > previous / 4) mu = std::min(mu * 10, kMaxPenalty);
    previous = progress;
  }
  return std::nullopt;
}

std::optional<std::string> RemeshSolver::step(const StepContext& ctx, StepStats& stats) {
  const auto stepStart = Clock::now();
  const double h = ctx.sim.dt;
  const SolverState before = state();
  auto restore = [&](const std::string& why) {
    setState(before);
    return std::optional<std::string>(why);
  };
  const int n = mesh_->nodeCount();
  // The nodes' masses, pins, inverse masses (0 where pinned) and contact allowances (the cloth's
  // vertices'; added nodes have none), on the mesh of the moment: the step's, then a remesh's.
  Eigen::VectorXd mass, inverseMass, allowance;
  std::vector<char> fixed;
  auto takeNodes = [&] {
    const int nodes = mesh_->nodeCount();
    mass = ctx.sim.density * areaShare_ + extraMass_;
    fixed.assign(nodes, 0);
    for (const auto& pin : ctx.pins) fixed[pin.first] = 1;
    inverseMass = mass.cwiseInverse();
    for (int i = 0; i < nodes; ++i)
      if (fixed[i]) inverseMass[i] = 0;
    if (ctx.contactAllowance) {
      allowance = Eigen::VectorXd::Zero(nodes);
      allowance.head(ctx.contactAllowance->size()) = *ctx.contactAllowance;
    }
  };
  takeNodes();
  const Eigen::VectorXd* allowancePtr = ctx.contactAllowance ? &allowance : nullptr;

  // 1. The air, bending and gravity; the candidate.
  auto t = Clock::now();
  if (ctx.sim.airDensity > 0)
    v_ += airVelocityChange(mesh_->restMesh(), x_, v_, mass, ctx.sim, h, ctx.pins);
  if (auto e = bending_->velocities(mass, ctx.sim.bending, h, ctx.sim.gravity, x_, v_, ctx.pins, v_,
                                    restShapeFor(ctx.sim.bendingRest, bending_->restBend())))
    return restore(*e);
  if (ctx.sim.damping > 0) v_ /= 1.0 + h * ctx.sim.damping;
  Positions x = x_ + h * v_;
  for (const auto& [vertex, target] : ctx.pins) x.row(vertex) = target.transpose();
  Eigen::VectorXd weight = mass;
  // The grab pulls the point of the adaptive mesh, the surface drawn and clicked on, at the
  // grabbed point's place in the cloth (a fold refined within a cloth triangle lies off its chord).
  const std::optional<Grab> grab =
      ctx.grab ? grabOnFineMesh(*cloth_, *fine_, *ctx.grab) : std::nullopt;
  if (grab) {
    const auto moved = grabPull_.move(*grab, fine_->triangles[grab->triangle], h, x_, x,
                                      [&](int vertex) { return fixed[vertex] != 0; });
    for (int vertex : moved) weight[vertex] = grabbedCornerMass(weight[vertex], mass.sum());
  } else {
    grabPull_.release();
  }
  stats.msForces = msSince(t);

  // Where the nodes lie in the flat rest state: the self-collision pairs leave out elements that
  // near along the cloth, which the refined folds' small faces bring within the thickness. It
  // refers to the mesh of the moment, so a remesh takes it anew.
  const auto flatNearness = [&] {
    return FlatNearness{mesh_->material(), mesh_->wrap(), kFlatNear * ctx.sim.thickness};
  };
  const FlatNearness flat = flatNearness();

  // 2. Strain limiting, the obstacles' contacts held in it: those of the candidate, then those of
  // the projection's result while it finds new ones (kContactRounds), each round with solves of
  // its own (kLaterRoundShare). With self-collision, the cloth's pairs over the step to the
  // candidate are held in it too, taken again at each result, and a round that meets them all and
  // adds no contact ends the rounds.
  std::vector<ContactRow> contactRows;
  std::vector<SelfCollisionRow> pairs;
  std::unique_ptr<SelfCollisionPairs> found;  // over the step to the candidate
  std::vector<char> held(n, 0);
  int solves = 0;
  const int laterRoundSolves =
      std::max(1, static_cast<int>(std::lround(kLaterRoundShare * params_.iterations)));
  double violation = worstViolation(x), collisionMs = 0;
  Positions correction, normals;
  for (int round = 0; round < kContactRounds; ++round) {
    bool anew = round == 0;  // rows the last projection did not hold
    if (ctx.sim.selfCollision) {
      const auto ct = Clock::now();
      if (!found)
        found = std::make_unique<SelfCollisionPairs>(
            mesh_->restMesh(), mesh_->topology(), x_, x, inverseMass, ctx.sim.thickness,
            kPairReach * ctx.sim.thickness, &cloth_->stitches, &flat, &selfPairs_);
      pairs = found->rows(x, allowancePtr);
      for (const SelfCollisionRow& row : pairs)
        if (row.shortfall(x) > params_.tolerance * meanEdge_) anew = true;
      collisionMs += msSince(ct);
    }
    if (!ctx.obstacles.empty()) {
      const auto ct = Clock::now();
      resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x, correction, h, &normals, nullptr,
                      allowancePtr);
      int added = 0;
      for (int i = 0; i < n; ++i) {
        if (fixed[i] || held[i] || correction.row(i).isZero() || normals.row(i).isZero()) continue;
        held[i] = 1;
        const Vec3 normal = normals.row(i).normalized().transpose();
        const Vec3 push = correction.row(i).transpose();
        contactRows.push_back({i, normal, x.row(i).transpose() + push});
        // Friction's part of the candidate's corrections (across the normal) moves the
        // projection's target. Held along the normal alone, a node on an obstacle went on
        // wherever its candidate went, and the contacts' pass after the projection found it on
        // the surface with no depth to take friction from: a sheet slid 0.85 m down a 10-degree
        // slope with friction 0.3 in 1 s, and a ground moving under it left it behind
        // (docs/measurements.md, "strain-limit-remesh on a plane: friction where the projection
        // runs"). Later rounds' corrections are not: their nodes' motion over the step was
        // taken by the first round's friction, and taking friction again there threw a drape
        // on a sphere 0.7 beyond its limits.
        if (round == 0) x.row(i) += (push - push.dot(normal) * normal).transpose();
        ++added;
      }
      collisionMs += msSince(ct);
      if (added > 0) anew = true;
    }
    if (!anew) break;
    t = Clock::now();
    const int limit = round == 0 ? params_.iterations : laterRoundSolves;
    if (auto e = project(x, weight, fixed, contactRows, pairs, ctx, round == 0, limit, solves,
                         violation))
      return restore(*e);
    stats.msPosition += msSince(t);
    if (ctx.obstacles.empty() && !ctx.sim.selfCollision) break;
  }

  // 3. The contacts once more (with friction), mesh features and self-collision.
  t = Clock::now();
  int contacts = 0;
  if (!ctx.obstacles.empty()) {
    contacts = resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x, correction, h, nullptr,
                               nullptr, allowancePtr)
                   .contactCount;
    for (int i = 0; i < n; ++i)
      if (!fixed[i]) x.row(i) += correction.row(i);
  }
  resolveFeaturesAndSelfCollisions(mesh_->restMesh(), mesh_->topology(), x_, x, inverseMass,
                                   ctx.sim.thickness, ctx.sim.selfCollision, ctx.obstacles, stats,
                                   nullptr, allowancePtr, &cloth_->stitches, &flat, &selfPairs_, h);
  stats.msCollision = collisionMs + msSince(t);
  if (!ctx.obstacles.empty() || ctx.sim.selfCollision) violation = worstViolation(x);

  // Velocities.
  Positions v = (x - x_) / h;
  if (!x.allFinite() || !v.allFinite())
    return restore("the state became non-finite (Gauss-Newton solves " + std::to_string(solves) +
                   ")");
  const double speed = v.rowwise().norm().maxCoeff();
  if (speed > params_.maxSpeed)
    return restore(runawaySpeedMessage("a node", speed, params_.maxSpeed));
  if (grab) grabPull_.settle(*grab, fine_->triangles[grab->triangle], x, stats);
  x_ = std::move(x);
  v_ = std::move(v);

  // 4. The remesher.
  RemeshCounts remeshed;
  double msRemesh = 0;
  if (params_.remesh && ++stepsSinceRemesh_ >= params_.remeshInterval) {
    t = Clock::now();
    stepsSinceRemesh_ = 0;
    const SolverState unremeshed = state();
    const double violationBefore = violation;
    AdaptiveMesh next = mesh_->remeshed(x_, v_, params_.sizing(), remeshed);
    // A remesh that changed nothing keeps the mesh and what was built from it (the bending, the
    // projection's analysis, the mesh the viewer uploaded).
    const bool changed = remeshed.flips + remeshed.splits + remeshed.collapses > 0;
    if (changed) {
      mesh_ = std::make_shared<const AdaptiveMesh>(std::move(next));
      meshChanged();
    }
    // A node added at an edge's midpoint over a curved obstacle lies inside it by about l^2 / 8r
    // (more over a box's edge): pushed out at once, so that no state handed on has a node
    // inside. Where that moves faces beyond the limits (by up to 0.44 on a sheet draped over a
    // box), they are projected again with the pushed nodes held outside, and what that moves
    // inside is pushed out and held in turn (kContactRounds).
    if (!ctx.obstacles.empty() && remeshed.splits > 0) {
      takeNodes();
      std::vector<ContactRow> pushed;
      const Positions unprojected = x_;
      bool projected = false;
      for (int round = 0;; ++round) {
        Positions push;
        resolveContacts(ctx.obstacles, ctx.sim.thickness, x_, x_, push, h, &normals, nullptr,
                        allowancePtr);
        for (int i = 0; i < x_.rows(); ++i) {
          if (fixed[i] || push.row(i).isZero() || normals.row(i).isZero()) continue;
          x_.row(i) += push.row(i);
          pushed.push_back({i, normals.row(i).normalized().transpose(), x_.row(i).transpose()});
        }
        double after = worstViolation(x_);
        if (after <= params_.tolerance || round == kContactRounds) break;
        int remeshSolves = 0;
        if (auto e = project(x_, mass, fixed, pushed, {}, ctx, false, params_.iterations,
                             remeshSolves, after))
          return restore(*e);
        solves += remeshSolves;
        projected = true;
      }
      // The projection moved the nodes as one step would: the pairs it brought together are
      // pushed apart again.
      if (projected) {
        StepStats ignored;
        const FlatNearness remeshedFlat = flatNearness();
        resolveFeaturesAndSelfCollisions(mesh_->restMesh(), mesh_->topology(), unprojected, x_,
                                         inverseMass, ctx.sim.thickness, ctx.sim.selfCollision,
                                         ctx.obstacles, ignored, nullptr, allowancePtr,
                                         &cloth_->stitches, &remeshedFlat, &selfPairs_);
      }
    }
    // The state handed on is the new mesh's: its faces' violation counts. A remesh that hands on
    // a state more than kRemeshRefusedExcess further beyond the limits than the step's own is not
    // taken: the next step's projection would throw the cloth by what it pulls back. On a sheet
    // resting on a pyramid's apex, the features' pass after a remesh's contact rounds left a
    // face 2.6 beyond its limits where the step had ended at 1.2, and the next step threw the
    // cloth from 1.7 to 14.9 J/kg (docs/measurements.md, "Energy on a point support").
    // Smaller excesses are the next step's to take back, as a face split across a cone's cut
    // (0.0115) or a remesh in fold-drop's pile (0.04 to 0.08) are: refused (by any excess over
    // the tolerance), the cone's mesh was not refined and its hem did not draw in.
    constexpr double kRemeshRefusedExcess = 0.1;
    if (changed) {
      const double handedOn = worstViolation(x_);
      if (handedOn > violationBefore + kRemeshRefusedExcess) {
        setState(unremeshed);
        stepsSinceRemesh_ = 0;
        stats.extra["remesh_refused"] = handedOn;
        remeshed = RemeshCounts{};
      } else {
        violation = std::max(violation, handedOn);
      }
    }
    msRemesh = msSince(t);
  }
  surface_ = x_.topRows(mesh_->preservedCount());

  stats.positionIterations = solves;
  stats.maxPositionError = violation;
  stats.converged = violation <= params_.tolerance;
  stats.contacts = contacts;
  stats.maxEdgeStrain = fine_->maxEdgeStrain(x_);
  stats.linearSolver = projection_ ? projection_->name() : "";
  stats.extra["max_strain_violation"] = violation;
  stats.extra["max_speed"] = speed;
  stats.extra["max_node_count"] = mesh_->nodeCount();
  stats.extra["max_face_count"] = mesh_->faceCount();
  stats.extra["splits"] = remeshed.splits;
  stats.extra["flips"] = remeshed.flips;
  stats.extra["collapses"] = remeshed.collapses;
  stats.extra["ms_remesh"] = msRemesh;
  if (ctx.stitchAllowance) recordStitches(cloth_->stitches, *ctx.stitchAllowance, surface_, stats);
  if (remeshed.capped) stats.extra["remesh_capped"] = true;
  stats.msTotal = msSince(stepStart);
  return std::nullopt;
}

}  // namespace clothlab
