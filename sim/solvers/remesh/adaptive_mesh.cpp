#include "sim/solvers/remesh/adaptive_mesh.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <string>

#include "sim/material.h"

namespace clothlab {

namespace {

double cross2(const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  return a.x() * b.y() - a.y() * b.x();
}

// The flip test's tolerance (Bossen-Heckbert's epsilon, ARCSim's 1e-2): a nearly cocircular
// quad is left as it is, so that flips cannot cycle.
constexpr double kFlipTolerance = 1e-2;
// A flip across a fold sharper than this would move the surface; it is refused (ARCSim 0.3.1).
const double kFlipMaxDihedralCos = std::cos(40.0 * M_PI / 180.0);
// A collapse must leave every new edge this far inside the sizing (hysteresis against splitting
// it again at once).
constexpr double kCollapseMetric = 0.9;

// A symmetric 2x2 metric as a disk in the plane: centre ((M00 - M11) / 2, M01), radius tr M / 2.
// Its eigenvalues are radius -+ |centre|, so a disk that encloses another is a metric that
// dominates it.
struct Disk {
  Eigen::Vector2d centre;
  double radius;
};
Disk toDisk(const Eigen::Matrix2d& m) {
  return {{(m(0, 0) - m(1, 1)) / 2, (m(0, 1) + m(1, 0)) / 2}, m.trace() / 2};
}
Eigen::Matrix2d fromDisk(const Disk& d) {
  Eigen::Matrix2d m;
  m << d.radius + d.centre.x(), d.centre.y(), d.centre.y(), d.radius - d.centre.x();
  return m;
}
// The smallest disk enclosing two disks.
Disk enclose(const Disk& a, const Disk& b) {
  const Eigen::Vector2d between = b.centre - a.centre;
  const double distance = between.norm();
  if (distance + b.radius <= a.radius) return a;
  if (distance + a.radius <= b.radius) return b;
  const double radius = (distance + a.radius + b.radius) / 2;
  return {a.centre + between / distance * (radius - a.radius), radius};
}

// The eigenvalues clamped to [1 / maxEdge^2, 1 / minEdge^2], the smaller raised to at least
// minAspect^2 times the larger.
Eigen::Matrix2d clampSizing(const Eigen::Matrix2d& m, const RemeshSizing& sizing) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eigen(m);
  Eigen::Vector2d lambda = eigen.eigenvalues()
                               .cwiseMax(1 / (sizing.maxEdge * sizing.maxEdge))
                               .cwiseMin(1 / (sizing.minEdge * sizing.minEdge));
  const double floor = lambda.maxCoeff() * sizing.minAspect * sizing.minAspect;
  lambda = lambda.cwiseMax(floor);
  return eigen.eigenvectors() * lambda.asDiagonal() * eigen.eigenvectors().transpose();
}

Vec3 faceNormal(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const double length = n.norm();
  return length > 0 ? Vec3(n / length) : Vec3::Zero();
}

}  // namespace

void AdaptiveMesh::finish() {
  faceRests_.clear();
  faceRests_.reserve(rest_.triangles.size());
  for (const Tri& t : rest_.triangles)
    faceRests_.push_back(faceRest(materialOffset(material_, t[0], t[1], wrap_),
                                  materialOffset(material_, t[0], t[2], wrap_)));
  topology_ = buildTopology(rest_);
}

FineMesh AdaptiveMesh::fineMesh() const {
  FineMesh fine;
  fine.triangles = rest_.triangles;
  fine.flat = material_;
  if (mirrored_) fine.flat.col(1) *= -1;
  fine.rest = rest_.positions;
  fine.edges = topology_.edges;
  fine.edgeLengths.resize(static_cast<Eigen::Index>(fine.edges.size()));
  for (size_t k = 0; k < fine.edges.size(); ++k)
    fine.edgeLengths[static_cast<Eigen::Index>(k)] =
        materialOffset(material_, fine.edges[k][0], fine.edges[k][1], wrap_).norm();
  return fine;
}

