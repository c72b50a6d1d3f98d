// clothlab-cli: headless runs of ClothLab scenes (batch work, benchmarks, tests).
//
//   clothlab-cli scenes
//   clothlab-cli info MESH.obj|SCENE [--solver ID]
//   clothlab-cli run SCENE [--solver ID] [--steps N] [--dt S] [--tol M] [--density KG_PER_M2]
//                [--bending K] [--bending-rest flat|loaded] [--air-density KG_PER_M3]
//                [--wind X,Y,Z] [--param KEY=VALUE]... [--obstacle OBJ]... [--stats FILE]
//                [--out DIR [--out-fine]]
//                [--every K] [--quiet]
//   clothlab-cli bench [SCENE ...] [--steps N] [--json FILE]
//   clothlab-cli compare SCENE|PRESET [--solvers ID[:KEY=VALUE...][@SCENE],...]
//                [--obstacle OBJ]... [--steps N] [--average N] [--jobs N] [--json F] [--csv F]
//                [--out DIR]
// Exit codes: 0 success, 2 bad input (message on stderr), 3 the simulation diverged.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numbers>
#include <thread>
#include <tuple>

#include "app/cli/commands.h"
#include "sim/compare_presets.h"
#include "sim/format.h"
#include "sim/json_text.h"
#include "sim/linear/runtime.h"
#include "sim/material.h"
#include "sim/obj_io.h"
#include "sim/scene_library.h"
#include "sim/self_collision.h"
#include "sim/simulation.h"
#include "sim/snapshot.h"
#include "sim/solver_registry.h"

