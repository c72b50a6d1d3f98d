#include "sim/material.h"

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "sim/linear/spd_solver.h"  // SparseMatrix

namespace clothlab {

Eigen::Vector2d materialOffset(const Eigen::MatrixX2d& u, int i, int j, const MaterialWrap& wrap) {
  return wrap.offset(u.row(i).transpose(), u.row(j).transpose());
}

Eigen::Vector2d flatPointAt(const Tri& tri, const Eigen::MatrixX2d& u, const MaterialWrap& wrap,
                            const Vec3& b) {
  const Eigen::Vector2d u0 = u.row(tri[0]).transpose();
  return u0 + b[1] * wrap.offset(u0, u.row(tri[1]).transpose()) +
         b[2] * wrap.offset(u0, u.row(tri[2]).transpose());
}

std::pair<int, Vec3> locateFlatPoint(const std::vector<Tri>& triangles, const Eigen::MatrixX2d& u,
                                     const MaterialWrap& wrap, const Eigen::Vector2d& m) {
  int best = 0;
  Vec3 bestAt(1.0 / 3, 1.0 / 3, 1.0 / 3);
  double bestLeast = -std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < triangles.size(); ++t) {
    const Tri& tri = triangles[t];
    // The corners as seen from m: the first one's nearest image, and the others as seen from it.
    const Eigen::Vector2d u0 = u.row(tri[0]).transpose();
    const Eigen::Vector2d a = wrap.offset(m, u0),
                          b = a + wrap.offset(u0, u.row(tri[1]).transpose()),
                          c = a + wrap.offset(u0, u.row(tri[2]).transpose());
    const double area = (b - a).x() * (c - a).y() - (b - a).y() * (c - a).x();
    if (std::abs(area) < 1e-300) continue;
    // Barycentric coordinates of the origin (m) in the triangle (a, b, c).
    const double wa = (b.x() * c.y() - b.y() * c.x()) / area,
                 wb = (c.x() * a.y() - c.y() * a.x()) / area, wc = 1 - wa - wb;
    const double least = std::min({wa, wb, wc});
    if (least > bestLeast) {
      bestLeast = least;
      best = static_cast<int>(t);
      bestAt = Vec3(wa, wb, wc);
    }
  }
  return {best, bestAt.cwiseMax(0.0) / bestAt.cwiseMax(0.0).sum()};
}

