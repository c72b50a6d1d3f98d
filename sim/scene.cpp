#include "sim/scene.h"

#include <Eigen/Geometry>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <set>

#include "sim/file_io.h"
#include "sim/format.h"
#include "sim/material.h"
#include "sim/obj_io.h"
#include "sim/placement.h"

namespace clothlab {

using nlohmann::json;

namespace {

std::optional<std::string> validateComponents(const Vec3& v, const std::string& at, double most,
                                              const std::string& unit) {
  for (int d = 0; d < 3; ++d) {
    if (!std::isfinite(v[d])) return at + ": non-finite value";
    if (std::abs(v[d]) > most)
      return at + ": " + formatG(v[d]) + " is outside the valid range [" + formatG(-most) + ", " +
             formatG(most) + "] " + unit;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validateGravity(const Vec3& gravity, const std::string& at) {
  return validateComponents(gravity, at, kMaxGravity, "m/s^2");
}

std::optional<std::string> validateWind(const Vec3& wind, const std::string& at) {
  return validateComponents(wind, at, kMaxWind, "m/s");
}

std::optional<std::string> validateVectors(const SimParams& params, const std::string& at) {
  if (auto e = validateGravity(params.gravity, at + ".gravity")) return e;
  return validateWind(params.wind, at + ".wind");
}

const ParamTable<SimParams>& SimParams::table() {
  static const ParamTable<SimParams> table = {
      {"density", "kg/m^2", "areal mass density of the cloth", &SimParams::density, 1e-4, 100,
       true},
      {"dt", "s", "time step", &SimParams::dt, 1e-5, 0.1, true},
      {"damping", "1/s", "linear velocity damping", &SimParams::damping, 0, 100, true},
      {"bending", "N m", "bending stiffness k_b", &SimParams::bending, 0, 10, true},
      {"bending_rest",
       "",
       "the shape the bending pulls toward: flat (a fabric) or the cloth's shape as loaded, which "
       "a curved OBJ then keeps",
       &SimParams::bendingRest,
       0,
       0,
       false,
       {"flat", "loaded"}},
      {"thickness", "m", "distance kept from obstacles", &SimParams::thickness, 0, 0.1, true},
      {"friction", "", "default obstacle friction coefficient", &SimParams::friction, 0, 10, false},
      {"self_collision", "", "the cloth collides with itself, kept `thickness` apart",
       &SimParams::selfCollision},
      {"substeps", "", "solver steps per time step, each of dt / substeps", &SimParams::substeps, 1,
       100, true},
      {"max_substeps", "",
       "adaptive: a step that ends above the solver's tolerance or diverges is taken again in "
       "twice as many sub-steps, up to this many (at most substeps: off)",
       &SimParams::maxSubsteps, 1, 256, true},
      {"air_density", "kg/m^3",
       "density of the air the cloth moves through, which drags on its faces and carries the wind "
       "(1.2 at sea level; 0: none)",
       &SimParams::airDensity, 0, 10, false},
      {"sewing_speed", "m/s",
       "how fast a garment's stitches close the gaps between its panels (cloth OBJs with 'stitch' "
       "records)",
       &SimParams::sewingSpeed, 1e-3, 100, true},
      {"sleep_speed", "m/s",
       "the cloth falls asleep (is no longer stepped) once every vertex has moved slower than this "
       "for sleep_time; an edit, a grab or a pin wakes it (0: never)",
       &SimParams::sleepSpeed, 0, 0.1, true},
      {"sleep_time", "s", "how long the cloth must move slower than sleep_speed to fall asleep",
       &SimParams::sleepTime, 0.01, 10, true},
  };
  return table;
}

void placeMeshObstacle(TriangleMesh mesh, const Transform& transform, nlohmann::json spec, Obstacle& obstacle) {
  mesh.positions = transform.applied(mesh.positions);
  obstacle.type = Obstacle::Type::Mesh;
  obstacle.point = Vec3::Zero();
  obstacle.shape = std::make_shared<const MeshShape>(std::move(mesh));
  obstacle.meshSpec = std::move(spec);
}

Eigen::Matrix3d Transform::rotation() const {
  const double k = std::numbers::pi / 180.0;
  return (Eigen::AngleAxisd(rotateDeg.z() * k, Vec3::UnitZ()) *
          Eigen::AngleAxisd(rotateDeg.y() * k, Vec3::UnitY()) *
          Eigen::AngleAxisd(rotateDeg.x() * k, Vec3::UnitX()))
      .toRotationMatrix();
}

Positions Transform::applied(const Positions& positions) const {
  const Eigen::Matrix3d scaled = scale * rotation();
  return (positions * scaled.transpose()).rowwise() + translate.transpose();
}

const std::vector<std::string>& pinPresetNames() {
  static const std::vector<std::string> names = {"top-corners", "four-corners", "top-edge", "left-strip"};
  return names;
}

namespace {

// The "type" of an object that names its kind: a message naming what is wrong when `o` is not an
// object, has no "type", or its "type" is not a string (`kinds`: what it may be, for the message).
Result<std::string> typeOf(const json& o, const std::string& at, const std::string& kinds) {
  if (!o.is_object())
    return Error{expectedButGot(at, "an object with a \"type\" (" + kinds + ")", o)};
  if (!o.contains("type")) return Error{at + ".type: missing (" + kinds + ")"};
  if (!o["type"].is_string()) return Error{expectedButGot(at + ".type", kinds, o["type"])};
  return o["type"].get<std::string>();
}

std::optional<std::string> readVec3(const json& value, const std::string& at, Vec3& out) {
  if (!value.is_array() || value.size() != 3)
    return expectedButGot(at, "an array of 3 numbers", value);
  for (int d = 0; d < 3; ++d) {
    if (!value[d].is_number())
      return expectedButGot(at + "[" + std::to_string(d) + "]", "a number", value[d]);
    out[d] = value[d].get<double>();
    if (!std::isfinite(out[d])) return at + ": non-finite value";
  }
  return std::nullopt;
}

std::optional<std::string> readNumber(const json& object, const std::string& key,
                                      const std::string& where, double& out, double min,
                                      double max) {
  if (!object.contains(key)) return std::nullopt;
  const json& v = object[key];
  const std::string at = where + "." + key;
  if (!v.is_number()) return expectedButGot(at, "a number", v);
  out = v.get<double>();
  if (!(out >= min && out <= max)) return outsideRange(at, v.dump(), min, max);
  return std::nullopt;
}

std::optional<std::string> readInt(const json& object, const std::string& key,
                                   const std::string& where, int& out, int min, int max) {
  if (!object.contains(key)) return std::nullopt;
  const json& v = object[key];
  const std::string at = where + "." + key;
  const std::optional<double> value = wholeNumber(v);
  if (!value) return expectedButGot(at, "an integer", v);
  if (*value < min || *value > max) return outsideRange(at, v.dump(), min, max);
  out = static_cast<int>(*value);
  return std::nullopt;
}

std::optional<std::string> checkKeys(const json& object, const std::string& where,
                                     const std::vector<std::string>& known) {
  if (!object.is_object()) return expectedButGot(where, "an object", object);
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return where + "." + key + ": unknown key (known: " + list + ")";
    }
  return std::nullopt;
}

std::optional<std::string> parseTransform(const json& t, const std::string& at, Transform& transform) {
  if (auto e = checkKeys(t, at, {"scale", "rotate_deg", "translate"})) return e;
  if (auto e = readNumber(t, "scale", at, transform.scale, 1e-6, 1e6)) return e;
  if (t.contains("rotate_deg"))
    if (auto e = readVec3(t["rotate_deg"], at + ".rotate_deg", transform.rotateDeg)) return e;
  if (t.contains("translate"))
    if (auto e = readVec3(t["translate"], at + ".translate", transform.translate)) return e;
  return std::nullopt;
}

std::optional<std::string> parseCloth(const json& cloth, const std::string& where,
                                      const std::string& baseDir, Scene& scene) {
  if (auto e = checkKeys(cloth, where, {"generator", "obj", "transform"})) return e;
  ClothSource& source = scene.cloth;
  source.json = cloth;
  const bool hasGenerator = cloth.contains("generator"), hasObj = cloth.contains("obj");
  if (hasGenerator == hasObj) return where + ": give exactly one of \"generator\" or \"obj\"";
  if (hasObj) {
    if (!cloth["obj"].is_string())
      return expectedButGot(where + ".obj", "a path string", cloth["obj"]);
    std::filesystem::path path = cloth["obj"].get<std::string>();
    if (path.is_relative() && !baseDir.empty()) path = std::filesystem::path(baseDir) / path;
    source.kind = ClothSource::Kind::Obj;
    source.objPath = path.lexically_normal().string();
  } else {
    const json& g = cloth["generator"];
    const std::string at = where + ".generator";
    const std::string generators = "grid, irregular-rectangle, irregular-disk, cylinder or cone";
    auto typed = typeOf(g, at, generators);
    if (!typed) return typed.error();
    const std::string type = *typed;
    if (type == "grid") {
      source.kind = ClothSource::Kind::Grid;
      if (auto e = checkKeys(g, at, {"type", "width", "height", "columns", "rows", "diagonal", "seed"}))
        return e;
    } else if (type == "irregular-rectangle") {
      source.kind = ClothSource::Kind::IrregularRectangle;
      if (auto e = checkKeys(g, at, {"type", "width", "height", "triangles", "seed"})) return e;
    } else if (type == "irregular-disk") {
      source.kind = ClothSource::Kind::IrregularDisk;
      if (auto e = checkKeys(g, at, {"type", "radius", "triangles", "seed"})) return e;
    } else if (type == "cylinder") {
      source.kind = ClothSource::Kind::Cylinder;
      if (auto e = checkKeys(g, at, {"type", "radius", "height", "columns", "rows", "diagonal", "seed"}))
        return e;
    } else if (type == "cone") {
      source.kind = ClothSource::Kind::Cone;
      if (auto e = checkKeys(g, at,
                             {"type", "top_radius", "bottom_radius", "height", "columns", "rows",
                              "diagonal", "seed"}))
        return e;
      if (auto e = readNumber(g, "top_radius", at, source.topRadius, 1e-4, 1e3)) return e;
      if (auto e = readNumber(g, "bottom_radius", at, source.bottomRadius, 1e-4, 1e3)) return e;
    } else {
      return at + ".type: unknown generator '" + type + "' (expected " + generators + ")";
    }
    if (auto e = readNumber(g, "width", at, source.width, 1e-4, 1e3)) return e;
    if (auto e = readNumber(g, "height", at, source.height, 1e-4, 1e3)) return e;
    if (auto e = readNumber(g, "radius", at, source.radius, 1e-4, 1e3)) return e;
    if (auto e = readInt(g, "columns", at, source.columns, 2, 2000)) return e;
    if (auto e = readInt(g, "rows", at, source.rows, 2, 2000)) return e;
    if (auto e = readInt(g, "triangles", at, source.triangles, 2, 2000000)) return e;
    if (g.contains("diagonal")) {  // grid, cylinder and cone (checkKeys refused it elsewhere)
      if (!g["diagonal"].is_string())
        return expectedButGot(at + ".diagonal", "a string", g["diagonal"]);
      auto pattern = parseDiagonalPattern(g["diagonal"]);
      if (!pattern) return at + ".diagonal: " + pattern.error();
      source.diagonal = *pattern;
    }
    if ((source.kind == ClothSource::Kind::Cylinder || source.kind == ClothSource::Kind::Cone) &&
        source.diagonal == DiagonalPattern::Alternating && source.columns % 2 == 1)
      scene.warnings.push_back(
          at + ".columns: " + std::to_string(source.columns) +
          " round a tube cannot alternate their diagonals: two like ones meet at the seam, where "
          "mls-isometry's 1-ring samples let edges stretch (by 6% in the first 5 ms step of a "
          "167-column tube standing on the ground, 0.3% with 168); give an even number");
    int seed = 1;
    if (auto e = readInt(g, "seed", at, seed, 0, 2147483647)) return e;
    source.seed = static_cast<std::uint64_t>(seed);
  }
  if (cloth.contains("transform"))
    if (auto e = parseTransform(cloth["transform"], where + ".transform", scene.transform)) return e;
  return std::nullopt;
}

// A shape given by exactly one of "obj" (a path relative to the scene file: its mesh loaded into
// `mesh`, the path made absolute in `spec`, the loader's warnings appended naming the key) or
// "generator" of type `generatorType`, which `generator` then points to for the caller to read
// (`what` names the kind of shape in the message for another type).
std::optional<std::string> readShapeSource(const json& o, const std::string& at,
                                           const std::string& baseDir,
                                           const std::string& generatorType,
                                           const std::string& what, TriangleMesh& mesh, json& spec,
                                           std::vector<std::string>& warnings,
                                           const json*& generator) {
  generator = nullptr;
  if (o.contains("obj") == o.contains("generator"))
    return at + ": give exactly one of \"obj\" or \"generator\"";
  if (o.contains("generator")) {
    const std::string gat = at + ".generator";
    auto typed =
        typeOf(o["generator"], gat, "\"" + generatorType + "\", the generated " + what + " shape");
    if (!typed) return typed.error();
    if (*typed != generatorType)
      return gat + ".type: unknown shape '" + *typed + "' (expected \"" + generatorType + "\")";
    generator = &o["generator"];
    return std::nullopt;
  }
  if (!o["obj"].is_string()) return expectedButGot(at + ".obj", "a path string", o["obj"]);
  std::filesystem::path path = o["obj"].get<std::string>();
  if (path.is_relative() && !baseDir.empty()) path = std::filesystem::path(baseDir) / path;
  auto loaded = loadObj(path.lexically_normal().string());
  if (!loaded) return at + ".obj: " + loaded.error();
  for (const std::string& warning : loaded->warnings) warnings.push_back(at + ".obj: " + warning);
  if (!loaded->stitches.empty())
    warnings.push_back(at + ".obj: " + path.lexically_normal().string() + ": ignored its " +
                       std::to_string(loaded->stitches.size()) + " 'stitch' record(s): the " +
                       what + " is not sewn (a cloth OBJ's stitches sew its panels together)");
  mesh = std::move(loaded->mesh);
  spec["obj"] = std::filesystem::absolute(path).lexically_normal().string();
  return std::nullopt;
}

// A mesh obstacle: an OBJ (relative to the scene file) or a generated shape, placed by a
// transform; the triangles are stored in world coordinates. The OBJ loader's warnings are
// appended to `warnings`, each naming the obstacle's key.
std::optional<std::string> parseMeshObstacle(const json& o, const std::string& at, const std::string& baseDir,
                                             Obstacle& obstacle, std::vector<std::string>& warnings) {
  if (auto e = checkKeys(o, at, {"type", "obj", "generator", "transform", "friction", "velocity", "move_until",
                                 "angular_velocity"}))
    return e;
  if (o.contains("angular_velocity"))
    if (auto e = readVec3(o["angular_velocity"], at + ".angular_velocity", obstacle.angularVelocity)) return e;
  json spec = o;
  TriangleMesh mesh;
  const json* generator = nullptr;
  if (auto e =
          readShapeSource(o, at, baseDir, "torus", "obstacle", mesh, spec, warnings, generator))
    return e;
  if (generator) {
    const json& g = *generator;
    const std::string gat = at + ".generator";
    if (auto e = checkKeys(g, gat, {"type", "major_radius", "minor_radius", "segments", "rings"})) return e;
    double major = 0.3, minor = 0.1;
    int segments = 48, rings = 24;
    if (auto e = readNumber(g, "major_radius", gat, major, 1e-4, 1e3)) return e;
    if (auto e = readNumber(g, "minor_radius", gat, minor, 1e-4, 1e3)) return e;
    if (!(minor < major)) return gat + ".minor_radius: must be smaller than major_radius";
    if (auto e = readInt(g, "segments", gat, segments, 3, 2000)) return e;
    if (auto e = readInt(g, "rings", gat, rings, 3, 2000)) return e;
    mesh = makeTorus(major, minor, segments, rings);
  }
  Transform transform;
  if (o.contains("transform"))
    if (auto e = parseTransform(o["transform"], at + ".transform", transform)) return e;
  placeMeshObstacle(std::move(mesh), transform, std::move(spec), obstacle);
  return std::nullopt;
}

std::optional<std::string> parsePins(const json& pins, const std::string& where, Scene& scene) {
  if (!pins.is_array()) return expectedButGot(where, "an array", pins);
  for (size_t i = 0; i < pins.size(); ++i) {
    const json& p = pins[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (auto e = checkKeys(p, at, {"vertex", "near", "preset", "target", "ramp"})) return e;
    PinSpec pin;
    const int kinds = int(p.contains("vertex")) + int(p.contains("near")) + int(p.contains("preset"));
    if (kinds != 1) return at + ": give exactly one of \"vertex\", \"near\" or \"preset\"";
    if (p.contains("vertex")) {
      pin.kind = PinSpec::Kind::Vertex;
      if (auto e = readInt(p, "vertex", at, pin.vertex, 0, 2147483647)) return e;
    } else if (p.contains("near")) {
      pin.kind = PinSpec::Kind::Near;
      if (auto e = readVec3(p["near"], at + ".near", pin.point)) return e;
    } else {
      pin.kind = PinSpec::Kind::Preset;
      if (!p["preset"].is_string()) return expectedButGot(at + ".preset", "a string", p["preset"]);
      pin.preset = p["preset"];
      const auto& names = pinPresetNames();
      if (std::find(names.begin(), names.end(), pin.preset) == names.end())
      {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        return at + ".preset: unknown preset '" + pin.preset + "' (expected one of " + known + ")";
      }
    }
    if (p.contains("target")) {
      if (pin.kind == PinSpec::Kind::Preset) return at + ".target: a preset pins at rest positions";
      Vec3 target;
      if (auto e = readVec3(p["target"], at + ".target", target)) return e;
      pin.target = target;
    }
    if (p.contains("ramp")) {
      if (!p["ramp"].is_number())
        return expectedButGot(at + ".ramp", "a number of seconds", p["ramp"]);
      pin.ramp = p["ramp"].get<double>();
      if (!(pin.ramp >= 0) || !std::isfinite(pin.ramp)) return at + ".ramp: must be a non-negative number of seconds";
    }
    scene.pins.push_back(pin);
  }
  return std::nullopt;
}

std::optional<std::string> parseObstacles(const json& list, const std::string& where, const std::string& baseDir,
                                          Scene& scene) {
  if (!list.is_array()) return expectedButGot(where, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& o = list[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    auto typed = typeOf(o, at, "plane, sphere, box or mesh");
    if (!typed) return typed.error();
    Obstacle obstacle;
    obstacle.friction = scene.sim.friction;
    const std::string type = *typed;
    if (type == "plane") {
      obstacle.type = Obstacle::Type::Plane;
      if (auto e = checkKeys(o, at, {"type", "point", "normal", "friction", "velocity", "move_until"})) return e;
      if (o.contains("point"))
        if (auto e = readVec3(o["point"], at + ".point", obstacle.point)) return e;
      if (o.contains("normal"))
        if (auto e = readVec3(o["normal"], at + ".normal", obstacle.normal)) return e;
    } else if (type == "sphere") {
      obstacle.type = Obstacle::Type::Sphere;
      if (auto e = checkKeys(o, at, {"type", "center", "radius", "friction", "velocity", "move_until", "angular_velocity"}))
        return e;
      if (o.contains("angular_velocity"))
        if (auto e = readVec3(o["angular_velocity"], at + ".angular_velocity", obstacle.angularVelocity)) return e;
      if (o.contains("center"))
        if (auto e = readVec3(o["center"], at + ".center", obstacle.point)) return e;
      if (auto e = readNumber(o, "radius", at, obstacle.radius, 1e-6, 1e4)) return e;
    } else if (type == "box") {
      obstacle.type = Obstacle::Type::Box;
      if (auto e = checkKeys(o, at, {"type", "center", "half_extents", "friction", "velocity", "move_until"})) return e;
      if (o.contains("center"))
        if (auto e = readVec3(o["center"], at + ".center", obstacle.point)) return e;
      if (o.contains("half_extents"))
        if (auto e = readVec3(o["half_extents"], at + ".half_extents", obstacle.halfExtents)) return e;
    } else if (type == "mesh") {
      if (auto e = parseMeshObstacle(o, at, baseDir, obstacle, scene.warnings)) return e;
    } else {
      return at + ".type: unknown obstacle '" + type + "' (expected plane, sphere, box or mesh)";
    }
    if (auto e = readNumber(o, "friction", at, obstacle.friction, 0, kMaxFriction)) return e;
    if (o.contains("velocity"))
      if (auto e = readVec3(o["velocity"], at + ".velocity", obstacle.velocity)) return e;
    if (auto e = readNumber(o, "move_until", at, obstacle.moveUntil, 0, 1e9)) return e;
    if (auto e = validateObstacle(obstacle, at)) return e;  // also a zero plane normal, before it is normalized
    if (obstacle.type == Obstacle::Type::Plane) obstacle.normal.normalize();
    scene.obstacles.push_back(obstacle);
  }
  return std::nullopt;
}

// Jellies: a closed OBJ or a generated ellipsoid placed by a transform, its velocity and material.
std::optional<std::string> parseJellies(const json& list, const std::string& where,
                                        const std::string& baseDir, Scene& scene) {
  if (!list.is_array()) return expectedButGot(where, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& o = list[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!o.is_object()) return expectedButGot(at, "an object", o);
    JellySpec jelly;
    jelly.json = o;
    // The material's keys, and every other key known, before any OBJ is read.
    if (auto e = readParams(o, JellyMaterial::table(), jelly.material, at,
                            {"obj", "generator", "transform", "velocity", "angular_velocity"}))
      return e;
    TriangleMesh mesh;
    const json* generator = nullptr;
    if (auto e = readShapeSource(o, at, baseDir, "ellipsoid", "jelly", mesh, jelly.json,
                                 scene.warnings, generator))
      return e;
    if (generator) {
      const json& g = *generator;
      const std::string gat = at + ".generator";
      if (auto e = checkKeys(g, gat, {"type", "radii", "segments", "rings"})) return e;
      Vec3 radii(0.1, 0.1, 0.1);
      int segments = 32, rings = 16;
      if (g.contains("radii")) {
        if (auto e = readVec3(g["radii"], gat + ".radii", radii)) return e;
        if (!(radii.minCoeff() >= 1e-3 && radii.maxCoeff() <= 100))
          return gat + ".radii: each must lie in [0.001, 100] m";
      }
      if (auto e = readInt(g, "segments", gat, segments, 6, 512)) return e;
      if (auto e = readInt(g, "rings", gat, rings, 4, 256)) return e;
      mesh = makeEllipsoid(radii, segments, rings);
    }
    Transform transform;
    if (o.contains("transform"))
      if (auto e = parseTransform(o["transform"], at + ".transform", transform)) return e;
    mesh.positions = transform.applied(mesh.positions);
    jelly.surface = std::make_shared<const TriangleMesh>(std::move(mesh));
    if (o.contains("velocity"))
      if (auto e = readVec3(o["velocity"], at + ".velocity", jelly.velocity)) return e;
    if (o.contains("angular_velocity"))
      if (auto e = readVec3(o["angular_velocity"], at + ".angular_velocity", jelly.angularVelocity))
        return e;
    if (auto e = validateJelly(jelly, at)) return e;
    if (auto w = jellyShapeWarning(jelly, at)) scene.warnings.push_back(*w);
    scene.jellies.push_back(std::move(jelly));
  }
  return std::nullopt;
}

std::optional<std::string> parsePointMasses(const json& list, const std::string& where, Scene& scene) {
  if (!list.is_array()) return expectedButGot(where, "an array", list);
  for (size_t i = 0; i < list.size(); ++i) {
    const json& p = list[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (auto e = checkKeys(p, at, {"vertex", "near", "mass"})) return e;
    Scene::PointMass pm;
    if (int(p.contains("vertex")) + int(p.contains("near")) != 1)
      return at + ": give exactly one of \"vertex\" or \"near\"";
    if (p.contains("vertex")) {
      pm.where.kind = PinSpec::Kind::Vertex;
      if (auto e = readInt(p, "vertex", at, pm.where.vertex, 0, 2147483647)) return e;
    } else {
      pm.where.kind = PinSpec::Kind::Near;
      if (auto e = readVec3(p["near"], at + ".near", pm.where.point)) return e;
    }
    if (!p.contains("mass")) return at + ".mass: missing (kg)";
    if (auto e = readNumber(p, "mass", at, pm.mass, 1e-9, 1e6)) return e;
    scene.pointMasses.push_back(pm);
  }
  return std::nullopt;
}

}  // namespace

Result<Scene> parseScene(const json& root, const std::string& source, const std::string& baseDir) {
  Scene scene;
  scene.sourcePath = source;
  if (auto e = checkKeys(root, source,
                         {"name", "description", "cloth", "simulation", "pins", "obstacles",
                          "point_masses", "jellies", "solver"}))
    return Error{*e};
  auto fail = [&](const std::string& message) { return Error{message}; };
  const std::string at = source + ": ";
  if (root.contains("name")) {
    if (!root["name"].is_string())
      return fail(expectedButGot(at + "name", "a string", root["name"]));
    scene.name = root["name"];
  }
  if (root.contains("description")) {
    if (!root["description"].is_string())
      return fail(expectedButGot(at + "description", "a string", root["description"]));
    scene.description = root["description"];
  }
  if (!root.contains("cloth")) return fail(at + "cloth: missing (a generator or an OBJ path)");
  if (root.contains("simulation")) {
    const json& sim = root["simulation"];
    for (auto [key, value] :
         {std::pair{"gravity", &scene.sim.gravity}, std::pair{"wind", &scene.sim.wind}})
      if (sim.is_object() && sim.contains(key))
        if (auto e = readVec3(sim[key], at + "simulation." + key, *value)) return fail(*e);
    if (auto e = validateVectors(scene.sim, at + "simulation")) return fail(*e);
    if (auto e =
            readParams(sim, SimParams::table(), scene.sim, at + "simulation", {"gravity", "wind"}))
      return fail(*e);
  }
  if (auto e = parseCloth(root["cloth"], at + "cloth", baseDir, scene)) return fail(*e);
  if (root.contains("pins"))
    if (auto e = parsePins(root["pins"], at + "pins", scene)) return fail(*e);
  if (root.contains("obstacles"))
    if (auto e = parseObstacles(root["obstacles"], at + "obstacles", baseDir, scene)) return fail(*e);
  if (root.contains("point_masses"))
    if (auto e = parsePointMasses(root["point_masses"], at + "point_masses", scene)) return fail(*e);
  if (root.contains("jellies"))
    if (auto e = parseJellies(root["jellies"], at + "jellies", baseDir, scene)) return fail(*e);
  if (root.contains("solver")) {
    const json& solver = root["solver"];
    if (!solver.is_object())
      return fail(expectedButGot(at + "solver", "an object with an \"id\"", solver));
    if (solver.contains("id")) {
      if (!solver["id"].is_string())
        return fail(expectedButGot(at + "solver.id", "a string", solver["id"]));
      scene.solverId = solver["id"];
    }
    scene.solverParams = solver;
    scene.solverParams.erase("id");
  }
  return scene;
}

namespace {

// Where `root` nests containers deeper than `limit` levels: the path of keys and indices down to
// that level, or nothing. Values are copied recursively (nlohmann::json's copy), so a file of
// 200 000 nested arrays under "cloth" overflowed the stack after it had parsed.
std::optional<std::string> nestedTooDeep(const json& root, int limit) {
  struct Item {
    const json* value;
    int depth;
    std::string path;
  };
  std::vector<Item> stack{{&root, 0, ""}};
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    if (!item.value->is_structured()) continue;
    if (item.depth >= limit) return item.path;
    if (item.value->is_object()) {
      for (const auto& [key, child] : item.value->items())
        stack.push_back({&child, item.depth + 1, item.path + (item.path.empty() ? "" : ".") + key});
    } else {
      for (size_t i = 0; i < item.value->size(); ++i)
        stack.push_back(
            {&(*item.value)[i], item.depth + 1, item.path + "[" + std::to_string(i) + "]"});
    }
  }
  return std::nullopt;
}

}  // namespace

Result<Scene> loadSceneFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error{path + ": file not found"};
  // Read from a directory, the stream throws (a folder given as the scene aborted both programs).
  if (std::filesystem::is_directory(path, ec))
    return Error{path + ": is a directory, not a scene file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  // Nothing but white space: nlohmann says only "unexpected end of input".
  if ((in >> std::ws).peek() == std::ifstream::traits_type::eof())
    return Error{path +
                 ": the file is empty; a scene file is a JSON object (README, \"Scene format\")"};
  if (!in.seekg(0)) in.clear();  // the parser counts lines from the top (a pipe reads on)
  json root;
  // JSON keeps the last of a key given twice in one object; a scene file that does so (two
  // "cloth" objects, say) is refused rather than read as one of them without a word.
  std::vector<std::set<std::string>> keys;  // of the objects being read, outermost first
  std::optional<std::string> repeated;
  const json::parser_callback_t noteKeys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second && !repeated)
      repeated = parsed.get<std::string>();
    return true;
  };
  try {
    root = json::parse(in, noteKeys);
  } catch (const json::parse_error& e) {
    return Error{path + ": invalid JSON: " + e.what()};
  } catch (const std::exception& e) {
    return Error{path + ": cannot read: " + e.what()};
  }
  if (repeated)
    return Error{path + ": key \"" + *repeated +
                 "\" is given twice in one object; JSON would keep only the last"};
  constexpr int kMaxNesting = 32;  // a scene needs 5 (obstacles[i].generator's keys)
  if (auto at = nestedTooDeep(root, kMaxNesting))
    return Error{path + ": " + *at + ": nested more than " + std::to_string(kMaxNesting) +
                 " levels deep; a scene file nests at most a few"};
  const std::string baseDir = std::filesystem::path(path).parent_path().string();
  auto scene = parseScene(root, path, baseDir);
  // A file without a name goes by its own (the viewer's scene list, the log, a saved copy), as
  // an OBJ does (sceneForObj), rather than all as "untitled".
  if (scene.ok() && !root.contains("name"))
    scene->name = std::filesystem::path(path).stem().string();
  return scene;
}

namespace {

// Whether the OBJ at `path` has a `stitch` record (a garment to sew, sim/stitches.h).
bool hasStitchRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    const size_t p = line.find_first_not_of(" \t");
    if (p != std::string::npos && line.compare(p, 6, "stitch") == 0 &&
        (p + 6 == line.size() || line[p + 6] == ' ' || line[p + 6] == '\t'))
      return true;
  }
  return false;
}

}  // namespace

Scene sceneForObj(const std::string& objPath) {
  Scene scene;
  scene.name = std::filesystem::path(objPath).stem().string();
  scene.description = "cloth loaded from " + objPath;
  scene.sourcePath = objPath;  // messages about the scene name the OBJ
  scene.cloth.kind = ClothSource::Kind::Obj;
  scene.cloth.objPath = objPath;
  scene.cloth.json = json{{"obj", objPath}};
  scene.groundBelowCloth = true;
  // A garment opens under the fastest of the solvers that sew it (Codim-IPC's dress: xpbd 48 ms
  // per step, impulse-nc 266).
  if (hasStitchRecords(objPath)) {
    scene.description = "garment loaded from " + objPath + ", sewn by xpbd";
    scene.solverId = "xpbd";
  }
  return scene;
}

void useSolver(Scene& scene, const std::string& solverId) {
  if (solverId == scene.solverId) return;
  scene.solverId = solverId;
  scene.solverParams = json::object();
}

Result<std::string> sceneFileText(const Scene& scene) {
  const json out = sceneToJson(scene);
  try {
    return out.dump(2) + "\n";
  } catch (const json::type_error&) {
    std::vector<std::string> bad;
    auto check = [&](const std::string& what, const json& text) {
      try {
        (void)text.dump();
      } catch (const json::type_error&) {
        bad.push_back(what + " (" + jsonText(text) + ")");
      }
    };
    check("the name", out["name"]);
    if (out["cloth"].contains("obj")) check("the cloth's obj", out["cloth"]["obj"]);
    for (const char* list : {"obstacles", "jellies"})
      for (size_t i = 0; out.contains(list) && i < out[list].size(); ++i)
        if (out[list][i].contains("obj"))
          check(std::string(list) + "[" + std::to_string(i) + "].obj", out[list][i]["obj"]);
    std::string list;
    for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
    return Error{"not valid UTF-8 text, which a JSON scene file cannot hold: " +
                 (list.empty() ? std::string("a name or path in the scene") : list) +
                 "; rename the file with UTF-8 characters"};
  }
}

std::optional<std::string> writeSceneFile(const std::string& path, const Scene& scene) {
  const auto text = sceneFileText(scene);
  if (!text) return path + ": not saved: " + text.error();
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return path + ": cannot write the scene file: " + std::strerror(errno);
    out << *text;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return path + ": cannot write the scene file: the write failed (a full disk?)";
    }
  }
  if (auto why = renameOver(temporary, path))
    return path + ": cannot write the scene file: " + *why;
  return std::nullopt;
}

