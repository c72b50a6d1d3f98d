// Scene files: parsing, validation messages naming keys, round trip, built-in scenes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "test_util.h"

using namespace clothlab;
using nlohmann::json;

namespace {
json minimal() {
  return json::parse(R"({"cloth": {"generator": {"type": "grid", "columns": 5, "rows": 5}}})");
}
std::string parseError(const json& j) {
  auto result = parseScene(j, "scene.json", "");
  EXPECT_FALSE(result.ok()) << j.dump();
  return result.ok() ? "" : result.error();
}
}  // namespace

TEST(Scene, MinimalParsesWithDefaults) {
  auto scene = parseScene(minimal(), "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->solverId, "impulse-nc");
  EXPECT_DOUBLE_EQ(scene->sim.dt, 1e-3);
}

// A transform turns about x, then y, then z (a quarter turn about z takes x to y, one about x
// takes y to z), scales and moves.
TEST(Scene, ATransformTurnsScalesAndMoves) {
  Transform quarter;
  quarter.rotateDeg = Vec3(0, 0, 90);
  EXPECT_LT((quarter.applied(Positions(Eigen::RowVector3d(1, 0, 0))) - Eigen::RowVector3d(0, 1, 0))
                .norm(),
            1e-15);
  Transform both;
  both.rotateDeg = Vec3(90, 0, 90);  // y to z about x, then z stays about z
  EXPECT_LT(
      (both.applied(Positions(Eigen::RowVector3d(0, 1, 0))) - Eigen::RowVector3d(0, 0, 1)).norm(),
      1e-15);
  Transform t;
  t.scale = 2;
  t.rotateDeg = Vec3(30, -45, 90);
  t.translate = Vec3(0.5, -1, 2);
  Positions points(3, 3);
  points << 1, 0, 0, 0.2, -0.3, 0.7, -1, 2, 0.5;
  const Positions moved = t.applied(points);
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(
        (moved.row(i).transpose() - (t.rotation() * (2 * points.row(i).transpose()) + t.translate))
            .norm(),
        1e-14);
  EXPECT_NEAR((moved.row(0) - moved.row(1)).norm(), 2 * (points.row(0) - points.row(1)).norm(),
              1e-14);
}

TEST(Scene, WrongTypeNamesKey) {
  json j = minimal();
  j["cloth"]["generator"]["columns"] = "many";
  EXPECT_NE(parseError(j).find("scene.json: cloth.generator.columns: expected an integer"), std::string::npos);
  j = minimal();
  j["simulation"] = {{"density", "heavy"}};
  EXPECT_NE(parseError(j).find("simulation.density: expected a number"), std::string::npos);
  j = minimal();
  j["simulation"] = {{"gravity", {0, 1}}};
  EXPECT_NE(parseError(j).find("simulation.gravity"), std::string::npos);
}

// Gravity far beyond any sandbox's (the first step would outrun every solver's max_speed) is bad
// input, named with its range, in the scene file and as a live edit.
TEST(Scene, GravityBeyondItsRangeIsRefused) {
  json j = minimal();
  j["simulation"] = {{"gravity", {0, 2147483648.0, 0}}};
  const std::string error = parseError(j);
  EXPECT_NE(error.find("simulation.gravity: 2.14748e+09 is outside the valid range [-1000, 1000] m/s^2"),
            std::string::npos)
      << error;
  j["simulation"] = {{"gravity", {-1000, 0, 1000}}};
  auto scene = parseScene(j, "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->sim.gravity, Vec3(-1000, 0, 1000));

  SimParams live;
  live.gravity = Vec3(0, -1001, 0);
  ASSERT_TRUE(validateGravity(live.gravity, "simulation.gravity"));
  EXPECT_NE(validateGravity(live.gravity, "simulation.gravity")->find("-1001"), std::string::npos);
  live.gravity = Vec3(0, std::numeric_limits<double>::infinity(), 0);
  EXPECT_EQ(validateGravity(live.gravity, "simulation.gravity"), "simulation.gravity: non-finite value");
  EXPECT_FALSE(validateGravity(Vec3(0, -9.81, 0), "simulation.gravity"));
}

TEST(Scene, TheAirAndTheWindReadWriteAndAreChecked) {
  json j = minimal();
  j["simulation"] = {{"air_density", 1.2}, {"wind", {3, 0, -1.5}}};
  auto scene = parseScene(j, "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->sim.airDensity, 1.2);
  EXPECT_EQ(scene->sim.wind, Vec3(3, 0, -1.5));
  const json written = sceneToJson(*scene);
  EXPECT_EQ(written["simulation"]["wind"], json({3, 0, -1.5}));
  EXPECT_EQ(written["simulation"]["air_density"], 1.2);
  // Calm air writes no wind.
  EXPECT_FALSE(
      sceneToJson(*parseScene(minimal(), "scene.json", ""))["simulation"].contains("wind"));

  j["simulation"] = {{"wind", {0, 150, 0}}};
  EXPECT_NE(parseError(j).find(
                "scene.json: simulation.wind: 150 is outside the valid range [-100, 100] m/s"),
            std::string::npos)
      << parseError(j);
  j["simulation"] = {{"wind", {1, 2}}};
  EXPECT_NE(parseError(j).find("simulation.wind: expected an array of 3 numbers"),
            std::string::npos)
      << parseError(j);
  j["simulation"] = {{"air_density", 11}};
  EXPECT_NE(parseError(j).find("simulation.air_density: 11 is outside the valid range [0, 10]"),
            std::string::npos)
      << parseError(j);
  // A live edit is checked the same way, and changes nothing when refused.
  auto simulation = Simulation::create(*scene);
  ASSERT_TRUE(simulation.ok()) << simulation.error();
  SimParams edit = (*simulation)->sim();
  edit.wind = Vec3(0, 0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ((*simulation)->setSimParams(edit), "simulation.wind: non-finite value");
  EXPECT_EQ((*simulation)->sim().wind, Vec3(3, 0, -1.5));
}

TEST(Scene, ObstaclesAreCheckedAsLiveEditsAre) {
  json j = minimal();
  j["obstacles"] = {{{"type", "sphere"}, {"center", {0, 1e300, 0}}}};
  EXPECT_NE(parseError(j).find("obstacles[0].center: beyond 1e+06 m"), std::string::npos) << parseError(j);
  j["obstacles"] = {{{"type", "plane"}, {"friction", 10.5}}};
  EXPECT_NE(parseError(j).find("obstacles[0].friction: 10.5 is outside the valid range [0, 10]"),
            std::string::npos)
      << parseError(j);
}

TEST(Scene, NonPositiveDensityAndTimeStep) {
  for (double bad : {0.0, -1.0}) {
    json j = minimal();
    j["simulation"] = {{"density", bad}};
    EXPECT_NE(parseError(j).find("simulation.density"), std::string::npos);
    j = minimal();
    j["simulation"] = {{"dt", bad}};
    EXPECT_NE(parseError(j).find("simulation.dt"), std::string::npos);
  }
}

TEST(Scene, UnknownKeysAndGenerators) {
  json j = minimal();
  j["simulaton"] = json::object();
  EXPECT_NE(parseError(j).find("simulaton: unknown key"), std::string::npos);
  j = minimal();
  j["cloth"]["generator"]["type"] = "hexagon";
  EXPECT_NE(parseError(j).find("unknown generator 'hexagon'"), std::string::npos);
  j = minimal();
  j["obstacles"] = {{{"type", "cone"}}};
  EXPECT_NE(parseError(j).find("obstacles[0].type: unknown obstacle 'cone'"), std::string::npos);
  // A cone cloth has two radii, not one.
  j = minimal();
  j["cloth"]["generator"] = {{"type", "cone"}, {"radius", 0.2}};
  EXPECT_NE(parseError(j).find("cloth.generator.radius: unknown key"), std::string::npos)
      << parseError(j);
  j["cloth"]["generator"] = {{"type", "cone"}, {"top_radius", 0.2}, {"bottom_radius", -1}};
  EXPECT_NE(parseError(j).find("cloth.generator.bottom_radius"), std::string::npos)
      << parseError(j);
}

TEST(Scene, UnknownSolverAndSolverParameter) {
  json j = minimal();
  j["solver"] = {{"id", "magic"}};
  auto scene = parseScene(j, "scene.json", "");
  ASSERT_TRUE(scene.ok());
  auto simulation = Simulation::create(*scene);
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("solver.id: unknown solver 'magic'"), std::string::npos);
  j["solver"] = {{"id", "impulse-nc"}, {"tolerance", "tight"}};
  simulation = Simulation::create(*parseScene(j, "scene.json", ""));
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("solver.tolerance: expected a number"), std::string::npos);
  j["solver"] = {{"id", "impulse-nc"}, {"linear_solver", "pardiso"}};
  simulation = Simulation::create(*parseScene(j, "scene.json", ""));
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("'pardiso' is not one of"), std::string::npos);
}

TEST(Scene, PinOutOfRangeNamesPin) {
  json j = minimal();
  j["pins"] = {{{"vertex", 3}}, {{"vertex", 25}}};
  auto simulation = Simulation::create(*parseScene(j, "scene.json", ""));
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("pins[1].vertex: 25 is out of range"), std::string::npos);
}

