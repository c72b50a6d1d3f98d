#include "sim/mesh.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace clothlab {

double triangleArea(const TriangleMesh& mesh, int t) {
  const Tri& f = mesh.triangles[t];
  const Vec3 a = mesh.positions.row(f[0]), b = mesh.positions.row(f[1]),
             c = mesh.positions.row(f[2]);
  return 0.5 * (b - a).cross(c - a).norm();
}

bool isDegenerate(const TriangleMesh& mesh, int t, double relTol) {
  const Tri& f = mesh.triangles[t];
  if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2]) return true;
  const Vec3 a = mesh.positions.row(f[0]), b = mesh.positions.row(f[1]),
             c = mesh.positions.row(f[2]);
  const double longest =
      std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
  return !(triangleArea(mesh, t) > relTol * longest);
}

double boxDiagonal(const Positions& points) {
  if (points.rows() == 0) return 0.0;
  return (points.colwise().maxCoeff() - points.colwise().minCoeff()).norm();
}

PlaneFit fitPlane(const Positions& points) {
  PlaneFit fit;
  fit.centroid = points.colwise().mean();
  const Eigen::MatrixX3d centred = points.rowwise() - fit.centroid;
  fit.basis = Eigen::JacobiSVD<Eigen::MatrixX3d>(centred, Eigen::ComputeFullV).matrixV();
  fit.offPlane = (centred * fit.basis.col(2)).cwiseAbs().maxCoeff();
  fit.size = boxDiagonal(points);
  return fit;
}

MeshTopology buildTopology(const TriangleMesh& mesh) {
  MeshTopology topo;
  const int vertexCount = mesh.vertexCount();
  const int triangleCount = mesh.triangleCount();

  // Unique edges: sort (min, max, triangle, corner) records so equal edges are adjacent.
  struct EdgeRecord {
    int v0, v1, tri, corner;
  };
  std::vector<EdgeRecord> records;
  records.reserve(3 * triangleCount);
  for (int t = 0; t < triangleCount; ++t) {
    const Tri& f = mesh.triangles[t];
    for (int k = 0; k < 3; ++k) {
      int a = f[(k + 1) % 3], b = f[(k + 2) % 3];
      if (a == b) continue;  // degenerate corner: no edge
      records.push_back({std::min(a, b), std::max(a, b), t, k});
    }
  }
  std::sort(records.begin(), records.end(), [](const EdgeRecord& x, const EdgeRecord& y) {
    return x.v0 != y.v0 ? x.v0 < y.v0 : x.v1 != y.v1 ? x.v1 < y.v1 : x.tri < y.tri;
  });
  topo.triEdges.assign(triangleCount, {-1, -1, -1});
  for (size_t i = 0; i < records.size();) {
    size_t j = i;
    const int e = topo.edgeCount();
    topo.edges.push_back({records[i].v0, records[i].v1});
    std::array<int, 2> adjacent{-1, -1};
    int count = 0;
    while (j < records.size() && records[j].v0 == records[i].v0 && records[j].v1 == records[i].v1) {
      topo.triEdges[records[j].tri][records[j].corner] = e;
      if (count < 2) adjacent[count] = records[j].tri;
      ++count;
      ++j;
    }
    topo.edgeTris.push_back(adjacent);
    topo.edgeTriCount.push_back(count);
    if (count == 1) topo.boundaryEdges.push_back(e);
    if (count > 2) ++topo.nonManifoldEdgeCount;
    i = j;
  }

  for (int t = 0; t < triangleCount; ++t)
    if (isDegenerate(mesh, t)) ++topo.degenerateTriangleCount;

  // One-rings and incident triangles.
  topo.vertexNeighbours.assign(vertexCount, {});
  topo.vertexTris.assign(vertexCount, {});
  for (const auto& e : topo.edges) {
    topo.vertexNeighbours[e[0]].push_back(e[1]);
    topo.vertexNeighbours[e[1]].push_back(e[0]);
  }
  for (auto& n : topo.vertexNeighbours) std::sort(n.begin(), n.end());
  for (int t = 0; t < triangleCount; ++t)
    for (int k = 0; k < 3; ++k) {
      auto& list = topo.vertexTris[mesh.triangles[t][k]];
      if (list.empty() || list.back() != t) list.push_back(t);
    }

  // Components over triangles connected through shared edges (union-find).
  std::vector<int> parent(triangleCount);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i + 1 < records.size(); ++i)
    if (records[i].v0 == records[i + 1].v0 && records[i].v1 == records[i + 1].v1)
      parent[find(records[i].tri)] = find(records[i + 1].tri);
  topo.triComponent.assign(triangleCount, -1);
  std::map<int, int> rootToComponent;
  for (int t = 0; t < triangleCount; ++t) {
    auto [it, inserted] = rootToComponent.emplace(find(t), topo.componentCount);
    if (inserted) ++topo.componentCount;
    topo.triComponent[t] = it->second;
  }
  topo.vertexComponent.assign(vertexCount, -1);
  for (int t = 0; t < triangleCount; ++t)
    for (int v : mesh.triangles[t])
      if (topo.vertexComponent[v] < 0) topo.vertexComponent[v] = topo.triComponent[t];

  // Boundary loops: walk boundary edges vertex to vertex. Non-manifold boundary vertices (more
  // than two boundary edges) still terminate: each boundary edge is used once.
  std::vector<std::vector<int>> boundaryAtVertex(vertexCount);
  for (int e : topo.boundaryEdges) {
    boundaryAtVertex[topo.edges[e][0]].push_back(e);
    boundaryAtVertex[topo.edges[e][1]].push_back(e);
  }
  std::vector<char> used(topo.edgeCount(), 0);
  for (int start : topo.boundaryEdges) {
    if (used[start]) continue;
    std::vector<int> loop;
    int e = start;
    int v = topo.edges[e][0];
    while (e >= 0 && !used[e]) {
      used[e] = 1;
      loop.push_back(v);
      v = topo.edges[e][0] == v ? topo.edges[e][1] : topo.edges[e][0];
      int next = -1;
      for (int candidate : boundaryAtVertex[v])
        if (!used[candidate]) {
          next = candidate;
          break;
        }
      e = next;
    }
    topo.boundaryLoops.push_back(std::move(loop));
  }
  return topo;
}