namespace {

// A rigid map of the plane, x -> R(angle) x + shift, the point it was found at, and how far it
// moved that point.
struct PlaneMotion {
  double angle = 0;
  Eigen::Vector2d shift = Eigen::Vector2d::Zero();
  Eigen::Vector2d at = Eigen::Vector2d::Zero();
  double moved = 0;
  Eigen::Vector2d operator()(const Eigen::Vector2d& x) const {
    return Eigen::Rotation2Dd(angle) * x + shift;
  }
};

constexpr double kPi = std::numbers::pi;

// How much more an unfolding laid as a cylinder may change an edge's length (relatively) than as
// a cone whose apex lies far beyond the cloth, and still be taken as the cylinder it nearly is.
constexpr double kCylinderSlack = 1e-3;

Eigen::Vector2d perpendicular(const Eigen::Vector2d& d) { return {-d.y(), d.x()}; }

Eigen::Vector2d rotated(const Eigen::Vector2d& d, double angle) {
  return Eigen::Rotation2Dd(angle) * d;
}

// The first triangle of the piece vertex v is on.
int firstTriangleOfPiece(const MeshTopology& topology, int v) {
  const int piece = topology.vertexComponent[v];
  return static_cast<int>(
      std::find(topology.triComponent.begin(), topology.triComponent.end(), piece) -
      topology.triComponent.begin());
}

// Relative edge-length mismatch between the rest mesh and material coordinates after the best
// uniform scale (the median ratio): the largest, on which edge, and the scale.
struct Mismatch {
  double worst = 1e300;
  int edge = 0;
  double scale = 1;
  // Where the edge that changed most is.
  std::string where(const MeshTopology& topology) const {
    const auto& e = topology.edges[edge];
    std::string at = "most at the edge " + std::to_string(e[0]) + "-" + std::to_string(e[1]);
    if (topology.componentCount > 1)
      at += " of the piece with triangle " + std::to_string(firstTriangleOfPiece(topology, e[0]));
    return at;
  }
};

Mismatch edgeMismatch(const Positions& rest, const std::vector<std::array<int, 2>>& edges,
                      const Eigen::MatrixX2d& u, const MaterialWrap& wrap) {
  Mismatch m;
  std::vector<double> ratios;  // rest length / material length, per edge
  for (const auto& e : edges) {
    const double material = materialOffset(u, e[0], e[1], wrap).norm();
    if (!(material > 0)) return m;
    ratios.push_back((rest.row(e[1]) - rest.row(e[0])).norm() / material);
  }
  if (ratios.empty()) return m;
  std::vector<double> sorted = ratios;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  m.scale = sorted[sorted.size() / 2];
  m.worst = 0;
  for (size_t e = 0; e < ratios.size(); ++e)
    if (const double change = std::abs(m.scale / ratios[e] - 1); change > m.worst) {
      m.worst = change;
      m.edge = static_cast<int>(e);
    }
  return m;
}

// Spreads what the unfolding of a mesh that only approximates a developable surface left at the
// edges where it met itself over the whole cloth: a few as-rigid-as-possible iterations in the
// plane (each triangle's best rotation of its rest shape onto its corners, then the coordinates
// that fit all the triangles' rotated edges best), with the wrap held. Each edge counts by its
// length's relative change, as the edge check measures it.
void relaxUnfolding(const TriangleMesh& mesh,
                    const std::vector<std::array<Eigen::Vector2d, 3>>& placed, FlatRest& flat) {
  const int n = static_cast<int>(mesh.positions.rows());
  const int triangles = static_cast<int>(mesh.triangles.size());
  const MaterialWrap& wrap = flat.wrap;
  // Each corner's image of its vertex: the one (once round either way, or none) that puts it
  // next to the triangle's first corner in the unfolding.
  std::vector<std::array<int, 3>> turns(triangles, {0, 0, 0});
  // Each triangle's rest shape in its own plane, as placed.
  std::vector<std::array<Eigen::Vector2d, 3>> rest(triangles);
  for (int t = 0; t < triangles; ++t) {
    const Tri& tri = mesh.triangles[t];
    for (int m = 0; m < 3; ++m) {
      rest[t][m] = placed[t][m] - placed[t][0];
      if (!wrap.wraps() || m == 0) continue;
      const Eigen::Vector2d target =
          placed[t][m] - placed[t][0] + flat.coords.row(tri[0]).transpose();
      double best = 1e300;
      for (int k = -1; k <= 1; ++k) {
        const double d =
            (wrap.image(flat.coords.row(tri[m]).transpose(), k) - target).squaredNorm();
        if (d < best) best = d, turns[t][m] = k;
      }
    }
  }
  // The image H^k(u) = A_k u + b_k of the piece's one wrap: A_k = wrap.turn(k, u), b_k the
  // origin's image.
  auto constantPart = [&](int k) {
    return Eigen::Vector2d(wrap.image(Eigen::Vector2d::Zero(), k));
  };
  // The global step's matrix: rows (A_ka u_a - A_kb u_b) / |r_ab| per triangle edge, and a
  // slight anchor of vertex 0 for the coordinates' free translation.
  std::vector<Eigen::Triplet<double>> entries;
  const std::array<std::array<int, 2>, 3> sides = {{{0, 1}, {1, 2}, {2, 0}}};
  auto forEachSide = [&](auto&& visit) {
    for (int t = 0; t < triangles; ++t)
      for (const auto& [p, q] : sides) {
        const double length = (rest[t][q] - rest[t][p]).norm();
        if (length > 0) visit(t, p, q, 1 / length);
      }
  };
  int row = 0;
  forEachSide([&](int t, int p, int q, double w) {
    const int vp = mesh.triangles[t][p], vq = mesh.triangles[t][q];
    const Eigen::Matrix2d ap = w * wrap.turn(turns[t][p], flat.coords.row(vp).transpose()),
                          aq = w * wrap.turn(turns[t][q], flat.coords.row(vq).transpose());
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        entries.emplace_back(row + r, 2 * vq + c, aq(r, c));
        entries.emplace_back(row + r, 2 * vp + c, -ap(r, c));
      }
    row += 2;
  });
  constexpr double kAnchor = 1e-3;
  entries.emplace_back(row, 0, kAnchor);
  entries.emplace_back(row + 1, 1, kAnchor);
  SparseMatrix fit(row + 2, 2 * n);
  fit.setFromTriplets(entries.begin(), entries.end());
  const SparseMatrix fitT = fit.transpose();
  const SparseMatrix normal = fitT * fit;
  Eigen::SimplicialLDLT<SparseMatrix> solver(normal);
  if (solver.info() != Eigen::Success) return;  // the unfolding as placed; the edge check judges it
  Eigen::VectorXd u(2 * n), rhs(row + 2);
  for (int i = 0; i < n; ++i) u.segment<2>(2 * i) = flat.coords.row(i).transpose();
  const Eigen::Vector2d anchor = u.segment<2>(0);
  auto corner = [&](int t, int m) {
    const Eigen::Vector2d at = u.segment<2>(2 * mesh.triangles[t][m]);
    return Eigen::Vector2d(wrap.turn(turns[t][m], at) * at + constantPart(turns[t][m]));
  };
  std::vector<double> turned(triangles);  // each triangle's rotation of its rest shape
  for (int iteration = 0; iteration < 20; ++iteration) {
    for (int t = 0; t < triangles; ++t) {
      // The rotation that takes the rest shape's edges best onto the corners' (Procrustes).
      double cross = 0, dot = 0;
      for (const auto& [p, q] : sides) {
        const Eigen::Vector2d r = rest[t][q] - rest[t][p], c = corner(t, q) - corner(t, p);
        cross += r.x() * c.y() - r.y() * c.x();
        dot += r.dot(c);
      }
      turned[t] = std::atan2(cross, dot);
    }
    row = 0;
    forEachSide([&](int t, int p, int q, double w) {
      rhs.segment<2>(row) = w * (rotated(rest[t][q] - rest[t][p], turned[t]) -
                                 constantPart(turns[t][q]) + constantPart(turns[t][p]));
      row += 2;
    });
    rhs.segment<2>(row) = kAnchor * anchor;
    const Eigen::VectorXd next = solver.solve(fitT * rhs);
    if (!next.allFinite()) return;
    u = next;
  }
  for (int i = 0; i < n; ++i) flat.coords.row(i) = u.segment<2>(2 * i).transpose();
}

