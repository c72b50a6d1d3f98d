#include "sim/self_collision.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numbers>
#include <numeric>
#include <optional>

#include "sim/alongside.h"
#include "sim/cell_grid.h"
#include "sim/material.h"
#include "sim/obstacles.h"
#include "sim/solver.h"
#include "sim/steps_in_progress.h"
#include "sim/timing.h"

namespace clothlab {

namespace {

// Closest points of segments p0p1 and q0q1: parameters s, t in [0, 1] (Ericson 5.1.9).
void segmentParameters(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  constexpr double kTiny = 1e-20;
  if (a <= kTiny && e <= kTiny) {
    s = t = 0;
    return;
  }
  if (a <= kTiny) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= kTiny) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), denominator = a * e - b * b;
  s = denominator > kTiny ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

// The offset between the closest points of segments p0p1 and q0q1, from q to p; their parameters
// in s and t.
Vec3 segmentOffset(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t) {
  segmentParameters(p0, p1, q0, q1, s, t);
  return (p0 + s * (p1 - p0)) - (q0 + t * (q1 - q0));
}

double orient(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) { return (b - a).cross(c - a).dot(d - a); }

// Times in [0, 1] at which four points moving linearly from x0[k] to x1[k] are coplanar (the
// roots of a cubic, found by bisection between its turning points), in increasing order.
std::vector<double> coplanarTimes(const Vec3 (&x0)[4], const Vec3 (&x1)[4]) {
  const Vec3 A = x0[1] - x0[0], B = x0[2] - x0[0], C = x0[3] - x0[0];
  const Vec3 dA = (x1[1] - x1[0]) - A, dB = (x1[2] - x1[0]) - B, dC = (x1[3] - x1[0]) - C;
  const double c0 = A.cross(B).dot(C);
  const double c1 = A.cross(B).dot(dC) + (A.cross(dB) + dA.cross(B)).dot(C);
  const double c2 = (A.cross(dB) + dA.cross(B)).dot(dC) + dA.cross(dB).dot(C);
  const double c3 = dA.cross(dB).dot(dC);
  auto f = [&](double t) { return ((c3 * t + c2) * t + c1) * t + c0; };
  std::vector<double> cuts = {0.0};
  // Turning points: 3 c3 t^2 + 2 c2 t + c1 = 0.
  const double qa = 3 * c3, qb = 2 * c2, qc = c1;
  if (std::abs(qa) > 1e-300) {
    const double disc = qb * qb - 4 * qa * qc;
    if (disc >= 0) {
      const double r = std::sqrt(disc);
      for (double t : {(-qb - r) / (2 * qa), (-qb + r) / (2 * qa)})
        if (t > 0 && t < 1) cuts.push_back(t);
    }
  } else if (std::abs(qb) > 1e-300) {
    const double t = -qc / qb;
    if (t > 0 && t < 1) cuts.push_back(t);
  }
  cuts.push_back(1.0);
  std::sort(cuts.begin(), cuts.end());
  std::vector<double> roots;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    double lo = cuts[i], hi = cuts[i + 1], flo = f(lo), fhi = f(hi);
    if (flo == 0) {
      roots.push_back(lo);
      continue;
    }
    if (flo * fhi > 0) continue;
    for (int k = 0; k < 60; ++k) {
      const double mid = 0.5 * (lo + hi), fm = f(mid);
      if ((fm <= 0) == (flo <= 0)) {
        lo = mid;
        flo = fm;
      } else {
        hi = mid;
      }
    }
    roots.push_back(0.5 * (lo + hi));
  }
  return roots;
}

Vec3 lerp(const Vec3& a, const Vec3& b, double t) { return a + t * (b - a); }

// Continuous test: does the point (x0[0] -> x1[0]) pass through the triangle (x[1], x[2], x[3])
// during the step?
bool vertexTriangleHit(const Vec3 (&x0)[4], const Vec3 (&x1)[4]) {
  for (double t : coplanarTimes(x0, x1)) {
    const Vec3 p = lerp(x0[0], x1[0], t), a = lerp(x0[1], x1[1], t), b = lerp(x0[2], x1[2], t),
               c = lerp(x0[3], x1[3], t);
    const Vec3 n = (b - a).cross(c - a);
    const double area = n.squaredNorm();
    if (area < 1e-30) continue;
    const double u = (b - p).cross(c - p).dot(n) / area, v = (c - p).cross(a - p).dot(n) / area;
    constexpr double kSlack = 1e-6;
    if (u >= -kSlack && v >= -kSlack && 1 - u - v >= -kSlack) return true;
  }
  return false;
}

// Continuous test: do edges (x[0], x[1]) and (x[2], x[3]) pass through each other during the step?
bool edgeEdgeHit(const Vec3 (&x0)[4], const Vec3 (&x1)[4]) {
  for (double t : coplanarTimes(x0, x1)) {
    const Vec3 p0 = lerp(x0[0], x1[0], t), p1 = lerp(x0[1], x1[1], t), q0 = lerp(x0[2], x1[2], t),
               q1 = lerp(x0[3], x1[3], t);
    double s = 0, u = 0;
    const double scale = std::max((p1 - p0).norm(), (q1 - q0).norm());
    if (segmentOffset(p0, p1, q0, q1, s, u).norm() <= 1e-6 * scale) return true;
  }
  return false;
}
int sign(double x) { return (x > 0) - (x < 0); }

bool segmentCrossesTriangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c) {
  const int sp = sign(orient(a, b, c, p)), sq = sign(orient(a, b, c, q));
  if (sp == 0 && sq == 0) return false;  // coplanar: not counted
  if (sp == sq) return false;
  const int s1 = sign(orient(p, q, a, b)), s2 = sign(orient(p, q, b, c)), s3 = sign(orient(p, q, c, a));
  const bool allNonNegative = s1 >= 0 && s2 >= 0 && s3 >= 0, allNonPositive = s1 <= 0 && s2 <= 0 && s3 <= 0;
  return allNonNegative || allNonPositive;
}

}  // namespace

void recordSelfCollision(const SelfCollisionResult& result, double ms, StepStats& stats) {
  stats.extra["self_candidates"] = result.candidates;
  stats.extra["self_resolved"] = result.resolved;
  stats.extra["self_crossed"] = result.crossed;
  stats.extra["self_pairs_held"] = result.heldPairs;
  stats.extra["ms_self_collision"] = ms;
}

bool trianglesIntersect(const Vec3& a0, const Vec3& a1, const Vec3& a2, const Vec3& b0, const Vec3& b1,
                        const Vec3& b2) {
  const Vec3 a[3] = {a0, a1, a2}, b[3] = {b0, b1, b2};
  for (int k = 0; k < 3; ++k) {
    if (segmentCrossesTriangle(a[k], a[(k + 1) % 3], b0, b1, b2)) return true;
    if (segmentCrossesTriangle(b[k], b[(k + 1) % 3], a0, a1, a2)) return true;
  }
  return false;
}

int countSelfIntersections(const TriangleMesh& mesh, const Positions& x) {
  double cell = 0;
  for (const Tri& f : mesh.triangles)
    for (int k = 0; k < 3; ++k) cell = std::max(cell, (x.row(f[k]) - x.row(f[(k + 1) % 3])).norm());
  std::vector<Eigen::AlignedBox3d> boxes(mesh.triangleCount());
  for (int t = 0; t < mesh.triangleCount(); ++t)
    for (int k : mesh.triangles[t]) boxes[t].extend(Vec3(x.row(k)));
  const CellGrid grid(boxes, std::max(cell, 1e-6));
  int count = 0;
  std::vector<int> seen(mesh.triangleCount(), -1);
  for (int t = 0; t < mesh.triangleCount(); ++t) {
    const Tri& f = mesh.triangles[t];
    const Eigen::AlignedBox3d& bt = boxes[t];
    grid.query(bt, [&](int u) {
      if (u <= t || seen[u] == t) return;
      seen[u] = t;
      const Tri& g = mesh.triangles[u];
      for (int i : f)
        for (int j : g)
          if (i == j) return;
      if (!bt.intersects(boxes[u])) return;
      if (trianglesIntersect(x.row(f[0]), x.row(f[1]), x.row(f[2]), x.row(g[0]), x.row(g[1]), x.row(g[2]))) ++count;
    });
  }
  return count;
}

