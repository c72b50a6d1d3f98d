#pragma once
// Small helpers shared by the tests: temporary files and scenes built in code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/scene.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"

namespace clothlab::test {

// The scene's simulation; a test failure (and nullptr) when it cannot be built.
inline std::unique_ptr<Simulation> makeSimulation(const Scene& scene) {
  auto simulation = Simulation::create(scene);
  EXPECT_TRUE(simulation.ok()) << simulation.error();
  return simulation ? std::move(simulation).value() : nullptr;
}

// A built-in scene run by `solver` (the scene's parameters for another solver dropped).
inline Scene builtinScene(const std::string& name, const std::string& solver) {
  auto scene = resolveScene(name);
  if (!scene) {
    ADD_FAILURE() << scene.error();
    return Scene{};
  }
  useSolver(*scene, solver);
  return *scene;
}

// A grab of `vertex` (the first of its triangles, all weight on the vertex) toward `target`.
inline Grab grabAtVertex(const Simulation& simulation, int vertex, const Vec3& target = Vec3::Zero()) {
  Grab grab;
  grab.triangle = simulation.cloth().topology.vertexTris[vertex].front();
  const Tri& f = simulation.cloth().mesh.triangles[grab.triangle];
  grab.barycentric = Vec3(f[0] == vertex, f[1] == vertex, f[2] == vertex);
  grab.target = target;
  return grab;
}

inline std::filesystem::path tempDir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("clothlab_tests_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string writeFile(const std::string& name, const std::string& text) {
  const auto path = tempDir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// A flat square in the x-z plane at height `height`, hanging from two corners (no obstacles).
inline Scene hangingScene(ClothSource::Kind kind, int resolution, const std::string& solver,
                          double height = 1.0) {
  Scene scene;
  scene.name = "test-hanging";
  scene.sourcePath = "test";
  scene.cloth.kind = kind;
  scene.cloth.columns = scene.cloth.rows = resolution;
  scene.cloth.triangles = 2 * (resolution - 1) * (resolution - 1);
  scene.cloth.seed = 5;
  scene.transform.rotateDeg = Vec3(-90, 0, 0);
  scene.transform.translate = Vec3(0, height, 0);
  scene.sim.bending = 1e-4;
  scene.sim.damping = 0.05;
  PinSpec pins;
  pins.kind = PinSpec::Kind::Preset;
  pins.preset = "top-corners";
  scene.pins.push_back(pins);
  scene.solverId = solver;
  return scene;
}

}  // namespace clothlab::test
