#pragma once
// Scene descriptions (JSON) and the immutable ClothModel built from them.
//
// A scene names the cloth (a generator or an OBJ file, plus a transform), the material and
// simulation parameters, pins, obstacles and the solver with its parameters. Format (all keys
// optional except "cloth"; units SI):
//   { "name": "hanging", "description": "...",
//     "cloth": { "generator": {"type": "grid", "width": 1, "height": 1, "columns": 21, "rows": 21,
//                              "diagonal": "alternating", "seed": 1}
//                  | {"type": "irregular-rectangle", "width": 1, "height": 1, "triangles": 800, "seed": 1}
//                  | {"type": "irregular-disk", "radius": 0.5, "triangles": 800, "seed": 1},
//                "obj": "relative/or/absolute.obj",          (instead of "generator")
//                "transform": {"scale": 1, "rotate_deg": [x, y, z], "translate": [x, y, z]} },
//     "simulation": { "density": 0.1, "dt": 0.001, "gravity": [0, -9.81, 0], ... },
//     "pins": [ {"vertex": 0} | {"near": [x, y, z]} | {"preset": "top-corners"}, "target": [...],
//               "ramp": seconds (the pin travels from the rest position to the target) ],
//     "obstacles": [ {"type": "plane", "point": [...], "normal": [...], "friction": 0.3},
//                    {"type": "sphere", "center": [...], "radius": 0.2},
//                    {"type": "box", "center": [...], "half_extents": [...]} ],
//     "point_masses": [ {"vertex": 12 | "near": [x, y, z], "mass": 0.05} ],   (extra mass [kg])
//     "solver": { "id": "impulse-nc", ...solver parameters... } }
//   Generators also include {"type": "cylinder", "radius": 0.2, "height": 0.5, "columns": 44,
//   "rows": 22, "diagonal": "alternating"}: a closed tube around +y, unrolled material coordinates.
//   Obstacles may move: "velocity": [x, y, z] [m/s] until "move_until" [s].
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/generators.h"
#include "sim/jelly/jelly.h"
#include "sim/mesh.h"
#include "sim/obj_io.h"
#include "sim/obstacles.h"
#include "sim/params.h"
#include "sim/result.h"