namespace clothlab::cli {
namespace {

int fail(const std::string& message) {
  std::cerr << "clothlab-cli: " << message << "\n";
  return kExitBadInput;
}

int commandScenes() {
  for (const SceneEntry& scene : builtinScenes())
    std::cout << scene.name << "\t" << scene.description << "\n";
  return kExitOk;
}

int commandInfo(const std::string& argument, const std::string& solverId) {
  nlohmann::json out;
  TriangleMesh mesh;
  std::optional<Scene> scene;
  // The cloth as simulated, or why it cannot be (an OBJ's `info` reports on it all the same).
  Result<ClothModel> model = Error{};
  if (isObjPath(argument)) {
    auto loaded = loadObj(argument, /*validate=*/false);
    if (!loaded) return fail(loaded.error());
    mesh = loaded->mesh;
    scene = sceneForObj(argument);
    model = buildClothModel(*scene);
    // The cloth's warnings (the loader's among them) where it can be simulated, else the loader's.
    out["warnings"] = model ? model->warnings : loaded->warnings;
  } else {
    auto resolved = resolveScene(argument);
    if (!resolved) return fail(resolved.error());
    scene = *resolved;
    model = buildClothModel(*scene);
    if (!model) return fail(model.error());
    mesh = model->mesh;
    out["warnings"] = model->warnings;
  }
  if (!solverId.empty()) useSolver(*scene, solverId);
  if (!createSolver(scene->solverId))
    return fail("--solver: unknown solver '" + scene->solverId + "' (known: " + solverIdList() + ")");
  const MeshTopology topology = buildTopology(mesh);
  out["source"] = argument;
  out["vertices"] = mesh.vertexCount();
  out["triangles"] = mesh.triangleCount();
  out["edges"] = topology.edgeCount();
  out["boundary_edges"] = topology.boundaryEdges.size();
  out["boundary_loops"] = topology.boundaryLoops.size();
  out["components"] = topology.componentCount;
  out["non_manifold_edges"] = topology.nonManifoldEdgeCount;
  out["degenerate_triangles"] = topology.degenerateTriangleCount;
  // A garment's stitches and how far apart they rest (sim/stitches.h).
  if (model && !model->stitches.empty())
    out["stitches"] = {{"count", model->stitches.size()},
                       {"rest_gap_min_m", model->stitchRestGaps.minCoeff()},
                       {"rest_gap_max_m", model->stitchRestGaps.maxCoeff()}};
  out["solver"] = scene->solverId;
  // The flat rest state mls-isometry and the grab's reach would use, or why there is none.
  if (model && model->flatCoords) {
    const FlatRest& flat = *model->flatCoords;
    const bool fromObj = scene->cloth.kind == ClothSource::Kind::Obj;
    out["flat_rest_state"] = {{"from", flat.planeFit   ? "a plane fit"
                                       : flat.unfolded ? "the rest mesh unfolded"
                                       : fromObj       ? "its texture coordinates"
                                                       : "the generator's coordinates"}};
    // Each wrap: its period, or its turn and apex, and of a cloth in several pieces a triangle
    // of the piece it holds round (MaterialWrap::reach). The first wrap's fields stand in
    // flat_rest_state itself, the others' in other_wraps.
    const std::vector<int> wrapped = wrappedPieces(flat, model->topology);
    auto describe = [&](const MaterialWrap& wrap, size_t k, nlohmann::json& into) {
      if (wrap.period > 0) into["period_m"] = wrap.period;
      if (wrap.angle != 0) {
        into["wrap_angle_deg"] = wrap.angle * 180 / std::numbers::pi;
        into["apex_m"] = {wrap.apex.x(), wrap.apex.y()};
      }
      if (wrap.wraps() && std::isfinite(wrap.reach) && k < wrapped.size()) {
        const auto& pieces = model->topology.triComponent;
        into["wrap_piece_triangle"] =
            std::find(pieces.begin(), pieces.end(), wrapped[k]) - pieces.begin();
      }
    };
    describe(flat.wrap, 0, out["flat_rest_state"]);
    for (size_t k = 0; k < flat.wrap.others.size(); ++k) {
      nlohmann::json other = nlohmann::json::object();
      describe(flat.wrap.others[k], k + 1, other);
      out["flat_rest_state"]["other_wraps"].push_back(other);
    }
  } else {
    out["flat_rest_state"] = {{"error", model ? model->flatCoords.error() : model.error()}};
  }
  // The model built above, not built again (for an OBJ that is another read of the file).
  auto simulation = model ? Simulation::create(*scene, *std::move(model))
                          : Result<std::unique_ptr<Simulation>>(Error{model.error()});
  if (simulation) {
    const SolverCounts counts = (*simulation)->solver().counts();
    out["particles"] = counts.particles;
    out["constraints"] = counts.constraints;
    out["boundary_constraints"] = counts.boundaryConstraints;
    out["duplicate_boundary_constraints"] = counts.duplicateBoundaryConstraints;
  } else {
    out["particles"] = nullptr;
    out["constraints"] = nullptr;
    out["boundary_constraints"] = nullptr;
    out["duplicate_boundary_constraints"] = nullptr;
    out["solver_error"] = simulation.error();
  }
  std::cout << jsonText(out, 2) << "\n";
  return kExitOk;
}

struct RunOptions {
  std::string scene, solver, statsPath, outDir;
  std::optional<std::string> bendingRest;
  std::optional<long> steps;
  std::optional<double> dt, tolerance, density, bending, airDensity, sleepSpeed;
  std::vector<double> wind;  // empty: the scene's
  std::vector<std::string> params;  // --param KEY=VALUE, the solver's parameters over the scene's
  std::vector<std::string> obstacles;  // --obstacle: OBJs placed under the cloth
  std::optional<int> substeps, maxSubsteps;
  int every = 1;
  bool outFine = false;  // --out writes the solver's finer mesh where it has one
  bool quiet = false;
};

nlohmann::json statsJson(const StepStats& s, const SolverCounts& counts, int pinned) {
  nlohmann::json j{{"step", s.step},
                   {"t", s.t},
                   {"substeps", s.substeps},
                   {"ms_total", s.msTotal},
                   {"ms_factor", s.msFactor},
                   {"ms_position", s.msPosition},
                   {"ms_velocity", s.msVelocity},
                   {"ms_collision", s.msCollision},
                   {"ms_forces", s.msForces},
                   {"position_iterations", s.positionIterations},
                   {"backtracks", s.backtracks},
                   {"max_position_error", s.maxPositionError},
                   {"max_edge_strain", s.maxEdgeStrain},
                   {"converged", s.converged},
                   {"contacts", s.contacts},
                   {"regularization", s.regularization},
                   {"linear_solver", s.linearSolver},
                   {"particles", counts.particles},
                   {"constraints", counts.constraints},
                   {"boundary_constraints", counts.boundaryConstraints},
                   {"duplicate_boundary_constraints", counts.duplicateBoundaryConstraints},
                   {"pinned", pinned}};
  for (const auto& [key, value] : s.extra.items()) j[key] = value;
  return j;
}

std::string frameName(long index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%05ld.obj", index);
  return name;
}

int commandRun(const RunOptions& options) {
  auto resolved = resolveScene(options.scene);
  if (!resolved) return fail(resolved.error());
  Scene scene = *resolved;
  if (!options.solver.empty()) useSolver(scene, options.solver);
  if (options.dt) scene.sim.dt = *options.dt;
  if (options.substeps) scene.sim.substeps = *options.substeps;
  if (options.maxSubsteps) scene.sim.maxSubsteps = *options.maxSubsteps;
  if (options.density) scene.sim.density = *options.density;
  if (options.bending) scene.sim.bending = *options.bending;
  if (options.bendingRest) {
    const auto& choices = findParam(SimParams::table(), "bending_rest")->choices;
    if (std::find(choices.begin(), choices.end(), *options.bendingRest) == choices.end()) {
      std::string list;  // the table's choices, as the panel's combo offers them
      for (size_t c = 0; c < choices.size(); ++c)
        list += (c == 0 ? "" : c + 1 == choices.size() ? " or " : ", ") + choices[c];
      return fail("--bending-rest: must be " + list + ", got '" + *options.bendingRest + "'");
    }
    scene.sim.bendingRest = *options.bendingRest;
  }
  if (options.airDensity) scene.sim.airDensity = *options.airDensity;
  if (options.sleepSpeed) scene.sim.sleepSpeed = *options.sleepSpeed;
  if (!options.wind.empty()) {
    if (options.wind.size() != 3)
      return fail("--wind: give three numbers X,Y,Z [m/s], got " +
                  std::to_string(options.wind.size()));
    scene.sim.wind = Vec3(options.wind[0], options.wind[1], options.wind[2]);
    if (auto e = validateWind(scene.sim.wind, "--wind")) return fail(*e);
  }
  if (options.tolerance) scene.solverParams["tolerance"] = *options.tolerance;
  nlohmann::json params = nlohmann::json::object();
  for (const std::string& param : options.params)
    if (auto e = parseSolverParam(param, params)) return fail("--param: " + *e);
  scene.solverParams.update(params);
  // The flags have the ranges of the keys they set, and an error names the flag, not the scene
  // file whose value it replaced.
  using Flag = std::tuple<const char*, const char*, std::optional<double>>;
  auto asDouble = [](const std::optional<int>& v) { return v ? std::optional<double>(*v) : std::nullopt; };
  for (const auto& [flag, key, value] :
       {Flag{"--dt", "dt", options.dt}, Flag{"--density", "density", options.density},
        Flag{"--bending", "bending", options.bending},
        Flag{"--air-density", "air_density", options.airDensity},
        Flag{"--sleep-speed", "sleep_speed", options.sleepSpeed},
        Flag{"--substeps", "substeps", asDouble(options.substeps)},
        Flag{"--max-substeps", "max_substeps", asDouble(options.maxSubsteps)}}) {
    const auto* info = findParam(SimParams::table(), key);
    if (value && !(*value >= info->min && *value <= info->max))
      return fail(std::string(flag) + ": must be between " + formatG(info->min) + " and " + formatG(info->max) +
                  (info->unit.empty() ? "" : " " + info->unit) + ", got " + formatG(*value));
  }
  const auto solver = createSolver(scene.solverId);  // checks the id and --tol against its table
  if (!solver) return fail("--solver: unknown solver '" + scene.solverId + "' (known: " + solverIdList() + ")");
  if (options.tolerance)
    if (auto e = solver->setParams({{"tolerance", *options.tolerance}})) return fail("--tol: " + *e);
  if (auto e = solver->setParams(params)) return fail("--param: " + *e);
  if (options.every < 1) return fail("--every: must be at least 1");
  const long steps = options.steps.value_or(std::max(1L, std::lround(1.0 / scene.sim.dt)));
  if (steps < 0) return fail("--steps: must not be negative");

  auto created = Simulation::create(scene);
  if (!created) return fail(created.error());
  Simulation& simulation = **created;
  for (const std::string& warning : simulation.cloth().warnings)
    std::cerr << "warning: " << warning << "\n";
  if (auto e = addObstaclesUnderCloth(simulation, options.obstacles)) return fail(*e);

  // Outputs are opened only after everything above was valid.
  std::ofstream stats;
  if (!options.statsPath.empty()) {
    stats.open(options.statsPath);
    if (!stats) return fail(options.statsPath + ": cannot write");
  }
  if (!options.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.outDir, ec);
    if (ec) return fail(options.outDir + ": cannot create: " + ec.message());
  }
  const auto& triangles = simulation.cloth().mesh.triangles;
  long frames = 0;
  auto writeFrame = [&]() -> bool {
    const std::string path = (std::filesystem::path(options.outDir) / frameName(frames)).string();
    Positions nodes;
    const std::shared_ptr<const FineMesh> fine =
        options.outFine ? simulation.solver().fineMesh(nodes) : nullptr;
    if (auto e = fine ? writeFineMesh(path, *fine, nodes, simulation.cloth())
                      : writeObj(path, simulation.surface(), triangles,
                                 surfaceTexcoords(simulation.cloth()))) {
      std::cerr << "clothlab-cli: " << *e << "\n";
      return false;
    }
    ++frames;
    return true;
  };
  if (!options.outDir.empty() && !writeFrame()) return kExitBadInput;