// unfoldRestMesh for a mesh in one piece.
Result<FlatRest> unfoldPiece(const TriangleMesh& mesh, const MeshTopology& topology) {
  const int triangles = static_cast<int>(mesh.triangles.size());
  auto at = [&](int v) -> Vec3 { return mesh.positions.row(v).transpose(); };
  // Each triangle's corners in the plane, placed across an edge of a placed neighbour (breadth
  // first, so the placements stay close to the first triangle's and their drift small).
  std::vector<std::array<Eigen::Vector2d, 3>> corner(triangles);
  std::vector<int> order;
  std::vector<char> placed(triangles, 0);
  // The third corner of a triangle over the edge (p1, p2) of the plane, on the side away from
  // `away`, keeping its rest shape: (a, b) the edge's rest positions, c the third one.
  auto across = [&](const Eigen::Vector2d& p1, const Eigen::Vector2d& p2,
                    const Eigen::Vector2d& away, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 edge = (b - a).normalized();
    const double along = (c - a).dot(edge);
    const double height = ((c - a) - along * edge).norm();
    const Eigen::Vector2d direction = (p2 - p1).normalized();
    Eigen::Vector2d side = perpendicular(direction);
    if (side.dot(away - p1) > 0) side = -side;
    return Eigen::Vector2d(p1 + along * direction + height * side);
  };
  {
    const Tri& t = mesh.triangles[0];
    const Vec3 a = at(t[0]), b = at(t[1]);
    corner[0][0] = Eigen::Vector2d::Zero();
    corner[0][1] = Eigen::Vector2d((b - a).norm(), 0);
    corner[0][2] = across(corner[0][0], corner[0][1], Eigen::Vector2d(0, -1), a, b, at(t[2]));
    placed[0] = 1;
    order.push_back(0);
  }
  for (size_t next = 0; next < order.size(); ++next) {
    const int t = order[next];
    const Tri& tri = mesh.triangles[t];
    for (int k = 0; k < 3; ++k) {
      const int e = topology.triEdges[t][k];
      const int g =
          topology.edgeTris[e][0] == t ? topology.edgeTris[e][1] : topology.edgeTris[e][0];
      if (g < 0 || placed[g]) continue;
      const int i1 = tri[(k + 1) % 3], i2 = tri[(k + 2) % 3];
      const Tri& other = mesh.triangles[g];
      for (int m = 0; m < 3; ++m) {
        const int v = other[m];
        if (v == i1)
          corner[g][m] = corner[t][(k + 1) % 3];
        else if (v == i2)
          corner[g][m] = corner[t][(k + 2) % 3];
        else
          corner[g][m] = across(corner[t][(k + 1) % 3], corner[t][(k + 2) % 3], corner[t][k],
                                at(i1), at(i2), at(v));
      }
      placed[g] = 1;
      order.push_back(g);
    }
  }
  // Each vertex where the earliest of its triangles put it.
  FlatRest flat;
  flat.unfolded = true;
  flat.coords.resize(mesh.positions.rows(), 2);
  std::vector<char> set(mesh.positions.rows(), 0);
  for (int t : order)
    for (int m = 0; m < 3; ++m)
      if (!set[mesh.triangles[t][m]]) {
        flat.coords.row(mesh.triangles[t][m]) = corner[t][m].transpose();
        set[mesh.triangles[t][m]] = 1;
      }
  // A disc unfolds without meeting itself. A tube (a ring of cloth: two boundary loops, Euler
  // characteristic 0) meets itself once round: where two placed triangles disagree about their
  // shared edge, the map that takes one's placement of the edge onto the other's is the wrap or
  // its inverse. A mesh that only approximates a developable surface (vertices on a cone, faces
  // its chords) also disagrees a little wherever two branches of the unfolding meet, by the
  // curvature between them; those maps move a point by a fraction of an edge, the tube's by its
  // girth, so only the maps that move a point at least half as far as the farthest count, and
  // only when that is more than an edge. A sheet or a tube with holes (genus 0: the Euler
  // characteristic 2 less the boundary loops) has the same topology with more loops: round a
  // hole the unfolding meets itself by no more than such a fraction, and the tube's meetings
  // still give its wrap. Anything that closes round more than one way (a shirt's sleeves and
  // body) finds no one wrap for all its meetings, and is refused saying so (as is a tube curved
  // both ways; a disc curved both ways is left to the edge check).
  const int euler = mesh.vertexCount() - topology.edgeCount() + triangles;
  const int loops = static_cast<int>(topology.boundaryLoops.size());
  const bool disc = euler == 1 && loops == 1;
  if (loops == 0 || euler != 2 - loops)
    return Error{"it is not a sheet or a tube, with or without holes (" + std::to_string(loops) +
                 " boundary loops, Euler characteristic " + std::to_string(euler) +
                 "), which is all ClothLab unfolds"};
  const double edgeScale = meanEdgeLength(mesh.positions, topology.edges);
  std::vector<PlaneMotion> meetings;
  for (int e = 0; !disc && e < topology.edgeCount(); ++e) {
    const int t1 = topology.edgeTris[e][0], t2 = topology.edgeTris[e][1];
    if (t1 < 0 || t2 < 0) continue;
    auto placement = [&](int t, int v) {
      for (int m = 0; m < 3; ++m)
        if (mesh.triangles[t][m] == v) return corner[t][m];
      return Eigen::Vector2d(Eigen::Vector2d::Zero());
    };
    const int v1 = topology.edges[e][0], v2 = topology.edges[e][1];
    const Eigen::Vector2d a1 = placement(t1, v1), b1 = placement(t1, v2);
    const Eigen::Vector2d a2 = placement(t2, v1), b2 = placement(t2, v2);
    if ((a1 - a2).norm() + (b1 - b2).norm() <= 0.02 * edgeScale) continue;
    const Eigen::Vector2d d1 = b1 - a1, d2 = b2 - a2;
    PlaneMotion m;
    m.angle = std::atan2(d2.x() * d1.y() - d2.y() * d1.x(), d2.dot(d1));
    m.shift = a1 - rotated(a2, m.angle);
    m.at = a2;
    m.moved = (a1 - a2).norm();
    meetings.push_back(m);
  }
  double farthest = 0;
  for (const PlaneMotion& m : meetings) farthest = std::max(farthest, m.moved);
  const std::vector<PlaneMotion> everyMeeting = meetings;
  std::erase_if(meetings, [&](const PlaneMotion& m) {
    return m.moved < 0.5 * farthest || farthest < edgeScale;
  });
  // The unfolding relaxed with the wrap of a cylinder once round which is `shift` (the
  // coordinates turned so that going round runs along the first one), or of a cone.
  auto laidAsCylinder = [&](const Eigen::Vector2d& shift) {
    FlatRest laid = flat;
    std::vector<std::array<Eigen::Vector2d, 3>> placed = corner;
    const Eigen::Vector2d along = shift.normalized();
    Eigen::Matrix2d turn;
    turn << along.x(), along.y(), -along.y(), along.x();
    laid.coords = (laid.coords * turn.transpose()).eval();
    for (auto& triangle : placed)
      for (Eigen::Vector2d& p : triangle) p = turn * p;
    laid.wrap.period = shift.norm();
    relaxUnfolding(mesh, placed, laid);
    return laid;
  };
  auto laidAsCone = [&](double angle, const Eigen::Vector2d& apex) {
    FlatRest laid = flat;
    laid.wrap.angle = angle;
    laid.wrap.apex = apex;
    relaxUnfolding(mesh, corner, laid);
    // The sector the cone lies in round its apex, and the gap it leaves: the cut goes through the
    // gap's middle. A turn of `angle` and one the other way round, 2 pi - |angle|, are the same
    // map; the sector is as wide as the one of them nearer its own width.
    std::vector<double> around;
    for (Eigen::Index i = 0; i < laid.coords.rows(); ++i)
      around.push_back(std::atan2(laid.coords(i, 1) - apex.y(), laid.coords(i, 0) - apex.x()));
    std::sort(around.begin(), around.end());
    double gap = around.front() + 2 * kPi - around.back(), cut = around.back() + gap / 2;
    for (size_t i = 1; i < around.size(); ++i)
      if (around[i] - around[i - 1] > gap) {
        gap = around[i] - around[i - 1];
        cut = around[i - 1] + gap / 2;
      }
    const double other = angle - std::copysign(2 * kPi, angle);
    if (std::abs(std::abs(other) - (2 * kPi - gap)) < std::abs(std::abs(angle) - (2 * kPi - gap)))
      laid.wrap.angle = other;
    laid.wrap.cut = cut;
    return laid;
  };
  // The largest relative change of an edge's length, laid out, as flatMaterialCoordinates
  // judges it.
  auto largestChange = [&](const FlatRest& laid) {
    return edgeMismatch(mesh.positions, topology.edges, laid.coords, laid.wrap).worst;
  };
  if (!meetings.empty()) {
    // One direction round. The inverse of (angle, shift) is (-angle, -R(-angle) shift). A turn
    // well away from none tells the two apart by its sign; a cylinder's maps (turns of no more
    // than the meshing's curvature) by which way they move a point.
    const PlaneMotion reference = meetings.front();
    const Eigen::Vector2d probe = flat.coords.row(0).transpose();
    auto moves = [&](const PlaneMotion& m) { return Eigen::Vector2d(m(probe) - probe); };
    for (PlaneMotion& m : meetings) {
      const bool inverse = std::abs(reference.angle) > 0.1 ? m.angle * reference.angle < 0
                                                           : moves(m).dot(moves(reference)) < 0;
      if (!inverse) continue;
      m.at = m(m.at);  // where the inverse takes the point back from
      m.shift = -rotated(m.shift, -m.angle);
      m.angle = -m.angle;
    }
    // The median turn, and how far the others are from it.
    std::vector<double> angles, spread;
    for (const PlaneMotion& m : meetings) angles.push_back(m.angle);
    std::nth_element(angles.begin(), angles.begin() + angles.size() / 2, angles.end());
    const double median = angles[angles.size() / 2];
    for (double a : angles) spread.push_back(std::abs(a - median));
    std::nth_element(spread.begin(), spread.begin() + spread.size() / 2, spread.end());
    const double deviation = spread[spread.size() / 2];
    const bool cylinder = std::abs(median) <= std::max(1e-3, 3 * deviation);
    // How far the meetings move their points, on average: a cylinder's shift round.
    Eigen::Vector2d meanMove = Eigen::Vector2d::Zero();
    for (const PlaneMotion& m : meetings) meanMove += m(m.at) - m.at;
    meanMove /= static_cast<double>(meetings.size());
    PlaneMotion round;  // the one map round: a cylinder's mean move, a cone's median turn
    if (cylinder) {
      round.shift = meanMove;
    } else {
      round = *std::find_if(meetings.begin(), meetings.end(),
                            [&](const PlaneMotion& m) { return m.angle == median; });
    }
    // A cloth that closes round more than one way (a shirt's body and sleeves, a pair of
    // trousers) also meets itself where the one map round, either way, does not take one
    // placement of the edge onto the other; so does a surface curved both ways, all over.
    // Meetings that move a point by two edges or less are the meshing's, as above.
    int otherWays = 0;
    for (const PlaneMotion& m : everyMeeting) {
      if (m.moved <= 2 * edgeScale) continue;
      const Eigen::Vector2d to = m(m.at);
      if (std::min((round(m.at) - to).norm(), (round(to) - m.at).norm()) > 2 * edgeScale)
        ++otherWays;
    }
    if (otherWays >= 2)
      return Error{"it meets itself, unfolded, at " + std::to_string(otherWays) + " of " +
                   std::to_string(everyMeeting.size()) +
                   " edges where no one shift or turn round closes it, so it closes round more "
                   "than one way (as a shirt's body and sleeves do) or is curved both ways (as "
                   "a dome is), and ClothLab unfolds only a sheet, a tube or a cone"};
    if (cylinder) return laidAsCylinder(round.shift);
    // A cone: the median turn's, about its fixed point, (I - R) apex = shift.
    const Eigen::Matrix2d fixed =
        Eigen::Matrix2d::Identity() - Eigen::Rotation2Dd(median).toRotationMatrix();
    const FlatRest cone = laidAsCone(median, fixed.inverse() * round.shift);
    // A jittered tube's meetings may all turn a little the same way: a cone whose apex lies far
    // beyond the cloth, the turn moving no point of it by more than an edge from where a shift
    // would. The tube is a cylinder unless the cone keeps its edges' lengths clearly better.
    const Eigen::Vector2d extent =
        flat.coords.colwise().maxCoeff() - flat.coords.colwise().minCoeff();
    if (std::abs(median) * extent.norm() > edgeScale) return cone;
    const FlatRest tube = laidAsCylinder(meanMove);
    return largestChange(tube) <= largestChange(cone) + kCylinderSlack ? tube : cone;
  }
  relaxUnfolding(mesh, corner, flat);
  return flat;
}

}  // namespace

