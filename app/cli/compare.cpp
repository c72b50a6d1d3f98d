// clothlab-cli compare: one scene (or a compare preset) run by several solvers, each on its own
// thread (as many at a time as --jobs), and the locking metrics of sim/locking_metrics.h lined up
// in one table at the end: measured after the last step, or averaged over the last --average steps.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>

#include "app/cli/commands.h"
#include "sim/compare_presets.h"
#include "sim/json_text.h"
#include "sim/locking_metrics.h"
#include "sim/obj_io.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"

namespace clothlab::cli {
namespace {

struct PaneRun {
  ComparePane pane;
  Scene scene;
  std::unique_ptr<Simulation> simulation;
  // Per metric, over the measurements (after each of the last --average steps, or after the last).
  std::vector<MetricSummary> metrics;
  long averaged = 0;  // steps in the window that were measured
  long steps = 0;
  std::string failure;
};

// Runs `steps` steps and measures the metrics after each of the last `window` of them (at least
// the last step's; the last good state's where the run diverged before the window). ms_per_step
// is the median over all steps taken either way (not those asleep at rest).
void runPane(PaneRun& run, long steps, long window) {
  Simulation& simulation = *run.simulation;
  const MetricProbe probe = makeMetricProbe(simulation);
  const auto& definitions = lockingMetricDefinitions();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> stepMs;
  run.metrics.assign(definitions.size(), MetricSummary{});
  auto measure = [&] {
    Positions nodes;
    const std::shared_ptr<const FineMesh> fine = simulation.solver().fineMesh(nodes);
    const std::vector<double> values =
        measureLockingMetrics(probe, simulation.cloth(), simulation.surface(),
                              simulation.lastStats(), simulation.sim(), nan, fine.get(), &nodes);
    for (size_t m = 0; m < definitions.size(); ++m) run.metrics[m].add(values[m]);
    ++run.averaged;
  };
  for (long i = 0; i < steps; ++i) {
    if (auto e = simulation.step()) {
      run.failure = *e;
      break;
    }
    if (!sleptThrough(simulation.lastStats())) stepMs.push_back(simulation.lastStats().msTotal);
    if (i >= steps - window) measure();
  }
  run.steps = simulation.stepCount();
  if (run.averaged == 0) measure();
  for (size_t m = 0; m < definitions.size(); ++m)
    if (!definitions[m].ofState) {
      run.metrics[m] = MetricSummary{};
      run.metrics[m].add(median(stepMs));
    }
}

std::string paneLabel(const PaneRun& run) {
  return paneSolverLabel(run.pane) + "@" + run.scene.name;
}

nlohmann::json metricValue(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

}  // namespace

int runCompare(const CompareOptions& options) {
  auto bad = [](const std::string& message) {
    std::cerr << "clothlab-cli: " << message << "\n";
    return kExitBadInput;
  };
  std::vector<ComparePane> panes;
  if (const ComparePreset* preset = findComparePreset(options.scene); preset && options.solvers.empty()) {
    panes = preset->panes;
  } else {
    if (options.solvers.empty())
      return bad("compare: give --solvers ID,ID,... or a preset name (" + comparePresetNames() + ")");
    auto parsed = parsePaneList(options.solvers, options.scene);
    if (!parsed.error.empty()) return bad(parsed.error);
    panes = parsed.panes;
  }
  if (options.steps && *options.steps < 1) return bad("--steps: must be at least 1");
  if (options.average && *options.average < 1) return bad("--average: must be at least 1");
  if (options.jobs < 1) return bad("--jobs: must be at least 1");

  // Everything is built (and every input checked) before anything runs or is written.
  std::vector<PaneRun> runs(panes.size());
  for (size_t i = 0; i < panes.size(); ++i) {
    auto scene = resolveScene(panes[i].scene);
    // A scene given after '@' is named with its entry (presets' scenes are built in).
    if (!scene)
      return bad(panes[i].scene == options.scene ? scene.error()
                                                 : "--solvers entry " + std::to_string(i + 1) + ": " + scene.error());
    runs[i].pane = panes[i];
    runs[i].scene = *scene;
    applyPaneSolver(panes[i], runs[i].scene);
    auto created = Simulation::create(runs[i].scene);
    if (!created) return bad(paneLabel(runs[i]) + ": " + created.error());
    runs[i].simulation = std::move(*created);
    if (auto e = addObstaclesUnderCloth(*runs[i].simulation, options.obstacles))
      return bad(paneLabel(runs[i]) + ": " + *e);
  }
  // Default: 2 s of simulated time of each pane's scene.
  auto stepsFor = [&](const PaneRun& run) {
    return options.steps.value_or(std::max(1L, std::lround(2.0 / run.scene.sim.dt)));
  };
  for (const auto& run : runs)
    if (options.average && *options.average > stepsFor(run))
      return bad("--average " + std::to_string(*options.average) + ": more than the " +
                 std::to_string(stepsFor(run)) + " steps of " + paneLabel(run));
  std::ofstream json, csv;
  if (!options.jsonPath.empty()) {
    json.open(options.jsonPath);
    if (!json) return bad(options.jsonPath + ": cannot write");
  }
  if (!options.csvPath.empty()) {
    csv.open(options.csvPath);
    if (!csv) return bad(options.csvPath + ": cannot write");
  }
  if (!options.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.outDir, ec);
    if (ec) return bad(options.outDir + ": cannot create: " + ec.message());
  }

