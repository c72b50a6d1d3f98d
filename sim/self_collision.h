#pragma once
// Cloth self-collision on the surface mesh, as a position correction after a solver's step
// (shared by every solver: impulse solvers apply it on the ghost surface and send the
// corrections back through B B^T; vertex-based solvers apply it to their vertices).
//
// Pairs: vertex-triangle (the vertex not a corner of the triangle) and edge-edge (no shared
// vertex), found by a uniform spatial hash of boxes swept over the step and grown by the
// thickness. For each pair, the side it was on at the start of the step is remembered: a pair
// that ends closer than `thickness` on that side is pushed apart to the thickness (a vertex beside
// the triangle, as one under another layer's crease or tip is beside all its faces, from the
// triangle's nearest edge or corner, unless the two lie within pi / 2 thicknesses in the rest
// state, or a flat rest state is handed in); a pair that
// ends on the other side is pushed back across to the thickness on its starting side if it passed
// through during the step, by a continuous test (the times the four points are coplanar, the
// roots of a cubic, and whether the vertex lies in the triangle, or the edges meet, then).
// Corrections are split by inverse mass (pinned vertices: 0) and applied Gauss-Seidel style,
// `iterations` sweeps over the candidate pairs.
//
// A garment's stitches (sim/stitches.h) join vertices as if they were one: a stitch's vertex and
// its point's two count as shared, so no pair is made between elements that meet across a seam.
// Those pairs held every closed seam a thickness open (5.8 mm on the pillowcase under xpbd).
//
// And an exact-predicate triangle-triangle intersection test for counting how tangled a mesh is.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "sim/material_wrap.h"
#include "sim/mesh.h"
#include "sim/obstacles.h"
#include "sim/stitches.h"

namespace clothlab {

struct StepStats;

struct SelfCollisionResult {
  int candidates = 0;  // pairs from the broad phase
  int resolved = 0;    // pair corrections applied (summed over sweeps)
  int crossed = 0;     // pairs found on the wrong side of their starting side (first sweep)
  bool heldPairs = false;  // the broad phase took its pairs from a SelfPairCache's (below)
};

// What a solver keeps of the self-collision pair search from one step to the next. The search
// bins every element of the cloth in a grid each time it runs: on `pillow` and `fold-drop` that
// was two fifths of a step, at rest as much as in the fall. A cache holds, instead, every pair
// that lay within a wider reach (two thicknesses more) at some earlier start, with the elements'
// boxes there. A pair of elements whose vertices have all moved less than half that margin since
// (their moves in the step counted) is one of the held pairs if it is a pair at all, so each
// search tests the held pairs as it would test its own, and looks up only the elements of the
// vertices that have moved farther, one by one. The pairs are the same either way, and put in the
// order the search finds them in (by the cells of its grid at the step), so a step is the same to
// the bit with or without a cache. The held pairs are taken again when more than a twentieth of
// the vertices have moved that far, or the cloth's mesh, stitches or flat rest state change, and
// none are held while the cloth moves too fast for them to serve a few steps.
struct HeldSelfPairs;  // sim/self_collision.cpp
class SelfPairCache {
 public:
  SelfPairCache();
  ~SelfPairCache();
  SelfPairCache(const SelfPairCache&) = delete;
  SelfPairCache& operator=(const SelfPairCache&) = delete;
  int searches() const;  // pair sets taken anew
  int reuses() const;    // searches answered from a held set