TEST(Scene, InvalidJsonAndMissingObj) {
  const std::string path = clothlab::test::writeFile("broken.json", "{\"cloth\": ");
  auto broken = loadSceneFile(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().find(path + ": invalid JSON"), std::string::npos);
  // An empty file, or one of white space only, is called empty (nlohmann: "unexpected end of
  // input").
  for (const std::string& text : {std::string(), std::string(" \n\t\r\n")}) {
    const std::string empty = clothlab::test::writeFile("empty.json", text);
    auto none = loadSceneFile(empty);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(
        none.error(),
        empty + ": the file is empty; a scene file is a JSON object (README, \"Scene format\")");
  }
  // The look past leading white space does not shift the line numbers of a parse error.
  const auto late = loadSceneFile(clothlab::test::writeFile("late.json", "\n\n{\"cloth\": "));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().find("parse error at line 3"), std::string::npos) << late.error();
  // A folder given as the scene (a path with a '/' or ending in .json) is named as one; reading
  // it threw and aborted the viewer and clothlab-cli.
  const std::string folder = (clothlab::test::tempDir() / "folder.json").string();
  std::filesystem::create_directories(folder);
  for (const std::string& argument : {folder, clothlab::test::tempDir().string()}) {
    auto resolved = resolveScene(argument);
    ASSERT_FALSE(resolved.ok()) << argument;
    EXPECT_NE(resolved.error().find(argument + ": is a directory, not a scene file"),
              std::string::npos)
        << resolved.error();
  }
  const std::string objScene =
      clothlab::test::writeFile("objscene.json", R"({"cloth": {"obj": "missing.obj"}})");
  auto scene = loadSceneFile(objScene);
  ASSERT_TRUE(scene.ok());
  EXPECT_EQ(scene->name, "objscene");  // a file without "name" goes by its own
  auto simulation = Simulation::create(*scene);
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("missing.obj: file not found"), std::string::npos);
}

