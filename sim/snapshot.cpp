#include "sim/snapshot.h"

#include <limits>

#include "sim/grab.h"
#include "sim/metrics.h"
#include "sim/obj_io.h"
#include "sim/simulation.h"

namespace clothlab {

Vec3 Snapshot::surfacePoint(int t, const Vec3& b) const {
  const auto& tris = *triangles;
  return b[0] * vertex(static_cast<int>(tris[3 * t])) + b[1] * vertex(static_cast<int>(tris[3 * t + 1])) +
         b[2] * vertex(static_cast<int>(tris[3 * t + 2]));
}

void Snapshot::clothBounds(Vec3& lo, Vec3& hi) const {
  lo = hi = Vec3::Zero();
  // The finer mesh where it is drawn: its folds may reach beyond the cloth's vertices.
  const std::vector<float>& drawn = finePositions.empty() ? positions : finePositions;
  for (size_t v = 0; 3 * v + 2 < drawn.size(); ++v) {
    const Vec3 p(drawn[3 * v], drawn[3 * v + 1], drawn[3 * v + 2]);
    lo = v == 0 ? p : Vec3(lo.cwiseMin(p));
    hi = v == 0 ? p : Vec3(hi.cwiseMax(p));
  }
}

void Snapshot::bounds(Vec3& lo, Vec3& hi) const {
  lo.setConstant(std::numeric_limits<double>::infinity());
  hi = -lo;
  if (vertexCount() > 0) clothBounds(lo, hi);
  for (const auto* list : {&obstacles, &jellies})
    for (const auto& o : *list) {
      // A mesh by its bounding sphere about the centre it spins about, which holds it at every
      // turn: the frame does not follow a spinning mesh's box.
      if (o.type == Obstacle::Type::Mesh && o.shape) {
        const Vec3 c = o.center(), r = Vec3::Constant(o.shape->radius());
        lo = lo.cwiseMin(c - r);
        hi = hi.cwiseMax(c + r);
      } else if (const auto box = obstacleBounds(o)) {
        lo = lo.cwiseMin(box->min());
        hi = hi.cwiseMax(box->max());
      }
    }
}

namespace {
void appendRows(const Positions& rows, std::vector<float>& out) {
  out.resize(static_cast<size_t>(rows.rows()) * 3);
  for (Eigen::Index i = 0; i < rows.rows(); ++i)
    for (int k = 0; k < 3; ++k) out[3 * i + k] = static_cast<float>(rows(i, k));
}
}  // namespace

std::optional<std::string> writeFineMesh(const std::string& path, const FineMesh& fine,
                                         const Positions& nodes, const ClothModel& cloth) {
  ObjTexcoords texcoords = surfaceTexcoords(cloth);
  if (texcoords.uv) texcoords.uv = &fine.flat;
  return writeObj(path, nodes, fine.triangles, texcoords);
}

Positions pointRows(const std::vector<float>& xyz) {
  Positions rows(static_cast<Eigen::Index>(xyz.size() / 3), 3);
  for (Eigen::Index v = 0; v < rows.rows(); ++v)
    for (int k = 0; k < 3; ++k) rows(v, k) = xyz[3 * v + k];
  return rows;
}

std::optional<std::string> writeDrawnSurface(const Snapshot& s, const std::string& path) {
  if (!s.cloth) return path + ": no cloth to write";
  if (s.fine) return writeFineMesh(path, *s.fine, pointRows(s.finePositions), *s.cloth);
  return writeObj(path, pointRows(s.positions), s.cloth->mesh.triangles,
                  surfaceTexcoords(*s.cloth));
}

Snapshot makeSnapshot(const Simulation& simulation, bool overlay,
                      std::shared_ptr<const std::vector<std::uint32_t>> triangles, bool contacts) {
  const ClothModel& cloth = simulation.cloth();
  const Positions& surface = simulation.surface();
  Snapshot s;
  s.step = simulation.stepCount();
  s.time = simulation.time();
  s.sceneName = simulation.scene().name;
  s.clothTransform = simulation.scene().transform;
  s.solverId = simulation.solver().id();
  s.cloth = simulation.clothModel();
  appendRows(surface, s.positions);
  appendRows(vertexNormals(surface, cloth.mesh.triangles), s.normals);
  const Eigen::VectorXd strain = vertexEdgeStrain(cloth.mesh, cloth.topology, surface);
  s.strain.assign(strain.data(), strain.data() + strain.size());
  if (!triangles) {
    auto tris = std::make_shared<std::vector<std::uint32_t>>();
    tris->reserve(cloth.mesh.triangles.size() * 3);
    for (const Tri& t : cloth.mesh.triangles)
      for (int k = 0; k < 3; ++k) tris->push_back(static_cast<std::uint32_t>(t[k]));
    triangles = std::move(tris);
  }
  s.triangles = std::move(triangles);
  Positions nodes;
  if ((s.fine = simulation.solver().fineMesh(nodes))) {
    appendRows(nodes, s.finePositions);
    appendRows(vertexNormals(nodes, s.fine->triangles), s.fineNormals);
    const Eigen::VectorXd fineStrain = s.fine->nodeStrain(nodes);
    s.fineStrain.assign(fineStrain.data(), fineStrain.data() + fineStrain.size());
  }
  if (overlay) {
    Positions points;
    std::vector<std::pair<int, int>> lines;
    simulation.solver().debugGeometry(points, lines);
    appendRows(points, s.overlayPoints);
    s.overlayLines.reserve(lines.size() * 2);
    for (const auto& [a, b] : lines) {
      s.overlayLines.push_back(static_cast<std::uint32_t>(a));
      s.overlayLines.push_back(static_cast<std::uint32_t>(b));
    }
  }
  if (contacts) {
    const double reach = 1.5 * simulation.sim().thickness + 1e-6;
    std::vector<Obstacle> obstacles = simulation.obstaclesAt(simulation.time());
    for (Obstacle& jelly : simulation.jellyObstacles()) obstacles.push_back(std::move(jelly));
    for (int v = 0; v < surface.rows(); ++v) {
      const Vec3 p = surface.row(v).transpose();
      for (const Obstacle& o : obstacles) {
        Vec3 n;
        if (signedDistance(o, p, &n, &p, reach) < reach) {
          s.contactVertices.push_back(v);
          break;
        }
      }
    }
  }
  for (const auto& [vertex, target] : simulation.pins()) {
    s.pinVertices.push_back(vertex);
    s.pinTargets.push_back(target);
  }
  s.pointMasses = simulation.cloth().pointMasses;
  s.grab = simulation.grab();
  if (s.grab) {
    s.grabPoint = s.surfacePoint(s.grab->triangle, s.grab->barycentric);
    // On a finer mesh, the point the solver pulls: the drawn surface's at the grabbed place.
    if (s.fine)
      if (const auto onFine = grabOnFineMesh(simulation.cloth(), *s.fine, *s.grab))
        s.grabPoint = grabbedPoint(*onFine, s.fine->triangles[onFine->triangle], nodes);
  }
  s.obstacles = simulation.obstaclesAt(simulation.time());
  s.jellies = simulation.jellyObstacles();
  for (const JellyBody& jelly : simulation.jellies())
    s.jellyStates.push_back({jelly.material(), jelly.center(), jelly.velocity(),
                             jelly.angularVelocity(), jelly.mass(), jelly.rest().triangleCount(),
                             jelly.lastStep()});
  s.sim = simulation.sim();
  s.solverParams = simulation.solver().params();
  s.stats = simulation.lastStats();
  s.diverged = simulation.diverged();
  return s;
}

}  // namespace clothlab