 private:
  friend HeldSelfPairs& heldOf(SelfPairCache& cache);  // the pair search's, sim/self_collision.cpp
  std::unique_ptr<HeldSelfPairs> held_;
};

// A cloth's flat rest state (its vertices' material coordinates, and how they close round a tube
// or a cone): two elements whose places in it lie within `near` of each other are not a pair.
// Points that near along the cloth cannot be a thickness apart across a fold of it: the two
// layers of a fold at the thickness apart are joined by a half turn of radius thickness / 2,
// pi / 2 thicknesses long. Pushed apart all the same, they stretch the faces between them by the
// push over their size: on strain-limit-remesh's refined folds, faces 5 mm across, pushes of 2 to
// 4 mm stretched them beyond their limits by strains of up to 3.3 (docs/measurements.md).
struct FlatNearness {
  const Eigen::MatrixX2d& material;
  const MaterialWrap& wrap;
  double near;  // [m]
};

// Adds the figures to a step's stats: extra self_candidates, self_resolved, self_crossed,
// self_pairs_held, ms_self_collision.
void recordSelfCollision(const SelfCollisionResult& result, double ms, StepStats& stats);

SelfCollisionResult resolveSelfCollisions(
    const TriangleMesh& mesh, const MeshTopology& topology, const Positions& start, Positions& end,
    const Eigen::VectorXd& inverseMass, double thickness, int iterations = 4,
    const Eigen::VectorXd* allowance = nullptr, const std::vector<Stitch>* stitches = nullptr,
    const FlatNearness* flat = nullptr, SelfPairCache* cache = nullptr);
// A self-collision pair as one linear row at the positions it was taken at: the separation
// n . sum_k c_k x_k of its four vertices along a unit normal n, held fixed, which the pair asks to
// be at least `gap`. Vertex-triangle: the vertex and the triangle's corners, c = (1, -b0, -b1,
// -b2) with b the vertex's projection's barycentric coordinates (beside the triangle, its nearest
// point's); edge-edge: c = (1 - s, s,
// -(1 - t), -t) at the closest points. n points to the side the pair started the step on.
struct SelfCollisionRow {
  std::array<int, 4> vertices{};
  std::array<double, 4> coefficients{};
  Vec3 normal = Vec3::Zero();
  double gap = 0;         // the thickness less the largest allowance of its vertices [m]
  double separation = 0;  // n . sum_k c_k x_k where taken [m]; negative: passed through

  // gap - n . sum_k c_k x_k at `x` [m]: the row is met where it is at most 0.
  double shortfall(const Positions& x) const {
    double at = 0;
    for (int k = 0; k < 4; ++k) at += coefficients[k] * normal.dot(x.row(vertices[k]).transpose());
    return gap - at;
  }
};
// The pairs resolveSelfCollisions finds over the step from `start` to `end`, for a solver that
// holds them in its own projection (strain-limit-remesh, where the pass's pushes alone would
// stretch its small faces) and takes them again at each result of it; with a `reach` beyond the
// thickness, also the pairs that come that near, so that they are kept from closing. Found once:
// searched again at each result, fold-drop's 300 steps came out the same and took 15% longer. It
// refers to `mesh` and `topology`, which must outlive it.
class SelfCollisionPairs {
 public:
  SelfCollisionPairs(const TriangleMesh& mesh, const MeshTopology& topology, const Positions& start,
                     const Positions& end, const Eigen::VectorXd& inverseMass, double thickness,
                     double reach, const std::vector<Stitch>* stitches = nullptr,
                     const FlatNearness* flat = nullptr, SelfPairCache* cache = nullptr);
  ~SelfCollisionPairs();
  SelfCollisionPairs(const SelfCollisionPairs&) = delete;
  SelfCollisionPairs& operator=(const SelfCollisionPairs&) = delete;

  // The pairs as rows at `at`: those on their starting side within the reach of each other, and
  // those that passed through each other since `start`. Rows whose vertices all weigh 0 are left
  // out.
  std::vector<SelfCollisionRow> rows(const Positions& at,
                                     const Eigen::VectorXd* allowance = nullptr) const;

 private:
  struct Pairs;
  std::unique_ptr<Pairs> pairs_;
};

// How far within `thickness` of another part of the cloth each vertex lies at `x` (the pairs
// resolveSelfCollisions pushes apart), in [0, thickness]. What a cloth laid folded on itself
// starts with (Simulation's contact allowance, sim/obstacles.h).
Eigen::VectorXd selfDepthsWithinThickness(const TriangleMesh& mesh, const MeshTopology& topology,
                                          const Positions& x, double thickness,
                                          const std::vector<Stitch>* stitches = nullptr);

// Mesh obstacles' own features against the cloth: obstacle vertices against cloth triangles
// and obstacle edges against cloth edges, by the same pair responses with the obstacle as static
// geometry (resolveContacts handles cloth vertices against obstacle triangles). Keeps sharp
// obstacle features (a horn, an ear) from poking through large cloth triangles.
//
// The pairs are found once, over the step from `start` to `end` with boxes grown by the
// thickness and `margin`, and resolved on any later positions of the cloth in that step, as often
// as a solver needs (xpbd: in each of its sweeps, with a margin for what the sweeps still move).
// It refers to `mesh`'s triangles, which must outlive it.
class ObstacleFeaturePairs {
 public:
  ObstacleFeaturePairs(const TriangleMesh& mesh, const MeshTopology& topology, const Positions& start,
                       const Positions& end, const Eigen::VectorXd& inverseMass, double thickness,
                       const std::vector<Obstacle>& obstacles, double margin = 0);
  ~ObstacleFeaturePairs();
  ObstacleFeaturePairs(const ObstacleFeaturePairs&) = delete;
  ObstacleFeaturePairs& operator=(const ObstacleFeaturePairs&) = delete;