json sceneToJson(const Scene& scene) {
  json out;
  out["name"] = scene.name;
  if (!scene.description.empty()) out["description"] = scene.description;
  json cloth = scene.cloth.json;
  if (scene.cloth.kind == ClothSource::Kind::Obj) cloth["obj"] = scene.cloth.objPath;
  const Transform& t = scene.transform;
  cloth["transform"] = {{"scale", t.scale},
                        {"rotate_deg", vecJson(t.rotateDeg)},
                        {"translate", vecJson(t.translate)}};
  out["cloth"] = cloth;
  json sim = writeParams(SimParams::table(), scene.sim);
  sim["gravity"] = vecJson(scene.sim.gravity);
  if (scene.sim.wind != Vec3::Zero()) sim["wind"] = vecJson(scene.sim.wind);
  out["simulation"] = sim;
  json pins = json::array();
  for (const PinSpec& pin : scene.pins) {
    json p;
    if (pin.kind == PinSpec::Kind::Vertex) p["vertex"] = pin.vertex;
    if (pin.kind == PinSpec::Kind::Near) p["near"] = vecJson(pin.point);
    if (pin.kind == PinSpec::Kind::Preset) p["preset"] = pin.preset;
    if (pin.target) p["target"] = vecJson(*pin.target);
    if (pin.ramp > 0) p["ramp"] = pin.ramp;
    pins.push_back(p);
  }
  out["pins"] = pins;
  json obstacles = json::array();
  for (const Obstacle& o : scene.obstacles) {
    json j{{"type", obstacleTypeName(o.type)}, {"friction", o.friction}};
    const json point = vecJson(o.point);
    if (o.type == Obstacle::Type::Plane) {
      j["point"] = point;
      j["normal"] = vecJson(o.normal);
    } else if (o.type == Obstacle::Type::Sphere) {
      j["center"] = point;
      j["radius"] = o.radius;
      if (o.angularVelocity != Vec3::Zero()) j["angular_velocity"] = vecJson(o.angularVelocity);
    } else if (o.type == Obstacle::Type::Box) {
      j["center"] = point;
      j["half_extents"] = vecJson(o.halfExtents);
    } else {
      for (const char* key : {"obj", "generator", "transform"})
        if (o.meshSpec.contains(key)) j[key] = o.meshSpec[key];
      if (o.point != Vec3::Zero()) {  // moved since it was built: the move joins the transform's translation
        json transform = j.value("transform", json::object());
        Vec3 translate = Vec3::Zero();
        if (transform.contains("translate"))
          translate = Vec3(transform["translate"][0], transform["translate"][1], transform["translate"][2]);
        translate += o.point;
        transform["translate"] = vecJson(translate);
        j["transform"] = transform;
      }
      if (o.angularVelocity != Vec3::Zero()) j["angular_velocity"] = vecJson(o.angularVelocity);
    }
    if (o.velocity != Vec3::Zero()) {
      j["velocity"] = vecJson(o.velocity);
      if (o.moveUntil < 1e9) j["move_until"] = o.moveUntil;
    }
    obstacles.push_back(j);
  }
  out["obstacles"] = obstacles;
  if (!scene.pointMasses.empty()) {
    json masses = json::array();
    for (const auto& pm : scene.pointMasses) {
      json j{{"mass", pm.mass}};
      if (pm.where.kind == PinSpec::Kind::Vertex) j["vertex"] = pm.where.vertex;
      else
        j["near"] = vecJson(pm.where.point);
      masses.push_back(j);
    }
    out["point_masses"] = masses;
  }
  if (!scene.jellies.empty()) {
    json jellies = json::array();
    for (const JellySpec& jelly : scene.jellies) jellies.push_back(jellyJson(jelly));
    out["jellies"] = jellies;
  }
  json solver = scene.solverParams;
  solver["id"] = scene.solverId;
  out["solver"] = solver;
  return out;
}