  const bool progress = !options.quiet && isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  std::vector<double> stepMs;
  double worstError = 0, worstStrain = 0;
  ConstraintError errorLabel{0, "max position error", " m"};  // the last step's kind
  long iterations = 0, unconverged = 0;
  long asleep = 0;                // steps not taken: the cloth at rest (Simulation::asleep)
  std::optional<double> sleptAt;  // when it first fell asleep [s]
  double largestSquash = 0;  // of the jellies, over the run [m]
  std::optional<std::string> failure;
  for (long i = 0; i < steps; ++i) {
    if (auto e = simulation.step()) {
      failure = e;
      break;
    }
    const StepStats& s = simulation.lastStats();
    if (sleptThrough(s)) {
      ++asleep;
      if (!sleptAt) sleptAt = s.t - simulation.sim().dt;
    } else {
      stepMs.push_back(s.msTotal);
    }
    errorLabel = constraintError(s);
    worstError = std::max(worstError, errorLabel.value);
    worstStrain = std::max(worstStrain, s.maxEdgeStrain);
    iterations += s.positionIterations;
    unconverged += s.converged ? 0 : 1;
    largestSquash = std::max(largestSquash, s.extra.value("max_jelly_squash", 0.0));
    if (stats.is_open())
      stats << statsJson(s, simulation.solver().counts(), int(simulation.pins().size())).dump() << "\n";
    if (!options.outDir.empty() && (i + 1) % options.every == 0 && !writeFrame()) return kExitBadInput;
    if (progress && (i % 10 == 0 || i + 1 == steps)) {
      const int width = 40, filled = int(width * (i + 1) / steps);
      std::fprintf(stderr, "\r[%s%s] %ld/%ld steps", std::string(filled, '#').c_str(),
                   std::string(width - filled, ' ').c_str(), i + 1, steps);
      std::fflush(stderr);
    }
  }
  if (progress) std::fprintf(stderr, "\n");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double medianMs = median(stepMs);
  const std::string framesNote =
      options.outDir.empty() ? "" : ", " + std::to_string(frames) + " frames in " + options.outDir;
  // Steps not taken while the cloth slept; the median is of the steps taken.
  const std::string sleepNote =
      asleep == 0 ? ""
                  : ", " + std::to_string(asleep) +
                        " steps asleep at rest (first from t = " + formatG(*sleptAt) +
                        " s; --sleep-speed 0 steps them all)";
  if (!options.quiet || failure) {
    std::printf(
        "%s: %s, %ld steps (%.3f s simulated) in %.2f s wall, median %.2f ms/step, "
        "%.2f position solves/step, %s %.3g%s, max edge strain %.3g, "
        "%ld steps above tolerance, %d self-intersecting triangle pairs at the end%s%s\n",
        scene.name.c_str(), scene.solverId.c_str(), simulation.stepCount(), simulation.time(), wall,
        medianMs, long(stepMs.size()) ? double(iterations) / double(stepMs.size()) : 0.0,
        errorLabel.name, worstError, errorLabel.unit, worstStrain, unconverged,
        countSelfIntersections(simulation.cloth().mesh, simulation.surface()), sleepNote.c_str(),
        framesNote.c_str());
    for (size_t j = 0; j < simulation.jellies().size(); ++j) {
      const JellyBody& jelly = simulation.jellies()[j];
      std::printf(
          "  jelly %zu: %.3g kg, centre at (%.3f, %.3f, %.3f) m, %.3f m/s, spinning at %.2f "
          "rad/s, touching %d obstacle(s)\n",
          j + 1, jelly.mass(), jelly.center().x(), jelly.center().y(), jelly.center().z(),
          jelly.velocity().norm(), jelly.angularVelocity().norm(), jelly.lastStep().walls);
    }
    if (!simulation.jellies().empty())
      std::printf("  the jellies squashed by up to %.1f mm\n", 1e3 * largestSquash);
  }
  if (failure) {
    std::cerr << "clothlab-cli: diverged at " << *failure << "\n";
    return kExitDiverged;
  }
  if (unconverged > 0 && !options.quiet) {
    const SimParams& sim = simulation.sim();
    std::fprintf(
        stderr, "clothlab-cli: note: %ld of %ld steps ended above the solver's tolerance; %s\n",
        unconverged, simulation.stepCount(),
        sim.maxSubsteps > sim.substeps ? "a smaller --dt (or a larger --max-substeps) would hold it"
                                       : "--max-substeps N takes such a step again in up to N "
                                         "sub-steps (or give a smaller --dt)");
  }
  return kExitOk;
}

}  // namespace
}  // namespace clothlab::cli