namespace {

// A pair's impulse that closes `gap` (the distance to make up along the pair's normal) when the
// vertices move by factor[k] times it, with weight = sum of factor[k] times the vertices' share,
// limited so that no vertex moves more than kMostMove times the gap. Where the only point free to
// move has a small share (a triangle held at two corners met next to one of them, an edge
// pinned at one end met near it) the exact response moves it by gap / share: a cloth that
// started through Spot's ears had points thrown 5.6 m in one step.
double limitedImpulse(double gap, double weight, std::initializer_list<double> factor) {
  constexpr double kMostMove = 4;
  double largest = 0;
  for (double f : factor) largest = std::max(largest, std::abs(f));
  return std::min(gap / weight, kMostMove * gap / largest);
}

// `box` grown by `by` on every side.
Eigen::AlignedBox3d grownBox(Eigen::AlignedBox3d box, double by) {
  box.min().array() -= by;
  box.max().array() += by;
  return box;
}

// Boxes of vertices over a step, grown by a margin.
Eigen::AlignedBox3d sweptBox(const Positions& start, const Positions& end, double margin,
                             std::initializer_list<int> vertices) {
  Eigen::AlignedBox3d b;
  for (int v : vertices) {
    b.extend(Vec3(start.row(v)));
    b.extend(Vec3(end.row(v)));
  }
  return grownBox(b, margin);
}

// How far each vertex moves over the step.
Eigen::VectorXd vertexMoves(const Positions& start, const Positions& end) {
  Eigen::VectorXd moves(start.rows());
  for (Eigen::Index v = 0; v < start.rows(); ++v) moves[v] = (end.row(v) - start.row(v)).norm();
  return moves;
}

// The farthest any of the vertices moves (`moves`, vertexMoves): an element of them stays within
// it of where it started.
double largestMove(const Eigen::VectorXd& moves, std::initializer_list<int> vertices) {
  double most = 0;
  for (int v : vertices) most = std::max(most, moves[v]);
  return most;
}

// The distance from p to triangle (a, b, c).
double distanceToTriangle(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& p) {
  const Vec3 bary = closestBarycentric(a, b, c, p);
  return (bary[0] * a + bary[1] * b + bary[2] * c - p).norm();
}

struct VertexTriangle {
  int v, t;
  double side;  // +1 / -1: the side of the triangle's plane the vertex started on
  // Whether the pair also acts beside the triangle, on the distance to its nearest edge or
  // corner (vertexTriangleRow).
  bool beside = false;
};
struct EdgeEdge {
  int a, b;
  Vec3 direction;  // unit, from edge b to edge a at the start (closest points)
};

// What a pair search finds, over a vertex set (weights 0: static geometry) and its triangles and
// edges, with what each pair keeps from the start of the step.
struct PairCandidates {
  std::vector<VertexTriangle> vt;
  std::vector<EdgeEdge> ee;

  void addVertexTriangle(const std::vector<Tri>& triangles, const Positions& start, int v, int t,
                         bool beside = false) {
    const Tri& f = triangles[t];
    const Vec3 a = start.row(f[0]), b = start.row(f[1]), c = start.row(f[2]);
    const Vec3 n = (b - a).cross(c - a);
    if (n.norm() < 1e-20) return;
    vt.push_back({v, t, (Vec3(start.row(v)) - a).dot(n) >= 0 ? 1.0 : -1.0, beside});
  }
  // `offset`: segmentOffset of edge e against edge f at the start.
  void addEdgeEdge(int e, int f, const Vec3& offset) {
    if (offset.norm() < 1e-12) return;  // touching at the start: no side to keep
    ee.push_back({e, f, offset.normalized()});
  }
};

bool sharesVertex(const std::array<int, 2>& p, const std::array<int, 2>& q) {
  return p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1];
}

// The vertices a garment's stitches join (sim/self_collision.h): each stitch's vertex with its
// point's two, as pairs both ways, sorted. Empty without stitches.
class SeamJoins {
 public:
  explicit SeamJoins(const std::vector<Stitch>* stitches) {
    if (!stitches) return;
    for (const Stitch& s : *stitches)  // its three vertices differ (the loader's check)
      for (int other : {s.a, s.b}) {
        joined_.emplace_back(s.vertex, other);
        joined_.emplace_back(other, s.vertex);
      }
    std::sort(joined_.begin(), joined_.end());
  }
  // Whether vertex v is one of `others` or joined to one of them.
  bool meets(int v, std::initializer_list<int> others) const {
    for (int o : others)
      if (o == v) return true;
    for (auto it = std::lower_bound(joined_.begin(), joined_.end(), std::make_pair(v, INT_MIN));
         it != joined_.end() && it->first == v; ++it)
      for (int o : others)
        if (o == it->second) return true;
    return false;
  }
  bool meets(const Tri& f, int v) const { return meets(v, {f[0], f[1], f[2]}); }
  bool meets(const std::array<int, 2>& p, const std::array<int, 2>& q) const {
    return meets(p[0], {q[0], q[1]}) || meets(p[1], {q[0], q[1]});
  }

 private:
  std::vector<std::pair<int, int>> joined_;
};

// The bin size of the pair searches.
double pairCell(const Positions& start, const std::vector<std::array<int, 2>>& edges, double thickness) {
  return std::max(meanEdgeLength(start, edges), 2 * thickness);
}

// Where vertices lie in a flat rest state, as points of space (z = 0), seen from the first one.
Vec3 flatFrom(const FlatNearness& flat, int from, int to) {
  const Eigen::Vector2d offset = materialOffset(flat.material, from, to, flat.wrap);
  return {offset.x(), offset.y(), 0};
}
// Whether vertex v and triangle f, or edges p and q, lie within flat->near of each other in the
// flat rest state (never without one).
bool flatNear(const FlatNearness* flat, int v, const Tri& f) {
  return flat && distanceToTriangle(flatFrom(*flat, v, f[0]), flatFrom(*flat, v, f[1]),
                                    flatFrom(*flat, v, f[2]), Vec3::Zero()) < flat->near;
}
bool flatNear(const FlatNearness* flat, const std::array<int, 2>& p, const std::array<int, 2>& q) {
  if (!flat) return false;
  double s = 0, t = 0;
  return segmentOffset(Vec3::Zero(), flatFrom(*flat, p[0], p[1]), flatFrom(*flat, p[0], q[0]),
                       flatFrom(*flat, p[0], q[1]), s, t)
             .norm() < flat->near;
}

// Points of the cloth nearer than this many thicknesses along it cannot be a thickness apart
// across a fold of it: the fold's two layers are joined by a half turn of radius thickness / 2.
constexpr double kBesideNear = std::numbers::pi / 2;

// What a pair must meet at one step from `start` to `end`, besides what the mesh alone decides
// (SeamJoins, flatNear), which does not change from step to step. The search and a
// SelfPairCache's held pairs are both tested here, so that they find the same pairs.
struct StepPairTests {
  const std::vector<Tri>& triangles;
  const std::vector<std::array<int, 2>>& edges;
  const Positions& start;
  const Positions& end;
  const Eigen::VectorXd& w;
  double thickness;
  // The cloth's rest state, for besideToo (none: no pair acts beside its triangle).
  const Positions* rest;
  // Two elements whose closest points start farther apart than their vertices' largest moves
  // over the step, plus twice the thickness, never come within the thickness: not pairs. (Boxes
  // of slanted elements overlap far more than the elements come near, and the mesh's neighbours'
  // boxes all overlap. The second thickness allows for the responses' own pushes within the
  // sweeps, for which the boxes did not allow either.)
  double slack;
  Eigen::VectorXd moves;
  // The vertices' boxes over the step, and the triangles' and edges', grown by the thickness.
  std::vector<Eigen::AlignedBox3d> vertexBoxes, triangleBoxes, edgeBoxes;

  StepPairTests(const std::vector<Tri>& triangles_, const std::vector<std::array<int, 2>>& edges_,
                const Positions& start_, const Positions& end_, const Eigen::VectorXd& w_,
                double thickness_, const Positions* rest_)
      : triangles(triangles_),
        edges(edges_),
        start(start_),
        end(end_),
        w(w_),
        thickness(thickness_),
        rest(rest_),
        slack(2 * thickness_),
        moves(vertexMoves(start_, end_)),
        vertexBoxes(start_.rows()),
        triangleBoxes(triangles_.size()),
        edgeBoxes(edges_.size()) {
    for (Eigen::Index v = 0; v < start.rows(); ++v)
      vertexBoxes[v] = sweptBox(start, end, 0, {static_cast<int>(v)});
    for (size_t t = 0; t < triangles.size(); ++t) {
      const Tri& f = triangles[t];
      triangleBoxes[t] = sweptBox(start, end, thickness, {f[0], f[1], f[2]});
    }
    for (size_t e = 0; e < edges.size(); ++e)
      edgeBoxes[e] = sweptBox(start, end, thickness, {edges[e][0], edges[e][1]});
  }
  // Vertex v (its box over the step, `box`) and triangle t.
  bool vertexTriangle(int v, int t, const Eigen::AlignedBox3d& box) const {
    const Tri& f = triangles[t];
    if (!triangleBoxes[t].intersects(box)) return false;
    if (w[f[0]] == 0 && w[f[1]] == 0 && w[f[2]] == 0 && w[v] == 0) return false;
    return !(distanceToTriangle(start.row(f[0]), start.row(f[1]), start.row(f[2]), start.row(v)) >
             slack + largestMove(moves, {v}) + largestMove(moves, {f[0], f[1], f[2]}));
  }
  // Whether vertex v's pair with triangle t acts beside it too (vertexTriangleRow): only where
  // they lie at least kBesideNear thicknesses apart in the rest state. Points nearer along the
  // cloth cannot be a thickness apart across a fold of it (FlatNearness), and a flat sheet whose
  // edges are shorter than the thickness would have every vertex pushed off the faces round it:
  // a 2 mm grid under a 6 mm thickness moved by 24 mm in one call.
  bool besideToo(int v, int t) const {
    if (!rest) return false;
    const Tri& f = triangles[t];
    return distanceToTriangle(rest->row(f[0]), rest->row(f[1]), rest->row(f[2]), rest->row(v)) >=
           kBesideNear * thickness;
  }
  // Edges e and f; `offset` their segmentOffset at the start.
  bool edgeEdge(int e, int f, Vec3& offset) const {
    const auto& pe = edges[e];
    const auto& qe = edges[f];
    if (w[pe[0]] == 0 && w[pe[1]] == 0 && w[qe[0]] == 0 && w[qe[1]] == 0) return false;
    // Both boxes carry the thickness: edges that come within it overlap by at least that much.
    if (!edgeBoxes[e].intersects(edgeBoxes[f])) return false;
    double s = 0, t = 0;
    offset =
        segmentOffset(start.row(pe[0]), start.row(pe[1]), start.row(qe[0]), start.row(qe[1]), s, t);
    return !(offset.norm() >
             slack + largestMove(moves, {pe[0], pe[1]}) + largestMove(moves, {qe[0], qe[1]}));
  }
};