Result<AdaptiveMesh> AdaptiveMesh::fromCloth(const TriangleMesh& rest, const FlatRest& flat) {
  AdaptiveMesh mesh;
  mesh.material_ = flat.coords;
  mesh.wrap_ = flat.wrap;
  mesh.preserved_ = rest.vertexCount();
  mesh.rest_ = rest;
  mesh.finish();
  double signedArea = 0;
  for (const FaceRest& face : mesh.faceRests_) signedArea += face.area;
  if (signedArea < 0) {  // the flattening winds the other way round: mirror it
    mesh.material_.col(1) *= -1;
    mesh.wrap_ = mesh.wrap_.mirrored();
    mesh.mirrored_ = true;
    mesh.finish();
  }
  for (int f = 0; f < mesh.faceCount(); ++f)
    if (!(mesh.faceRests_[f].area > 0))
      return Error{
          "triangle " + std::to_string(f) +
          " is folded over or has no area in the cloth's flat rest state, which remeshing needs"};
  return mesh;
}

std::vector<Eigen::Matrix2d> AdaptiveMesh::faceSizing(const Positions& x, const Positions& v,
                                                      const RemeshSizing& sizing) const {
  std::vector<Eigen::Matrix2d> out(faceCount());
  const auto& tris = rest_.triangles;
  std::vector<Vec3> normals(faceCount());  // each face's once, for itself and its neighbours
  for (int f = 0; f < faceCount(); ++f)
    normals[f] = faceNormal(x.row(tris[f][0]), x.row(tris[f][1]), x.row(tris[f][2]));
  for (int f = 0; f < faceCount(); ++f) {
    const Tri& t = tris[f];
    const FaceRest& face = faceRests_[f];
    const Vec3& n = normals[f];
    // Curvature: S = -1/a sum_e theta_e |e| t_e t_e^T / 2 over the face's edges.
    Eigen::Matrix2d shape = Eigen::Matrix2d::Zero();
    for (int k = 0; k < 3; ++k) {
      const int e = topology_.triEdges[f][k];
      const auto& pair = topology_.edgeTris[e];
      const int other = pair[0] == f ? pair[1] : pair[0];
      if (other < 0 || topology_.edgeTriCount[e] != 2) continue;
      const int a = t[(k + 1) % 3], b = t[(k + 2) % 3];
      const Vec3& m = normals[other];
      const Vec3 along = (x.row(b) - x.row(a)).transpose();
      if (along.norm() == 0) continue;
      const double theta = std::atan2(along.normalized().dot(n.cross(m)), n.dot(m));
      // In the frame of the face's first corner, as its rest shape (a cone's cut turns it).
      const Eigen::Vector2d edge =
          materialOffset(material_, t[0], b, wrap_) - materialOffset(material_, t[0], a, wrap_);
      const double length = edge.norm();
      if (length == 0) continue;
      const Eigen::Vector2d normal(edge.y() / length, -edge.x() / length);
      shape += 0.5 * theta * length * normal * normal.transpose();
    }
    shape /= -face.area;
    const Eigen::Matrix2d curvature =
        shape.transpose() * shape / (sizing.refineAngle * sizing.refineAngle);
    // Velocity gradient: the same map as F, of the velocities.
    const Eigen::Matrix<double, 3, 2> gradV =
        faceStrain(face, v.row(t[0]), v.row(t[1]), v.row(t[2])).F;
    const Eigen::Matrix2d velocity =
        gradV.transpose() * gradV / (sizing.refineVelocity * sizing.refineVelocity);
    // Compression: per principal direction of E = F^T F - I, max(-e, 0) / dc^2 (methods 3.8a
    // without its curvature term).
    const Eigen::Matrix<double, 3, 2> F = faceStrain(face, x.row(t[0]), x.row(t[1]), x.row(t[2])).F;
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> strain(F.transpose() * F -
                                                                Eigen::Matrix2d::Identity());
    const Eigen::Vector2d squeeze =
        (-strain.eigenvalues()).cwiseMax(0) / (sizing.refineCompression * sizing.refineCompression);
    const Eigen::Matrix2d compression =
        strain.eigenvectors() * squeeze.asDiagonal() * strain.eigenvectors().transpose();
    // The tensor maximum of the three: a metric that dominates each (their disks' enclosure).
    const Disk all = enclose(enclose(toDisk(curvature), toDisk(velocity)), toDisk(compression));
    out[f] = clampSizing(fromDisk(all), sizing);
  }
  return out;
}