int main(int argc, char** argv) {
  using namespace clothlab::cli;
  clothlab::configureLinearAlgebra();  // before any thread starts (sim/linear/runtime.h)
  CLI::App app{"clothlab-cli: headless ClothLab (inextensible cloth solvers)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

  app.add_subcommand("scenes", "List built-in scenes, one per line with a description");

  auto* info = app.add_subcommand("info", "Mesh topology and solver counts as one JSON object");
  std::string infoTarget, infoSolver;
  info->add_option("target", infoTarget, "MESH.obj, scene .json or built-in scene name")->required();
  info->add_option("--solver", infoSolver, "Solver id (default: the scene's)");

  auto* run = app.add_subcommand("run", "Run a scene headless");
  RunOptions options;
  run->add_option("scene", options.scene, "Built-in scene name, scene .json or cloth .obj")
      ->required();
  run->add_option("--solver", options.solver, "Solver id");
  run->add_option("--steps", options.steps, "Number of steps (default: 1 s of simulated time)");
  run->add_option("--dt", options.dt, "Time step [s]");
  run->add_option("--substeps", options.substeps, "Solver steps per time step, each of dt / substeps");
  run->add_option("--max-substeps", options.maxSubsteps,
                  "Adaptive: a step above tolerance is taken again in twice as many sub-steps, up to this many");
  run->add_option("--tol", options.tolerance, "Solver tolerance (impulse solvers: metres)");
  run->add_option(
         "--param", options.params,
         "A solver parameter KEY=VALUE over the scene's, e.g. --param bending_model=surface "
         "(repeatable; the keys: the viewer's solver panel, README)")
      ->allow_extra_args(false);  // one KEY=VALUE per --param
  run->add_option("--obstacle", options.obstacles,
                  "Add an OBJ as a mesh obstacle, scaled to 60% of the cloth and placed under it, "
                  "as the viewer's --obstacle (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--density", options.density, "Areal density [kg/m^2]");
  run->add_option("--bending", options.bending, "Bending stiffness [N m]");
  run->add_option("--bending-rest", options.bendingRest,
                  "The shape the bending pulls toward: flat, or the cloth's shape as loaded");
  run->add_option("--air-density", options.airDensity,
                  "Density of the air [kg/m^3] (1.2 at sea level)");
  run->add_option("--sleep-speed", options.sleepSpeed,
                  "The cloth is no longer stepped once every vertex has moved slower than this "
                  "[m/s] for the scene's sleep_time (default 0.001; 0: never)");
  run->add_option("--wind", options.wind, "The wind's velocity X,Y,Z [m/s]")
      ->delimiter(',')
      ->expected(1, 3);
  run->add_option("--stats", options.statsPath, "Per-step statistics, one JSON object per line");
  auto* out = run->add_option("--out", options.outDir, "Write surface OBJ frames to this folder");
  run->add_option("--every", options.every, "Write a frame every K steps (default 1)");
  run->add_flag("--out-fine", options.outFine,
                "Frames of the finer mesh the solver simulates on, where it has one "
                "(strain-limit-remesh's adaptive mesh, whose vertices change from frame to frame)")
      ->needs(out);
  run->add_flag("--quiet", options.quiet, "No progress bar or summary");

  auto* bench = app.add_subcommand("bench", "Reproduce the paper's Table 1 timings");
  std::vector<std::string> benchScenes;
  int benchSteps = 300;
  std::string benchJson;
  bench->add_option(
      "scenes", benchScenes,
      "Built-in scenes, scene .json or cloth .obj files (default: hanging tablecloth sphere-drop)");
  bench->add_option("--steps", benchSteps, "Steps per scene and back end (default 300)");
  bench->add_option("--json", benchJson, "Write the results as JSON");

  auto* compare = app.add_subcommand("compare", "Run one scene with several solvers and line up locking metrics");
  CompareOptions compareOptions;
  compareOptions.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  compare
      ->add_option("scene", compareOptions.scene,
                   "Built-in scene, scene .json, cloth .obj, or a compare preset")
      ->required();
  compare->add_option("--solvers", compareOptions.solvers,
                      "Comma-separated solver ids; ID@SCENE runs another scene (mesh variant), "
                      "ID:KEY=VALUE sets a solver parameter (impulse-nc:bending_model=surface)");
  compare
      ->add_option(
          "--obstacle", compareOptions.obstacles,
          "Add an OBJ as a mesh obstacle under each solver's cloth, as run --obstacle (repeatable)")
      ->allow_extra_args(false);
  compare->add_option("--steps", compareOptions.steps, "Steps per solver (default: 2 s of simulated time)");
  compare->add_option(
      "--average", compareOptions.average,
      "Average each metric over the last N steps and show its range (a swinging sheet's sag "
      "depends on the moment it is taken)");
  compare->add_option("--jobs", compareOptions.jobs, "Solvers run at a time (default: hardware threads)");
  compare->add_option("--json", compareOptions.jsonPath, "Write the metrics as JSON");
  compare->add_option("--csv", compareOptions.csvPath, "Write the metrics as CSV");
  compare->add_option("--out", compareOptions.outDir, "Write each solver's final surface as OBJ here");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "clothlab-cli: " << e.what() << "\n" << "Run with --help for usage.\n";
    return kExitBadInput;
  }
  if (app.got_subcommand("scenes")) return commandScenes();
  if (app.got_subcommand("info")) return commandInfo(infoTarget, infoSolver);
  if (app.got_subcommand("run")) return commandRun(options);
  if (app.got_subcommand("compare")) return runCompare(compareOptions);
  if (app.got_subcommand("bench")) {
    if (benchScenes.empty()) benchScenes = {"hanging", "tablecloth", "sphere-drop"};
    return runBench(benchScenes, benchSteps, benchJson);
  }
  return kExitBadInput;
}