// The visits of a pair search in `grid` (items binned by their boxes): for each q in [from, to),
// fn(q, item, box) once for each item binned in a cell that box = boxOf(q) covers; with
// `pairsOnce`, only for the items above q (a set searched against itself: each pair once). The
// items' own boxes are fn's to test.
template <class BoxOf, class Fn>
void queryEach(const CellGrid& grid, size_t items, int from, int to, BoxOf&& boxOf, Fn&& fn,
               bool pairsOnce = false) {
  std::vector<int> stamp(items, -1);
  for (int q = from; q < to; ++q) {
    const Eigen::AlignedBox3d box = boxOf(q);
    grid.query(
        box,
        [&](int item) {
          if (stamp[item] == q) return;
          stamp[item] = q;
          fn(q, item, box);
        },
        pairsOnce ? q : -1);
  }
}

// `pairs` in the order of their keys, where the first `presorted` are already in the order of
// their keys' first entries (a held set's pairs): each run of those with one first entry is
// sorted, then the others, and the two merged. No two pairs share a key, so this is the order a
// sort of them all gives.
template <class Pair>
void sortByKeys(std::vector<Pair>& pairs, const std::vector<std::array<int, 3>>& keys,
                size_t presorted) {
  std::vector<int> order(pairs.size());
  std::iota(order.begin(), order.end(), 0);
  const auto byKey = [&](int x, int y) { return keys[x] < keys[y]; };
  for (size_t run = 0; run < presorted;) {
    size_t next = run + 1;
    while (next < presorted && keys[next][0] == keys[run][0]) ++next;
    std::sort(order.begin() + run, order.begin() + next, byKey);
    run = next;
  }
  std::sort(order.begin() + presorted, order.end(), byKey);
  std::inplace_merge(order.begin(), order.begin() + presorted, order.end(), byKey);
  std::vector<Pair> sorted;
  sorted.reserve(pairs.size());
  for (int k : order) sorted.push_back(pairs[k]);
  pairs = std::move(sorted);
}

// Pairs in the order searchSelfPairs finds them, whatever found them (the order of the responses'
// sweeps): vertex-triangle pairs by vertex, edge pairs by their lower edge, and then each by the
// first cell of the step's grid in which the search's query meets the other element, and its
// number (`cell`: the step's pairCell). The first `heldVt` and `heldEe` pairs are in order of
// their vertex and lower edge.
void sortAsSearched(PairCandidates& pairs, const StepPairTests& step, double cell, size_t heldVt,
                    size_t heldEe) {
  const CellGrid triangleFrame = CellGrid::frameOf(step.triangleBoxes, cell),
                 edgeFrame = CellGrid::frameOf(step.edgeBoxes, cell);
  // Each element's lowest cell, once: most elements are in many pairs.
  auto lowestCells = [](const CellGrid& frame, const std::vector<Eigen::AlignedBox3d>& boxes) {
    std::vector<Eigen::Vector3i> lowest(boxes.size());
    for (size_t k = 0; k < boxes.size(); ++k) lowest[k] = frame.lowestCell(boxes[k]);
    return lowest;
  };
  const std::vector<Eigen::Vector3i> vertexLowest = lowestCells(triangleFrame, step.vertexBoxes),
                                     triangleLowest =
                                         lowestCells(triangleFrame, step.triangleBoxes),
                                     edgeLowest = lowestCells(edgeFrame, step.edgeBoxes);
  std::vector<std::array<int, 3>> keys;
  keys.reserve(pairs.vt.size());
  for (const VertexTriangle& p : pairs.vt)
    keys.push_back(
        {p.v, triangleFrame.firstSharedCell(vertexLowest[p.v], triangleLowest[p.t]), p.t});
  sortByKeys(pairs.vt, keys, heldVt);
  keys.clear();
  for (const EdgeEdge& p : pairs.ee)
    keys.push_back({p.a, edgeFrame.firstSharedCell(edgeLowest[p.a], edgeLowest[p.b]), p.b});
  sortByKeys(pairs.ee, keys, heldEe);
}

// The edge pairs an edge search found on a second thread, after those of the calling thread.
void appendEdgePairs(PairCandidates& into, const PairCandidates& more) {
  into.ee.insert(into.ee.end(), more.ee.begin(), more.ee.end());
}
void appendEdgePairs(std::vector<std::pair<int, int>>& into,
                     const std::vector<std::pair<int, int>>& more) {
  into.insert(into.end(), more.begin(), more.end());
}

// The edge search is most of a pair search's work. `edgePairs(from, to, found)` puts the pairs
// of the edges in [from, to), each with the edges above it, into `found`. Here the upper three
// fifths of the edges are offered to a second thread on a cloth of kEdgesForTwoThreads edges or
// more while a hardware thread is free, and `meanwhile()` and the lower edges run on the calling
// thread, which also takes the upper ones where they were not offered or no helper has begun them
// (sim/alongside.h). Their pairs follow the lower ones' in `found`, as one search finds them.
constexpr int kEdgesForTwoThreads = 1000;
template <class Found, class EdgePairs, class Meanwhile>
void searchEdgesAlongside(int edgeCount, EdgePairs& edgePairs, Found& found, Meanwhile meanwhile) {
  const int upperFrom = 2 * edgeCount / 5;
  Found upper;
  Alongside<void> worker([&] { edgePairs(upperFrom, edgeCount, upper); },
                         edgeCount >= kEdgesForTwoThreads && StepInProgress::threadToSpare());
  meanwhile();
  edgePairs(0, upperFrom, found);
  worker.get();
  appendEdgePairs(found, upper);
}

// Self-collision's broad phase: every triangle's and edge's box over the step, binned.
PairCandidates searchSelfPairs(const StepPairTests& step, const SeamJoins& joins,
                               const FlatNearness* flat) {
  const auto& triangles = step.triangles;
  const auto& edges = step.edges;
  const Positions& start = step.start;
  PairCandidates pairs;
  const double cell = pairCell(start, edges, step.thickness);
  const int vertexCount = static_cast<int>(start.rows());
  const CellGrid triangleHash(step.triangleBoxes, cell);
  const int edgeCount = static_cast<int>(edges.size());
  const CellGrid edgeHash(step.edgeBoxes, cell);
  // The pairs of the edges in [from, to), each with the edges above it, in `found`.
  auto edgePairs = [&](int from, int to, PairCandidates& found) {
    queryEach(
        edgeHash, edges.size(), from, to, [&](int e) { return step.edgeBoxes[e]; },
        [&](int e, int f, const Eigen::AlignedBox3d&) {
          Vec3 offset;
          if (joins.meets(edges[e], edges[f]) || !step.edgeEdge(e, f, offset) ||
              flatNear(flat, edges[e], edges[f]))
            return;
          found.addEdgeEdge(e, f, offset);
        },
        true);
  };
  searchEdgesAlongside(edgeCount, edgePairs, pairs, [&] {
    queryEach(
        triangleHash, triangles.size(), 0, vertexCount, [&](int v) { return step.vertexBoxes[v]; },
        [&](int v, int t, const Eigen::AlignedBox3d& box) {
          if (joins.meets(triangles[t], v) || !step.vertexTriangle(v, t, box) ||
              flatNear(flat, v, triangles[t]))
            return;
          pairs.addVertexTriangle(triangles, start, v, t, step.besideToo(v, t));
        });
  });
  return pairs;
}

}  // namespace

