#include "sim/mesh_shape.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace clothlab {

namespace {
constexpr int kLeafSize = 4;
}  // namespace

MeshShape::MeshShape(TriangleMesh mesh)
    : mesh_(std::move(mesh)),
      topology_(std::make_shared<const MeshTopology>(buildTopology(mesh_))) {
  const int triangles = mesh_.triangleCount();
  closed_ =
      triangles > 0 && std::all_of(topology_->edgeTriCount.begin(), topology_->edgeTriCount.end(),
                                   [](int c) { return c == 2; });
  findNormalsAndFeatures();
  order_.resize(triangles);
  std::iota(order_.begin(), order_.end(), 0);
  std::vector<Vec3> centroids(triangles);
  for (int t = 0; t < triangles; ++t) {
    const Tri& f = mesh_.triangles[t];
    centroids[t] =
        (mesh_.positions.row(f[0]) + mesh_.positions.row(f[1]) + mesh_.positions.row(f[2]))
            .transpose() /
        3;
  }
  nodes_.reserve(2 * triangles / kLeafSize + 2);
  if (triangles > 0) build(0, triangles, centroids);
}

MeshShape MeshShape::movedTo(const Positions& positions) const {
  MeshShape out = *this;
  out.mesh_.positions = positions;
  out.findNormalsAndFeatures();
  if (!out.nodes_.empty()) out.refit(0);
  return out;
}

void MeshShape::refit(int node) {
  Node& n = nodes_[node];
  n.box.setEmpty();
  if (n.left < 0) {
    for (int i = n.first; i < n.first + n.count; ++i)
      for (int k : mesh_.triangles[order_[i]]) n.box.extend(Vec3(mesh_.positions.row(k)));
    return;
  }
  refit(n.left);
  refit(n.right);
  n.box = nodes_[n.left].box.merged(nodes_[n.right].box);
}

void MeshShape::findNormalsAndFeatures() {
  const int triangles = mesh_.triangleCount();
  const MeshTopology& topology = *topology_;
  lo_ = mesh_.positions.colwise().minCoeff();
  hi_ = mesh_.positions.colwise().maxCoeff();

  // Pseudo-normals: faces; edges as the sum of their (up to two) faces; vertices weighted by the
  // incident angles. Every corner's u × v is the face's own n, so a corner's angle is
  // atan2(|n|, u · v), and the third is what the first two leave of π.
  faceNormals_.resize(triangles);
  vertexNormals_.assign(mesh_.vertexCount(), Vec3::Zero());
  for (int t = 0; t < triangles; ++t) {
    const Tri& f = mesh_.triangles[t];
    const Vec3 a = mesh_.positions.row(f[0]), b = mesh_.positions.row(f[1]), c = mesh_.positions.row(f[2]);
    const Vec3 n = (b - a).cross(c - a);
    const double twiceArea = n.norm();
    faceNormals_[t] = twiceArea > 0 ? Vec3(n / twiceArea) : Vec3(0, 0, 1);
    if (!(twiceArea > 0)) continue;  // no normal of its own to lend its corners
    const double atA = std::atan2(twiceArea, (b - a).dot(c - a));
    const double atB = std::atan2(twiceArea, (c - b).dot(a - b));
    vertexNormals_[f[0]] += atA * faceNormals_[t];
    vertexNormals_[f[1]] += atB * faceNormals_[t];
    vertexNormals_[f[2]] += std::max(std::numbers::pi - atA - atB, 0.0) * faceNormals_[t];
  }
  for (auto& n : vertexNormals_) n = n.norm() > 0 ? Vec3(n.normalized()) : Vec3(0, 0, 1);
  // A closed mesh whose triangles wind inward (a negative enclosed volume) would turn every
  // pseudo-normal inward and hold cloth inside it: its normals are turned out.
  if (closed_) {
    double volume = 0;
    for (const Tri& f : mesh_.triangles)
      volume += Vec3(mesh_.positions.row(f[0])).dot(Vec3(mesh_.positions.row(f[1])).cross(Vec3(mesh_.positions.row(f[2]))));
    if (volume < 0) {
      for (auto& n : faceNormals_) n = -n;
      for (auto& n : vertexNormals_) n = -n;
    }
  }
  // Each edge's normal once, then handed to its triangles.
  std::vector<Vec3> edgeNormal(topology.edges.size());
  for (size_t e = 0; e < topology.edges.size(); ++e) {
    Vec3 n = Vec3::Zero();
    for (int s : topology.edgeTris[e])
      if (s >= 0) n += faceNormals_[s];
    const double length = n.norm();
    edgeNormal[e] = length > 0 ? Vec3(n / length) : Vec3::Zero();
  }
  edgeNormals_.resize(triangles);
  for (int t = 0; t < triangles; ++t)
    for (int k = 0; k < 3; ++k) {
      const Vec3& n = edgeNormal[topology.triEdges[t][k]];
      edgeNormals_[t][k] = n.isZero(0) ? faceNormals_[t] : n;
    }
  const double sharpCos = std::cos(kSharpAngle), halfSharpCos = std::cos(kSharpAngle / 2);
  sharpEdges_.assign(topology.edges.size(), 0);
  for (size_t e = 0; e < topology.edges.size(); ++e) {
    const auto& faces = topology.edgeTris[e];
    sharpEdges_[e] = topology.edgeTriCount[e] != 2 ||
                     faceNormals_[faces[0]].dot(faceNormals_[faces[1]]) < sharpCos;
  }
  sharpVertices_.assign(mesh_.vertexCount(), 0);
  for (int t = 0; t < triangles; ++t)
    for (int v : mesh_.triangles[t])
      if (faceNormals_[t].dot(vertexNormals_[v]) < halfSharpCos) sharpVertices_[v] = 1;
  featureVertices_ = sharpVertices_;
  for (size_t e = 0; e < topology.edges.size(); ++e)
    if (sharpEdges_[e])
      featureVertices_[topology.edges[e][0]] = featureVertices_[topology.edges[e][1]] = 1;
  hasSharp_ =
      std::find(featureVertices_.begin(), featureVertices_.end(), 1) != featureVertices_.end();
}