// An OBJ obstacle's loader warnings travel with the scene to the simulation's warnings (which
// clothlab-cli prints and the viewer shows), naming the obstacle's key and the file.
TEST(Scene, ObstacleObjWarningsReachTheSimulation) {
  const std::string obj = clothlab::test::writeFile(
      "pyramid.obj", "v -1 0 -1\nv 1 0 -1\nv 1 0 1\nv -1 0 1\nv 0 0.5 0\n"
                     "f 1 2 5\nf 2 3 5\nf 3 4 5\nf 4 1 5\nf 1 2 2\nstitch 1 2 3 0.5\n");
  const std::string path = clothlab::test::writeFile(
      "pyramid_scene.json", R"({"cloth": {"generator": {"type": "grid", "columns": 5, "rows": 5}},
                               "obstacles": [{"type": "mesh", "obj": "pyramid.obj"}]})");
  auto scene = loadSceneFile(path);
  ASSERT_TRUE(scene.ok()) << scene.error();
  auto simulation = Simulation::create(*scene);
  ASSERT_TRUE(simulation.ok()) << simulation.error();
  const auto& warnings = (*simulation)->cloth().warnings;
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind(path + ": obstacles[0].obj: " + obj + ": dropped 1 zero-area triangle(s) (triangle 5)", 0),
            0u)
      << warnings[0];
  EXPECT_NE(warnings[1].find(obj + ": ignored its 1 'stitch' record(s): the obstacle is not sewn"),
            std::string::npos)
      << warnings[1];
}