// The pairs a SelfPairCache holds: every vertex-triangle and edge pair that the mesh does not
// rule out and that lay within `reach` at `at`, sorted, with what they were
// found for, and the elements' boxes at `at` binned, to look up the pairs of elements that
// have moved too far since.
struct HeldSelfPairs {
  bool valid = false;
  std::vector<Tri> triangles;
  std::vector<std::array<int, 2>> edges;
  const std::vector<Stitch>* stitches = nullptr;
  size_t stitchCount = 0;
  // The flat rest state's places and wrap (none: no flat rest state), and its nearness.
  bool flat = false;
  Eigen::MatrixX2d material;
  const MaterialWrap* wrap = nullptr;
  double near = 0;
  Positions at;
  double reach = 0;  // [m]
  std::vector<std::pair<int, int>> vt, ee;
  std::vector<Eigen::AlignedBox3d> vertexBoxes, triangleBoxes, edgeBoxes;  // at `at`, not grown
  std::optional<CellGrid> vertexGrid, triangleGrid, edgeGrid;
  int searches = 0, reuses = 0;
  // The steps the set found last has served, and the back-off of findSelfPairs: the plain
  // searches still to make before another set is found, and how many the next run will make.
  int served = 0, searchesLeft = 0, searchRun = 1;

  bool findsFor(const std::vector<Tri>& t, const std::vector<std::array<int, 2>>& e,
                const std::vector<Stitch>* s, const FlatNearness* flat,
                Eigen::Index vertices) const {
    const bool sameFlat = flat ? this->flat && near == flat->near && wrap == &flat->wrap &&
                                     material.rows() == flat->material.rows() &&
                                     material == flat->material
                               : !this->flat;
    return valid && at.rows() == vertices && stitches == s && stitchCount == (s ? s->size() : 0) &&
           sameFlat && triangles == t && edges == e;
  }
};

SelfPairCache::SelfPairCache() : held_(std::make_unique<HeldSelfPairs>()) {}
SelfPairCache::~SelfPairCache() = default;
int SelfPairCache::searches() const { return held_->searches; }
int SelfPairCache::reuses() const { return held_->reuses; }
HeldSelfPairs& heldOf(SelfPairCache& cache) { return *cache.held_; }

