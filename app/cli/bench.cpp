// clothlab-cli bench: the paper's Table 1 (Bender, Diziol, Bayer 2011) on this machine.
// For each scene: median ms per step of assembly+factorization, position solves, velocity solve,
// collisions and total, and mean position iterations, with CHOLMOD and, in the same run, with
// Eigen's SimplicialLDLT; the ratio says how much CHOLMOD buys. The impulse solvers run a third
// time as the paper steps (one factorization per step), since by default a step that stalls
// re-linearizes and factorizes again. Prints what ran.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <thread>

#include "app/cli/commands.h"
#include "sim/json_text.h"
#include "sim/linear/runtime.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "sim/solver_registry.h"

namespace clothlab::cli {
namespace {

// The table's scene and solver columns: wide enough for the longest names (ckv-cylinder-fine,
// strain-limit-remesh). Every line under a row starts with the scene's column too.
constexpr int kSceneColumn = 17, kSolverColumn = 19;

struct BenchRow {
  std::string scene, solver, backend, factorization;
  int particles = 0, constraints = 0, steps = 0;
  double factor = 0, position = 0, velocity = 0, collision = 0, forces = 0, total = 0;
  double iterations = 0, maxError = 0;
  int fallbacks = 0;           // mls-isometry: steps that needed the augmented-Lagrangian fallback
  double maxResidual = -1;     // mls-isometry: largest isometry residual after a step
  double finalStrain = 0;      // largest edge strain after the last step
  double dt = 0;               // the step the figures are per [s]
  int substeps = 1;            // solver steps it was taken in
  int aboveTolerance = 0;      // steps that ended above the solver's tolerance
  int contactSteps = 0;        // steps with cloth points on an obstacle
  double contactTotal = 0;     // median total of those steps [ms]
  double freeTotal = 0;        // median total of the other steps [ms]
  int contactAboveTolerance = 0;
  int forcesAlongside = 0;  // impulse solvers: steps whose forces and contacts ran on a second thread
  int forcesTakenBack = 0;  // of those, steps whose own thread ran them, no helper having begun
  // Impulse solvers: factorizations of the whole constraint matrix and local ones per step,
  // over all steps and over those that touched an obstacle (-1: the solver reports none).
  double factorizations = -1, localFactorizations = -1, contactFactorizations = -1, contactLocalFactorizations = -1;
  double contactMaxError = 0;  // largest error of those steps (max|C|, or the isometry residual)
  std::string failure;
  bool onePerStep = false;  // run as oneFactorizationPerStep() makes it
  // The jellies (sim/jelly): how many, their share of the step [ms] (median and mean), the steps
  // that built a section's matrices again, and the sub-steps of their rigid motion per step.
  int jellies = 0;
  double jellyMedian = 0, jellyMean = 0, jellySubsteps = 0;
  int jellyRebuildSteps = 0;
};

// Whether a solver has the parameter `key`.
bool hasParameter(const std::string& solverId, const std::string& key) {
  const SolverEntry* entry = findSolver(solverId);
  if (!entry) return false;
  for (const auto& p : entry->parameters)
    if (p.key == key) return true;
  return false;
}

// Whether a solver has a choice of linear solver to compare (the impulse solvers).
bool hasLinearSolverChoice(const std::string& solverId) { return hasParameter(solverId, "linear_solver"); }

// The scene as BDB11 step it: one factorization per step, on which the position pass iterates up
// to its cap (no re-linearization, global or local, no later pass holding contacts), in free fall
// too. Nothing for a solver without those parameters.
std::optional<Scene> oneFactorizationPerStep(const Scene& base) {
  if (!hasParameter(base.solverId, "max_refactorizations") || !hasParameter(base.solverId, "contact_rounds"))
    return std::nullopt;
  Scene scene = base;
  scene.solverParams["max_refactorizations"] = 0;
  scene.solverParams["contact_rounds"] = 1;
  if (hasParameter(base.solverId, "local_relinearization")) scene.solverParams["local_relinearization"] = false;
  if (hasParameter(base.solverId, "skip_idle_factorization")) scene.solverParams["skip_idle_factorization"] = false;
  return scene;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

namespace {

BenchRow benchScene(const Scene& base, const std::string& backend, int steps) {
  Scene scene = base;
  if (hasLinearSolverChoice(scene.solverId)) scene.solverParams["linear_solver"] = backend;
  BenchRow row;
  row.scene = scene.name;
  row.solver = scene.solverId;
  row.backend = backend;
  row.dt = scene.sim.dt;
  row.substeps = scene.sim.substeps;
  scene.sim.sleepSpeed = 0;  // every step taken: a cloth at rest is measured as it steps
  auto created = Simulation::create(scene);
  if (!created) {
    row.failure = created.error();
    return row;
  }
  Simulation& simulation = **created;
  std::vector<double> factor, position, velocity, collision, forces, total, contactTotal, freeTotal,
      jellies;
  long jellySubsteps = 0;
  long iterations = 0;
  long factorizations[2] = {0, 0}, localFactorizations[2] = {0, 0};  // all steps, contact steps
  bool countsFactorizations = false;
  for (int i = 0; i < steps; ++i) {
    if (auto e = simulation.step()) {
      row.failure = *e;
      break;
    }
    const StepStats& s = simulation.lastStats();
    factor.push_back(s.msFactor);
    position.push_back(s.msPosition);
    velocity.push_back(s.msVelocity);
    collision.push_back(s.msCollision);
    forces.push_back(s.msForces);
    total.push_back(s.msTotal);
    iterations += s.positionIterations;
    if (s.extra.contains("ms_jellies")) {
      jellies.push_back(s.extra["ms_jellies"].get<double>());
      row.jellyRebuildSteps += s.extra.value("jelly_factorizations", 0) > 0;
      jellySubsteps += s.extra.value("jelly_rigid_substeps", 0);
    }
    row.maxError = std::max(row.maxError, s.maxPositionError);
    row.aboveTolerance += !s.converged;
    if (s.contacts > 0) {
      contactTotal.push_back(s.msTotal);
      row.contactAboveTolerance += !s.converged;
      row.contactMaxError = std::max(row.contactMaxError, reportedConstraintError(s));
    } else {
      freeTotal.push_back(s.msTotal);
    }
    if (s.extra.contains("fallback_used") && s.extra["fallback_used"].get<bool>()) ++row.fallbacks;
    if (s.extra.value("forces_alongside", false)) ++row.forcesAlongside;
    if (s.extra.value("forces_taken_back", false)) ++row.forcesTakenBack;
    if (s.extra.contains("factorizations")) {
      countsFactorizations = true;
      for (int k = 0; k < (s.contacts > 0 ? 2 : 1); ++k) {
        factorizations[k] += s.extra["factorizations"].get<int>();
        localFactorizations[k] += s.extra.value("local_factorizations", 0);
      }
    }
    if (s.extra.contains("max_isometry_residual"))
      row.maxResidual = std::max(row.maxResidual, s.extra["max_isometry_residual"].get<double>());
    if (!s.linearSolver.empty())
      row.factorization = s.linearSolver;  // a step without a solve names none
  }
  row.steps = static_cast<int>(total.size());
  if (row.factorization.empty()) row.factorization = "none ran";
  row.finalStrain = simulation.lastStats().maxEdgeStrain;
  row.particles = simulation.solver().counts().particles;
  row.constraints = simulation.solver().counts().constraints;
  row.factor = median(factor);
  row.position = median(position);
  row.velocity = median(velocity);
  row.collision = median(collision);
  row.forces = median(forces);
  row.total = median(total);
  row.contactSteps = static_cast<int>(contactTotal.size());
  row.contactTotal = median(contactTotal);
  row.freeTotal = median(freeTotal);
  row.iterations = row.steps ? double(iterations) / row.steps : 0;
  row.jellies = static_cast<int>(simulation.jellies().size());
  if (!jellies.empty()) {
    row.jellyMedian = median(jellies);
    row.jellyMean = std::accumulate(jellies.begin(), jellies.end(), 0.0) / jellies.size();
    row.jellySubsteps = double(jellySubsteps) / jellies.size();
  }
  if (countsFactorizations && row.steps > 0) {
    row.factorizations = double(factorizations[0]) / row.steps;
    row.localFactorizations = double(localFactorizations[0]) / row.steps;
    if (row.contactSteps > 0) {
      row.contactFactorizations = double(factorizations[1]) / row.contactSteps;
      row.contactLocalFactorizations = double(localFactorizations[1]) / row.contactSteps;
    }
  }
  return row;
}

// xpbd against impulse-nc on the same scene: xpbd's sweeps are doubled until its largest edge
// strain after the last step is at most impulse-nc's; prints each try and the time ratio.
void xpbdRatio(const Scene& base, const BenchRow& impulse, int steps, nlohmann::json& json) {
  std::printf("\n%s: xpbd against impulse-nc (largest edge strain after step %d: %.3g at %.2f ms/step)\n",
              base.name.c_str(), steps, impulse.finalStrain, impulse.total);
  std::printf("%-12s %8s %12s %12s\n", "solver", "sweeps", "strain", "ms/step");
  nlohmann::json tries = nlohmann::json::array();
  for (int sweeps = 5; sweeps <= 5120; sweeps *= 2) {
    Scene scene = base;
    useSolver(scene, "xpbd");
    scene.solverParams["iterations"] = sweeps;
    scene.solverParams["tolerance"] = 0.0;  // every sweep runs: the cost of a fixed budget
    const BenchRow row = benchScene(scene, "cholmod", steps);
    if (!row.failure.empty()) {
      std::printf("%-12s %8d failed: %s\n", "xpbd", sweeps, row.failure.c_str());
      break;
    }
    std::printf("%-12s %8d %12.3g %12.2f\n", "xpbd", sweeps, row.finalStrain, row.total);
    tries.push_back({{"sweeps", sweeps}, {"final_strain", row.finalStrain}, {"ms_total", row.total}});
    if (row.finalStrain <= impulse.finalStrain) {
      std::printf("%s: xpbd needs %d sweeps (%.2f ms/step) to reach impulse-nc's strain: %.2fx impulse-nc's time\n",
                  base.name.c_str(), sweeps, row.total, row.total / impulse.total);
      json["xpbd_vs_impulse"] = {{"scene", base.name}, {"impulse_final_strain", impulse.finalStrain},
                                 {"impulse_ms_total", impulse.total}, {"xpbd_sweeps", sweeps},
                                 {"xpbd_ms_total", row.total}, {"ratio", row.total / impulse.total},
                                 {"tries", tries}};
      return;
    }
  }
  std::printf("%s: xpbd did not reach impulse-nc's strain within 5120 sweeps\n", base.name.c_str());
  json["xpbd_vs_impulse"] = {{"scene", base.name}, {"impulse_final_strain", impulse.finalStrain}, {"tries", tries}};
}

}  // namespace

int runBench(const std::vector<std::string>& sceneNames, int steps, const std::string& jsonPath) {
  std::vector<Scene> scenes;
  for (const std::string& name : sceneNames) {
    auto scene = resolveScene(name);
    if (!scene) {
      std::cerr << "clothlab-cli: " << scene.error() << "\n";
      return kExitBadInput;
    }
    scenes.push_back(*scene);
  }
  if (steps < 1) {
    std::cerr << "clothlab-cli: --steps: must be at least 1\n";
    return kExitBadInput;
  }
  // Opened before the runs, which can take minutes, so that a path that cannot be written
  // wastes none of them.
  std::ofstream jsonOut;
  if (!jsonPath.empty()) {
    jsonOut.open(jsonPath);
    if (!jsonOut) {
      std::cerr << "clothlab-cli: " << jsonPath << ": cannot write\n";
      return kExitBadInput;
    }
  }
  utsname host{};
  uname(&host);
  const std::string config = describeLinearAlgebra();
  std::printf(
      "clothlab-cli bench: %d steps per scene and back end, medians per step, every step taken "
      "(no sleep at rest)\n",
      steps);
  std::printf("machine: %s %s, %u hardware threads; simulation on 1 thread (a second where a row says)\n",
              host.nodename, host.machine, std::thread::hardware_concurrency());
  std::printf("%s\n\n", config.c_str());
  std::printf("%-*s %-*s %-28s %9s %8s %9s %9s %9s %9s %9s %9s %6s %8s\n", kSceneColumn, "scene",
              kSolverColumn, "solver", "factorization", "particles", "constr.", "asm+fact",
              "forces", "velocity", "position", "collision", "total", "iters", "max|C|");

  nlohmann::json json{{"config", config}, {"steps", steps}, {"results", nlohmann::json::array()}};
  for (const Scene& scene : scenes) {
    // The default ("auto": the back end by the cloth's size) first, then each back end alone.
    BenchRow chosen = benchScene(scene, "auto", steps);
    const bool compare = hasLinearSolverChoice(scene.solverId);
    BenchRow fast = compare ? benchScene(scene, "cholmod", steps) : BenchRow{};
    BenchRow reference = compare ? benchScene(scene, "eigen-ldlt", steps) : BenchRow{};
    std::vector<const BenchRow*> ran{&chosen};
    if (compare) ran.insert(ran.end(), {&fast, &reference});
    const std::optional<Scene> asPaper = oneFactorizationPerStep(scene);
    BenchRow onePerStep;
    if (asPaper) {
      onePerStep = benchScene(*asPaper, "auto", steps);
      onePerStep.onePerStep = true;
      ran.push_back(&onePerStep);
    }
    for (const BenchRow* row : ran) {
      const std::string factorization = (compare && row->backend == "auto" ? "auto: " : "") +
                                        (row->failure.empty() ? row->factorization : row->backend) +
                                        (row->onePerStep ? ", 1 per step" : "");
      if (!row->failure.empty()) {
        std::printf("%-*s %-*s %-28s failed: %s\n", kSceneColumn, row->scene.c_str(), kSolverColumn,
                    row->solver.c_str(), factorization.c_str(), row->failure.c_str());
      } else {
        if (row->onePerStep)
          std::printf(
              "%-*s   as BDB11 step it: one factorization per step, the position pass iterating on "
              "it "
              "(max_refactorizations 0, contact_rounds 1, local_relinearization false, "
              "skip_idle_factorization false):\n",
              kSceneColumn, row->scene.c_str());
        std::printf("%-*s %-*s %-28s %9d %8d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %6.2f %8.2g\n",
                    kSceneColumn, row->scene.c_str(), kSolverColumn, row->solver.c_str(),
                    factorization.c_str(), row->particles, row->constraints, row->factor,
                    row->forces, row->velocity, row->position, row->collision, row->total,
                    row->iterations, row->maxError);
        if (row->forcesAlongside > 0)
          std::printf(
              "%-*s   on %d of %d steps forces and collision (the contact prediction) were offered "
              "to a "
              "second thread alongside asm+fact (parallel_forces): total is less than the columns' "
              "sum; on %d of them no helper had begun by the end of asm+fact, and the step ran "
              "them "
              "itself\n",
              kSceneColumn, row->scene.c_str(), row->forcesAlongside, row->steps,
              row->forcesTakenBack);
        if (row->substeps > 1)
          std::printf(
              "%-*s   one step of h = %g s is %d solver steps of %.3g s; figures are per step of "
              "h\n",
              kSceneColumn, row->scene.c_str(), row->dt, row->substeps, row->dt / row->substeps);
        // The median hides a phase that is a minority of the run (a sheet that lands late).
        if (row->contactSteps > 0) {
          std::printf(
              "%-*s   %d of %d steps touched an obstacle: median %.2f ms per step, %d of them "
              "ended "
              "above the tolerance (largest error %.2g); %d above it in all",
              kSceneColumn, row->scene.c_str(), row->contactSteps, row->steps, row->contactTotal,
              row->contactAboveTolerance, row->contactMaxError, row->aboveTolerance);
          if (row->contactSteps < row->steps)
            std::printf("; the other %d steps: median %.2f ms", row->steps - row->contactSteps, row->freeTotal);
          std::printf("\n");
        } else if (row->aboveTolerance > 0)
          std::printf("%-*s   %d of %d steps ended above the tolerance\n", kSceneColumn,
                      row->scene.c_str(), row->aboveTolerance, row->steps);
        if (row->factorizations >= 0) {
          std::printf("%-*s   factorizations per step: %.2f of the whole matrix and %.2f local",
                      kSceneColumn, row->scene.c_str(), row->factorizations,
                      row->localFactorizations);
          if (row->contactFactorizations >= 0)
            std::printf(" (%.2f and %.2f over the steps that touched an obstacle)", row->contactFactorizations,
                        row->contactLocalFactorizations);
          std::printf("\n");
        }
        if (row->jellies > 0)
          std::printf(
              "%-*s   %d jellies: %.2f ms of the step (median; mean %.2f), %d of %d steps built a "
              "section again, %.1f sub-steps of their rigid motion per step\n",
              kSceneColumn, row->scene.c_str(), row->jellies, row->jellyMedian, row->jellyMean,
              row->jellyRebuildSteps, row->steps, row->jellySubsteps);
        if (row->maxResidual >= 0)
          std::printf(
              "%-*s   Fast Projection: %.2f iterations per step, %d of %d steps needed the "
              "augmented-Lagrangian fallback, largest isometry residual %.2g (tolerance %s)\n",
              kSceneColumn, row->scene.c_str(), row->iterations, row->fallbacks, row->steps,
              row->maxResidual,
              scene.solverParams.value("tolerance", nlohmann::json(0.01)).dump().c_str());
      }
      json["results"].push_back(
          {{"scene", row->scene},
           {"solver", row->solver},
           {"backend", row->backend},
           {"factorization", row->factorization},
           {"one_factorization_per_step", row->onePerStep},
           {"particles", row->particles},
           {"constraints", row->constraints},
           {"steps", row->steps},
           {"dt", row->dt},
           {"substeps", row->substeps},
           {"steps_forces_alongside", row->forcesAlongside},
           {"steps_forces_taken_back", row->forcesTakenBack},
           {"ms_factor", row->factor},
           {"ms_position", row->position},
           {"ms_velocity", row->velocity},
           {"ms_collision", row->collision},
           {"ms_forces", row->forces},
           {"ms_total", row->total},
           {"position_iterations", row->iterations},
           {"max_position_error", row->maxError},
           {"fallbacks", row->fallbacks},
           {"max_isometry_residual", row->maxResidual},
           {"steps_above_tolerance", row->aboveTolerance},
           {"contact_steps", row->contactSteps},
           {"contact_ms_total", row->contactTotal},
           {"free_ms_total", row->freeTotal},
           {"contact_steps_above_tolerance", row->contactAboveTolerance},
           {"contact_max_error", row->contactMaxError},
           {"jellies", row->jellies},
           {"ms_jellies", row->jellyMedian},
           {"ms_jellies_mean", row->jellyMean},
           {"jelly_section_rebuild_steps", row->jellyRebuildSteps},
           {"jelly_rigid_substeps", row->jellySubsteps},
           {"factorizations_per_step", row->factorizations},
           {"local_factorizations_per_step", row->localFactorizations},
           {"contact_factorizations_per_step", row->contactFactorizations},
           {"contact_local_factorizations_per_step", row->contactLocalFactorizations},
           {"failure", row->failure}});
    }
    if (compare && fast.failure.empty() && reference.failure.empty() && fast.total > 0)
      std::printf("%-*s   Eigen SimplicialLDLT / CHOLMOD total: %.2fx\n", kSceneColumn,
                  scene.name.c_str(), reference.total / fast.total);
    if (scene.name == "sphere-drop" && scene.solverId == "impulse-nc" && chosen.failure.empty())
      xpbdRatio(scene, chosen, steps, json);
  }
  std::printf(
      "\npaper (2x Xeon X5650, PARDISO, 12 cores): tablecloth 73.6 / 7.2 / 6.6 ms, total 109.5 ms;"
      " sphere drop 335.6 / 31.1 / 26.1 ms, total 572.4 ms (factorization / position / velocity)\n");
  std::printf("targets here: sphere-drop <= 45 ms/step, tablecloth <= 8 ms/step; ckv-corners-fine <= 16 "
              "ms/step (real time at h = 1/60 s), ckv-cylinder-fine <= 200 ms/step\n");
  if (jsonOut.is_open()) jsonOut << jsonText(json, 2) << "\n";
  return kExitOk;
}

}  // namespace clothlab::cli