int MeshShape::build(int first, int count, std::vector<Vec3>& centroids) {
  const int index = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  Eigen::AlignedBox3d box;
  for (int i = first; i < first + count; ++i)
    for (int k : mesh_.triangles[order_[i]]) box.extend(Vec3(mesh_.positions.row(k)));
  nodes_[index].box = box;
  if (count <= kLeafSize) {
    nodes_[index].first = first;
    nodes_[index].count = count;
    return index;
  }
  // Median split along the longest axis of the centroids' box.
  Eigen::AlignedBox3d centres;
  for (int i = first; i < first + count; ++i) centres.extend(centroids[order_[i]]);
  int axis = 0;
  centres.sizes().maxCoeff(&axis);
  const int middle = first + count / 2;
  std::nth_element(order_.begin() + first, order_.begin() + middle, order_.begin() + first + count,
                   [&](int a, int b) { return centroids[a][axis] < centroids[b][axis]; });
  const int left = build(first, middle - first, centroids);
  const int right = build(middle, first + count - middle, centroids);
  nodes_[index].left = left;
  nodes_[index].right = right;
  return index;
}

void MeshShape::consider(int t, const Vec3& p, Hit& best) const {
  const Vec3 b = closestBarycentric(mesh_, t, p);
  const Tri& f = mesh_.triangles[t];
  const Vec3 q = b[0] * mesh_.positions.row(f[0]) + b[1] * mesh_.positions.row(f[1]) + b[2] * mesh_.positions.row(f[2]);
  const double d = (p - q).norm();
  if (d >= best.distance) return;
  best.distance = d;
  best.point = q;
  best.triangle = t;
  // The feature the point lies on: a vertex (one coordinate 1), an edge (one coordinate 0), or
  // the face.
  constexpr double kOn = 1e-9;
  int zeros = 0, zero = -1, one = -1;
  for (int k = 0; k < 3; ++k) {
    if (b[k] <= kOn) ++zeros, zero = k;
    if (b[k] >= 1 - kOn) one = k;
  }
  if (one >= 0) best.normal = vertexNormals_[f[one]];
  else if (zeros == 1) best.normal = edgeNormals_[t][zero];
  else best.normal = faceNormals_[t];
}

void MeshShape::search(int index, const Vec3& p, Hit& best) const {
  const Node& node = nodes_[index];
  if (node.box.squaredExteriorDistance(p) >= best.distance * best.distance) return;
  if (node.left < 0) {
    for (int i = node.first; i < node.first + node.count; ++i) consider(order_[i], p, best);
    return;
  }
  // Nearer child first.
  const double dl = nodes_[node.left].box.squaredExteriorDistance(p);
  const double dr = nodes_[node.right].box.squaredExteriorDistance(p);
  if (dl <= dr) {
    search(node.left, p, best);
    search(node.right, p, best);
  } else {
    search(node.right, p, best);
    search(node.left, p, best);
  }
}

void MeshShape::gather(int index, const Vec3& p, double distance, std::vector<Near>& out) const {
  const Node& node = nodes_[index];
  if (node.box.squaredExteriorDistance(p) >= distance * distance) return;
  if (node.left < 0) {
    for (int i = node.first; i < node.first + node.count; ++i) {
      Hit near;
      near.distance = distance;
      consider(order_[i], p, near);
      if (near.triangle >= 0) out.push_back({near.distance, near.triangle});
    }
    return;
  }
  // In the order search() visits them, so that closestAmong() breaks ties as closest() does.
  const double dl = nodes_[node.left].box.squaredExteriorDistance(p);
  const double dr = nodes_[node.right].box.squaredExteriorDistance(p);
  gather(dl <= dr ? node.left : node.right, p, distance, out);
  gather(dl <= dr ? node.right : node.left, p, distance, out);
}