namespace {

// A held set's reach beyond the search's own, in thicknesses: a vertex may move half as far in
// all (in the step searched, and since the set was found) before its elements' pairs must be
// looked up again.
constexpr double kHeldSpare = 2;
// A set is taken anew when more than this share of the vertices have moved too far since it was
// found (their elements are looked up one by one), and not kept when as many move more than
// kTakenMoveShare of that within the step alone: the cloth then moves too fast for one to serve a
// few steps.
constexpr double kUnsettledShare = 0.05;
constexpr double kTakenMoveShare = 0.5;
// A set found anew reaches twice as far as a search and is tested again at each step it serves:
// one that served fewer than this many steps cost more than plain searches (a 20 000-triangle
// pile settling: 540 ms for the step that finds a set, against about 300 for a search). The
// next steps then search, as many as the run's length, which doubles up to kMaxSearchRun while
// sets keep failing that soon, and goes back to one once a set serves longer.
constexpr int kMinServed = 2;
constexpr int kMaxSearchRun = 16;
// Rounding in the distances: a held set's reach counts as short of itself by this share.
constexpr double kHeldRounding = 1e-9;

// Every pair within `reach` of each other at `at`, the mesh's exclusions aside, into `held`, and
// its elements' boxes there.
void findWithin(HeldSelfPairs& held, const std::vector<Tri>& triangles,
                const std::vector<std::array<int, 2>>& edges, const Positions& at, double reach,
                const SeamJoins& joins, const FlatNearness* flat) {
  held.vt.clear();
  held.ee.clear();
  const double cell = std::max(pairCell(at, edges, 0.0), reach);
  const int vertexCount = static_cast<int>(at.rows()),
            triangleCount = static_cast<int>(triangles.size()),
            edgeCount = static_cast<int>(edges.size());
  held.vertexBoxes.resize(vertexCount);
  held.triangleBoxes.resize(triangleCount);
  held.edgeBoxes.resize(edgeCount);
  for (int v = 0; v < vertexCount; ++v) held.vertexBoxes[v] = sweptBox(at, at, 0, {v});
  for (int t = 0; t < triangleCount; ++t)
    held.triangleBoxes[t] =
        sweptBox(at, at, 0, {triangles[t][0], triangles[t][1], triangles[t][2]});
  for (int e = 0; e < edgeCount; ++e)
    held.edgeBoxes[e] = sweptBox(at, at, 0, {edges[e][0], edges[e][1]});
  held.vertexGrid.emplace(held.vertexBoxes, cell);
  held.triangleGrid.emplace(held.triangleBoxes, cell);
  held.edgeGrid.emplace(held.edgeBoxes, cell);
  // The edges in [from, to), each with the edges above it, into `found` (searchEdgesAlongside;
  // the pairs are sorted at the end).
  auto edgePairs = [&](int from, int to, std::vector<std::pair<int, int>>& found) {
    queryEach(
        *held.edgeGrid, edges.size(), from, to,
        [&](int e) { return grownBox(held.edgeBoxes[e], reach); },
        [&](int e, int f, const Eigen::AlignedBox3d& around) {
          const auto &pe = edges[e], &qe = edges[f];
          if (joins.meets(pe, qe) || !held.edgeBoxes[f].intersects(around)) return;
          double s = 0, u = 0;
          if (segmentOffset(at.row(pe[0]), at.row(pe[1]), at.row(qe[0]), at.row(qe[1]), s, u)
                  .norm() > reach)
            return;
          if (!flatNear(flat, pe, qe)) found.emplace_back(e, f);
        },
        true);
  };
  searchEdgesAlongside(edgeCount, edgePairs, held.ee, [&] {
    queryEach(
        *held.triangleGrid, triangles.size(), 0, vertexCount,
        [&](int v) { return grownBox(held.vertexBoxes[v], reach); },
        [&](int v, int t, const Eigen::AlignedBox3d& around) {
          const Tri& f = triangles[t];
          if (joins.meets(f, v) || !held.triangleBoxes[t].intersects(around)) return;
          if (distanceToTriangle(at.row(f[0]), at.row(f[1]), at.row(f[2]), at.row(v)) > reach)
            return;
          if (!flatNear(flat, v, f)) held.vt.emplace_back(v, t);
        });
  });
  std::sort(held.vt.begin(), held.vt.end());
  std::sort(held.ee.begin(), held.ee.end());
}

// The step's pairs from a held set (its `reach` found at `at`). A vertex has settled while its
// move since `at` plus its move in the step is at most `settled`: two elements whose vertices
// have all settled and that are a pair at this step lay within the reach there, so the held set
// has them. The elements with a vertex that has not are looked up against the held boxes of the
// settled ones, grown by as much, and against each other one by one.
PairCandidates heldPairs(const HeldSelfPairs& held, const StepPairTests& step,
                         const std::vector<char>& unsettled, double settled, const SeamJoins& joins,
                         const FlatNearness* flat) {
  const auto& triangles = step.triangles;
  const auto& edges = step.edges;
  const Positions& start = step.start;
  // The elements with a vertex that has not settled, flagged and listed.
  const auto anyUnsettled = [&](std::initializer_list<int> vertices) -> char {
    for (int v : vertices)
      if (unsettled[v]) return 1;
    return 0;
  };
  std::vector<char> triangleMoved(triangles.size()), edgeMoved(edges.size());
  std::vector<int> movedVertices, movedTriangles, movedEdges;
  for (int v = 0; v < start.rows(); ++v)
    if (unsettled[v]) movedVertices.push_back(v);
  for (int t = 0; t < static_cast<int>(triangles.size()); ++t)
    if ((triangleMoved[t] = anyUnsettled({triangles[t][0], triangles[t][1], triangles[t][2]})))
      movedTriangles.push_back(t);
  for (int e = 0; e < static_cast<int>(edges.size()); ++e)
    if ((edgeMoved[e] = anyUnsettled({edges[e][0], edges[e][1]}))) movedEdges.push_back(e);
  PairCandidates pairs;
  for (const auto& [v, t] : held.vt)
    if (!unsettled[v] && !triangleMoved[t] && step.vertexTriangle(v, t, step.vertexBoxes[v]))
      pairs.addVertexTriangle(triangles, start, v, t, step.besideToo(v, t));
  for (const auto& [e, f] : held.ee) {
    Vec3 offset;
    if (!edgeMoved[e] && !edgeMoved[f] && step.edgeEdge(e, f, offset))
      pairs.addEdgeEdge(e, f, offset);
  }
  const size_t heldVt = pairs.vt.size(), heldEe = pairs.ee.size();
  const auto tryVertexTriangle = [&](int v, int t) {
    if (joins.meets(triangles[t], v) || !step.vertexTriangle(v, t, step.vertexBoxes[v]) ||
        flatNear(flat, v, triangles[t]))
      return;
    pairs.addVertexTriangle(triangles, start, v, t, step.besideToo(v, t));
  };
  const auto tryEdgeEdge = [&](int e, int f) {
    if (e > f) std::swap(e, f);
    Vec3 offset;
    if (joins.meets(edges[e], edges[f]) || !step.edgeEdge(e, f, offset) ||
        flatNear(flat, edges[e], edges[f]))
      return;
    pairs.addEdgeEdge(e, f, offset);
  };
  // A settled element's box over the step lies within its held box grown by `settled` and the
  // thickness its step box carries.
  const double reachBack = settled + step.thickness;
  const int movedVertexCount = static_cast<int>(movedVertices.size()),
            movedTriangleCount = static_cast<int>(movedTriangles.size()),
            movedEdgeCount = static_cast<int>(movedEdges.size());
  queryEach(
      *held.triangleGrid, triangles.size(), 0, movedVertexCount,
      [&](int k) { return grownBox(step.vertexBoxes[movedVertices[k]], reachBack); },
      [&](int k, int t, const Eigen::AlignedBox3d& around) {
        if (!triangleMoved[t] && held.triangleBoxes[t].intersects(around))
          tryVertexTriangle(movedVertices[k], t);
      });
  // The moved elements against one another, through grids of their boxes over the step (pairs
  // whose boxes do not meet fail the step's tests).
  const double cell = pairCell(start, edges, step.thickness);
  auto movedBoxes = [](const std::vector<int>& moved,
                       const std::vector<Eigen::AlignedBox3d>& boxes) {
    std::vector<Eigen::AlignedBox3d> out;
    out.reserve(moved.size());
    for (int k : moved) out.push_back(boxes[k]);
    return out;
  };
  queryEach(
      CellGrid(movedBoxes(movedTriangles, step.triangleBoxes), cell), movedTriangles.size(), 0,
      movedVertexCount, [&](int k) { return step.vertexBoxes[movedVertices[k]]; },
      [&](int k, int j, const Eigen::AlignedBox3d&) {
        tryVertexTriangle(movedVertices[k], movedTriangles[j]);
      });
  queryEach(
      *held.vertexGrid, start.rows(), 0, movedTriangleCount,
      [&](int k) { return grownBox(step.triangleBoxes[movedTriangles[k]], settled); },
      [&](int k, int v, const Eigen::AlignedBox3d& around) {
        if (!unsettled[v] && held.vertexBoxes[v].intersects(around))
          tryVertexTriangle(v, movedTriangles[k]);
      });
  queryEach(
      *held.edgeGrid, edges.size(), 0, movedEdgeCount,
      [&](int k) { return grownBox(step.edgeBoxes[movedEdges[k]], reachBack); },
      [&](int k, int f, const Eigen::AlignedBox3d& around) {
        if (!edgeMoved[f] && held.edgeBoxes[f].intersects(around)) tryEdgeEdge(movedEdges[k], f);
      });
  queryEach(
      CellGrid(movedBoxes(movedEdges, step.edgeBoxes), cell), movedEdges.size(), 0, movedEdgeCount,
      [&](int k) { return step.edgeBoxes[movedEdges[k]]; },
      [&](int k, int j, const Eigen::AlignedBox3d&) { tryEdgeEdge(movedEdges[k], movedEdges[j]); },
      true);
  sortAsSearched(pairs, step, cell, heldVt, heldEe);
  return pairs;
}

// The search's pairs: with a cache, from the pairs it holds (taken anew where too many vertices
// have moved too far since, and not held while the cloth moves too fast, or for a run of steps
// after a set that served fewer than kMinServed), else searched (`held`: whether the cache's
// answered).
PairCandidates findSelfPairs(const TriangleMesh& mesh, const MeshTopology& topology,
                             const Positions& start, const Positions& end, const Eigen::VectorXd& w,
                             double thickness, const std::vector<Stitch>* stitches,
                             const FlatNearness* flat, SelfPairCache* cache = nullptr,
                             bool* held = nullptr) {
  const SeamJoins joins(stitches);
  const auto& triangles = mesh.triangles;
  const auto& edges = topology.edges;
  // No pair acts beside its triangle with a flat rest state (strain-limit-remesh's): on its
  // refined folds, faces a few millimetres across, those pushes stretched the faces beyond their
  // limits (fold-drop, seeds 21, 22, 24 and 31: the largest strain over steps 140 to 300 went
  // from 0.070-0.087 to 0.082-0.153, and 2 to 14 more steps ended above the tolerance).
  const Positions* rest =
      !flat && mesh.positions.rows() == start.rows() ? &mesh.positions : nullptr;
  const StepPairTests step(triangles, edges, start, end, w, thickness, rest);
  if (held) *held = false;
  if (!cache || start.rows() == 0) return searchSelfPairs(step, joins, flat);
  HeldSelfPairs& h = heldOf(*cache);
  const Eigen::Index n = start.rows();
  const double limit = static_cast<double>(n) * kUnsettledShare;
  // The vertices that have not settled against a held set (their moves since it was found,
  // `drift`, and in the step: more than `settled` in all).
  std::vector<char> unsettled(n);
  const auto unsettledCount = [&](const Eigen::VectorXd& drift, double settled) {
    int count = 0;
    for (Eigen::Index v = 0; v < n; ++v)
      count += unsettled[v] = !(drift[v] + step.moves[v] <= settled);
    return count;
  };
  const auto settledFor = [&](double reach) {
    return ((1 - kHeldRounding) * reach - step.slack) / 2;
  };
  bool answered = false;
  if (h.findsFor(triangles, edges, stitches, flat, n) && settledFor(h.reach) > 0) {
    const Eigen::VectorXd drift = (start - h.at).rowwise().norm();
    answered = unsettledCount(drift, settledFor(h.reach)) <= limit;
  }
  if (!answered) {
    if (h.valid) {
      if (h.served < kMinServed) {
        h.searchesLeft = h.searchRun;
        h.searchRun = std::min(2 * h.searchRun, kMaxSearchRun);
      } else {
        h.searchRun = 1;
      }
    }
    if (h.searchesLeft > 0) {
      --h.searchesLeft;
      h.valid = false;
      return searchSelfPairs(step, joins, flat);
    }
    const double reach = step.slack + kHeldSpare * thickness;
    if (unsettledCount(Eigen::VectorXd::Zero(n), kTakenMoveShare * settledFor(reach)) > limit) {
      h.valid = false;
      return searchSelfPairs(step, joins, flat);
    }
    h.valid = true;
    h.triangles = triangles;
    h.edges = edges;
    h.stitches = stitches;
    h.stitchCount = stitches ? stitches->size() : 0;
    h.flat = flat != nullptr;
    h.material = flat ? flat->material : Eigen::MatrixX2d();
    h.wrap = flat ? &flat->wrap : nullptr;
    h.near = flat ? flat->near : 0;
    h.at = start;
    h.reach = reach;
    findWithin(h, triangles, edges, start, h.reach, joins, flat);
    unsettledCount(Eigen::VectorXd::Zero(n), settledFor(h.reach));
    ++h.searches;
    h.served = 0;
  } else {
    ++h.reuses;
    ++h.served;
    if (held) *held = true;
  }
  return heldPairs(h, step, unsettled, settledFor(h.reach), joins, flat);
}

// The obstacles' features' broad phase: static vertices marked in `featureVertices` against
// moving triangles, static edges against moving edges (a moving vertex against a static triangle
// is resolveContacts' business), with boxes grown by the thickness and `margin`. The static
// elements are few, so they are binned, and each moving triangle and edge looks them up. Binning
// the moving cloth instead cost a grid over the features' whole extent per call: on a
// 28 000-triangle tablecloth over a table, resolved in each of xpbd's sweeps, that was a fifth of
// a 260 ms step.
PairCandidates findFeaturePairs(const std::vector<Tri>& triangles, const std::vector<std::array<int, 2>>& edges,
                                const Positions& start, const Positions& end, const Eigen::VectorXd& w,
                                double thickness, double margin, const std::vector<char>& featureVertices) {
  PairCandidates pairs;
  const double cell = pairCell(start, edges, thickness), grow = thickness + margin;
  const int vertexCount = static_cast<int>(start.rows()), edgeCount = static_cast<int>(edges.size());
  const Eigen::VectorXd moves = vertexMoves(start, end);
  std::vector<int> staticVertices, staticEdges;
  std::vector<Eigen::AlignedBox3d> vertexBoxes, edgeBoxes;
  for (int v = 0; v < vertexCount; ++v)
    if (w[v] == 0 && featureVertices[v]) {
      staticVertices.push_back(v);
      vertexBoxes.push_back(sweptBox(start, end, 0, {v}));
    }
  for (int e = 0; e < edgeCount; ++e)
    if (w[edges[e][0]] == 0 && w[edges[e][1]] == 0) {
      staticEdges.push_back(e);
      edgeBoxes.push_back(sweptBox(start, end, grow, {edges[e][0], edges[e][1]}));
    }
  // A few cells per item at most: few features can span a large box.
  auto cellsFor = [](size_t items) { return 4096.0 + 64.0 * static_cast<double>(items); };
  if (!staticVertices.empty()) {
    const CellGrid vertexHash(vertexBoxes, cell, cellsFor(staticVertices.size()));
    std::vector<int> stamp(staticVertices.size(), -1);  // a box over several cells meets an item in each
    for (int t = 0; t < static_cast<int>(triangles.size()); ++t) {
      const Tri& f = triangles[t];
      if (w[f[0]] == 0 && w[f[1]] == 0 && w[f[2]] == 0) continue;
      const Eigen::AlignedBox3d box = sweptBox(start, end, grow, {f[0], f[1], f[2]});
      const Vec3 a = start.row(f[0]), b = start.row(f[1]), c = start.row(f[2]);
      const double reach = grow + largestMove(moves, {f[0], f[1], f[2]});
      vertexHash.query(box, [&](int k) {
        if (stamp[k] == t) return;
        stamp[k] = t;
        const int v = staticVertices[k];
        if (f[0] == v || f[1] == v || f[2] == v || !box.intersects(vertexBoxes[k])) return;
        // Boxes of long or slanted elements overlap far more than the elements come near.
        if (distanceToTriangle(a, b, c, start.row(v)) > reach) return;
        pairs.addVertexTriangle(triangles, start, v, t);
      });
    }
  }
  if (!staticEdges.empty()) {
    const CellGrid edgeHash(edgeBoxes, cell, cellsFor(staticEdges.size()));
    std::vector<int> stamp(staticEdges.size(), -1);
    for (int f = 0; f < edgeCount; ++f) {
      const auto& qe = edges[f];
      if (w[qe[0]] == 0 && w[qe[1]] == 0) continue;
      const Eigen::AlignedBox3d box = sweptBox(start, end, grow, {qe[0], qe[1]});
      const Vec3 q0 = start.row(qe[0]), q1 = start.row(qe[1]);
      const double reach = grow + largestMove(moves, {qe[0], qe[1]});
      edgeHash.query(box, [&](int k) {
        if (stamp[k] == f) return;
        stamp[k] = f;
        const int e = staticEdges[k];
        if (sharesVertex(edges[e], qe) || !box.intersects(edgeBoxes[k])) return;
        double s = 0, u = 0;
        const Vec3 offset = segmentOffset(start.row(edges[e][0]), start.row(edges[e][1]), q0, q1, s, u);
        if (offset.norm() > reach) return;
        pairs.addEdgeEdge(e, f, offset);
      });
    }
  }
  return pairs;
}

// Triangle (a, b, c)'s unit normal `n`; false for a degenerate triangle.
bool unitNormal(const Vec3& a, const Vec3& b, const Vec3& c, Vec3& n) {
  n = (b - a).cross(c - a);
  const double area = n.norm();
  if (area < 1e-20) return false;
  n /= area;
  return true;
}
// The barycentric coordinates of x's projection onto the plane of triangle (a, b, c), given its
// unitNormal.
Vec3 projectedBarycentric(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n) {
  const Vec3 p = x - (x - a).dot(n) * n;
  const double total = (b - a).cross(c - a).dot(n);
  const double wa = (b - p).cross(c - p).dot(n) / total, wb = (c - p).cross(a - p).dot(n) / total;
  return Vec3(wa, wb, 1 - wa - wb);
}
// An edge-edge pair acts at interior closest points only: at an end point the vertex-triangle
// pairs take over.
bool interiorParameters(double s, double t) { return s > 1e-6 && s < 1 - 1e-6 && t > 1e-6 && t < 1 - 1e-6; }

// A vertex-triangle pair's row at `end` (SelfCollisionRow, its gap left to the caller), when the
// pair acts within `reach`: on its starting side within `reach` of the triangle's plane and over
// the triangle, or on the other side having passed through the triangle during the step
// (`crossed`), not round its edge. On its starting side beside the triangle, a pair that acts
// beside it too (VertexTriangle::beside) is a row along the way from the triangle's nearest point,
// on an edge or a corner, within `reach` of it: a vertex under another layer's crease or tip is
// beside all its faces, and the edge pairs act only between edges' inner points.
bool vertexTriangleRow(const VertexTriangle& pair, const std::vector<Tri>& triangles,
                       const Positions& start, const Positions& end, double reach,
                       SelfCollisionRow& row, bool& crossed) {
  const Tri& f = triangles[pair.t];
  const Vec3 x = end.row(pair.v), a = end.row(f[0]), b = end.row(f[1]), c = end.row(f[2]);
  Vec3 n;
  if (!unitNormal(a, b, c, n)) return false;
  const double height = pair.side * (x - a).dot(n);  // > 0: on its starting side
  if (height >= reach) return false;
  // The barycentric coordinates of the projection: over the triangle, the row is along its
  // normal.
  Vec3 bary = projectedBarycentric(x, a, b, c, n);
  Vec3 normal = pair.side * n;
  double separation = height;
  crossed = height < 0;
  if (crossed) {
    const Vec3 x0[4] = {start.row(pair.v), start.row(f[0]), start.row(f[1]), start.row(f[2])};
    const Vec3 x1[4] = {end.row(pair.v), end.row(f[0]), end.row(f[1]), end.row(f[2])};
    if (!vertexTriangleHit(x0, x1)) return false;
    bary = bary.cwiseMax(0.0);
    bary /= bary.sum();
  } else if (bary.minCoeff() < -1e-6) {
    // Beside the triangle: along the way from its nearest point, where the pair acts there.
    if (!pair.beside) return false;
    bary = closestBarycentric(a, b, c, x);
    const Vec3 d = x - (bary[0] * a + bary[1] * b + bary[2] * c);
    separation = d.norm();
    if (separation >= reach || separation < 1e-12) return false;
    normal = d / separation;
  }
  row.vertices = {pair.v, f[0], f[1], f[2]};
  row.coefficients = {1, -bary[0], -bary[1], -bary[2]};
  row.normal = normal;
  row.separation = separation;
  return true;
}

// An edge-edge pair's row at `end` the same way: at interior closest points only, within `reach`
// on the side the edges started on, or passed through each other during the step (`crossed`).
bool edgeEdgeRow(const EdgeEdge& pair, const std::vector<std::array<int, 2>>& edges,
                 const Positions& start, const Positions& end, double reach, SelfCollisionRow& row,
                 bool& crossed) {
  const auto& pe = edges[pair.a];
  const auto& qe = edges[pair.b];
  const Vec3 p0 = end.row(pe[0]), p1 = end.row(pe[1]), q0 = end.row(qe[0]), q1 = end.row(qe[1]);
  double s = 0, t = 0;
  const Vec3 d = segmentOffset(p0, p1, q0, q1, s, t);
  if (!interiorParameters(s, t)) return false;
  const double along = d.dot(pair.direction);
  const double distance = d.norm();
  crossed = along <= 0;
  if (!crossed) {
    if (distance >= reach) return false;
    row.normal = distance > 1e-12 ? Vec3(d / distance) : pair.direction;
    row.separation = distance;
  } else {
    const Vec3 x0[4] = {start.row(pe[0]), start.row(pe[1]), start.row(qe[0]), start.row(qe[1])};
    const Vec3 x1[4] = {end.row(pe[0]), end.row(pe[1]), end.row(qe[0]), end.row(qe[1])};
    if (!edgeEdgeHit(x0, x1)) return false;
    row.normal = pair.direction;
    row.separation = along;
  }
  row.vertices = {pe[0], pe[1], qe[0], qe[1]};
  row.coefficients = {1 - s, s, -(1 - t), -t};
  return true;
}

// The gap a pair restores: the thickness, less the largest allowance of its vertices
// (StepContext::contactAllowance; the rows past the cloth's are static obstacle vertices).
double restoredGap(double thickness, const Eigen::VectorXd* allowance,
                   const std::array<int, 4>& vertices) {
  double kept = thickness;
  for (int v : vertices) kept = std::min(kept, thicknessKept(thickness, allowance, v));
  return kept;
}

// Who pushed whom, for solvePairs: `owner` labels the rows of `end` from `clothRows` on (static
// vertices: each one's obstacle), and `pushedBy` (clothRows entries) receives, for each cloth
// vertex a pair with a labelled vertex moved, the label of the pair that moved it the most.
struct PushOwners {
  int clothRows;
  const std::vector<int>& owner;
  std::vector<int>& pushedBy;
};

// Friction on the pushes of obstacles' features (ObstacleFeaturePairs::resolve) over a step of
// `dt` [s]. Per static vertex (rows from `clothRows` on): its obstacle's coefficient and the
// velocity of the obstacle's surface there [m/s]. Per pair (the vertex-triangle pairs, then the
// edge-edge ones): the normal move its pushes made in this step, and the tangential move its
// friction made, both of its cloth point against the feature [m], carried over the calls within one
// step.
struct PairFriction {
  int clothRows;
  const std::vector<double>& coefficient;
  const Positions& surfaceVelocity;
  double dt;
  std::vector<double>& pushed;
  std::vector<Vec3>& held;
};

// The pairs' responses at `end`: `iterations` Gauss-Seidel sweeps, until one applies none.
SelfCollisionResult solvePairs(const PairCandidates& pairs, const std::vector<Tri>& triangles,
                               const std::vector<std::array<int, 2>>& edges, const Positions& start,
                               Positions& end, const Eigen::VectorXd& w, double thickness,
                               int iterations, const Eigen::VectorXd* allowance = nullptr,
                               const PushOwners* owners = nullptr,
                               const PairFriction* friction = nullptr) {
  SelfCollisionResult result;
  result.candidates = static_cast<int>(pairs.vt.size() + pairs.ee.size());
  std::vector<double> largestMove;  // per cloth vertex, with `owners`: the largest move recorded
  if (owners) largestMove.assign(owners->clothRows, 0.0);
  // Coulomb friction on pair `index`, which has just pushed its cloth point out by `pushedNow`
  // (0: a pair in contact that did not need a push now), the row's weight `weight`. As impulses
  // accumulate in a sequential-impulse solver: the friction's move this step, summed over the
  // calls, cancels the pair's tangential motion over the step (its cloth point's against the
  // feature's, which moves with its obstacle) within the coefficient times the pushes' move
  // summed over the step, split over the vertices as a push is. A bound per push instead let the
  // sweeps' later edge corrections slide the points that the first push had stopped: cloth on a
  // 15° bed of spikes crept 1 cm/s at friction 0.5 under xpbd.
  auto rub = [&](const SelfCollisionRow& row, double weight, double pushedNow, size_t index) {
    const auto& c = row.coefficients;
    const auto& v = row.vertices;
    double& pushed = friction->pushed[index];
    pushed += pushedNow;
    if (pushed <= 0) return;
    double mu = 0;
    Vec3 motion = Vec3::Zero();
    for (int k = 0; k < 4; ++k) {
      if (v[k] >= friction->clothRows) {
        mu = friction->coefficient[v[k] - friction->clothRows];
        motion += (c[k] * friction->dt) *
                  friction->surfaceVelocity.row(v[k] - friction->clothRows).transpose();
      } else {
        motion += c[k] * (end.row(v[k]) - start.row(v[k])).transpose();
      }
    }
    if (mu <= 0) return;
    const Vec3& n = row.normal;
    Vec3& held = friction->held[index];
    held -= held.dot(n) * n;  // into this row's tangent plane
    Vec3 total = held - (motion - motion.dot(n) * n);
    const double bound = mu * pushed;
    if (total.norm() > bound) total *= bound / total.norm();
    const Vec3 move = total - held;
    held = total;
    for (int k = 0; k < 4; ++k) end.row(v[k]) += (w[v[k]] * c[k] / weight) * move.transpose();
  };
  // Pushes a pair's row out to its gap along its normal, the move split by the vertices' weights.
  auto push = [&](const SelfCollisionRow& row, bool crossed, int sweep, size_t index) {
    const double gap = restoredGap(thickness, allowance, row.vertices);
    const bool contact = friction && friction->pushed[index] > 0;
    if (row.separation >= gap && !contact) return false;
    const auto& c = row.coefficients;
    const auto& v = row.vertices;
    double weight = 0;
    for (int k = 0; k < 4; ++k) weight += c[k] * c[k] * w[v[k]];
    if (weight <= 0) return false;
    if (row.separation >= gap) {  // in contact from an earlier push, held by friction only
      rub(row, weight, 0, index);
      return false;
    }
    if (crossed && sweep == 0) ++result.crossed;
    const double lambda =
        limitedImpulse(gap - row.separation, weight,
                       {c[0] * w[v[0]], c[1] * w[v[1]], c[2] * w[v[2]], c[3] * w[v[3]]});
    for (int k = 0; k < 4; ++k) end.row(v[k]) += (w[v[k]] * c[k] * lambda) * row.normal.transpose();
    if (friction) rub(row, weight, lambda * weight, index);
    if (owners) {
      int owner = -1;
      for (int k = 0; k < 4 && owner < 0; ++k)
        if (v[k] >= owners->clothRows) owner = owners->owner[v[k] - owners->clothRows];
      for (int k = 0; k < 4 && owner >= 0; ++k) {
        const double move = std::abs(w[v[k]] * c[k] * lambda);
        if (v[k] < owners->clothRows && move > largestMove[v[k]]) {
          largestMove[v[k]] = move;
          owners->pushedBy[v[k]] = owner;
        }
      }
    }
    return true;
  };
  // With friction, rows a little beyond the thickness too: a pair an earlier push left at the
  // thickness is still in contact, and rubs.
  const double reach = friction ? 1.01 * thickness : thickness;
  for (int sweep = 0; sweep < iterations; ++sweep) {
    int applied = 0;
    SelfCollisionRow row;
    bool crossed = false;
    for (size_t i = 0; i < pairs.vt.size(); ++i)
      if (vertexTriangleRow(pairs.vt[i], triangles, start, end, reach, row, crossed) &&
          push(row, crossed, sweep, i))
        ++applied;
    for (size_t i = 0; i < pairs.ee.size(); ++i)
      if (edgeEdgeRow(pairs.ee[i], edges, start, end, reach, row, crossed) &&
          push(row, crossed, sweep, pairs.vt.size() + i))
        ++applied;
    result.resolved += applied;
    if (applied == 0) break;
  }
  return result;
}

}  // namespace