Result<FlatRest> unfoldRestMesh(const TriangleMesh& mesh, const MeshTopology& topology) {
  if (mesh.triangles.empty()) return Error{"it has no triangles to unfold"};
  if (topology.nonManifoldEdgeCount > 0 || topology.degenerateTriangleCount > 0)
    return Error{"it has non-manifold edges or degenerate triangles, which do not unfold"};
  if (topology.componentCount == 1) return unfoldPiece(mesh, topology);
  // Pieces cut apart (a garment's panels) unfold one by one, each a sheet (holes allowed), a tube
  // or a cone (a skirt, a sleeve). Those that close round are stacked along the second coordinate,
  // each wrap holding only round its own piece (MaterialWrap::reach, up to halfway to the next),
  // the first where it unfolded. The others are laid out in a row beyond them along the first
  // coordinate, each further from the next than the largest piece is across, so that no
  // neighbourhood in the material plane reaches into another piece.
  const int pieces = topology.componentCount;
  std::vector<int> wrapped;         // the pieces that close round, in order
  std::vector<MaterialWrap> wraps;  // theirs
  std::vector<std::vector<int>> triangles(pieces);
  for (int t = 0; t < mesh.triangleCount(); ++t) triangles[topology.triComponent[t]].push_back(t);
  FlatRest flat;
  flat.unfolded = true;
  flat.coords = Eigen::MatrixX2d::Zero(mesh.vertexCount(), 2);
  std::vector<Eigen::Vector2d> lowest(pieces), highest(pieces);
  std::vector<std::vector<int>> vertices(pieces);
  std::vector<int> local(mesh.vertexCount(), -1);  // a vertex's number in its piece
  for (int p = 0; p < pieces; ++p) {
    const std::string which = "it is in " + std::to_string(pieces) +
                              " pieces, and the one with triangle " +
                              std::to_string(triangles[p].front());
    // The piece as a mesh of its own: its vertices renumbered in order.
    TriangleMesh part;
    for (int t : triangles[p]) {
      Tri tri = mesh.triangles[t];
      for (int& v : tri) {
        // A vertex on triangles of two pieces (vertexComponent names the first).
        if (topology.vertexComponent[v] != p)
          return Error{"it is in " + std::to_string(pieces) + " pieces, and vertex " +
                       std::to_string(v) +
                       " joins two of them at a point, where they cannot be laid apart"};
        if (local[v] < 0) {
          local[v] = static_cast<int>(vertices[p].size());
          vertices[p].push_back(v);
        }
        v = local[v];
      }
      part.triangles.push_back(tri);
    }
    part.positions.resize(static_cast<Eigen::Index>(vertices[p].size()), 3);
    for (size_t i = 0; i < vertices[p].size(); ++i)
      part.positions.row(i) = mesh.positions.row(vertices[p][i]);
    auto unfolded = unfoldPiece(part, buildTopology(part));
    if (!unfolded) {
      std::string why = unfolded.error();  // "it is ...", said of the piece
      if (why.starts_with("it ")) why.erase(0, 3);
      return Error{which + " " + why};
    }
    if (unfolded->wrap.wraps()) {
      wrapped.push_back(p);
      wraps.push_back(unfolded->wrap);
    }
    lowest[p] = unfolded->coords.colwise().minCoeff().transpose();
    highest[p] = unfolded->coords.colwise().maxCoeff().transpose();
    for (size_t i = 0; i < vertices[p].size(); ++i)
      flat.coords.row(vertices[p][i]) = unfolded->coords.row(static_cast<Eigen::Index>(i));
  }
  double across = 0;
  for (int p = 0; p < pieces; ++p)
    if (wrapped.empty() || p != wrapped.front())
      across = std::max(across, (highest[p] - lowest[p]).norm());
  // Each wrap's region (round a cylinder, a band of the second coordinate; round a cone, a disc
  // about its apex) reaches half the gap beyond its piece. Each piece after the first moves along
  // the second coordinate until its region starts where the one before ends. The row starts
  // beyond the last, or at the origin.
  Eigen::Vector2d start = Eigen::Vector2d::Zero();
  for (size_t k = 0; k < wrapped.size(); ++k) {
    MaterialWrap& wrap = wraps[k];
    const int p = wrapped[k];
    double centre = 0;  // of the region, along the second coordinate
    if (wrap.period > 0) {
      centre = (lowest[p].y() + highest[p].y()) / 2;
      wrap.reach = (highest[p].y() - lowest[p].y()) / 2 + across / 2;
    } else {
      double farthest = 0;
      for (int v : vertices[p])
        farthest = std::max(farthest, (flat.coords.row(v).transpose() - wrap.apex).norm());
      centre = wrap.apex.y();
      wrap.reach = farthest + across / 2;
    }
    const double move = k == 0 ? 0.0 : start.y() + wrap.reach - centre;
    for (int v : vertices[p]) flat.coords(v, 1) += move;
    wrap.apex.y() += move;
    if (wrap.period > 0) wrap.middle = centre + move;  // a cone's region is about its apex
    if (k == 0) start.x() = lowest[p].x();
    start.y() = centre + move + wrap.reach;
    if (k == 0)
      flat.wrap = wrap;
    else
      flat.wrap.others.push_back(wrap);
  }
  if (!wrapped.empty()) start.y() += across / 2;
  double x = start.x();
  for (int p = 0; p < pieces; ++p) {
    if (std::find(wrapped.begin(), wrapped.end(), p) != wrapped.end()) continue;
    const Eigen::Vector2d move = Eigen::Vector2d(x, start.y()) - lowest[p];
    for (int v : vertices[p]) flat.coords.row(v) += move.transpose();
    x += highest[p].x() - lowest[p].x() + across;
  }
  return flat;
}