// The remesher's working copy: nodes and faces that splits, flips and collapses edit in place,
// each node's faces kept up to date, compacted into an AdaptiveMesh at the end.
struct RemeshWork {
  MaterialWrap wrap;
  bool turnsDirections = false;  // some wrap is a cone's (MaterialWrap::turnsDirections)
  int preserved = 0;
  RemeshSizing sizing;
  RemeshCounts* counts = nullptr;
  std::vector<Eigen::Vector2d> u;
  std::vector<Vec3> rest, x, v;
  std::vector<Eigen::Matrix2d> M;  // node sizing
  std::vector<char> nodeAlive, boundary;
  std::vector<Tri> faces;
  std::vector<char> faceAlive;
  std::vector<std::vector<int>> nodeFaces;
  int aliveNodes = 0;

  RemeshWork(const AdaptiveMesh& mesh, const Positions& xs, const Positions& vs,
             const std::vector<Eigen::Matrix2d>& faceM, const RemeshSizing& sizing_,
             RemeshCounts& counts_)
      : wrap(mesh.wrap_),
        turnsDirections(mesh.wrap_.turnsDirections()),
        preserved(mesh.preserved_),
        sizing(sizing_),
        counts(&counts_) {
    const int n = mesh.nodeCount();
    for (int i = 0; i < n; ++i) {
      u.push_back(mesh.material_.row(i).transpose());
      rest.push_back(mesh.rest_.positions.row(i).transpose());
      x.push_back(xs.row(i).transpose());
      v.push_back(vs.row(i).transpose());
    }
    nodeAlive.assign(n, 1);
    aliveNodes = n;
    boundary.assign(n, 0);
    for (int e : mesh.topology_.boundaryEdges)
      boundary[mesh.topology_.edges[e][0]] = boundary[mesh.topology_.edges[e][1]] = 1;
    faces = mesh.rest_.triangles;
    faceAlive.assign(faces.size(), 1);
    nodeFaces.assign(n, {});
    for (int f = 0; f < static_cast<int>(faces.size()); ++f)
      for (int k : faces[f]) nodeFaces[k].push_back(f);
    // Node sizing: the area-weighted mean of its faces', each read in the node's frame (a
    // face's sizing is in the frame of its first corner).
    M.assign(n, Eigen::Matrix2d::Zero());
    std::vector<double> weight(n, 0.0);
    for (int f = 0; f < static_cast<int>(faces.size()); ++f)
      for (int k : faces[f]) {
        const Eigen::Matrix2d R = turnFrom(k, faces[f][0]);
        M[k] += mesh.faceRests_[f].area * (R * faceM[f] * R.transpose());
        weight[k] += mesh.faceRests_[f].area;
      }
    for (int i = 0; i < n; ++i)
      if (weight[i] > 0) M[i] /= weight[i];
  }