SelfCollisionResult resolveSelfCollisions(const TriangleMesh& mesh, const MeshTopology& topology,
                                          const Positions& start, Positions& end,
                                          const Eigen::VectorXd& w, double thickness,
                                          int iterations, const Eigen::VectorXd* allowance,
                                          const std::vector<Stitch>* stitches,
                                          const FlatNearness* flat, SelfPairCache* cache) {
  if (mesh.triangles.empty() || !(thickness > 0)) return {};
  bool held = false;
  const PairCandidates pairs =
      findSelfPairs(mesh, topology, start, end, w, thickness, stitches, flat, cache, &held);
  SelfCollisionResult result = solvePairs(pairs, mesh.triangles, topology.edges, start, end, w,
                                          thickness, iterations, allowance);
  result.heldPairs = held;
  return result;
}

struct SelfCollisionPairs::Pairs {
  const TriangleMesh& mesh;
  const MeshTopology& topology;
  Positions start;
  Eigen::VectorXd weights;
  double thickness, reach;
  PairCandidates candidates;
};

SelfCollisionPairs::SelfCollisionPairs(const TriangleMesh& mesh, const MeshTopology& topology,
                                       const Positions& start, const Positions& end,
                                       const Eigen::VectorXd& inverseMass, double thickness,
                                       double reach, const std::vector<Stitch>* stitches,
                                       const FlatNearness* flat, SelfPairCache* cache)
    : pairs_(new Pairs{
          mesh, topology, start, inverseMass, thickness, std::max(reach, thickness), {}}) {
  if (!mesh.triangles.empty() && thickness > 0)
    pairs_->candidates = findSelfPairs(mesh, topology, start, end, inverseMass, pairs_->reach,
                                       stitches, flat, cache);
}