bool MeshShape::countCrossings(int index, const Vec3& p, const Vec3& d, const Vec3& inverse, double length,
                               int& crossings) const {
  const Node& node = nodes_[index];
  // Slab test: the ray's parameter interval inside the node's box.
  double enter = 0, leave = length;
  for (int k = 0; k < 3; ++k) {
    double t0 = (node.box.min()[k] - p[k]) * inverse[k], t1 = (node.box.max()[k] - p[k]) * inverse[k];
    if (t0 > t1) std::swap(t0, t1);
    enter = std::max(enter, t0);
    leave = std::min(leave, t1);
  }
  if (enter > leave) return true;
  if (node.left >= 0)
    return countCrossings(node.left, p, d, inverse, length, crossings) &&
           countCrossings(node.right, p, d, inverse, length, crossings);
  // Möller-Trumbore, with a margin around the triangle's boundary where a crossing is ambiguous.
  constexpr double kMargin = 1e-9;
  for (int i = node.first; i < node.first + node.count; ++i) {
    const Tri& f = mesh_.triangles[order_[i]];
    const Vec3 a = mesh_.positions.row(f[0]);
    const Vec3 e1 = Vec3(mesh_.positions.row(f[1])) - a, e2 = Vec3(mesh_.positions.row(f[2])) - a;
    const Vec3 q = d.cross(e2);
    const double det = e1.dot(q);
    if (std::abs(det) <= 1e-14 * e1.norm() * e2.norm()) continue;  // parallel: a generic ray misses
    const Vec3 s = p - a;
    const double u = s.dot(q) / det;
    const Vec3 r = s.cross(e1);
    const double v = d.dot(r) / det;
    const double t = e2.dot(r) / det;
    if (u < -kMargin || v < -kMargin || u + v > 1 + kMargin) continue;
    const double scale = std::max(e1.norm(), e2.norm());
    if (t < -kMargin * scale || t > length + kMargin * scale) continue;
    if (u < kMargin || v < kMargin || u + v > 1 - kMargin || t < kMargin * scale || t > length - kMargin * scale)
      return false;
    ++crossings;
  }
  return true;
}

bool MeshShape::inside(const Vec3& p) const {
  if (nodes_.empty() || !nodes_[0].box.contains(p)) return false;
  // Directions far from the axes and from each other, so that a grid-aligned mesh's edges are
  // seldom grazed by all three.
  static const Vec3 kDirections[] = {Vec3(0.3141, 0.8660, 0.3887).normalized(),
                                     Vec3(-0.7071, 0.1234, 0.6963).normalized(),
                                     Vec3(0.2113, -0.5774, -0.7887).normalized()};
  // First out through the nearest face of the box (the shortest way through the hierarchy), a
  // little off the axis so as not to run along a grid-aligned mesh's faces.
  const Eigen::AlignedBox3d& box = nodes_[0].box;
  int axis = 0;
  double nearest = 1e300, sign = 1;
  for (int k = 0; k < 3; ++k)
    for (double side : {-1.0, 1.0}) {
      const double distance = side > 0 ? box.max()[k] - p[k] : p[k] - box.min()[k];
      if (distance < nearest) nearest = distance, axis = k, sign = side;
    }
  Vec3 out(0.0123, 0.0211, 0.0317);
  out[axis] = sign;
  const Vec3 first = out.normalized();
  for (const Vec3* d : {&first, &kDirections[0], &kDirections[1], &kDirections[2]}) {
    int crossings = 0;
    if (countCrossings(0, p, *d, d->cwiseInverse(), 1e300, crossings)) return crossings % 2 == 1;
  }
  const Hit hit = closest(p);
  return (p - hit.point).dot(hit.normal) < 0;
}

bool MeshShape::crosses(const Vec3& a, const Vec3& b) const {
  const double length = (b - a).norm();
  if (nodes_.empty() || !(length > 0)) return false;
  const Vec3 d = (b - a) / length;
  int crossings = 0;
  return !countCrossings(0, a, d, d.cwiseInverse(), length, crossings) || crossings > 0;
}

MeshShape::Hit MeshShape::closest(const Vec3& p, double maxDistance) const {
  Hit best;
  best.distance = maxDistance;
  if (!nodes_.empty()) search(0, p, best);
  if (best.triangle < 0) best.distance = 1e300;
  return best;
}

void MeshShape::trianglesWithin(const Vec3& p, double distance, std::vector<Near>& out) const {
  if (!nodes_.empty()) gather(0, p, distance, out);
}

MeshShape::Hit MeshShape::closestAmong(const Vec3& p, std::span<const Near> triangles, double moved,
                                       double maxDistance) const {
  Hit best;
  best.distance = maxDistance;
  for (const Near& near : triangles) {
    // A distance changes by at most the motion: a triangle that was farther than the best so far
    // by more than that (and than rounding) cannot be nearer now.
    if (near.distance - moved > best.distance + 1e-12) continue;
    consider(near.triangle, p, best);
  }
  if (best.triangle < 0) best.distance = 1e300;
  return best;
}

}  // namespace clothlab