// An OBJ whose file name is not UTF-8 (Latin-1 "caf\xe9.obj") cannot be named in a JSON scene
// file: the save is refused, naming what, instead of throwing (which ended the viewer).
TEST(Scene, SceneFileTextRefusesNamesThatAreNotUtf8) {
  const std::string triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  const std::string latin1 = clothlab::test::writeFile("caf\xe9.obj", triangle);
  const std::string utf8 = clothlab::test::writeFile("caf\xc3\xa9.obj", triangle);
  const auto refused = sceneFileText(sceneForObj(latin1));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("not valid UTF-8"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("the cloth's obj"), std::string::npos) << refused.error();
  const auto written = sceneFileText(sceneForObj(utf8));
  ASSERT_TRUE(written.ok()) << written.error();
  auto again = parseScene(json::parse(*written), "again.json", "");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->cloth.objPath, utf8);
}

// writeSceneFile replaces a scene file through a temporary one: the file reads back as the
// scene, no temporary is left, and where the file cannot be written (its folder is missing, or
// its path is a folder) the message names it and what was there is left as it was.
TEST(Scene, WriteSceneFileReplacesTheFileWholeOrNotAtAll) {
  auto scene = parseScene(minimal(), "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  const std::string path = clothlab::test::writeFile("written_scene.json", "old contents\n");
  ASSERT_FALSE(writeSceneFile(path, *scene));
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto again = parseScene(json::parse(text), path, "");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(sceneToJson(*again), sceneToJson(*scene));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  const std::string missing = path + ".d/sub/scene.json";
  const auto noFolder = writeSceneFile(missing, *scene);
  ASSERT_TRUE(noFolder);
  EXPECT_EQ(noFolder->rfind(missing + ": cannot write the scene file: ", 0), 0u) << *noFolder;

  const std::string folder = path + ".folder";
  std::filesystem::create_directories(folder + "/inside");
  const auto isFolder = writeSceneFile(folder, *scene);
  ASSERT_TRUE(isFolder);
  EXPECT_EQ(isFolder->rfind(folder + ": cannot write the scene file: ", 0), 0u) << *isFolder;
  EXPECT_TRUE(std::filesystem::is_directory(folder + "/inside"));
  EXPECT_FALSE(std::filesystem::exists(folder + ".tmp"));
}

// A value of the wrong kind is quoted briefly: scalars and short flat arrays as written, other
// arrays and objects by their size. A scene file nested deeper than a scene can be is refused
// after parsing: 200 000 nested arrays overflowed the stack (quoted whole in a message, or
// copied with the cloth's or solver's keys).
TEST(Scene, WrongKindsOfValuesAreQuotedBriefly) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const std::string where : {"simulation", "cloth"}) {
    const std::string text =
        where == "cloth"
            ? R"({"cloth": {"generator": {"type": "grid"}, "transform": )" + deep + "}}"
            : R"({"cloth": {"generator": {"type": "grid"}}, "simulation": )" + deep + "}";
    const std::string path = clothlab::test::writeFile("deep.json", text);
    auto loaded = loadSceneFile(path);
    ASSERT_FALSE(loaded.ok());
    const std::string at = where == "cloth" ? "cloth.transform[0]" : "simulation[0]";
    EXPECT_NE(loaded.error().find(path + ": " + at), std::string::npos)
        << loaded.error().substr(0, 300);
    EXPECT_NE(loaded.error().find("nested more than 32 levels deep"), std::string::npos)
        << loaded.error().substr(0, 300);
  }
  json nested = json::array();
  for (int i = 0; i < 10; ++i) nested = json::array({nested});
  json j = minimal();
  j["pins"] = json::array({nested});
  auto scene = parseScene(j, "nested.json", "");
  ASSERT_FALSE(scene.ok());
  EXPECT_EQ(scene.error(), "nested.json: pins[0]: expected an object, got an array of 1 element");
  j = minimal();
  j["simulation"] = {{"gravity", {0, "down", 0}}};
  scene = parseScene(j, "s.json", "");
  ASSERT_FALSE(scene.ok());
  EXPECT_EQ(scene.error(), "s.json: simulation.gravity[1]: expected a number, got \"down\"");
  // Each "expected" names what was given instead, and where: the element of a vector, the list
  // entry that is not an object, the type that is missing.
  const std::vector<std::pair<std::string, json>> cases = {
      {"s.json: obstacles[0]: expected an object with a \"type\" (plane, sphere, box or mesh), got "
       "true",
       {{"obstacles", {true}}}},
      {"s.json: obstacles[0].type: missing (plane, sphere, box or mesh)",
       {{"obstacles", {{{"center", {0, 0, 0}}}}}}},
      {"s.json: obstacles[0].center[1]: expected a number, got {}",
       {{"obstacles", {{{"type", "sphere"}, {"center", {0, json::object(), 0}}}}}}},
      {"s.json: pins[0].preset: expected a string, got []",
       {{"pins", {{{"preset", json::array()}}}}}},
      {"s.json: cloth.generator.type: expected grid, irregular-rectangle, irregular-disk, "
       "cylinder or cone, got 3",
       {{"cloth", {{"generator", {{"type", 3}}}}}}},
      {"s.json: description: expected a string, got 0.5", {{"description", 0.5}}},
      {"s.json: point_masses: expected an array, got \"heavy\"", {{"point_masses", "heavy"}}}};
  for (const auto& [message, change] : cases) {
    j = minimal();
    j.update(change);
    scene = parseScene(j, "s.json", "");
    ASSERT_FALSE(scene.ok()) << change.dump();
    EXPECT_EQ(scene.error(), message);
  }
  j = minimal();
  j["solver"] = {{"id", "xpbd"}, {"iterations", std::string(500, 'x')}};
  scene = parseScene(j, "s.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();  // solver parameters are read by the solver
  auto simulation = Simulation::create(*scene);
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("solver.iterations: expected an integer, got \"xxxx"),
            std::string::npos)
      << simulation.error();
  EXPECT_LT(simulation.error().size(), 200u) << simulation.error();
}