std::vector<int> pinPresetVertices(const TriangleMesh& rest, const std::string& preset) {
  // Work in the two axes of largest extent; "up" is y when y is one of them, else the second.
  const Vec3 lo = rest.positions.colwise().minCoeff(), hi = rest.positions.colwise().maxCoeff();
  const Vec3 extent = hi - lo;
  int axes[3] = {0, 1, 2};
  std::sort(axes, axes + 3, [&](int a, int b) { return extent[a] > extent[b]; });
  int up = axes[1], across = axes[0];
  if (axes[0] == 1) std::swap(up, across);
  // A cloth that is not a sheet (its least extent over a tenth of its largest: a tube, a skirt)
  // hangs from its top in y, across the larger of the other two.
  if (extent[axes[2]] > 0.1 * extent[axes[0]]) {
    up = 1;
    across = axes[0] == 1 ? axes[1] : axes[0];
  }
  const double size = extent.maxCoeff();
  auto nearest = [&](double a, double u) {
    int best = 0;
    double bestDistance = 1e300;
    for (int i = 0; i < rest.vertexCount(); ++i) {
      const double da = rest.positions(i, across) - a, du = rest.positions(i, up) - u;
      const double d = da * da + du * du;
      if (d < bestDistance) {
        bestDistance = d;
        best = i;
      }
    }
    return best;
  };
  std::vector<int> out;
  if (preset == "top-corners" || preset == "four-corners") {
    out.push_back(nearest(lo[across], hi[up]));
    out.push_back(nearest(hi[across], hi[up]));
    if (preset == "four-corners") {
      out.push_back(nearest(lo[across], lo[up]));
      out.push_back(nearest(hi[across], lo[up]));
    }
  } else if (preset == "top-edge") {
    const double band = 1e-6 * size + 1e-12;
    for (int i = 0; i < rest.vertexCount(); ++i)
      if (rest.positions(i, up) >= hi[up] - band) out.push_back(i);
  } else if (preset == "left-strip") {
    // A cantilever's clamp: every vertex within 1/8 of the width from the left side.
    for (int i = 0; i < rest.vertexCount(); ++i)
      if (rest.positions(i, across) <= lo[across] + extent[across] / 8) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Eigen::VectorXd vertexPointMasses(const ClothModel& cloth) {
  Eigen::VectorXd mass = Eigen::VectorXd::Zero(cloth.mesh.vertexCount());
  for (const auto& [vertex, extra] : cloth.pointMasses) mass[vertex] += extra;
  return mass;
}

Result<ClothModel> buildClothModel(const Scene& scene) {
  ClothModel model;
  model.warnings = scene.warnings;
  TriangleMesh rest;
  const ClothSource& c = scene.cloth;
  switch (c.kind) {
    case ClothSource::Kind::Grid:
      rest = makeGrid(c.width, c.height, c.columns, c.rows, c.diagonal, c.seed);
      break;
    case ClothSource::Kind::IrregularRectangle:
      rest = makeIrregularRectangle(c.width, c.height, c.triangles, c.seed);
      break;
    case ClothSource::Kind::IrregularDisk:
      rest = makeIrregularDisk(c.radius, c.triangles, c.seed);
      break;
    case ClothSource::Kind::Cylinder: {
      Eigen::MatrixX2d unrolled;
      rest = makeCylinder(c.radius, c.height, c.columns, c.rows, c.diagonal, c.seed, &unrolled);
      model.materialCoords = scene.transform.scale * unrolled;
      model.materialPeriod = scene.transform.scale * 2 * std::numbers::pi * c.radius;
      break;
    }
    case ClothSource::Kind::Cone:  // its flat rest state: unfolded (flatMaterialCoordinates)
      rest = makeCone(c.bottomRadius, c.topRadius, c.height, c.columns, c.rows, c.diagonal, c.seed);
      break;
    case ClothSource::Kind::Obj: {
      auto loaded = loadObj(c.objPath);
      if (!loaded) return Error{loaded.error()};
      rest = std::move(loaded->mesh);
      model.warnings.insert(model.warnings.end(), loaded->warnings.begin(), loaded->warnings.end());
      if (loaded->texcoords) model.materialCoords = loaded->texcoords;
      model.materialPeriod = loaded->texcoordPeriod;
      model.materialCoordsDropped = loaded->texcoordsDropped;
      model.stitches = std::move(loaded->stitches);
      break;
    }
  }
  if (c.kind != ClothSource::Kind::Obj && c.kind != ClothSource::Kind::Cylinder &&
      c.kind != ClothSource::Kind::Cone)
    model.materialCoords = scene.transform.scale * rest.positions.leftCols<2>();
  model.mesh = rest;
  model.mesh.positions = scene.transform.applied(rest.positions);
  const std::string name = c.kind == ClothSource::Kind::Obj ? c.objPath : scene.sourcePath + ": cloth";
  if (auto problem = validateMesh(model.mesh, name)) return Error{*problem};
  model.topology = buildTopology(model.mesh);
  model.stitchRestGaps = stitchGaps(model.stitches, model.mesh.positions);

  for (size_t i = 0; i < scene.pins.size(); ++i) {
    const PinSpec& pin = scene.pins[i];
    std::vector<int> vertices;
    if (pin.kind == PinSpec::Kind::Vertex) {
      if (pin.vertex >= model.mesh.vertexCount())
        return Error{scene.sourcePath + ": pins[" + std::to_string(i) + "].vertex: " +
                     std::to_string(pin.vertex) + " is out of range (the cloth has " +
                     std::to_string(model.mesh.vertexCount()) + " vertices, 0-based)"};
      vertices.push_back(pin.vertex);
    } else if (pin.kind == PinSpec::Kind::Near) {
      vertices.push_back(nearestVertex(model.mesh.positions, pin.point));
    } else {
      vertices = pinPresetVertices(rest, pin.preset);
    }
    for (int v : vertices) {
      const Vec3 target = pin.target ? *pin.target : Vec3(model.mesh.positions.row(v).transpose());
      auto existing = std::find_if(model.pins.begin(), model.pins.end(),
                                   [&](const auto& p) { return p.first == v; });
      if (existing != model.pins.end()) existing->second = target;
      else model.pins.emplace_back(v, target);
      std::erase_if(model.pinRamps, [&](const auto& r) { return r.first == v; });
      if (pin.ramp > 0) model.pinRamps.emplace_back(v, pin.ramp);
    }
  }
  for (size_t i = 0; i < scene.pointMasses.size(); ++i) {
    const auto& pm = scene.pointMasses[i];
    int vertex = pm.where.vertex;
    if (pm.where.kind == PinSpec::Kind::Near) vertex = nearestVertex(model.mesh.positions, pm.where.point);
    if (vertex >= model.mesh.vertexCount())
      return Error{scene.sourcePath + ": point_masses[" + std::to_string(i) + "].vertex: " +
                   std::to_string(vertex) + " is out of range (the cloth has " +
                   std::to_string(model.mesh.vertexCount()) + " vertices, 0-based)"};
    model.pointMasses.emplace_back(vertex, pm.mass);
  }
  model.flatCoords = flatMaterialCoordinates(model);
  // An OBJ written in another plane than the floor, opened as it is, stands on edge and falls
  // edge first: almost never what was meant, and the way out is not obvious.
  if (c.kind == ClothSource::Kind::Obj && model.pins.empty() && model.stitches.empty() &&
      standsOnEdge(model.mesh.positions, scene.sim.gravity))
    model.warnings.push_back(
        c.objPath +
        ": the cloth stands on edge (its plane lies along gravity) and nothing pins it, so it "
        "falls edge first; the viewer's Cloth and simulation > placement > lay flat turns it "
        "level, as a scene file's cloth.transform.rotate_deg does");
  return model;
}

}  // namespace clothlab
