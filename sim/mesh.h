#pragma once
// Triangle meshes and their topology.
//
// TriangleMesh is plain data (positions + triangles). MeshTopology is derived once from it:
// unique edges, the edge opposite each triangle corner, edge-triangle adjacency, boundary edges
// and loops, connected components, vertex one-rings, and counts of defects (non-manifold edges,
// degenerate triangles) for validation and `clothlab-cli info`.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <utility>
#include <vector>

namespace clothlab {

using Vec3 = Eigen::Vector3d;
using Positions = Eigen::MatrixX3d;  // one row per vertex or particle [m]
using Tri = std::array<int, 3>;

struct TriangleMesh {
  Positions positions;          // vertexCount x 3 [m]
  std::vector<Tri> triangles;   // counter-clockwise vertex indices
  int vertexCount() const { return static_cast<int>(positions.rows()); }
  int triangleCount() const { return static_cast<int>(triangles.size()); }
};

struct MeshTopology {
  std::vector<std::array<int, 2>> edges;     // unique edges, v0 < v1
  std::vector<std::array<int, 3>> triEdges;  // triEdges[t][k]: edge opposite local corner k of t
  std::vector<std::array<int, 2>> edgeTris;  // first two adjacent triangles, -1 where absent
  std::vector<int> edgeTriCount;             // number of triangles using each edge (1, 2, or >2)
  std::vector<int> boundaryEdges;            // edges with exactly one triangle
  std::vector<std::vector<int>> boundaryLoops;  // vertex cycles along the boundary
  std::vector<int> triComponent;             // component id per triangle
  // Component id per vertex: its first triangle's (-1 on none). A vertex where two components
  // touch only at a point is in both; this names the first.
  std::vector<int> vertexComponent;
  int componentCount = 0;
  std::vector<std::vector<int>> vertexNeighbours;  // one-ring vertices, sorted
  std::vector<std::vector<int>> vertexTris;        // incident triangles per vertex
  int nonManifoldEdgeCount = 0;  // edges shared by more than two triangles
  int degenerateTriangleCount = 0;  // zero area or a repeated index
  int edgeCount() const { return static_cast<int>(edges.size()); }
  bool isBoundaryEdge(int e) const { return edgeTriCount[e] == 1; }
};

// Builds the topology. Works on any index-valid mesh, including non-manifold ones (counted).
MeshTopology buildTopology(const TriangleMesh& mesh);

// Area of triangle t [m^2].
double triangleArea(const TriangleMesh& mesh, int t);

// True when the triangle has a repeated index or an area below relTol * (longest edge)^2.
bool isDegenerate(const TriangleMesh& mesh, int t, double relTol = 1e-12);

// Index of the vertex nearest to `point` (positions must not be empty).
int nearestVertex(const Positions& positions, const Vec3& point);

// Barycentric area share of every vertex: a third of each incident triangle's area [m^2].
Eigen::VectorXd vertexAreaShares(const TriangleMesh& mesh);

// Length of each of `edges` at `positions` [m].
Eigen::VectorXd edgeLengths(const Positions& positions, const std::vector<std::array<int, 2>>& edges);
// Mean length of `edges` at `positions` [m] (0 without edges).
double meanEdgeLength(const Positions& positions, const std::vector<std::array<int, 2>>& edges);

// The point of triangle t closest to p, as barycentric coordinates (all >= 0, summing to 1).
Vec3 closestBarycentric(const TriangleMesh& mesh, int t, const Vec3& p);
// The same for the triangle (a, b, c).
Vec3 closestBarycentric(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& p);
// The surface point of the mesh closest to p: its triangle and barycentric coordinates
// (brute force over the triangles).
std::pair<int, Vec3> closestSurfacePoint(const TriangleMesh& mesh, const Vec3& p);

// Length of the diagonal of the points' axis-aligned bounding box [m] (0 for no points).
double boxDiagonal(const Positions& points);

// The least-squares plane through the points (at least three): their centroid, an orthonormal
// basis whose first two columns span the plane (the direction of the most spread first) and whose
// third is its normal, how far the farthest point lies off it [m] and the points' size
// (boxDiagonal) [m].
struct PlaneFit {
  Eigen::RowVector3d centroid;
  Eigen::Matrix3d basis;
  double offPlane = 0, size = 0;
  Vec3 normal() const { return basis.col(2); }
  // Whether no point lies farther off the plane than `fraction` of the size (false for NaN).
  bool flatWithin(double fraction) const { return offPlane <= fraction * size; }
};
PlaneFit fitPlane(const Positions& points);

// Per-vertex unit normals, area-weighted from incident triangles (zero for isolated vertices).
Positions vertexNormals(const Positions& positions, const std::vector<Tri>& triangles);

}  // namespace clothlab