SelfCollisionPairs::~SelfCollisionPairs() = default;

std::vector<SelfCollisionRow> SelfCollisionPairs::rows(const Positions& at,
                                                       const Eigen::VectorXd* allowance) const {
  const Pairs& p = *pairs_;
  std::vector<SelfCollisionRow> rows;
  SelfCollisionRow row;
  bool crossed = false;
  auto take = [&] {
    row.gap = restoredGap(p.thickness, allowance, row.vertices);
    for (int k = 0; k < 4; ++k)
      if (p.weights[row.vertices[k]] > 0) {
        rows.push_back(row);
        return;
      }
  };
  for (const auto& pair : p.candidates.vt)
    if (vertexTriangleRow(pair, p.mesh.triangles, p.start, at, p.reach, row, crossed)) take();
  for (const auto& pair : p.candidates.ee)
    if (edgeEdgeRow(pair, p.topology.edges, p.start, at, p.reach, row, crossed)) take();
  return rows;
}

Eigen::VectorXd selfDepthsWithinThickness(const TriangleMesh& mesh, const MeshTopology& topology,
                                          const Positions& x, double thickness,
                                          const std::vector<Stitch>* stitches) {
  Eigen::VectorXd depth = Eigen::VectorXd::Zero(x.rows());
  if (!mesh.triangles.empty() && thickness > 0) {
    const PairCandidates pairs = findSelfPairs(
        mesh, topology, x, x, Eigen::VectorXd::Ones(x.rows()), thickness, stitches, nullptr);
    // The pairs solvePairs would push: their rows within the thickness at x, taken from x (so
    // none has passed through, and each row's separation is its distance).
    SelfCollisionRow row;
    bool crossed = false;
    auto deepen = [&] {
      for (int v : row.vertices) depth[v] = std::max(depth[v], thickness - row.separation);
    };
    for (const auto& pair : pairs.vt)
      if (vertexTriangleRow(pair, mesh.triangles, x, x, thickness, row, crossed)) deepen();
    for (const auto& pair : pairs.ee)
      if (edgeEdgeRow(pair, topology.edges, x, x, thickness, row, crossed)) deepen();
  }
  return depth;
}

