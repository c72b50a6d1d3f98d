#pragma once
// Small helpers shared by the tests: temporary files and scenes built in code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/alongside.h"
#include "sim/generators.h"
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

// A sphere and an axis-aligned box at `center` (the other fields as Obstacle's defaults).
inline Obstacle sphereObstacle(const Vec3& center, double radius) {
  Obstacle o;
  o.type = Obstacle::Type::Sphere;
  o.point = center;
  o.radius = radius;
  return o;
}
inline Obstacle boxObstacle(const Vec3& center, const Vec3& halfExtents) {
  Obstacle o;
  o.type = Obstacle::Type::Box;
  o.point = center;
  o.halfExtents = halfExtents;
  return o;
}

// The faces of an n x n grid of OBJ vertices (row by row, after `before` others), two triangles
// per cell.
inline void writeGridFaces(std::ostream& obj, int n, int before = 0) {
  for (int j = 0; j + 1 < n; ++j)
    for (int i = 0; i + 1 < n; ++i) {
      const int a = before + j * n + i + 1;
      obj << "f " << a << " " << a + 1 << " " << a + n << "\nf " << a + 1 << " " << a + n + 1 << " "
          << a + n << "\n";
    }
}

// Steps until a step fails or `maxSteps` have run; the failure's message (nullopt: none) and
// the number of steps taken, the failed one included.
inline std::pair<std::optional<std::string>, int> stepUntilError(Simulation& simulation, int maxSteps) {
  std::optional<std::string> error;
  int steps = 0;
  while (!error && steps < maxSteps) {
    error = simulation.step();
    ++steps;
  }
  return {error, steps};
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
  return clothlab::grabAtVertex(simulation.cloth(), vertex, target);
}

// The flat sheet (x, y) in z = 0 wrapped round the y axis onto a cylinder of `radius` touching
// z = 0 along x = 0: an isometry.
inline Positions wrappedOntoCylinder(const Positions& flat, double radius) {
  Positions out = flat;
  for (int i = 0; i < flat.rows(); ++i) {
    const double angle = flat(i, 0) / radius;
    out.row(i) << radius * std::sin(angle), flat(i, 1), radius * (1 - std::cos(angle));
  }
  return out;
}

// The largest stretch |e| / |e0| - 1 over the cloth's edges.
inline double largestStretch(const Simulation& sim) {
  const auto& edges = sim.cloth().topology.edges;
  const Positions& rest = sim.cloth().mesh.positions;
  double largest = -1;
  for (const auto& e : edges)
    largest = std::max(largest, (sim.surface().row(e[0]) - sim.surface().row(e[1])).norm() /
                                        (rest.row(e[0]) - rest.row(e[1])).norm() - 1);
  return largest;
}

// The middle of triangle t at positions x.
inline Vec3 triangleMiddle(const Simulation& sim, const Positions& x, int t) {
  const Tri& f = sim.cloth().mesh.triangles[t];
  return Vec3((x.row(f[0]) + x.row(f[1]) + x.row(f[2])).transpose() / 3);
}

// A grab of the middle of the triangle whose middle is nearest the cloth's centre.
inline Grab grabTheMiddle(const Simulation& sim) {
  const Vec3 centre = sim.surface().colwise().mean().transpose();
  Grab grab;
  for (int t = 1; t < static_cast<int>(sim.cloth().mesh.triangles.size()); ++t)
    if ((triangleMiddle(sim, sim.surface(), t) - centre).norm() <
        (triangleMiddle(sim, sim.surface(), grab.triangle) - centre).norm())
      grab.triangle = t;
  return grab;
}

struct MiddleDrag {
  double stretch = 0;     // the largest over the steps
  double miss = 0;        // the grabbed point's distance from the cursor at the end [m]
  double fromFarPin = 0;  // the grabbed point's distance from the pin the drag moves away from [m]
  double reach = 0;       // that distance in the rest state [m]
  double iterations = 0;  // the solver's position iterations per step, on average
  int aboveTolerance = 0; // steps that ended above the solver's tolerance
  double worstError = 0;  // the largest constraint error a step handed on (reportedConstraintError)
};