// Counts written as whole numbers with a point or an exponent (8.0, 1e2) read as integers, in the
// scene and in solver parameters; a fraction is refused, and a whole number beyond the range is
// refused as out of range, not as "not an integer".
TEST(Scene, WholeNumbersWithAPointOrExponentReadAsIntegers) {
  json j = minimal();
  j["cloth"]["generator"]["columns"] = 8.0;
  j["simulation"] = {{"substeps", 2.0}};
  j["solver"] = {{"id", "xpbd"}, {"iterations", 1e2}};
  auto scene = parseScene(j, "s.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->cloth.columns, 8);
  EXPECT_EQ(scene->sim.substeps, 2);
  auto simulation = Simulation::create(*scene);
  ASSERT_TRUE(simulation.ok()) << simulation.error();
  EXPECT_EQ((*simulation)->solver().params()["iterations"], 100);

  j["cloth"]["generator"]["columns"] = 8.5;
  EXPECT_NE(parseError(j).find("cloth.generator.columns: expected an integer, got 8.5"),
            std::string::npos);
  j = minimal();
  j["solver"] = {{"id", "xpbd"}, {"iterations", 1e9}};
  scene = parseScene(j, "s.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  simulation = Simulation::create(*scene);
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("solver.iterations: 1000000000.0 is outside the valid range"),
            std::string::npos)
      << simulation.error();
  j["solver"]["iterations"] = 1e300;
  simulation = Simulation::create(*parseScene(j, "s.json", ""));
  ASSERT_FALSE(simulation.ok());
  EXPECT_NE(simulation.error().find("solver.iterations: expected an integer"), std::string::npos)
      << simulation.error();
}

// A key given twice in one object is refused (JSON would keep the last without a word); the
// same key in different objects is fine.
TEST(Scene, AKeyGivenTwiceInOneObjectIsRefused) {
  const std::string grid = R"({"generator": {"type": "grid", "columns": 5, "rows": 5}})";
  auto twice = loadSceneFile(clothlab::test::writeFile(
      "twice.json", R"({"cloth": )" + grid + R"(, "cloth": )" + grid + "}"));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().find("twice.json: key \"cloth\" is given twice in one object"),
            std::string::npos)
      << twice.error();
  auto inner = loadSceneFile(clothlab::test::writeFile(
      "inner.json",
      R"({"cloth": )" + grid + R"(, "simulation": {"dt": 0.001, "damping": 1, "dt": 0.002}})"));
  ASSERT_FALSE(inner.ok());
  EXPECT_NE(inner.error().find("key \"dt\" is given twice"), std::string::npos) << inner.error();
  auto apart = loadSceneFile(clothlab::test::writeFile(
      "apart.json", R"({"cloth": )" + grid +
                        R"(, "obstacles": [{"type": "sphere", "center": [0, -2, 0], "radius": 0.5},
                                           {"type": "plane", "point": [0, -3, 0], "normal": [0, 1, 0]}]})"));
  EXPECT_TRUE(apart.ok()) << apart.error();
}