int resolveFeaturesAndSelfCollisions(const TriangleMesh& mesh, const MeshTopology& topology,
                                     const Positions& start, Positions& end,
                                     const Eigen::VectorXd& inverseMass, double thickness,
                                     bool selfCollision, const std::vector<Obstacle>& obstacles,
                                     StepStats& stats, ObstacleFeaturePairs* found,
                                     const Eigen::VectorXd* allowance,
                                     const std::vector<Stitch>* stitches, const FlatNearness* flat,
                                     SelfPairCache* cache, std::optional<double> frictionStep) {
  int resolved = found && found->covers(end)
                     ? found->resolve(end, 4, allowance, nullptr, frictionStep).resolved
                     : resolveObstacleFeatures(mesh, topology, start, end, inverseMass, thickness,
                                               obstacles, 4, allowance, frictionStep)
                           .resolved;
  if (selfCollision) {
    const auto selfStart = Clock::now();
    const SelfCollisionResult self = resolveSelfCollisions(
        mesh, topology, start, end, inverseMass, thickness, 4, allowance, stitches, flat, cache);
    recordSelfCollision(self, msSince(selfStart), stats);
    resolved += self.resolved;
  }
  return resolved;
}

struct ObstacleFeaturePairs::Pairs {
  const std::vector<Tri>& triangles;
  std::vector<std::array<int, 2>> edges;  // the cloth's, then the features' between static vertices
  Positions start;                        // the cloth's rows, then the static vertices'
  std::vector<int> obstacleOf;            // per static vertex: its obstacle's index
  std::vector<double> friction;           // ... its obstacle's friction coefficient
  Positions surfaceVelocity;              // ... its obstacle's surface velocity there [m/s]
  // Per pair, what its friction has done in this step (PairFriction), from the first call of
  // resolve with friction on.
  std::vector<double> pushed;
  std::vector<Vec3> held;
  Eigen::VectorXd weights;
  double thickness;
  PairCandidates candidates;
};

ObstacleFeaturePairs::ObstacleFeaturePairs(const TriangleMesh& mesh, const MeshTopology& topology,
                                           const Positions& start, const Positions& end, const Eigen::VectorXd& w,
                                           double thickness, const std::vector<Obstacle>& obstacles, double margin)
    : foundAt_(end), margin_(margin) {
  if (!hasMeshObstacle(obstacles) || mesh.triangles.empty() || !(thickness > 0)) return;
  // The cloth, then each mesh obstacle's vertices near the cloth's swept box, as static geometry.
  Eigen::AlignedBox3d cloth;
  for (int v = 0; v < start.rows(); ++v) {
    cloth.extend(Vec3(start.row(v)));
    cloth.extend(Vec3(end.row(v)));
  }
  cloth.min().array() -= 2 * thickness + margin;
  cloth.max().array() += 2 * thickness + margin;
  std::vector<Vec3> extra;
  std::vector<int> obstacleOf;
  std::vector<double> friction;
  std::vector<Vec3> velocity;
  std::vector<std::array<int, 2>> edges = topology.edges;
  const int clothVertices = static_cast<int>(start.rows());
  // Per vertex, cloth's then obstacles': a sharp obstacle vertex (MeshShape::sharpVertex), the
  // only static vertices that meet the cloth's triangles.
  std::vector<char> featureVertices(clothVertices, 0);
  for (size_t o = 0; o < obstacles.size(); ++o) {
    const Obstacle& ob = obstacles[o];
    if (ob.type != Obstacle::Type::Mesh || !ob.shape || !ob.shape->hasSharpFeatures()) continue;
    // The whole obstacle out of reach (its bounding sphere misses the cloth's box): nothing to add.
    const double radius = ob.shape->radius();
    if (cloth.exteriorDistance(ob.center()) > radius) continue;
    const TriangleMesh& shape = ob.shape->mesh();
    // Each feature vertex placed in the world once; the triangles near the cloth bring theirs in
    // (the obstacle's triangles themselves meet only the cloth's vertices, in resolveContacts).
    std::vector<Vec3> world(shape.vertexCount());
    for (int v = 0; v < shape.vertexCount(); ++v) world[v] = ob.toWorld(shape.positions.row(v).transpose());
    std::vector<int> index(shape.vertexCount(), -1);
    for (const Tri& f : shape.triangles) {
      Eigen::AlignedBox3d box;
      for (int k : f) box.extend(world[k]);
      if (!box.intersects(cloth)) continue;
      for (int k : f)
        if (index[k] < 0 && ob.shape->featureVertex(k)) {
          index[k] = clothVertices + static_cast<int>(extra.size());
          extra.push_back(world[k]);
          obstacleOf.push_back(static_cast<int>(o));
          friction.push_back(ob.friction);
          velocity.push_back(ob.surfaceVelocity(world[k]));
          featureVertices.push_back(ob.shape->sharpVertex(k));
        }
    }
    // The shape's sharp edges between vertices brought in.
    const auto& shapeEdges = ob.shape->edges();
    for (size_t e = 0; e < shapeEdges.size(); ++e)
      if (ob.shape->sharpEdge(static_cast<int>(e)) && index[shapeEdges[e][0]] >= 0 && index[shapeEdges[e][1]] >= 0)
        edges.push_back({index[shapeEdges[e][0]], index[shapeEdges[e][1]]});
  }
  if (extra.empty()) return;
  const int all = clothVertices + static_cast<int>(extra.size());
  Positions allStart(all, 3);
  allStart.topRows(clothVertices) = start;
  for (size_t i = 0; i < extra.size(); ++i) allStart.row(clothVertices + static_cast<int>(i)) = extra[i].transpose();
  Positions allEnd = allStart;
  allEnd.topRows(clothVertices) = end;
  Eigen::VectorXd weights = Eigen::VectorXd::Zero(all);
  weights.head(clothVertices) = w;
  // Only sharp features take part: a cloth triangle lying on a smooth part of the obstacle spans
  // its vertices and edges as a chord, nearer them than the thickness that resolveContacts keeps
  // its vertices off. Held off too, such triangles were lifted every step, without friction:
  // cloth draped on a mesh sphere or torus slid off it in every solver within 1.5 s (it stays put
  // on the analytic sphere).
  PairCandidates candidates =
      findFeaturePairs(mesh.triangles, edges, allStart, allEnd, weights, thickness, margin, featureVertices);
  Positions surfaceVelocity(velocity.size(), 3);
  for (size_t i = 0; i < velocity.size(); ++i)
    surfaceVelocity.row(static_cast<Eigen::Index>(i)) = velocity[i].transpose();
  pairs_.reset(new Pairs{mesh.triangles,
                         std::move(edges),
                         std::move(allStart),
                         std::move(obstacleOf),
                         std::move(friction),
                         std::move(surfaceVelocity),
                         {},
                         {},
                         std::move(weights),
                         thickness,
                         std::move(candidates)});
}

ObstacleFeaturePairs::~ObstacleFeaturePairs() = default;

bool ObstacleFeaturePairs::covers(const Positions& end) const {
  return end.rows() == foundAt_.rows() && (end - foundAt_).rowwise().squaredNorm().maxCoeff() <= margin_ * margin_;
}

SelfCollisionResult ObstacleFeaturePairs::resolve(Positions& end, int iterations,
                                                  const Eigen::VectorXd* allowance,
                                                  std::vector<int>* pushedBy,
                                                  std::optional<double> frictionStep) {
  if (!pairs_) return {};
  Pairs& p = *pairs_;
  const Eigen::Index clothVertices = end.rows();
  Positions allEnd = p.start;
  allEnd.topRows(clothVertices) = end;
  std::optional<PushOwners> owners;
  if (pushedBy) {
    pushedBy->resize(clothVertices, -1);
    owners.emplace(PushOwners{static_cast<int>(clothVertices), p.obstacleOf, *pushedBy});
  }
  std::optional<PairFriction> friction;
  if (frictionStep) {
    const size_t count = p.candidates.vt.size() + p.candidates.ee.size();
    if (p.pushed.size() != count) {
      p.pushed.assign(count, 0.0);
      p.held.assign(count, Vec3::Zero());
    }
    friction.emplace(PairFriction{static_cast<int>(clothVertices), p.friction, p.surfaceVelocity,
                                  *frictionStep, p.pushed, p.held});
  }
  const SelfCollisionResult result = solvePairs(
      p.candidates, p.triangles, p.edges, p.start, allEnd, p.weights, p.thickness, iterations,
      allowance, owners ? &*owners : nullptr, friction ? &*friction : nullptr);
  end = allEnd.topRows(clothVertices);
  return result;
}

SelfCollisionResult resolveObstacleFeatures(const TriangleMesh& mesh, const MeshTopology& topology,
                                            const Positions& start, Positions& end,
                                            const Eigen::VectorXd& w, double thickness,
                                            const std::vector<Obstacle>& obstacles, int iterations,
                                            const Eigen::VectorXd* allowance,
                                            std::optional<double> frictionStep) {
  return ObstacleFeaturePairs(mesh, topology, start, end, w, thickness, obstacles)
      .resolve(end, iterations, allowance, nullptr, frictionStep);
}

}  // namespace clothlab