// The scene hanging for `settle` steps, then the point at the middle of the triangle nearest
// the cloth's centre dragged by `offset` over `steps` steps and held there for `hold` more.
inline MiddleDrag dragTheMiddle(const Scene& scene, int settle, const Vec3& offset, int steps, int hold) {
  auto sim = makeSimulation(scene);
  MiddleDrag result;
  if (!sim) return result;
  for (int i = 0; i < settle; ++i) EXPECT_FALSE(sim->step().has_value());
  Grab grab = grabTheMiddle(*sim);
  auto middle = [&](const Positions& x, int t) { return triangleMiddle(*sim, x, t); };
  const Vec3 from = middle(sim->surface(), grab.triangle), to = from + offset;
  for (int i = 0; i < steps + hold; ++i) {
    grab.target = from + std::min(1.0, (i + 1.0) / steps) * offset;
    EXPECT_FALSE(sim->setGrab(grab).has_value());
    EXPECT_FALSE(sim->step().has_value()) << "step " << i + 1;
    result.stretch = std::max(result.stretch, largestStretch(*sim));
    result.iterations += sim->lastStats().positionIterations / double(steps + hold);
    result.aboveTolerance += !sim->lastStats().converged;
    result.worstError = std::max(result.worstError, reportedConstraintError(sim->lastStats()));
  }
  const Vec3 grabbed = middle(sim->surface(), grab.triangle);
  result.miss = (grabbed - to).norm();
  // The pin on the side the drag moves away from: the farther from the cursor.
  Vec3 farPin = Vec3::Zero();
  double farthest = -1;
  for (const auto& [vertex, target] : sim->cloth().pins)
    if ((target - to).norm() > farthest) {
      farthest = (target - to).norm();
      farPin = target;
      const Positions& rest = sim->cloth().mesh.positions;
      result.reach = (middle(rest, grab.triangle) - rest.row(vertex).transpose()).norm();
    }
  result.fromFarPin = (grabbed - farPin).norm();
  return result;
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

// A jelly ball of `radius` centred at `center` (makeEllipsoid's `segments` and `rings`), of the
// default material.
inline JellySpec jellyBall(double radius, const Vec3& center, int segments = 24, int rings = 12) {
  TriangleMesh mesh = makeEllipsoid(Vec3::Constant(radius), segments, rings);
  mesh.positions.rowwise() += center.transpose();
  JellySpec ball;
  ball.surface = std::make_shared<const TriangleMesh>(std::move(mesh));
  return ball;
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

// Every helper thread of sim/alongside.h held by a task of its own until this is destroyed, so
// that whatever is offered meanwhile is taken back by the thread that offered it. `ready()` is
// false (a test failure) if the helpers did not all begin within 10 s.
class BusyHelpers {
 public:
  BusyHelpers() {
    const int count = alongside_detail::helperLimit();
    for (int k = 0; k < count; ++k)
      tasks_.emplace_back([this] {
        std::unique_lock lock(mutex_);
        ++begun_;
        changed_.notify_all();
        changed_.wait(lock, [this] { return released_; });
      });
    std::unique_lock lock(mutex_);
    ready_ = changed_.wait_for(lock, std::chrono::seconds(10), [&] { return begun_ == count; });
    EXPECT_TRUE(ready_) << begun_ << " of " << count << " helpers began";
  }
  ~BusyHelpers() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
    for (auto& task : tasks_)
      if (task.valid()) task.get();
  }
  bool ready() const { return ready_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int begun_ = 0;
  bool released_ = false, ready_ = false;
  std::vector<Alongside<void>> tasks_;  // last: destroyed (waited for) first
};

}  // namespace clothlab::test
