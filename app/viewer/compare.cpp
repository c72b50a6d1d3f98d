// Compare mode: several panes, each a scene variant stepped by one solver on its own SimRunner,
// drawn side by side with the viewer's one camera, with mirrored input and the locking metrics
// of sim/locking_metrics.h under each pane and in a table below them.
#include <imgui.h>

#include <GLFW/glfw3.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "app/viewer/text_wrap.h"
#include "app/viewer/ui_util.h"
#include "app/viewer/viewer.h"
#include "sim/format.h"
#include "sim/scene_library.h"
#include "sim/solver_registry.h"

namespace clothlab {

namespace {
constexpr double kMetricsInterval = 0.25;  // s of wall time between metric updates per pane
}  // namespace

// The scene a pane runs: its own copy of `source` when it has one, else the built-in or file.
Result<Scene> paneScene(const ComparePane& spec) {
  if (spec.source) return *spec.source;
  return resolveScene(spec.scene);
}

// A pane's simulation, built from its scene with its solver (on any thread).
Result<std::unique_ptr<Simulation>> buildPaneSimulation(const ComparePane& spec) {
  auto scene = paneScene(spec);
  if (!scene) return Error{scene.error()};
  applyPaneSolver(spec, *scene);
  auto simulation = Simulation::create(*scene);
  if (!simulation) return Error{paneSolverLabel(spec) + ": " + simulation.error()};
  return std::move(*simulation);
}

Viewer::Pane Viewer::wrapPane(const ComparePane& spec, std::unique_ptr<Simulation> simulation,
                              bool paused, std::shared_ptr<PaceGroup> pace) const {
  Viewer::Pane pane;
  pane.probe = makeMetricProbe(*simulation);
  pane.cloth = std::make_shared<ClothModel>(simulation->cloth());
  pane.spec = spec;
  pane.runner = std::make_unique<SimRunner>(std::move(simulation), paused, std::move(pace));
  pane.runner->setSpeed(speed_);
  pane.runner->setOverlay(render_.overlay);
  pane.runner->setContacts(render_.contacts);
  return pane;
}

Result<Viewer::Pane> Viewer::makePane(const ComparePane& spec, bool paused,
                                      std::shared_ptr<PaceGroup> pace) const {
  auto simulation = buildPaneSimulation(spec);
  if (!simulation) return Error{simulation.error()};
  return wrapPane(spec, std::move(*simulation), paused, std::move(pace));
}

std::optional<std::string> Viewer::startCompare(const std::vector<ComparePane>& specs, const std::string& name) {
  if (specs.size() < 2 || specs.size() > 4) return std::string("compare mode needs 2 to 4 panes");
  // Everything is built before anything changes: a bad pane leaves the current scene running.
  std::vector<BuiltPane> built;
  for (size_t i = 0; i < specs.size(); ++i) {
    auto simulation = buildPaneSimulation(specs[i]);
    if (!simulation) return "pane " + std::to_string(i + 1) + ": " + simulation.error();
    built.push_back({specs[i], std::move(*simulation)});
  }
  installPanes(std::move(built), name);
  return std::nullopt;
}

void Viewer::installPanes(std::vector<BuiltPane> built, const std::string& name) {
  std::vector<Pane> panes;
  const bool paused = runner_ ? runner_->paused() : options_.paused;
  auto pace = std::make_shared<PaceGroup>();
  pace->setEnabled(keepPanesInStep_);
  for (BuiltPane& b : built)
    panes.push_back(wrapPane(b.spec, std::move(b.simulation), paused, pace));
  panes_ = std::move(panes);
  ++runnersStarted_;
  pace_ = std::move(pace);
  if (single_ && single_->loadProgress().active) {  // a preset picked while a scene loads
    message(RunnerMessage::Kind::Info,
            "the load of " + single_->loadProgress().what + " was given up for the comparison");
    // Its loader cannot be stopped mid-build, and the runner's destructor waits for it: let it
    // go on a thread, so that the window does not wait for the load.
    lettingGo_.push_back(
        std::async(std::launch::async, [old = std::move(single_)]() mutable { old.reset(); }));
  }
  single_.reset();  // one set of threads at a time
  activePane_ = 0;
  runner_ = panes_[0].runner.get();
  compareName_ = name;
  const auto& presets = comparePresets();
  for (size_t i = 0; i < presets.size(); ++i)
    if (presets[i].name == name) comparePreset_ = static_cast<int>(i);
  sceneIdentity_ = nullptr;  // the first snapshot frames the camera
  nlohmann::json list = nlohmann::json::array();
  for (const auto& pane : panes_)
    list.push_back(
        {{"solver", pane.spec.solver}, {"params", pane.spec.params}, {"scene", pane.spec.scene}});
  log_.write("compare_start", {{"preset", name}, {"panes", list}});
  message(RunnerMessage::Kind::Info,
          "compare " + name + ": " + std::to_string(panes_.size()) + " panes");
}

std::pair<long, long> Viewer::whatRuns() const {
  return {runnersStarted_, panes_.empty() && single_ ? single_->loadsSwappedIn() : 0};
}

bool Viewer::comparisonBeingBuilt() {
  if (!sceneToCompare_.valid() && !panesBuilding_.valid()) return false;
  message(RunnerMessage::Kind::Error, "compare: the panes are still being built");
  return true;
}

void Viewer::compareThisScene() {
  if (comparisonBeingBuilt()) return;
  auto promise = std::make_shared<std::promise<Scene>>();
  sceneToCompare_ = promise->get_future();
  requestedFor_ = whatRuns();
  runner_->post("compare this scene", [promise](Simulation& simulation) -> std::optional<std::string> {
    promise->set_value(simulation.currentScene());
    return std::nullopt;
  }, true);
}

void Viewer::startComparingScene(Scene scene) {
  auto source = std::make_shared<const Scene>(std::move(scene));
  std::vector<ComparePane> specs;
  for (const SolverEntry& solver : solverRegistry())
    specs.push_back({solver.id, source->name, source});
  buildPanesInBackground(std::move(specs), source->name);
}

void Viewer::buildPanesInBackground(std::vector<ComparePane> specs, const std::string& name) {
  panesBuildingName_ = name;
  panesBuilding_ = std::async(std::launch::async, [specs = std::move(specs)] {
    return LoadTicket().run([&] {  // at a load's priority, below the window's
      std::vector<std::pair<ComparePane, Result<std::unique_ptr<Simulation>>>> built;
      for (const ComparePane& spec : specs) built.emplace_back(spec, buildPaneSimulation(spec));
      return built;
    });
  });
  message(RunnerMessage::Kind::Info,
          "compare " + name + ": building the panes; what runs now runs until they are ready");
}

void Viewer::finishComparingScene() {
  if (!finished(panesBuilding_)) return;
  auto results = panesBuilding_.get();
  if (whatRuns() != requestedFor_) {
    message(RunnerMessage::Kind::Info,
            "compare " + panesBuildingName_ +
                ": not started, what runs was replaced while the panes were built");
    return;
  }
  // A scene opened meanwhile and still loading would be lost with the single runner: it wins.
  if (panes_.empty() && single_ && single_->loadProgress().active) {
    message(RunnerMessage::Kind::Info, "compare " + panesBuildingName_ + ": not started, " +
                                           single_->loadProgress().what + " is loading");
    return;
  }
  // A solver that cannot take this cloth (mls-isometry on a curved mesh without a flattening) is
  // left out, saying why; the others are compared.
  std::vector<BuiltPane> built;
  for (auto& [spec, simulation] : results) {
    if (simulation)
      built.push_back({spec, std::move(*simulation)});
    else
      message(RunnerMessage::Kind::Warning, "compare: left out " + simulation.error());
  }
  if (built.size() < 2) {
    message(RunnerMessage::Kind::Error,
            "compare " + panesBuildingName_ + ": it runs in fewer than two of the solvers");
    return;
  }
  installPanes(std::move(built), panesBuildingName_);
}

std::optional<std::string> Viewer::rebuildPane(int index, const ComparePane& spec) {
  auto pane = makePane(spec, runner_->paused(), pace_);
  if (!pane) return "pane " + std::to_string(index + 1) + ": " + pane.error();
  panes_[index] = std::move(pane).value();
  editsFor_ = {-1, -1};  // its vertex numbers may mean other points now: the history goes
                         // (dropStaleHistory)
  if (index == activePane_) {
    runner_ = panes_[index].runner.get();
    sceneIdentity_ = nullptr;  // the panel takes the new pane's settings (and frames it)
  }
  log_.write("pane_rebuilt", {{"pane", index}, {"solver", spec.solver}, {"scene", spec.scene}});
  restartOtherPanesInStep(index, "runs " + spec.scene);
  return std::nullopt;
}

void Viewer::restartOtherPanesInStep(int pane, const std::string& why) {
  if (!keepPanesInStep_ || panes_.size() < 2) return;
  for (size_t i = 0; i < panes_.size(); ++i)
    if (static_cast<int>(i) != pane) panes_[i].runner->reset();
  message(RunnerMessage::Kind::Info, "pane " + std::to_string(pane + 1) + " " + why +
                                         " from rest: the other panes start again too, to stay in step");
  log_.write("panes_restarted", {{"pane", pane}});
}

void Viewer::stopCompare() {
  if (panes_.empty()) return;
  // The active pane's simulation carries on alone: rebuilt from its scene as it stands now.
  auto resolved = paneScene(panes_[activePane_].spec);
  std::unique_ptr<Simulation> simulation;
  if (resolved) {
    applyPaneSolver(panes_[activePane_].spec, *resolved);
    if (auto created = Simulation::create(*resolved)) simulation = std::move(*created);
  }
  if (!simulation) {  // cannot happen for a scene that ran a moment ago; keep a window anyway
    auto fallback = Simulation::create(*resolveScene("hanging"));
    simulation = std::move(*fallback);
  }
  runSingle(std::move(simulation));
  log_.write("compare_stop");
}

void Viewer::runSingle(std::unique_ptr<Simulation> simulation) {
  const bool paused = runner_->paused();
  panes_.clear();
  pace_.reset();
  single_ = std::make_unique<SimRunner>(std::move(simulation), paused);
  ++runnersStarted_;
  single_->setSpeed(speed_);
  single_->setOverlay(render_.overlay);
  single_->setContacts(render_.contacts);
  runner_ = single_.get();
  sceneIdentity_ = nullptr;
}

void Viewer::openScene(const std::string& argument) {
  // The newer load wins, as in SimRunner::load.
  if (openedInCompare_.valid())
    giveUpOpenInCompare("the load of " + openedInComparePath_ + " was given up for " + argument);
  if (panes_.empty()) {
    runner_->load(argument);  // the current scene runs until the new one is built
    return;
  }
  openedInComparePath_ = argument;
  openedInCompareStart_ = glfwGetTime();
  auto ticket = std::make_shared<LoadTicket>();
  openedInCompareTicket_ = ticket;
  openedInCompare_ = std::async(std::launch::async, [argument, ticket] {
    return ticket->run([&] {
      return loadSimulation(argument, [&](const std::string&) { return !ticket->givenUp(); });
    });
  });
  message(RunnerMessage::Kind::Info,
          "loading " + argument + "; the comparison runs until it is built");
}

void Viewer::giveUpOpenInCompare(const std::string& why) {
  if (!openedInCompare_.valid()) return;
  if (openedInCompareTicket_) openedInCompareTicket_->giveUp();  // ends at its next stage
  lettingGo_.push_back(std::async(std::launch::async,
                                  [load = std::move(openedInCompare_)]() mutable { load.wait(); }));
  message(RunnerMessage::Kind::Info, why);
}

void Viewer::finishOpenInCompare() {
  if (!finished(openedInCompare_)) return;
  auto loaded = openedInCompare_.get();
  if (!loaded) {
    message(RunnerMessage::Kind::Error,
            "could not load " + openedInComparePath_ + ": " + loaded.error());
    return;
  }
  const bool comparing = !panes_.empty();  // the comparison may have been left meanwhile
  message(RunnerMessage::Kind::Info, loadedMessage(**loaded));
  runSingle(std::move(*loaded));
  if (comparing) log_.write("compare_stop");
}

void Viewer::layoutPanes() {
  const double left = panelWidth_ + 8, top = 8;
  const double width = std::max(50.0, winWidth_ - left - 8);
  const double height = std::max(50.0, winHeight_ - top - kCompareTableHeight - 8);
  const int count = static_cast<int>(panes_.size());
  // Up to three side by side; more in two rows (four: 2 x 2, five or six: 3 x 2).
  const int rows = count > 3 ? 2 : 1, columns = (count + rows - 1) / rows;
  const double gap = 4, w = (width - gap * (columns - 1)) / columns, h = (height - gap * (rows - 1)) / rows;
  for (int i = 0; i < count; ++i) {
    Pane& pane = panes_[i];
    pane.x = left + (i % columns) * (w + gap);
    pane.y = top + (i / columns) * (h + gap);
    pane.w = w;
    pane.h = h;
    if (options_.layout)  // pane rectangles for GUI tests
      layoutRect("pane" + std::to_string(i + 1), ImVec2(float(pane.x), float(pane.y)), ImVec2(float(pane.x + w), float(pane.y + h)));
  }
}

int Viewer::paneAt(double x, double y) const {
  for (size_t i = 0; i < panes_.size(); ++i) {
    const Pane& p = panes_[i];
    if (x >= p.x && x < p.x + p.w && y >= p.y && y < p.y + p.h) return static_cast<int>(i);
  }
  return -1;
}

Viewer::ViewRect Viewer::activeView() const {
  if (panes_.empty()) return {0, 0, double(winWidth_), double(winHeight_)};
  const Pane& p = panes_[activePane_];
  return {p.x, p.y, std::max(1.0, p.w), std::max(1.0, p.h)};
}

void Viewer::activatePane(int pane) {
  activePane_ = pane;
  runner_ = panes_[pane].runner.get();
  // The panel shows the new pane's settings; the camera stays where it is.
  if (auto latest = runner_->snapshot()) {
    sceneIdentity_ = latest->triangles.get();
    solverIdentity_ = latest->solverId;
    sim_ = latest->sim;
    solverParams_ = latest->solverParams;
    snapshot_ = latest;
  }
  log_.write("pane_active", {{"pane", pane}, {"solver", panes_[pane].spec.solver}});
}

void Viewer::consumePanes() {
  const double now = glfwGetTime();
  std::vector<std::vector<RunnerMessage>> sent;
  std::vector<std::string> names;
  for (size_t i = 0; i < panes_.size(); ++i) {
    sent.push_back(panes_[i].runner->takeMessages());
    names.push_back(paneSolverLabel(panes_[i].spec) + " (pane " + std::to_string(i + 1) + ")");
  }
  for (const RunnerMessage& m : mergePaneMessages(sent, names)) message(m.kind, m.text);
  for (size_t i = 0; i < panes_.size(); ++i) {
    Pane& pane = panes_[i];
    auto latest = pane.runner->snapshot();
    if (!latest || latest == pane.snapshot) continue;
    pane.snapshot = latest;
    if (latest->step == pane.lastStep) continue;
    pane.lastStep = latest->step;
    // The steps taken: a pane asleep at rest keeps the figure of its last ones.
    if (!sleptThrough(latest->stats)) pane.stepMs.push_back(latest->stats.msTotal);
    while (pane.stepMs.size() > 200) pane.stepMs.pop_front();
    if (now - pane.metricsWall >= kMetricsInterval || pane.metrics.empty()) {
      pane.metricsWall = now;
      const Positions surface = pointRows(latest->positions);
      std::vector<double> ms(pane.stepMs.begin(), pane.stepMs.end());
      if (ms.empty()) ms.push_back(std::numeric_limits<double>::quiet_NaN());
      std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
      const Positions nodes = pointRows(latest->finePositions);
      pane.metrics =
          measureLockingMetrics(pane.probe, *pane.cloth, surface, latest->stats, latest->sim,
                                ms[ms.size() / 2], latest->fine.get(), &nodes);
      // A restart (time running back) starts the window again.
      auto& recent = pane.recentMetrics;
      if (!recent.empty() && latest->time < recent.back().first) recent.clear();
      recent.emplace_back(latest->time, pane.metrics);
      while (recent.front().first < latest->time - kMetricsMeanWindow) recent.pop_front();
      pane.recentSummary = summarizeOverTime(recent);
    }
    if (log_.enabled()) {
      nlohmann::json e = {{"pane", i}, {"solver", latest->solverId}, {"scene", latest->sceneName},
                          {"step", latest->step}};
      if (latest->grab)
        e["grab"] = {{"triangle", latest->grab->triangle}, {"point", vecJson(latest->grabPoint)},
                     {"target", vecJson(latest->grab->target)}};
      e["pins"] = latest->pinVertices.size();
      e["t"] = latest->time;
      const auto& definitions = lockingMetricDefinitions();
      for (size_t m = 0; m < definitions.size() && m < pane.metrics.size(); ++m)
        if (std::isfinite(pane.metrics[m])) e[definitions[m].key] = pane.metrics[m];
      if (metricsMean_) {
        nlohmann::json means = nlohmann::json::object();
        for (size_t m = 0; m < definitions.size(); ++m)
          if (m < pane.recentSummary.size() && pane.recentSummary[m].samples() > 0) {
            const MetricSummary& r = pane.recentSummary[m];
            means[definitions[m].key] = {{"mean", r.mean()},
                                         {"lowest", r.lowest()},
                                         {"highest", r.highest()},
                                         {"samples", r.samples()},
                                         {"from", pane.recentMetrics.front().first},
                                         {"to", pane.recentMetrics.back().first}};
          }
        e["means"] = means;
      }
      log_.write("pane", e);
    }
  }
}

void Viewer::forEachRunner(const std::function<void(SimRunner&)>& fn) {
  if (panes_.empty()) {
    fn(*runner_);
    return;
  }
  for (auto& pane : panes_) fn(*pane.runner);
}

void Viewer::postEach(const std::string& label, const std::function<SimRunner::Edit(int)>& make, bool all,
                      bool interrupt) {
  if (panes_.empty()) {
    if (auto edit = make(-1)) runner_->post(label, std::move(edit), interrupt);
    return;
  }
  for (int i = 0; i < static_cast<int>(panes_.size()); ++i) {
    if (!all && i != activePane_) continue;
    if (auto edit = make(i)) panes_[i].runner->post(label, std::move(edit), interrupt);
  }
}

int Viewer::mapVertex(int pane, int vertex) const {
  if (pane < 0 || panes_[pane].spec.scene == panes_[activePane_].spec.scene) return vertex;
  const Positions& from = panes_[activePane_].cloth->mesh.positions;
  return nearestVertex(panes_[pane].cloth->mesh.positions, from.row(vertex).transpose());
}

Grab Viewer::mapGrab(int pane, const Grab& grab) const {
  if (pane < 0 || panes_[pane].spec.scene == panes_[activePane_].spec.scene) return grab;
  const TriangleMesh& from = panes_[activePane_].cloth->mesh;
  const TriangleMesh& to = panes_[pane].cloth->mesh;
  const Tri& f = from.triangles[grab.triangle];
  Vec3 rest = Vec3::Zero();
  for (int k = 0; k < 3; ++k) rest += grab.barycentric[k] * from.positions.row(f[k]).transpose();
  Grab mapped = grab;
  std::tie(mapped.triangle, mapped.barycentric) = closestSurfacePoint(to, rest);
  return mapped;
}

void Viewer::drawCompareSection() {
  const bool open = ImGui::CollapsingHeader("Compare", panes_.empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen);
  layout("compare_header");
  if (!open) return;
  const RevealWhenOpened reveal;
  const auto& presets = comparePresets();
  comparePreset_ = std::clamp(comparePreset_, 0, static_cast<int>(presets.size()) - 1);
  auto startPreset = [&](const ComparePreset& preset) {
    if (auto e = startCompare(preset.panes, preset.name)) message(RunnerMessage::Kind::Error, "compare: " + *e);
  };
  // Picking a preset while comparing starts it; "Restart comparison" restarts what runs.
  const std::string running = panes_.empty() ? presets[comparePreset_].name : compareName_;
  if (ImGui::BeginCombo("preset", running.c_str())) {
    for (int i = 0; i < static_cast<int>(presets.size()); ++i) {
      if (ImGui::Selectable(presets[i].name.c_str(), i == comparePreset_)) {
        comparePreset_ = i;
        if (!panes_.empty()) startPreset(presets[i]);
      }
      tooltip(presets[i].description);
    }
    ImGui::EndCombo();
  }
  layout("compare_preset");
  if (panes_.empty()) {
    // "##start": the header above is also "Compare", and a shared ID let the header take the click.
    if (ImGui::Button("Compare##start")) startPreset(presets[comparePreset_]);
    layout("compare_start");
    ImGui::SameLine();
    if (ImGui::Button("this scene, all solvers")) compareThisScene();
    layout("compare_this_scene");
    tooltip("runs the current scene as it stands (cloth, pins, obstacles, parameters) from rest with conforming, "
            "impulse-nc, mls-isometry and xpbd side by side");
    return;
  }
  if (ImGui::Button("Restart comparison")) {
    std::vector<ComparePane> specs;
    for (const Pane& pane : panes_) specs.push_back(pane.spec);
    // The current scene's comparison may hold a large cloth: built while the panes run on.
    const bool ownScene =
        std::any_of(specs.begin(), specs.end(), [](const ComparePane& p) { return p.source; });
    if (!ownScene) {
      if (auto e = startCompare(specs, compareName_))
        message(RunnerMessage::Kind::Error, "compare: " + *e);
    } else if (!comparisonBeingBuilt()) {
      requestedFor_ = whatRuns();
      buildPanesInBackground(std::move(specs), compareName_);
    }
  }
  layout("compare_start");
  ImGui::SameLine();
  if (ImGui::Button("Leave")) stopCompare();
  if (panes_.empty()) return;
  // The active pane's mesh variant (any built-in scene; the solver stays).
  Pane& active = panes_[activePane_];
  if (ImGui::BeginCombo("pane scene", active.spec.scene.c_str())) {
    for (const auto& entry : builtinScenes()) {
      if (ImGui::Selectable(entry.name.c_str(), entry.name == active.spec.scene) && entry.name != active.spec.scene) {
        if (auto e = rebuildPane(activePane_,
                                 {active.spec.solver, entry.name, nullptr, active.spec.params}))
          message(RunnerMessage::Kind::Error, "compare: " + *e);
        break;  // the pane was replaced
      }
      tooltip(entry.description);
    }
    ImGui::EndCombo();
  }
  layout("compare_pane_scene");
  tooltip("the scene (mesh variant) the active pane runs; its solver stays");
  ImGui::Checkbox("parameter edits go to every pane", &editAllPanes_);
  tooltip("off: density, bending, time step and solver parameters change only the active pane");
  if (ImGui::Checkbox("keep panes in step", &keepPanesInStep_)) {
    pace_->setEnabled(keepPanesInStep_);
    log_.write("panes_in_step", {{"on", keepPanesInStep_}});
    // Panes far apart: the ones ahead wait, perhaps long, for the one behind (it runs no faster
    // than wall time). Say so, and how to start them together.
    auto time = [](const Pane& pane) { return pane.snapshot ? pane.snapshot->time : 0.0; };
    const auto [behind, ahead] = std::minmax_element(
        panes_.begin(), panes_.end(), [&](const Pane& a, const Pane& b) { return time(a) < time(b); });
    if (keepPanesInStep_ && time(*ahead) - time(*behind) > 0.5)
      message(RunnerMessage::Kind::Info, "the panes ahead wait until pane " +
                                             std::to_string(behind - panes_.begin() + 1) + " (t = " +
                                             formatG(time(*behind), 3) + " s) reaches them; Restart comparison "
                                             "starts all together");
  }
  layout("compare_in_step");
  tooltip("on: a pane runs ahead of the slowest by at most a step, so all show the same simulated time and a "
          "drag meets each at the same moment; off: each pane keeps up with wall time as far as it can");
  if (ImGui::Checkbox("metrics: mean over the last 2 s", &metricsMean_))
    log_.write("metrics_mean", {{"on", metricsMean_}});
  layout("compare_metrics_mean");
  tooltip("on: the panes' labels and the metrics table show each metric's mean over the last 2 s of "
          "simulated time (hover a value in the table for its lowest and highest): a swinging or "
          "fluttering sheet's sag changes from moment to moment; off: the latest value");
  ImGui::TextWrapped(
      "active pane: %d (%s); click a pane to make it active: the Solver and parameter sections "
      "below show it",
      activePane_ + 1, paneSolverLabel(panes_[activePane_].spec).c_str());
  hint("drags and pins act on the same material point in every pane");
}

void Viewer::drawCompareOverlay() {
  // Frames and labels of each pane, behind ImGui's windows (the hint bar, open combo boxes and
  // tooltips lie over the panes) and in front of the 3D view, which is drawn before ImGui.
  ImDrawList* draw = ImGui::GetBackgroundDrawList();
  const auto& definitions = lockingMetricDefinitions();
  // ms_per_step (not of a state) is a median over the last steps either way.
  auto shown = [&](const Pane& pane, size_t m) {
    if (metricsMean_ && definitions[m].ofState)
      return m < pane.recentSummary.size() ? pane.recentSummary[m].mean()
                                           : std::numeric_limits<double>::quiet_NaN();
    return m < pane.metrics.size() ? pane.metrics[m] : std::numeric_limits<double>::quiet_NaN();
  };
  static const size_t kSag = lockingMetricIndex("sag"), kTip = lockingMetricIndex("tip_height"),
                      kStrain = lockingMetricIndex("max_edge_strain"),
                      kResidual = lockingMetricIndex("residual"),
                      kMsPerStep = lockingMetricIndex("ms_per_step"),
                      kStitchGap = lockingMetricIndex("max_stitch_gap");
  auto metricText = [&](const Pane& pane, size_t m) {
    const double value = shown(pane, m);
    return std::isfinite(value) ? formatG(value, 4) : std::string("-");
  };
  for (size_t i = 0; i < panes_.size(); ++i) {
    const Pane& pane = panes_[i];
    if (!pane.snapshot) continue;
    const Snapshot& s = *pane.snapshot;
    const ImU32 frame = int(i) == activePane_ ? IM_COL32(255, 200, 60, 255) : IM_COL32(60, 60, 70, 255);
    draw->AddRect(ImVec2(float(pane.x), float(pane.y)), ImVec2(float(pane.x + pane.w), float(pane.y + pane.h)), frame, 0, 0,
                  int(i) == activePane_ ? 2.5f : 1.0f);
    // Four kinds of line (name, setup, metrics, progress), each packed into as many rows as the
    // pane's width needs: with three or four panes a window 1280 px wide has no room for a setup
    // line in one row.
    std::vector<std::string> setup{s.sceneName, std::to_string(s.vertexCount()) + " vertices", "h " + formatG(s.sim.dt) + " s"};
    if (s.sim.substeps > 1) setup.back() += " in " + std::to_string(s.sim.substeps);
    if (s.solverParams.contains("tolerance")) setup.push_back("tol " + s.solverParams["tolerance"].dump());
    // xpbd's iterations are sweeps over the edges; strain-limit-remesh's are solves, at most.
    if (s.solverParams.contains("iterations"))
      setup.push_back((s.solverId == "xpbd" ? "" : "<= ") + s.solverParams["iterations"].dump() +
                      (s.solverId == "xpbd" ? " sweeps" : " solves"));
    setup.push_back("k_b " + formatG(s.sim.bending));
    const float width = float(pane.w) - 20;
    struct Row {
      std::string text;
      ImU32 colour;
    };
    std::vector<Row> rows;
    auto add = [&](const std::vector<std::string>& parts, const char* separator, ImU32 colour) {
      for (const std::string& row : packIntoRows(parts, separator, width, textWidth)) rows.push_back({row, colour});
    };
    // The parameters the pane was started with (a preset's, a pane list's), at their values now.
    std::vector<std::string> name{std::to_string(i + 1) + "  " + s.solverId};
    for (const auto& [key, started] : pane.spec.params.items())
      if (const auto now = s.solverParams.find(key); now != s.solverParams.end())
        name.push_back(key + " " + solverParamText(*now));
    add(name, ", ", IM_COL32(255, 255, 255, 255));
    add(setup, ", ", IM_COL32(210, 215, 225, 255));
    std::vector<std::string> measured{"sag " + metricText(pane, kSag) + " m",
                                      "tip " + metricText(pane, kTip) + " m",
                                      "strain " + metricText(pane, kStrain)};
    // A garment: its widest stitch.
    if (std::isfinite(shown(pane, kStitchGap)))
      measured.push_back("seam gap " + metricText(pane, kStitchGap) + " m");
    if (metricsMean_) measured.insert(measured.begin(), "2 s means:");
    add(measured, "   ", IM_COL32(255, 230, 150, 255));
    // The progress rows turn red while the pane's last step ended above its solver's tolerance.
    std::vector<std::string> progress{"residual " + metricText(pane, kResidual),
                                      metricText(pane, kMsPerStep) + " ms/step",
                                      "t " + std::to_string(s.time).substr(0, 5) + " s"};
    // A slow step shows that it runs, as in the panel (a large cloth's first step, in every pane).
    if (const double running = pane.runner->stepRunningSeconds(); running >= kSlowStepSeconds)
      progress.push_back(runningStepText(s.step, running));
    add(progress, "   ",
        s.stats.converged ? IM_COL32(210, 215, 225, 255) : IM_COL32(255, 115, 100, 255));
    float textWidth = 0;
    for (const Row& row : rows) textWidth = std::max(textWidth, ImGui::CalcTextSize(row.text.c_str()).x);
    const ImVec2 at(float(pane.x + 8), float(pane.y + 6));
    const float rowHeight = ImGui::GetTextLineHeight() + 3;
    draw->PushClipRect(ImVec2(float(pane.x), float(pane.y)), ImVec2(float(pane.x + pane.w), float(pane.y + pane.h)), true);
    const ImVec2 labelMin(at.x - 4, at.y - 2), labelMax(at.x + textWidth + 6, at.y + rowHeight * float(rows.size()) + 2);
    draw->AddRectFilled(labelMin, labelMax, IM_COL32(20, 22, 28, 170), 4);
    if (options_.layout) layoutRect("pane" + std::to_string(i + 1) + "_label", labelMin, labelMax);
    for (size_t r = 0; r < rows.size(); ++r)
      draw->AddText(ImVec2(at.x, at.y + rowHeight * float(r)), rows[r].colour, rows[r].text.c_str());
    draw->PopClipRect();
  }

  // The table under the panes.
  const double left = panelWidth_ + 8;
  ImGui::SetNextWindowPos(ImVec2(float(left), float(winHeight_ - kCompareTableHeight)), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(float(std::max(100.0, winWidth_ - left - 8)), float(kCompareTableHeight - 8)),
                           ImGuiCond_Always);
  // The title says what the values are; the window keeps one id ("###") whichever it shows.
  ImGui::Begin(
      metricsMean_ ? "Locking metrics: means over the last 2 s of simulated time###Locking metrics"
                   : "Locking metrics###Locking metrics",
      nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
  rememberWindow();
  if (ImGui::BeginTable("metrics", static_cast<int>(panes_.size()) + 2,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("metric");
    ImGui::TableSetupColumn("unit");
    // Panes on different scenes (a resolution sweep) name their scene too.
    auto sceneName = [](const Pane& pane) { return pane.snapshot ? pane.snapshot->sceneName : std::string(); };
    const bool scenesDiffer = std::any_of(panes_.begin(), panes_.end(),
                                          [&](const Pane& pane) { return sceneName(pane) != sceneName(panes_[0]); });
    for (size_t i = 0; i < panes_.size(); ++i) {
      std::string header = std::to_string(i + 1) + " " + paneSolverLabel(panes_[i].spec);
      if (scenesDiffer && !sceneName(panes_[i]).empty()) header += " @ " + sceneName(panes_[i]);
      ImGui::TableSetupColumn(header.c_str());
    }
    ImGui::TableHeadersRow();
    for (size_t m = 0; m < definitions.size(); ++m) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(definitions[m].key.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", definitions[m].meaning.c_str());
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(definitions[m].unit.c_str());
      for (size_t i = 0; i < panes_.size(); ++i) {
        ImGui::TableSetColumnIndex(static_cast<int>(i) + 2);
        ImGui::TextUnformatted(metricText(panes_[i], m).c_str());
        if (metricsMean_ && definitions[m].ofState && ImGui::IsItemHovered()) {
          const Pane& pane = panes_[i];
          if (m < pane.recentSummary.size() && pane.recentSummary[m].samples() > 0) {
            const MetricSummary& r = pane.recentSummary[m];
            ImGui::SetTooltip("mean of %d samples from t = %.2f s: lowest %s, highest %s",
                              r.samples(), pane.recentMetrics.front().first,
                              formatG(r.lowest(), 4).c_str(), formatG(r.highest(), 4).c_str());
          }
        }
      }
    }
    ImGui::EndTable();
  }
  ImGui::End();
}

}  // namespace clothlab