Eigen::VectorXd edgeLengths(const Positions& positions, const std::vector<std::array<int, 2>>& edges) {
  Eigen::VectorXd lengths(static_cast<Eigen::Index>(edges.size()));
  for (size_t e = 0; e < edges.size(); ++e)
    lengths[static_cast<Eigen::Index>(e)] = (positions.row(edges[e][0]) - positions.row(edges[e][1])).norm();
  return lengths;
}

double meanEdgeLength(const Positions& positions, const std::vector<std::array<int, 2>>& edges) {
  return edges.empty() ? 0.0 : edgeLengths(positions, edges).mean();
}

Eigen::VectorXd vertexAreaShares(const TriangleMesh& mesh) {
  Eigen::VectorXd share = Eigen::VectorXd::Zero(mesh.vertexCount());
  for (int t = 0; t < mesh.triangleCount(); ++t)
    for (int k = 0; k < 3; ++k) share[mesh.triangles[t][k]] += triangleArea(mesh, t) / 3;
  return share;
}

int nearestVertex(const Positions& positions, const Vec3& point) {
  Eigen::Index best = 0;
  (positions.rowwise() - point.transpose()).rowwise().squaredNorm().minCoeff(&best);
  return static_cast<int>(best);
}

Vec3 closestBarycentric(const TriangleMesh& mesh, int t, const Vec3& p) {
  const Tri& f = mesh.triangles[t];
  return closestBarycentric(mesh.positions.row(f[0]), mesh.positions.row(f[1]), mesh.positions.row(f[2]), p);
}

Vec3 closestBarycentric(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& p) {
  // Regions of the triangle (vertex, edge, face) in turn (Ericson, Real-Time Collision Detection 5.1.5).
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return {1, 0, 0};
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return {0, 1, 0};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const double v = d1 / (d1 - d3);
    return {1 - v, v, 0};
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return {0, 0, 1};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const double w = d2 / (d2 - d6);
    return {1 - w, 0, w};
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return {0, 1 - w, w};
  }
  const double denominator = va + vb + vc;
  if (!(std::abs(denominator) > 0)) return {1.0 / 3, 1.0 / 3, 1.0 / 3};  // degenerate triangle
  const double v = vb / denominator, w = vc / denominator;
  return {1 - v - w, v, w};
}

std::pair<int, Vec3> closestSurfacePoint(const TriangleMesh& mesh, const Vec3& p) {
  std::pair<int, Vec3> best{0, Vec3(1.0 / 3, 1.0 / 3, 1.0 / 3)};
  double bestDistance = std::numeric_limits<double>::max();
  for (int t = 0; t < mesh.triangleCount(); ++t) {
    const Vec3 b = closestBarycentric(mesh, t, p);
    const Tri& f = mesh.triangles[t];
    const Vec3 q = b[0] * mesh.positions.row(f[0]) + b[1] * mesh.positions.row(f[1]) + b[2] * mesh.positions.row(f[2]);
    const double d = (q - p).squaredNorm();
    if (d < bestDistance) {
      bestDistance = d;
      best = {t, b};
    }
  }
  return best;
}

Positions vertexNormals(const Positions& positions, const std::vector<Tri>& triangles) {
  Positions normals = Positions::Zero(positions.rows(), 3);
  for (const Tri& f : triangles) {
    const Vec3 a = positions.row(f[0]), b = positions.row(f[1]), c = positions.row(f[2]);
    const Vec3 n = (b - a).cross(c - a);  // length = 2 x area: area weighting
    for (int k = 0; k < 3; ++k) normals.row(f[k]) += n.transpose();
  }
  for (Eigen::Index i = 0; i < normals.rows(); ++i) {
    const double len = normals.row(i).norm();
    if (len > 0) normals.row(i) /= len;
  }
  return normals;
}

}  // namespace clothlab