  const long window = options.average.value_or(1);
  std::printf("clothlab-cli compare %s: %zu solvers, %d at a time\n", options.scene.c_str(), runs.size(),
              std::min<int>(options.jobs, static_cast<int>(runs.size())));
  for (size_t next = 0; next < runs.size();) {
    std::vector<std::thread> batch;
    for (int j = 0; j < options.jobs && next < runs.size(); ++j, ++next) {
      PaneRun& run = runs[next];
      batch.emplace_back([&run, steps = stepsFor(run), window] { runPane(run, steps, window); });
    }
    for (auto& thread : batch) thread.join();
  }

  // The table: one row per metric, one column per solver, each as wide as its whole label (panes
  // of one solver on scenes whose names share a long prefix must stay apart). Averaged, a cell
  // holds the mean and, in brackets, the lowest and highest value over the window.
  const auto& definitions = lockingMetricDefinitions();
  std::vector<std::string> stepCells;
  std::vector<std::vector<std::string>> cells(definitions.size());
  std::vector<int> width;
  for (const auto& run : runs) {
    char cell[96];
    if (run.scene.sim.substeps > 1)
      std::snprintf(cell, sizeof cell, "%ld (%g s / %d)", run.steps, run.scene.sim.dt, run.scene.sim.substeps);
    else
      std::snprintf(cell, sizeof cell, "%ld (%g s)", run.steps, run.scene.sim.dt);
    stepCells.push_back(cell);
    size_t widest = std::max({size_t{22}, paneLabel(run).size(), stepCells.back().size()});
    for (size_t m = 0; m < definitions.size(); ++m) {
      const MetricSummary& metric = run.metrics[m];
      if (metric.samples() == 0)
        std::snprintf(cell, sizeof cell, "-");
      else if (options.average && metric.lowest() < metric.highest())
        std::snprintf(cell, sizeof cell, "%.4g [%.4g, %.4g]", metric.mean(), metric.lowest(),
                      metric.highest());
      else
        std::snprintf(cell, sizeof cell, "%.4g", metric.mean());
      cells[m].push_back(cell);
      widest = std::max(widest, cells[m].back().size());
    }
    width.push_back(static_cast<int>(widest));
  }
  std::printf("\n%-24s", "metric [unit]");
  for (size_t i = 0; i < runs.size(); ++i) std::printf(" %*s", width[i], paneLabel(runs[i]).c_str());
  std::printf("\n%-24s", "steps (dt)");
  for (size_t i = 0; i < runs.size(); ++i) std::printf(" %*s", width[i], stepCells[i].c_str());
  std::printf("\n");
  if (options.average) {
    std::printf("%-24s", "averaged over");
    for (size_t i = 0; i < runs.size(); ++i)
      std::printf(" %*s", width[i],
                  ("the last " + std::to_string(runs[i].averaged) + " steps").c_str());
    std::printf("\n");
  }
  for (size_t m = 0; m < definitions.size(); ++m) {
    const std::string name = definitions[m].key + " [" + definitions[m].unit + "]";
    std::printf("%-24s", name.c_str());
    for (size_t i = 0; i < runs.size(); ++i) std::printf(" %*s", width[i], cells[m][i].c_str());
    std::printf("\n");
  }
  if (options.average)
    std::printf(
        "(mean [lowest, highest] over the steps averaged; ms_per_step: the median over all "
        "steps taken, not those asleep at rest)\n");
  bool diverged = false;
  for (const auto& run : runs)
    if (!run.failure.empty()) {
      diverged = true;
      std::printf("%s diverged: %s\n", paneLabel(run).c_str(), run.failure.c_str());
    }

