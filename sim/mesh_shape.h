#pragma once
// A triangle mesh used as an obstacle: a bounding-volume hierarchy (axis-aligned boxes, median
// splits) for closest-point queries, and angle-weighted pseudo-normals (Bærentzen and Aanæs 2005)
// so that the sign of (p - closest) . pseudo-normal tells inside from outside for a closed mesh.
// Open meshes (a mannequin, a sheet) have no inside: obstacles.cpp decides the side from where the
// point was at the start of the step.
#include <memory>
#include <numbers>
#include <span>
#include <vector>

#include "sim/mesh.h"

namespace clothlab {

class MeshShape {
 public:
  explicit MeshShape(TriangleMesh mesh);
  // The same triangles with their vertices at `positions` (one row per vertex): normals and
  // features found again, the hierarchy's boxes refitted around the moved triangles (its splits
  // kept), the connectivity shared. For a shape that deforms a little from step to step (a jelly),
  // at a fraction of a new shape's cost.
  MeshShape movedTo(const Positions& positions) const;

  const TriangleMesh& mesh() const { return mesh_; }
  const std::vector<std::array<int, 2>>& edges() const {
    return topology_->edges;
  }  // unique, v0 < v1
  // Sharp features, where a cloth triangle resting on the surface need not cover it: an edge
  // whose faces turn by more than kSharpAngle (or that bounds an open mesh, or is shared by more
  // than two faces), a vertex with a face turned from its pseudo-normal by more than half that (a
  // crease's or a cone's tip).
  static constexpr double kSharpAngle = std::numbers::pi / 6;
  bool sharpEdge(int e) const { return sharpEdges_[e] != 0; }
  bool sharpVertex(int v) const { return sharpVertices_[v] != 0; }
  // A sharp vertex or an end of a sharp edge: the vertices a feature test needs.
  bool featureVertex(int v) const { return featureVertices_[v] != 0; }
  bool hasSharpFeatures() const { return hasSharp_; }
  // Watertight: every edge has exactly two triangles.
  bool closed() const { return closed_; }
  const Vec3& lo() const { return lo_; }
  const Vec3& hi() const { return hi_; }
  Vec3 pivot() const { return 0.5 * (lo_ + hi_); }  // centre of the bounding box
  double radius() const { return 0.5 * (hi_ - lo_).norm(); }  // around the pivot, at most

  struct Hit {
    double distance = 1e300;  // |p - point| [m]
    Vec3 point{0, 0, 0};      // closest surface point
    Vec3 normal{0, 0, 1};     // outward pseudo-normal of the closest feature (face, edge or vertex)
    int triangle = -1;
  };
  // The closest surface point to p, searching only within maxDistance (triangle < 0: none there).
  Hit closest(const Vec3& p, double maxDistance = 1e300) const;
  // The triangles that come within `distance` of p, with their distances, appended to `out` in
  // the order closest() meets them; closest() among those alone for a point that has `moved` at
  // most that far from p since (contacts' repeated calls in one step: see ContactCache).
  struct Near {
    double distance;
    int triangle;
  };
  void trianglesWithin(const Vec3& p, double distance, std::vector<Near>& out) const;
  Hit closestAmong(const Vec3& p, std::span<const Near> triangles, double moved, double maxDistance) const;
  // Whether p lies inside a closed mesh, by the parity of a ray's crossings with the surface (rays
  // that graze an edge or a vertex are retried in other directions; if every one grazes, the
  // closest point's pseudo-normal decides). Meaningful only when closed().
  bool inside(const Vec3& p) const;
  // Whether the segment from a to b passes through the surface (also when it touches it, or
  // grazes an edge or a vertex).
  bool crosses(const Vec3& a, const Vec3& b) const;

 private:
  struct Node {
    Eigen::AlignedBox3d box;
    int left = -1, right = -1;  // children, or -1 for a leaf
    int first = 0, count = 0;   // leaf: triangles order_[first, first + count)
  };
  int build(int first, int count, std::vector<Vec3>& centroids);
  void refit(int node);  // the boxes under `node` around the triangles' current positions
  // Normals, sharp features and bounds from mesh_ and topology_.
  void findNormalsAndFeatures();
  void consider(int triangle, const Vec3& p, Hit& best) const;  // best, if this triangle is nearer
  void search(int node, const Vec3& p, Hit& best) const;
  void gather(int node, const Vec3& p, double distance, std::vector<Near>& out) const;
  // Crossings of the ray p + t d (0 < t < length) with the triangles under `node`; false when one
  // of them is too close to an edge, a vertex or an end of the ray to count reliably.
  bool countCrossings(int node, const Vec3& p, const Vec3& d, const Vec3& inverse, double length,
                      int& crossings) const;

  TriangleMesh mesh_;
  std::shared_ptr<const MeshTopology> topology_;
  bool closed_ = false;
  Vec3 lo_{0, 0, 0}, hi_{0, 0, 0};
  std::vector<Node> nodes_;
  std::vector<int> order_;
  std::vector<Vec3> faceNormals_, vertexNormals_;
  std::vector<std::array<Vec3, 3>> edgeNormals_;  // per triangle, edge opposite corner k
  std::vector<char> sharpEdges_, sharpVertices_, featureVertices_;
  bool hasSharp_ = false;
};

}  // namespace clothlab