TEST(Scene, RoundTripThroughJson) {
  json j = minimal();
  j["pins"] = {{{"preset", "top-corners"}}, {{"vertex", 12}, {"target", {0, 1, 0}}}};
  j["obstacles"] = {{{"type", "sphere"}, {"center", {0, -1, 0}}, {"radius", 0.3}}};
  j["simulation"] = {{"density", 0.2}, {"gravity", {0, 0, -9.81}}};
  auto scene = parseScene(j, "scene.json", "");
  ASSERT_TRUE(scene.ok()) << scene.error();
  auto again = parseScene(sceneToJson(*scene), "again.json", "");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(sceneToJson(*again), sceneToJson(*scene));
  auto a = buildClothModel(*scene), b = buildClothModel(*again);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->pins.size(), 3u);
  EXPECT_EQ(a->pins, b->pins);
}

TEST(Scene, BuiltinScenesLoadAndMatchPaper) {
  const auto scenes = builtinScenes();
  std::vector<std::string> names;
  for (const auto& s : scenes) names.push_back(s.name);
  for (const char* expected : {"hanging", "tablecloth", "sphere-drop"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const auto& entry : scenes) {
    auto scene = loadSceneFile(entry.path);
    ASSERT_TRUE(scene.ok()) << scene.error();
    // The BDB11 scenes run at h = 1 ms (the CKV19 ones and the compare-mode ones set their own).
    for (const char* bdb : {"hanging", "tablecloth", "sphere-drop"})
      if (entry.name == bdb) {
        EXPECT_DOUBLE_EQ(scene->sim.dt, 1e-3) << entry.name;
      }
    EXPECT_FALSE(entry.description.empty());
  }
  auto table = buildClothModel(*resolveScene("tablecloth"));
  ASSERT_TRUE(table.ok());
  EXPECT_NEAR(table->mesh.triangleCount(), 4722, 0.02 * 4722);
  auto sphere = buildClothModel(*resolveScene("sphere-drop"));
  ASSERT_TRUE(sphere.ok());
  EXPECT_EQ(sphere->mesh.vertexCount(), 10000);
  EXPECT_FALSE(resolveScene("no-such-scene").ok());
}