  Eigen::Vector2d offset(int i, int j) const { return wrap.offset(u[i], u[j]); }
  // Directions at node j as read at node i (a cone's cut turns them; wrap.turn).
  Eigen::Matrix2d turnFrom(int i, int j) const { return wrap.turn(wrap.turns(u[i], u[j]), u[i]); }
  // Node j's sizing in node i's frame.
  Eigen::Matrix2d sizingSeenFrom(int i, int j) const {
    if (!turnsDirections) return M[j];  // nothing turns: the common case, kept cheap
    const Eigen::Matrix2d R = turnFrom(i, j);
    return R * M[j] * R.transpose();
  }
  double metric(int i, int j) const {
    const Eigen::Vector2d d = offset(i, j);
    return std::sqrt(0.5 * (d.dot(M[i] * d) + d.dot(sizingSeenFrom(i, j) * d)));
  }
  static bool contains(const Tri& t, int node) {
    return t[0] == node || t[1] == node || t[2] == node;
  }
  std::vector<int> edgeFaces(int a, int b) const {
    std::vector<int> out;
    for (int f : nodeFaces[a])
      if (contains(faces[f], b)) out.push_back(f);
    return out;
  }
  // Face f's corners rotated so that they read (s, t, w) with s -> t the edge {a, b}.
  static Tri fromEdge(const Tri& t, int a, int b) {
    for (int k = 0; k < 3; ++k) {
      const int s = t[k], e = t[(k + 1) % 3];
      if ((s == a && e == b) || (s == b && e == a)) return {s, e, t[(k + 2) % 3]};
    }
    return {-1, -1, -1};
  }
  std::vector<int> neighbours(int i) const {
    std::vector<int> out;
    for (int f : nodeFaces[i])
      for (int k : faces[f])
        if (k != i) out.push_back(k);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // Whether edge {a, b} would keep its material length in the world (maxNewEdgeStrain).
  bool keepsLength(int a, int b) const {
    const double material = offset(a, b).norm();
    return std::abs((x[b] - x[a]).norm() - material) <= sizing.maxNewEdgeStrain * material;
  }
  // How far face t lies beyond the strain limits in the world (faceLimitViolation).
  double violation(const Tri& t) const {
    const FaceRest face = faceRest(offset(t[0], t[1]), offset(t[0], t[2]));
    return faceLimitViolation(faceStrain(face, x[t[0]], x[t[1]], x[t[2]]), sizing.limits);
  }
  double materialArea(int a, int b, int c) const {
    return 0.5 * cross2(offset(a, b), offset(a, c));
  }
  void removeFace(int node, int f) {
    auto& list = nodeFaces[node];
    list.erase(std::remove(list.begin(), list.end(), f), list.end());
  }
  double minArea() const { return 1e-6 * sizing.minEdge * sizing.minEdge; }

  // Splits edge {a, b} at its material midpoint; returns the faces around the new node.
  std::vector<int> split(int a, int b) {
    const std::vector<int> around = edgeFaces(a, b);
    const int m = static_cast<int>(u.size());
    u.push_back(u[a] + offset(a, b) / 2);
    rest.push_back((rest[a] + rest[b]) / 2);
    x.push_back((x[a] + x[b]) / 2);
    v.push_back((v[a] + v[b]) / 2);
    M.push_back((M[a] + sizingSeenFrom(a, b)) / 2);  // the midpoint lies in a's frame
    nodeAlive.push_back(1);
    boundary.push_back(around.size() == 1);
    nodeFaces.emplace_back();
    ++aliveNodes;
    std::vector<int> touched;
    for (int f : around) {
      const Tri t = fromEdge(faces[f], a, b);
      const int g = static_cast<int>(faces.size());
      faces[f] = {t[0], m, t[2]};
      faces.push_back({m, t[1], t[2]});
      faceAlive.push_back(1);
      std::replace(nodeFaces[t[1]].begin(), nodeFaces[t[1]].end(), f, g);
      nodeFaces[t[2]].push_back(g);
      nodeFaces[m].push_back(f);
      nodeFaces[m].push_back(g);
      touched.push_back(f);
      touched.push_back(g);
    }
    ++counts->splits;
    return touched;
  }

  // Flips edge {a, b} when the anisotropic Delaunay test asks for it; true if flipped.
  bool flipIfBetter(int a, int b) {
    const std::vector<int> around = edgeFaces(a, b);
    if (around.size() != 2) return false;
    Tri t0 = fromEdge(faces[around[0]], a, b);
    int f0 = around[0], f1 = around[1];
    if (t0[0] != a) {  // f0 is the face reading a -> b
      std::swap(f0, f1);
      t0 = fromEdge(faces[f0], a, b);
      if (t0[0] != a) return false;  // inconsistent winding: leave it
    }
    const Tri t1 = fromEdge(faces[f1], a, b);
    if (t1[0] != b) return false;
    const int xa = a, z = b, w = t0[2], y = t1[2];
    if (w == y || !edgeFaces(w, y).empty()) return false;
    const Eigen::Vector2d Z = offset(xa, z), W = offset(xa, w), Y = offset(xa, y),
                          X = Eigen::Vector2d::Zero();
    const Eigen::Matrix2d metricMean =
        (M[xa] + sizingSeenFrom(xa, z) + sizingSeenFrom(xa, w) + sizingSeenFrom(xa, y)) / 4;
    const double crossY = cross2(Z - Y, X - Y), crossW = cross2(X - W, Z - W);
    const double test =
        crossY * (X - W).dot(metricMean * (Z - W)) + (Z - Y).dot(metricMean * (X - Y)) * crossW;
    if (!(test < -kFlipTolerance * (crossY + crossW))) return false;
    if (materialArea(xa, y, w) <= minArea() || materialArea(z, w, y) <= minArea()) return false;
    const Vec3 n0 = faceNormal(x[xa], x[z], x[w]), n1 = faceNormal(x[z], x[xa], x[y]);
    if (n0.dot(n1) < kFlipMaxDihedralCos || !keepsLength(w, y)) return false;
    const double before =
        std::max({sizing.maxNewFaceViolation, violation(faces[f0]), violation(faces[f1])});
    if (violation({xa, y, w}) > before || violation({z, w, y}) > before) return false;
    faces[f0] = {xa, y, w};
    faces[f1] = {z, w, y};
    removeFace(xa, f1);
    removeFace(z, f0);
    nodeFaces[w].push_back(f1);
    nodeFaces[y].push_back(f0);
    ++counts->flips;
    return true;
  }

  // Flips edges of `around` (and of the faces each flip makes) until none asks for it.
  void flipAround(std::vector<int> around) {
    std::vector<std::pair<int, int>> queue;
    for (int f : around)
      if (faceAlive[f])
        for (int k = 0; k < 3; ++k) queue.emplace_back(faces[f][k], faces[f][(k + 1) % 3]);
    const size_t cap = 20 * queue.size() + 100;
    for (size_t q = 0; q < queue.size() && q < cap; ++q) {
      const auto [a, b] = queue[q];
      const std::vector<int> faceIds = edgeFaces(a, b);
      if (faceIds.size() != 2 || !flipIfBetter(a, b)) continue;
      for (int f : faceIds)
        for (int k = 0; k < 3; ++k) queue.emplace_back(faces[f][k], faces[f][(k + 1) % 3]);
    }
  }

  void flipAll() {
    std::vector<int> all;
    for (int f = 0; f < static_cast<int>(faces.size()); ++f)
      if (faceAlive[f]) all.push_back(f);
    flipAround(all);
  }

  void splitAll() {
    for (int round = 0; round < 64; ++round) {
      std::vector<std::pair<double, std::pair<int, int>>> bad;
      for (int f = 0; f < static_cast<int>(faces.size()); ++f) {
        if (!faceAlive[f]) continue;
        for (int k = 0; k < 3; ++k) {
          const int a = faces[f][k], b = faces[f][(k + 1) % 3];
          // Each interior edge once (from the face reading a < b), boundary edges from their face.
          if (a > b && edgeFaces(a, b).size() == 2) continue;
          const double s = metric(a, b);
          if (s > 1) bad.push_back({s, {a, b}});
        }
      }
      if (bad.empty()) return;
      std::sort(bad.begin(), bad.end(),
                [](const auto& p, const auto& q) { return p.first > q.first; });
      for (const auto& [s, edge] : bad) {
        if (aliveNodes >= sizing.maxNodes) {
          counts->capped = true;
          return;
        }
        if (edgeFaces(edge.first, edge.second).empty()) continue;  // split or flipped away
        flipAround(split(edge.first, edge.second));
      }
    }
  }

  // Removes node i into its neighbour j if that keeps the mesh valid and within the sizing.
  bool tryCollapse(int i, int j) {
    const std::vector<int> shared = edgeFaces(i, j);
    if (shared.empty()) return false;
    if (boundary[i] && shared.size() != 1) return false;  // a boundary node only along the boundary
    // Link condition: the common neighbours are exactly the edge's opposite corners.
    std::vector<int> opposite;
    for (int f : shared) opposite.push_back(fromEdge(faces[f], i, j)[2]);
    std::sort(opposite.begin(), opposite.end());
    const std::vector<int> ni = neighbours(i), nj = neighbours(j);
    std::vector<int> common;
    std::set_intersection(ni.begin(), ni.end(), nj.begin(), nj.end(), std::back_inserter(common));
    if (common != opposite) return false;
    for (int f : nodeFaces[i]) {
      const Tri& t = faces[f];
      if (contains(t, j)) continue;
      Tri after = t;
      for (int& k : after)
        if (k == i) k = j;
      const double area = materialArea(after[0], after[1], after[2]);
      if (!(area > minArea())) return false;
      const double perimeter = offset(after[0], after[1]).norm() +
                               offset(after[1], after[2]).norm() +
                               offset(after[2], after[0]).norm();
      if (12 * std::sqrt(3.0) * area / (perimeter * perimeter) < sizing.minAspect / 4) return false;
      if (faceNormal(x[t[0]], x[t[1]], x[t[2]])
              .dot(faceNormal(x[after[0]], x[after[1]], x[after[2]])) <= 0)
        return false;
      if (violation(after) > std::max(sizing.maxNewFaceViolation, violation(t))) return false;
      for (int k : after)
        if (k != j && metric(j, k) > kCollapseMetric) return false;
    }
    for (int f : shared) {
      faceAlive[f] = 0;
      for (int k : faces[f]) removeFace(k, f);
    }
    for (int f : nodeFaces[i]) {
      for (int& k : faces[f])
        if (k == i) k = j;
      nodeFaces[j].push_back(f);
    }
    nodeFaces[i].clear();
    nodeAlive[i] = 0;
    --aliveNodes;
    ++counts->collapses;
    return true;
  }

  void collapseAll() {
    for (int round = 0; round < 64; ++round) {
      bool any = false;
      for (int i = preserved; i < static_cast<int>(u.size()); ++i) {
        if (!nodeAlive[i]) continue;
        std::vector<int> candidates = neighbours(i);
        std::sort(candidates.begin(), candidates.end(),
                  [&](int p, int q) { return metric(i, p) < metric(i, q); });
        for (int j : candidates)
          if (tryCollapse(i, j)) {
            flipAround(nodeFaces[j]);
            any = true;
            break;
          }
      }
      if (!any) return;
    }
  }

  AdaptiveMesh build(const AdaptiveMesh& from, Positions& xs, Positions& vs) const {
    std::vector<int> index(u.size(), -1);
    int count = 0;
    for (size_t i = 0; i < u.size(); ++i)
      if (nodeAlive[i]) index[i] = count++;
    AdaptiveMesh out;
    out.wrap_ = from.wrap_;
    out.preserved_ = preserved;
    out.material_.resize(count, 2);
    out.rest_.positions.resize(count, 3);
    xs.resize(count, 3);
    vs.resize(count, 3);
    for (size_t i = 0; i < u.size(); ++i) {
      if (index[i] < 0) continue;
      out.material_.row(index[i]) = u[i].transpose();
      out.rest_.positions.row(index[i]) = rest[i].transpose();
      xs.row(index[i]) = x[i].transpose();
      vs.row(index[i]) = v[i].transpose();
    }
    for (size_t f = 0; f < faces.size(); ++f)
      if (faceAlive[f])
        out.rest_.triangles.push_back({index[faces[f][0]], index[faces[f][1]], index[faces[f][2]]});
    out.finish();
    return out;
  }
};

AdaptiveMesh AdaptiveMesh::remeshed(Positions& x, Positions& v, const RemeshSizing& sizing,
                                    RemeshCounts& counts) const {
  RemeshWork work(*this, x, v, faceSizing(x, v, sizing), sizing, counts);
  work.flipAll();
  work.splitAll();
  work.collapseAll();
  return work.build(*this, x, v);
}

}  // namespace clothlab