  // Pushes the cloth's positions `end` (the start's rows) off the features: `iterations`
  // Gauss-Seidel sweeps over the pairs. A pair is pushed to the thickness less the largest
  // `allowance` of its cloth vertices (StepContext::contactAllowance) when one is given.
  // `pushedBy`, when given, is sized to the cloth's vertices (new entries -1), and each vertex a
  // feature moved gets the index in `obstacles` of the obstacle whose feature moved it the most
  // in this call; the other entries are left as they were. `frictionStep`, when given, is the
  // step [s] over which the cloth moved from the start to `end`: each pair in contact then also
  // cancels its tangential motion over it (against the obstacle's surface, moving with it) within
  // the obstacle's friction times the pair's pushes, both summed over every call with friction on
  // these pairs (they are one step's: xpbd's sweeps call again and again, and per call the later
  // sweeps' edge corrections slid what the first push had stopped); the pairs keep those sums,
  // so a call with friction changes them. Without it the pushes are frictionless (a solver that
  // takes friction elsewhere: impulse-nc's velocity pass, mls-isometry's held contacts).
  SelfCollisionResult resolve(Positions& end, int iterations = 4,
                              const Eigen::VectorXd* allowance = nullptr,
                              std::vector<int>* pushedBy = nullptr,
                              std::optional<double> frictionStep = std::nullopt);

  // Whether the pairs hold every pair within reach of the cloth at `end`: no point of it is
  // farther than the margin from where they were found.
  bool covers(const Positions& end) const;

 private:
  struct Pairs;
  std::unique_ptr<Pairs> pairs_;  // null: no mesh obstacle with features near the cloth
  Positions foundAt_;             // the cloth's `end` they were found for
  double margin_ = 0;
};

// ObstacleFeaturePairs found and resolved at once.
SelfCollisionResult resolveObstacleFeatures(const TriangleMesh& mesh, const MeshTopology& topology,
                                            const Positions& start, Positions& end,
                                            const Eigen::VectorXd& inverseMass, double thickness,
                                            const std::vector<Obstacle>& obstacles,
                                            int iterations = 4,
                                            const Eigen::VectorXd* allowance = nullptr,
                                            std::optional<double> frictionStep = std::nullopt);

// What every solver runs after its step: resolveObstacleFeatures, then, with `selfCollision`,
// resolveSelfCollisions (its figures recorded in stats). Returns the pair corrections applied.
// `found`, when given, holds the features' pairs found for this step (the same start, weights
// and thickness): where they cover `end` they are resolved instead of searching again.
// `allowance` (StepContext::contactAllowance) goes to the features and the self-collisions,
// `stitches` (a garment's, ClothModel::stitches) and `flat` to the self-collisions;
// `frictionStep` to the features (ObstacleFeaturePairs::resolve).
int resolveFeaturesAndSelfCollisions(
    const TriangleMesh& mesh, const MeshTopology& topology, const Positions& start, Positions& end,
    const Eigen::VectorXd& inverseMass, double thickness, bool selfCollision,
    const std::vector<Obstacle>& obstacles, StepStats& stats, ObstacleFeaturePairs* found = nullptr,
    const Eigen::VectorXd* allowance = nullptr, const std::vector<Stitch>* stitches = nullptr,
    const FlatNearness* flat = nullptr, SelfPairCache* cache = nullptr,
    std::optional<double> frictionStep = std::nullopt);

// Whether triangles (a0, a1, a2) and (b0, b1, b2) intersect (share a point), by orientation
// signs; triangles that share a vertex index are the caller's to skip.
bool trianglesIntersect(const Vec3& a0, const Vec3& a1, const Vec3& a2, const Vec3& b0, const Vec3& b1,
                        const Vec3& b2);

// Pairs of triangles of the mesh (not sharing a vertex) that intersect at `positions`.
int countSelfIntersections(const TriangleMesh& mesh, const Positions& positions);

}  // namespace clothlab