  if (json.is_open()) {
    nlohmann::json out{{"scene", options.scene}, {"metrics", nlohmann::json::array()}, {"solvers", nlohmann::json::array()}};
    for (const auto& d : definitions) out["metrics"].push_back({{"key", d.key}, {"unit", d.unit}, {"meaning", d.meaning}});
    for (const auto& run : runs) {
      nlohmann::json values = nlohmann::json::object();
      nlohmann::json ranges = nlohmann::json::object();
      for (size_t m = 0; m < definitions.size(); ++m) {
        values[definitions[m].key] = metricValue(run.metrics[m].mean());
        ranges[definitions[m].key] = {metricValue(run.metrics[m].lowest()),
                                      metricValue(run.metrics[m].highest())};
      }
      out["solvers"].push_back({{"solver", run.pane.solver},
                                {"params", run.pane.params},
                                {"scene", run.scene.name},
                                {"vertices", run.simulation->cloth().mesh.vertexCount()},
                                {"steps", run.steps},
                                {"averaged_steps", run.averaged},
                                {"ranges", ranges},
                                {"dt", run.scene.sim.dt},
                                {"substeps", run.scene.sim.substeps},
                                {"values", values},
                                {"failure", run.failure}});
    }
    json << jsonText(out, 2) << "\n";
  }
  if (csv.is_open()) {
    csv << "solver,scene,vertices,steps,averaged_steps";
    for (const auto& d : definitions) csv << "," << d.key;
    csv << "\n";
    for (const auto& run : runs) {
      csv << paneSolverLabel(run.pane) << "," << run.scene.name << ","
          << run.simulation->cloth().mesh.vertexCount() << "," << run.steps << "," << run.averaged;
      for (const MetricSummary& metric : run.metrics) {
        csv << ",";
        if (metric.samples() > 0) csv << metric.mean();
      }
      csv << "\n";
    }
  }
  if (!options.outDir.empty()) {
    for (const auto& run : runs) {
      // A pane's parameters name its file too
      // ("impulse-nc_bending_model_surface_cantilever-coarse.obj"), so that one solver beside
      // itself writes two files.
      std::string name = paneSolverLabel(run.pane) + "_" + run.scene.name;
      std::replace_if(
          name.begin(), name.end(), [](char c) { return c == ':' || c == '='; }, '_');
      const std::string path = (std::filesystem::path(options.outDir) / (name + ".obj")).string();
      if (auto e = writeObj(path, run.simulation->surface(), run.simulation->cloth().mesh.triangles,
                            surfaceTexcoords(run.simulation->cloth())))
        return bad(*e);
    }
    std::printf("final surfaces in %s\n", options.outDir.c_str());
  }
  return diverged ? kExitDiverged : kExitOk;
}

}  // namespace clothlab::cli