namespace clothlab {

// Material and integration parameters shared by every solver.
struct SimParams {
  double density = 0.1;     // areal density [kg/m^2], (0, 100]
  double dt = 1e-3;         // time step [s], (0, 0.1]
  double damping = 0.0;     // linear velocity damping [1/s], [0, 100]
  double bending = 1e-6;    // bending stiffness k_b [N m] (J), [0, 10]
  // The shape the bending pulls toward: "flat" (a fabric's flat pattern: the quadratic energies
  // of sim/bending.h) or "loaded" (the cloth's shape as loaded, turned with the cloth: RestBend;
  // strain-limit-remesh's added nodes take theirs on the chords between the cloth's vertices).
  std::string bendingRest = "flat";
  double thickness = 2e-3;  // collision distance kept from obstacles [m], [0, 0.1]
  double friction = 0.3;    // default obstacle friction coefficient, [0, 10]
  bool selfCollision = false;  // cloth against itself, kept `thickness` apart (sim/self_collision.h)
  int substeps = 1;         // solver steps of dt / substeps per time step, [1, 100]
  // Adaptive sub-steps: a step that ends above the solver's tolerance, or diverges, is taken
  // again in twice as many sub-steps, up to this many; at most `substeps`: off. [1, 256]
  int maxSubsteps = 1;
  Vec3 gravity{0, -9.81, 0};  // [m/s^2], each component within +-kMaxGravity
  // The air the cloth moves through (sim/air.h): its density [kg/m^3], [0, 10] (0: none, as in
  // the papers' scenes; 1.2 at sea level), and its velocity, the wind [m/s], each component
  // within +-kMaxWind.
  double airDensity = 0;
  Vec3 wind{0, 0, 0};
  // How fast a garment's stitches (sim/stitches.h) close their gaps [m/s], [0.001, 100].
  double sewingSpeed = 0.2;
  // Sleep (sim/simulation.h): once every surface vertex has moved slower than sleepSpeed [m/s]
  // for sleepTime [s] of simulated time, with nothing that moves or changes by itself (a grab, a
  // travelling pin, a moving obstacle, a jelly, stitches still closing, contacts recovering), the
  // cloth stops being stepped until an edit wakes it. sleepSpeed [0, 0.1] (0: never);
  // sleepTime [0.01, 10].
  double sleepSpeed = 1e-3;
  double sleepTime = 0.5;
  static const ParamTable<SimParams>& table();
};

// The largest gravity component accepted [m/s^2], about 100 g (the panel's slider spans +-50).
// Far beyond it a first step already outruns every solver's max_speed.
constexpr double kMaxGravity = 1000;
// An error naming `at` when a component is not finite or beyond kMaxGravity.
std::optional<std::string> validateGravity(const Vec3& gravity, const std::string& at);
// The largest wind component accepted [m/s], above a hurricane's 70 (the panel's sliders span
// +-30).
constexpr double kMaxWind = 100;
// An error naming `at` when a component is not finite or beyond kMaxWind.
std::optional<std::string> validateWind(const Vec3& wind, const std::string& at);
// Both vectors of `params`, named `at`.gravity and `at`.wind (a scene read, a live edit, a scene
// built in code).
std::optional<std::string> validateVectors(const SimParams& params, const std::string& at);

struct ClothSource {
  enum class Kind { Grid, IrregularRectangle, IrregularDisk, Cylinder, Cone, Obj };
  Kind kind = Kind::Grid;
  double width = 1, height = 1, radius = 0.5;  // [m]
  double topRadius = 0.15, bottomRadius = 0.45;  // a cone's [m]
  int columns = 21, rows = 21;                  // grid vertices
  DiagonalPattern diagonal = DiagonalPattern::Alternating;
  int triangles = 800;                          // irregular: requested triangle count
  std::uint64_t seed = 1;
  std::string objPath;                          // resolved path for Kind::Obj
  nlohmann::json json;                          // as written (for saving)
};

struct Transform {
  double scale = 1;
  Vec3 rotateDeg{0, 0, 0};  // applied about x, then y, then z [degrees]
  Vec3 translate{0, 0, 0};  // [m]
  // Every row p of `positions` taken to rotation() (scale p) + translate.
  Positions applied(const Positions& positions) const;
  Eigen::Matrix3d rotation() const;   // of rotateDeg
};

struct PinSpec {
  enum class Kind { Vertex, Near, Preset };
  Kind kind = Kind::Vertex;
  int vertex = 0;
  Vec3 point{0, 0, 0};      // Near: rest-state world position
  std::string preset;       // Preset: see pinPresetNames()
  std::optional<Vec3> target;  // world target, default: the vertex's rest position
  double ramp = 0;  // [s] > 0: the pin moves from the rest position to its target over this time
};

const std::vector<std::string>& pinPresetNames();  // top-corners, four-corners, top-edge, left-strip

struct Scene {
  std::string name = "untitled";
  std::string description;
  std::string sourcePath;  // file the scene came from ("" for built in from memory)
  ClothSource cloth;
  Transform transform;
  SimParams sim;
  std::vector<PinSpec> pins;
  std::vector<Obstacle> obstacles;
  // A cloth opened from a bare OBJ (sceneForObj) lands on a ground plane that Simulation::create
  // puts below it (groundBelowCloth, sim/placement.h) once the cloth is built and placed; from
  // then on the ground is one of the simulation's obstacles (currentScene) and this is false.
  bool groundBelowCloth = false;
  struct PointMass {
    PinSpec where;     // Vertex or Near (target unused)
    double mass = 0;   // [kg]
  };
  std::vector<PointMass> pointMasses;
  std::vector<JellySpec> jellies;  // elastic bodies (sim/jelly/jelly.h)
  std::string solverId = "impulse-nc";
  nlohmann::json solverParams = nlohmann::json::object();  // validated by the solver
  std::vector<std::string> warnings;  // from its generator and loading its OBJ obstacles (sim/obj_io.h)
};

// Parses a scene. `source` names it in messages; relative OBJ paths resolve against `baseDir`.
Result<Scene> parseScene(const nlohmann::json& json, const std::string& source,
                         const std::string& baseDir);
Result<Scene> loadSceneFile(const std::string& path);
// A scene that just holds an OBJ cloth with default parameters and no pins, over the ground
// (groundBelowCloth); a garment (an OBJ with `stitch` records) under xpbd, the fastest of the
// solvers that sew it.
Scene sceneForObj(const std::string& objPath);
// Makes `obstacle` a mesh obstacle: `mesh` (in its own coordinates) placed by `transform`, its
// triangles stored in world coordinates; `spec` is the JSON a saved scene writes for it.
void placeMeshObstacle(TriangleMesh mesh, const Transform& transform, nlohmann::json spec, Obstacle& obstacle);
nlohmann::json sceneToJson(const Scene& scene);
// The text of a scene file for `scene` (sceneToJson, indented). Fails, saying which, when the
// scene's name or a file path in it is not valid UTF-8, which JSON cannot hold (an OBJ whose file
// name is in Latin-1, say): written with a replacement character, the file would not load.
Result<std::string> sceneFileText(const Scene& scene);
// Writes sceneFileText(scene) to `path` through a temporary file renamed over it, so that a
// write that fails part-way (a full disk) leaves the file that was there as it was. A message
// naming `path` when the scene cannot be written.
std::optional<std::string> writeSceneFile(const std::string& path, const Scene& scene);
// Makes `solverId` the scene's solver; the scene's solver parameters are dropped when they were
// written for another solver.
void useSolver(Scene& scene, const std::string& solverId);

// A cloth's flat rest state: each vertex's material coordinates [m], and how they close round a
// tube.
struct FlatRest {
  Eigen::MatrixX2d coords;
  MaterialWrap wrap;      // a closed tube's (sim/material_wrap.h); none for a sheet
  bool planeFit = false;  // from a plane fit of the rest mesh, not the cloth's own coordinates
  bool unfolded = false;  // laid flat from the curved rest mesh (unfoldRestMesh, sim/material.h)
};

// The cloth as the solvers see it: rest mesh in world coordinates, its topology, the material
// coordinates of the flat rest state where known, and the pins resolved to vertex indices.
struct ClothModel {
  TriangleMesh mesh;        // rest state, world coordinates [m]
  MeshTopology topology;
  // Flat rest coordinates when known (a generator's in metres, an OBJ's texture coordinates in
  // their own units), and their period: > 0 when the first one wraps round (a closed tube).
  std::optional<Eigen::MatrixX2d> materialCoords;
  double materialPeriod = 0;
  std::string materialCoordsDropped;  // why a cloth OBJ's texture coordinates are not in them
  // The flat rest state as mls-isometry and the grab's reach use it (flatMaterialCoordinates,
  // sim/material.h), computed once by buildClothModel, or why there is none.
  Result<FlatRest> flatCoords = Error{"the flat rest state was not computed"};
  std::vector<std::pair<int, double>> pointMasses;  // (vertex, extra mass [kg])
  std::vector<std::pair<int, Vec3>> pins;          // (vertex, world target)
  std::vector<std::pair<int, double>> pinRamps;    // (vertex, ramp time [s]) of pins with a ramp
  // The stitches that sew a garment's panels together (a cloth OBJ's `stitch` records,
  // sim/stitches.h), and how far apart each one's points are in the rest state [m].
  std::vector<Stitch> stitches;
  Eigen::VectorXd stitchRestGaps;
  // From loading the scene's files: its OBJ obstacles' (Scene::warnings), then the cloth OBJ's.
  std::vector<std::string> warnings;
};

// The point masses carried by each vertex [kg] (zero where none).
Eigen::VectorXd vertexPointMasses(const ClothModel& cloth);

// Builds the mesh (generator or OBJ), applies the transform, validates, resolves pins.
Result<ClothModel> buildClothModel(const Scene& scene);
// The texture coordinates a cloth's surface is written with (writeObj, sim/obj_io.h): its flat
// rest state where it has one, so that a written frame can be textured and, bent without
// stretching, read back by mls-isometry as its own rest state.
inline ObjTexcoords surfaceTexcoords(const ClothModel& cloth) {
  return cloth.flatCoords ? ObjTexcoords{&cloth.flatCoords->coords, cloth.flatCoords->wrap}
                          : ObjTexcoords{};
}

// Vertices chosen by a pin preset on the untransformed rest mesh (`rest`). A sheet's top is
// along y when y is one of its two largest extents, else along the second; a cloth that is not
// a sheet (a tube, a skirt) has its top along y: its "top-edge" is a tube's top ring.
std::vector<int> pinPresetVertices(const TriangleMesh& rest, const std::string& preset);

}  // namespace clothlab
