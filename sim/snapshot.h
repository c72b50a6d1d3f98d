#pragma once
// Snapshot: a self-contained copy of what one moment of a Simulation looks like, for drawing,
// picking and logging on another thread. Plain data (floats for the GPU, doubles where the value
// is logged); nothing in it refers back to the Simulation or the solver.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/obstacles.h"
#include "sim/scene.h"
#include "sim/solver.h"

namespace clothlab {

class Simulation;

struct Snapshot {
  long step = 0;
  double time = 0;           // simulated time [s]
  std::string sceneName, solverId;
  Transform clothTransform;  // where the scene places its cloth (the panel's placement)
  // Surface: positions and smooth normals per vertex (x, y, z floats), triangles (3 indices each,
  // shared between snapshots of one scene), strain per vertex (largest | |e|/|e0| - 1 | of its
  // edges).
  std::vector<float> positions, normals, strain;
  std::shared_ptr<const std::vector<std::uint32_t>> triangles;
  std::shared_ptr<const ClothModel> cloth;  // the cloth the surface belongs to (rest state, flat coordinates)
  // Where the solver simulates on a finer mesh than the cloth's own (strain-limit-remesh's
  // adaptive mesh, sim/solver.h FineMesh): that mesh, and its nodes' positions, smooth normals and
  // strain (per node, against the edges' material lengths), drawn in place of the surface's
  // triangles. The surface above stays the cloth's own vertices (the mesh's first nodes), which
  // pins and grabs name; picking and the grab's marker (grabPoint) are on the finer mesh. Null
  // and empty otherwise.
  std::shared_ptr<const FineMesh> fine;
  std::vector<float> finePositions, fineNormals, fineStrain;
  // Solver overlay (impulse solvers: NC particles and their distance constraints): points
  // (x, y, z) and index pairs into them. Empty when not requested or not offered by the solver.
  std::vector<float> overlayPoints;
  std::vector<std::uint32_t> overlayLines;
  // Surface vertices touching an obstacle (within 1.5 x thickness), when requested.
  std::vector<int> contactVertices;
  std::vector<int> pinVertices;  // pinned surface vertices
  std::vector<Vec3> pinTargets;  // their targets [m]
  std::vector<std::pair<int, double>> pointMasses;  // surface vertex, extra mass [kg]
  std::optional<Grab> grab;
  Vec3 grabPoint{0, 0, 0};       // current position of the grabbed material point [m]
  std::vector<Obstacle> obstacles;
  std::vector<Obstacle> jellies;  // the jellies' deformed surfaces, as mesh obstacles
  struct JellyState {
    JellyMaterial material;
    Vec3 center{0, 0, 0}, velocity{0, 0, 0};  // [m], [m/s]
    Vec3 angularVelocity{0, 0, 0};            // [rad/s]
    double mass = 0;                          // [kg]
    int triangles = 0;
    JellyStepInfo step;  // what its last step did
  };
  std::vector<JellyState> jellyStates;  // the same jellies
  SimParams sim;
  nlohmann::json solverParams;
  StepStats stats;
  bool diverged = false;

  int vertexCount() const { return static_cast<int>(positions.size() / 3); }
  int triangleCount() const { return triangles ? static_cast<int>(triangles->size() / 3) : 0; }
  Vec3 vertex(int v) const { return {positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]}; }
  // The surface point of triangle t at barycentric coordinates b.
  Vec3 surfacePoint(int t, const Vec3& b) const;
  // Axis-aligned bounds of the surface, the obstacles (planes excluded) and the jellies [m].
  void bounds(Vec3& lo, Vec3& hi) const;
  // The same of the surface alone (of the finer mesh where there is one); zero for an empty one.
  void clothBounds(Vec3& lo, Vec3& hi) const;
};

// Points given as x, y, z floats (Snapshot::positions, finePositions) as rows [m].
Positions pointRows(const std::vector<float>& xyz);

// Writes the snapshot's surface as drawn to an OBJ (sim/obj_io.h writeObj): the finer mesh the
// solver simulates on where it has one (Snapshot::fine), else the cloth's own, with the cloth's
// flat rest state as texture coordinates where it has one.
std::optional<std::string> writeDrawnSurface(const Snapshot& snapshot, const std::string& path);
// The same for a finer mesh and its nodes' positions `nodes` [m] (Solver::fineMesh) of `cloth`.
std::optional<std::string> writeFineMesh(const std::string& path, const FineMesh& fine,
                                         const Positions& nodes, const ClothModel& cloth);

// Copies the simulation's current state. `triangles` may be passed to share the index list of an
// earlier snapshot of the same simulation; `overlay` asks the solver for its debug geometry,
// `contacts` for the vertices touching obstacles.
Snapshot makeSnapshot(const Simulation& simulation, bool overlay,
                      std::shared_ptr<const std::vector<std::uint32_t>> triangles = nullptr, bool contacts = false);

}  // namespace clothlab