std::vector<int> wrappedPieces(const FlatRest& flat, const MeshTopology& topology) {
  const std::vector<const MaterialWrap*> rounds = flat.wrap.rounds();
  std::vector<int> pieces(rounds.size(), -1);
  for (Eigen::Index v = 0; v < flat.coords.rows() && !rounds.empty(); ++v) {
    const Eigen::Vector2d u = flat.coords.row(v).transpose();
    if (topology.vertexComponent[v] < 0 || !flat.wrap.holds(u)) continue;
    const size_t k = std::find(rounds.begin(), rounds.end(), &flat.wrap.at(u)) - rounds.begin();
    if (pieces[k] < 0) pieces[k] = topology.vertexComponent[v];
  }
  return pieces;
}

Result<FlatRest> flatMaterialCoordinates(const ClothModel& cloth) {
  const TriangleMesh& mesh = cloth.mesh;
  auto mismatch = [&](const Eigen::MatrixX2d& u, const MaterialWrap& wrap) {
    return edgeMismatch(mesh.positions, cloth.topology.edges, u, wrap);
  };
  std::string why = cloth.materialCoordsDropped;
  if (cloth.materialCoords) {
    const Mismatch m =
        mismatch(*cloth.materialCoords, MaterialWrap::cylinder(cloth.materialPeriod));
    if (m.worst <= 0.01)
      return FlatRest{m.scale * *cloth.materialCoords,
                      MaterialWrap::cylinder(m.scale * cloth.materialPeriod)};
    why = "its texture coordinates are not a flattening (edge lengths differ by up to " +
          std::to_string(static_cast<int>(std::round(std::min(m.worst, 99.0) * 100))) + "%, " +
          m.where(cloth.topology) + ")";
  }
  // Plane fit.
  const PlaneFit fit = fitPlane(mesh.positions);
  if (fit.flatWithin(1e-3)) {
    Eigen::MatrixX2d u = (mesh.positions.rowwise() - fit.centroid) * fit.basis.leftCols<2>();
    if (mismatch(u, MaterialWrap{}).worst <= 0.01) return FlatRest{u, MaterialWrap{}, true};
  }
  // A developable mesh (a tube, a cone, a bent sheet) laid flat.
  auto unfolded = unfoldRestMesh(mesh, cloth.topology);
  std::string unfolding;
  if (unfolded) {
    const Mismatch m = mismatch(unfolded->coords, unfolded->wrap);
    if (m.worst <= 0.01) return unfolded;
    unfolding =
        "does not unfold flat: laid out triangle by triangle, its edges change length by up to " +
        std::to_string(static_cast<int>(std::round(std::min(m.worst, 9.99) * 100))) + "% (" +
        m.where(cloth.topology) + "; a developable surface, such as a tube or a cone, keeps them)";
  } else {
    unfolding = "cannot be unfolded: " + unfolded.error();
  }
  return Error{"the mesh is curved (up to " + std::to_string(fit.offPlane) +
               " m off its best-fit plane)" +
               (why.empty() ? ", has no texture coordinates" : ", " + why) + ", and " + unfolding +
               "; give a flat mesh or one whose texture coordinates flatten it"};
}

}  // namespace clothlab
