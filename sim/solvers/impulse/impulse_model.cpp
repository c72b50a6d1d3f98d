#include "sim/solvers/impulse/impulse_model.h"

#include <algorithm>
#include <set>

#include "sim/bending.h"

namespace clothlab {

ImpulseModel buildNonconformingModel(const TriangleMesh& rest, const MeshTopology& topology,
                                     bool boundaryConstraints) {
  ImpulseModel model;
  const int particleCount = topology.edgeCount();
  model.restPositions.resize(particleCount, 3);
  for (int e = 0; e < particleCount; ++e)
    model.restPositions.row(e) =
        0.5 * (rest.positions.row(topology.edges[e][0]) + rest.positions.row(topology.edges[e][1]));

  // Masses: each triangle gives a third of its area to each of its edge particles.
  model.areaShare = Eigen::VectorXd::Zero(particleCount);
  for (int t = 0; t < rest.triangleCount(); ++t) {
    const double third = triangleArea(rest, t) / 3.0;
    for (int e : topology.triEdges[t]) model.areaShare[e] += third;
  }

  auto restDistance = [&](int a, int b) {
    return (model.restPositions.row(b) - model.restPositions.row(a)).norm();
  };
  for (int t = 0; t < rest.triangleCount(); ++t) {
    const auto& e = topology.triEdges[t];
    for (int k = 0; k < 3; ++k) {
      const int a = e[k], b = e[(k + 1) % 3];
      model.constraints.push_back({a, b, restDistance(a, b), false});
    }
  }

  if (boundaryConstraints) {
    std::set<std::pair<int, int>> seen;
    auto add = [&](int a, int b) {
      if (!seen.insert(std::minmax(a, b)).second) {
        ++model.duplicateBoundaryConstraints;
        return;
      }
      model.constraints.push_back({a, b, restDistance(a, b), true});
      ++model.boundaryConstraintCount;
    };
    for (int eb : topology.boundaryEdges) {
      const int tb = topology.edgeTris[eb][0];
      int neighbours = 0;
      for (int es : topology.triEdges[tb]) neighbours += topology.edgeTriCount[es] == 2 ? 1 : 0;
      for (int es : topology.triEdges[tb]) {
        if (es == eb || topology.edgeTriCount[es] != 2) continue;
        const int tn = topology.edgeTris[es][0] == tb ? topology.edgeTris[es][1]
                                                      : topology.edgeTris[es][0];
        int candidates[2], count = 0;
        for (int candidate : topology.triEdges[tn])
          if (candidate != es && count < 2) candidates[count++] = candidate;
        if (count < 2) continue;
        if (restDistance(eb, candidates[1]) < restDistance(eb, candidates[0]))
          std::swap(candidates[0], candidates[1]);
        add(eb, candidates[0]);
        // An ear triangle (two boundary edges, one neighbour) would keep one free hinge with the
        // paper's rule; its first boundary edge also takes the other candidate. [our extension]
        if (neighbours == 1 && eb == *std::min_element(topology.triEdges[tb].begin(),
                                                       topology.triEdges[tb].end(),
                                                       [&](int x, int y) {
                                                         return topology.edgeTriCount[x] <
                                                                    topology.edgeTriCount[y] ||
                                                                (topology.edgeTriCount[x] ==
                                                                     topology.edgeTriCount[y] &&
                                                                 x < y);
                                                       }))
          add(eb, candidates[1]);
      }
    }
  }

  // B: vertex i averages, over its incident triangles, x_j + x_k - x_opposite.
  std::vector<Eigen::Triplet<double>> triplets;
  for (int i = 0; i < rest.vertexCount(); ++i) {
    const auto& tris = topology.vertexTris[i];
    const double w = 1.0 / static_cast<double>(tris.size());
    for (int t : tris) {
      const Tri& f = rest.triangles[t];
      const int k = f[0] == i ? 0 : f[1] == i ? 1 : 2;
      triplets.emplace_back(i, topology.triEdges[t][(k + 1) % 3], w);
      triplets.emplace_back(i, topology.triEdges[t][(k + 2) % 3], w);
      triplets.emplace_back(i, topology.triEdges[t][k], -w);
    }
  }
  model.surfaceMap.resize(rest.vertexCount(), particleCount);
  model.surfaceMap.setFromTriplets(triplets.begin(), triplets.end());
  model.surfaceMap.makeCompressed();
  model.surfaceMapRowsTransposed = model.surfaceMap.transpose();
  std::vector<Eigen::Triplet<double>> midpoints;
  for (int e = 0; e < particleCount; ++e) {
    midpoints.emplace_back(e, topology.edges[e][0], 0.5);
    midpoints.emplace_back(e, topology.edges[e][1], 0.5);
  }
  model.midpointMap.resize(particleCount, rest.vertexCount());
  model.midpointMap.setFromTriplets(midpoints.begin(), midpoints.end());

  std::vector<Eigen::Triplet<double>> difference;  // rows: (vertex, triangle) pairs
  int row = 0;
  for (int i = 0; i < rest.vertexCount(); ++i)
    for (int t : topology.vertexTris[i]) {
      const Tri& f = rest.triangles[t];
      const int k = f[0] == i ? 0 : f[1] == i ? 1 : 2;
      difference.emplace_back(row, topology.triEdges[t][(k + 1) % 3], 1.0);
      difference.emplace_back(row, topology.triEdges[t][(k + 2) % 3], 1.0);
      difference.emplace_back(row, topology.triEdges[t][k], -1.0);
      ++row;
    }
  SparseMatrix predictions(row, particleCount);
  predictions.setFromTriplets(difference.begin(), difference.end());
  // Subtract B_i from each prediction row of vertex i.
  std::vector<int> rowVertex;
  for (int i = 0; i < rest.vertexCount(); ++i)
    for (size_t n = 0; n < topology.vertexTris[i].size(); ++n) rowVertex.push_back(i);
  std::vector<Eigen::Triplet<double>> selector;
  for (int r = 0; r < row; ++r) selector.emplace_back(r, rowVertex[r], 1.0);
  SparseMatrix select(row, rest.vertexCount());
  select.setFromTriplets(selector.begin(), selector.end());
  const SparseMatrix d = predictions - select * model.surfaceMap;
  model.nonconformity = SparseMatrix(d.transpose()) * d;
  model.nonconformity.prune(1e-14);
  setBendingModel(model, "crouzeix-raviart", 0, rest, topology);
  return model;
}

ImpulseModel buildConformingModel(const TriangleMesh& rest, const MeshTopology& topology) {
  ImpulseModel model;
  model.conforming = true;
  model.restPositions = rest.positions;
  model.areaShare = Eigen::VectorXd::Zero(rest.vertexCount());
  for (int t = 0; t < rest.triangleCount(); ++t) {
    const double third = triangleArea(rest, t) / 3.0;
    for (int v : rest.triangles[t]) model.areaShare[v] += third;
  }
  for (const auto& e : topology.edges)
    model.constraints.push_back(
        {e[0], e[1], (rest.positions.row(e[1]) - rest.positions.row(e[0])).norm(), false});
  std::vector<BendingRow> rows = hingeBendingRows(rest, topology);
  model.bending = bendingMatrix(rows, rest.vertexCount());
  model.restBend = RestBend(std::move(rows), model.restPositions);
  return model;
}

void setBendingModel(ImpulseModel& model, const std::string& bendingModel,
                     double nonconformingStiffness, const TriangleMesh& rest,
                     const MeshTopology& topology) {
  if (model.conforming) return;
  model.bendingOnSurface = bendingModel == "surface";
  if (model.bendingOnSurface) {
    const double edge = meanEdgeLength(rest.positions, topology.edges);
    model.bending =
        nonconformingStiffness > 0
            ? SparseMatrix((nonconformingStiffness / (edge * edge)) * model.nonconformity)
            : SparseMatrix(model.particleCount(), model.particleCount());
    model.restBend = RestBend();
  } else {
    model.bending = crBendingMatrix(rest, topology);
    model.restBend = RestBend(crBendingRows(rest, topology), model.restPositions);
  }
}

std::unique_ptr<ImplicitBending> surfaceBending(const TriangleMesh& rest,
                                                const MeshTopology& topology) {
  // Its solves call no BLAS, so that they run alongside the factorization of A (parallel_forces)
  // without waiting for the BLAS lock it holds, as the force solve's do.
  return std::make_unique<ImplicitBending>(hingeBendingRows(rest, topology), rest.positions,
                                           /*blasFreeSolves=*/true);
}

std::optional<std::string> bendSurface(const ImpulseModel& model, ImplicitBending& bending,
                                       const Eigen::VectorXd& vertexMass, double stiffness,
                                       double h, const std::string& bendingRest,
                                       const Positions& surface, Positions& v) {
  const Positions surfaceVelocity = model.surfaceMap * v;
  Positions bent;
  if (auto e = bending.velocities(vertexMass, stiffness, h, Vec3::Zero(), surface, surfaceVelocity,
                                  {}, bent, restShapeFor(bendingRest, bending.restBend())))
    return e;
  v += model.midpointMap * (bent - surfaceVelocity);
  return std::nullopt;
}

Positions surfaceFromParticles(const ImpulseModel& model, const Positions& particles) {
  if (model.conforming) return particles;
  return model.surfaceMap * particles;
}

}  // namespace clothlab
