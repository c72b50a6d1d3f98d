#include "app/viewer/viewer.h"

#include <glad/gl.h>
// glad first: GLFW must not pull in the system GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/viewer/framing.h"
#include "app/viewer/shortcut_key.h"
#include "sim/obj_io.h"
#include "sim/scene_library.h"

namespace clothlab {

namespace fs = std::filesystem;

namespace {
Viewer* self(GLFWwindow* w) { return static_cast<Viewer*>(glfwGetWindowUserPointer(w)); }


std::string recentFile() {
  const char* config = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (config && *config) return std::string(config) + "/clothlab/recent.txt";
  if (home && *home) return std::string(home) + "/.config/clothlab/recent.txt";
  return "";
}
}  // namespace

Viewer::FirstScene Viewer::firstScene(const std::string& argument, const std::string& solver) {
  // `scene` under `solverId` (its own when empty).
  auto create = [](const Scene& scene, const std::string& solverId) {
    Scene asked = scene;
    if (!solverId.empty()) useSolver(asked, solverId);
    return Simulation::create(asked);
  };
  FirstScene first;
  auto scene = resolveScene(argument);
  if (!scene) {
    first.error = scene.error();
  } else if (auto simulation = create(*scene, solver)) {
    first.simulation = std::move(*simulation);
    first.opened = true;
  } else {
    first.error = simulation.error();
    // The solver asked for refused the cloth: the scene runs under its own solver instead.
    if (!solver.empty() && solver != scene->solverId) {
      if (auto own = create(*scene, "")) {
        first.simulation = std::move(*own);
        first.opened = true;
        first.error += " (running it under " + scene->solverId + ", its own solver)";
      }
    }
  }
  // Nothing of it runs: the default scene, under the solver asked for if it can.
  if (!first.simulation) {
    const Scene fallback = *resolveScene("hanging");
    auto simulation = create(fallback, solver);
    if (!simulation) simulation = create(fallback, "");
    first.simulation = std::move(*simulation);
    first.error += " (showing the hanging scene instead)";
  }
  return first;
}

Viewer::Viewer(ViewerOptions options) : options_(std::move(options)) {
  render_.pattern = patternNamed(options_.pattern).value_or(ClothPattern::None);
  if (render_.pattern != ClothPattern::None) lastPattern_ = render_.pattern;
}

Viewer::~Viewer() {
  panes_.clear();  // stop the simulation threads first
  single_.reset();
  if (window_) {
    renderer_.reset();
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
  }
}

int Viewer::run() {
  if (!log_.open(options_.logPath)) {
    std::fprintf(stderr, "clothlab: %s: cannot write the log file\n", options_.logPath.c_str());
    return 2;
  }
  if (!options_.screenshot.empty()) {
    if (auto e = checkPngWritable(options_.screenshot)) {
      std::fprintf(stderr, "clothlab: --screenshot: %s\n", e->c_str());
      return 2;
    }
  }
  // The first scene. A bad one opens the window all the same, on what can run (firstScene), with
  // the error in the panel; the exit status then says it (2).
  FirstScene first = firstScene(options_.scene, options_.solver);
  const bool firstSceneRefused = !first.error.empty();
  const ComparePreset* preset = nullptr;
  if (!options_.compare.empty() && !(preset = findComparePreset(options_.compare))) {
    std::fprintf(stderr, "clothlab: --compare: unknown preset '%s' (known: %s)\n", options_.compare.c_str(),
                 comparePresetNames().c_str());
    return 2;
  }

  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "clothlab: cannot initialise GLFW (no display? set DISPLAY or use xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_STENCIL_BITS, 8);
  window_ = glfwCreateWindow(options_.width, options_.height, "ClothLab", nullptr, nullptr);
  if (!window_) {
    std::fprintf(stderr, "clothlab: cannot open an OpenGL 3.3 core window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(1);
  if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(glfwGetProcAddress))) {
    std::fprintf(stderr, "clothlab: cannot load OpenGL functions\n");
    return 1;
  }
  glfwSetWindowUserPointer(window_, this);
  // Our callbacks first: ImGui's GLFW back end chains to them. Each notes the input's time for
  // the frame pace (frame_pace.h), the panel's too.
  static auto input = [](GLFWwindow* w) {
    Viewer* viewer = self(w);
    viewer->lastInput_ = glfwGetTime();
    return viewer;
  };
  glfwSetMouseButtonCallback(
      window_, [](GLFWwindow* w, int b, int a, int m) { input(w)->onMouseButton(b, a, m); });
  glfwSetCursorPosCallback(window_,
                           [](GLFWwindow* w, double x, double y) { input(w)->onCursor(x, y); });
  glfwSetScrollCallback(window_, [](GLFWwindow* w, double, double dy) { input(w)->onScroll(dy); });
  glfwSetKeyCallback(
      window_, [](GLFWwindow* w, int k, int sc, int a, int m) { input(w)->onKey(k, sc, a, m); });
  glfwSetDropCallback(window_,
                      [](GLFWwindow* w, int n, const char** p) { input(w)->onDrop(n, p); });

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 4;
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  {
    // The text fields' Ctrl+A, C, V, X, Y, Z go by the key labels too (shortcut_key.h).
    ImGuiIO& io = ImGui::GetIO();
    auto name = [](int key) { return glfwGetKeyName(key, 0); };
    const std::pair<ImGuiKey, char> letters[] = {{ImGuiKey_A, 'a'}, {ImGuiKey_C, 'c'},
                                                 {ImGuiKey_V, 'v'}, {ImGuiKey_X, 'x'},
                                                 {ImGuiKey_Y, 'y'}, {ImGuiKey_Z, 'z'}};
    for (const auto& [imguiKey, letter] : letters) io.KeyMap[imguiKey] = keyLabelled(letter, name);
  }
  ImGui_ImplOpenGL3_Init("#version 330 core");

  renderer_ = std::make_unique<Renderer>();
  if (auto e = renderer_->init()) {
    std::fprintf(stderr, "clothlab: %s\n", e->c_str());
    return 1;
  }
  std::printf("[clothlab] %s\n", renderer_->glInfo().c_str());

  if (const std::string file = recentFile(); !file.empty()) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) recent_.push_back(line);
  }
  if (first.opened &&
      (isObjPath(options_.scene) || fs::path(options_.scene).extension() == ".json"))
    addRecent(options_.scene);
  if (firstSceneRefused) message(RunnerMessage::Kind::Error, first.error);
  const std::string firstName = first.simulation->scene().name,
                    firstSolver = first.simulation->solver().id();

  single_ = std::make_unique<SimRunner>(std::move(first.simulation), options_.paused);
  runner_ = single_.get();
  if (preset) {
    if (auto e = startCompare(preset->panes, preset->name)) {
      std::fprintf(stderr, "clothlab: --compare %s: %s\n", options_.compare.c_str(), e->c_str());
      return 2;
    }
  }
  log_.write("start", {{"scene", firstName}, {"solver", firstSolver}});
  std::printf("READY\n");
  std::fflush(stdout);

  startWall_ = glfwGetTime();
  lastInput_ = startWall_;  // the first second unpaced: the real-time factor is measured by then
  double lastFrame = startWall_;
  while (!glfwWindowShouldClose(window_)) {
    glfwPollEvents();
    const bool last = (options_.frames > 0 && frameCount_ + 1 >= options_.frames) ||
                      (options_.seconds > 0 && glfwGetTime() - startWall_ >= options_.seconds);
    frame(last);
    ++frameCount_;
    if (last) glfwSetWindowShouldClose(window_, GLFW_TRUE);
    // Frame limiter: vsync is not honoured everywhere (Xvfb), and spinning would starve the
    // simulation thread of a core; while it lags, or nothing runs, fewer frames (frameCap). The
    // events that come meanwhile are handled as they come; a paced wait ends at the first input,
    // which the next frame then answers, but the full rate's cap holds through mouse moves.
    if (const double cap = frameCap(); cap > 0) {
      const double inputBefore = lastInput_;
      const bool paced = framePace_.pace != FramePace::Pace::Full;
      for (double wait; (wait = 1.0 / cap - (glfwGetTime() - lastFrame)) > 0;) {
        glfwWaitEventsTimeout(wait);
        if (paced && lastInput_ != inputBefore) break;
      }
    }
    lastFrame = glfwGetTime();
  }
  // Stop the simulation threads, waiting a moment for them (and for as long as a save clicked
  // before quitting takes); work that would hold the process longer is left to end with it.
  forEachRunner([](SimRunner& runner) { runner.requestStop(); });
  std::vector<std::string> unfinished;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  forEachRunner([&](SimRunner& runner) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!runner.waitStopped(std::max(left, std::chrono::milliseconds(0))))
      unfinished.push_back("a step of " + runner.snapshot()->sceneName + " in progress");
  });
  listSavedScenes();  // saves clicked just before quitting, written as the threads stopped
  for (std::string& work : unfinishedWork()) unfinished.push_back(std::move(work));
  exitWithoutWaiting_ = !unfinished.empty();
  nlohmann::json quit = {{"frames", frameCount_}};
  if (!unfinished.empty()) quit["left_unfinished"] = unfinished;
  log_.write("quit", quit);
  std::printf("FINAL frames=%ld\n", frameCount_);
  return finalScreenshotFailed_ ? 1 : firstSceneRefused ? 2 : 0;
}

std::vector<std::string> Viewer::unfinishedWork() const {
  std::vector<std::string> work;
  auto loading = [&](const SimRunner* runner) {
    if (!runner) return;
    if (const LoadProgress progress = runner->loadProgress(); progress.active)
      work.push_back("the load of " + progress.what);
  };
  loading(single_.get());
  for (const Pane& pane : panes_) loading(pane.runner.get());
  if (panesBuilding_.valid() && !finished(panesBuilding_))
    work.push_back("the panes of " + panesBuildingName_);
  if (openedInCompare_.valid() && !finished(openedInCompare_))
    work.push_back("the load of " + openedInComparePath_);
  long givenUp = std::count_if(lettingGo_.begin(), lettingGo_.end(),
                               [](const std::future<void>& w) { return !finished(w); });
  if (single_) givenUp += single_->loadsGivenUpStillRunning();
  for (const Pane& pane : panes_) givenUp += pane.runner->loadsGivenUpStillRunning();
  if (givenUp > 0)
    work.push_back(std::to_string(givenUp) + (givenUp == 1 ? " load" : " loads") + " given up");
  return work;
}

void Viewer::consumeSnapshot() {
  auto latest = runner_->snapshot();
  if (!latest) return;
  if (paramsRunner_ != runner_) {
    paramsRunner_ = nullptr;  // none awaited, or another runner's
  } else if (auto undone = runner_->snapshotAfter(paramsShownAfter_)) {
    // The panel shows the parameters the undo or redo put back.
    sim_ = undone->sim;
    solverParams_ = undone->solverParams;
    paramsRunner_ = nullptr;
  }
  const bool newScene = latest->triangles.get() != sceneIdentity_;
  const bool newSolver = latest->solverId != solverIdentity_;
  if (newScene || newSolver) {
    // A new scene or solver: the panel's copies start from what it runs with.
    sim_ = latest->sim;
    solverParams_ = latest->solverParams;
    if (newScene) {
      placement_ = currentPlacement(latest->clothTransform);
      fitCamera(*latest, true);
      history_.clear();
      render_.heatMax = 0.01f;
      if (latest->cloth)
        render_.patternSize = static_cast<float>(defaultPatternSize(patternExtent(*latest->cloth)));
      if (options_.patternSize > 0)
        render_.patternSize = static_cast<float>(std::exchange(options_.patternSize, 0.0));
    }
    sceneIdentity_ = latest->triangles.get();
    solverIdentity_ = latest->solverId;
    // The cloth's bounds as it starts: from its placed rest mesh, not from this snapshot, which
    // may come some steps in when the simulation thread ran ahead of the frame.
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    if (latest->cloth && latest->cloth->mesh.vertexCount() > 0) {
      lo = latest->cloth->mesh.positions.colwise().minCoeff().transpose();
      hi = latest->cloth->mesh.positions.colwise().maxCoeff().transpose();
    }
    log_.write("scene", {{"name", latest->sceneName},
                         {"solver", latest->solverId},
                         {"step", latest->step},
                         {"vertices", latest->vertexCount()},
                         {"triangles", latest->triangleCount()},
                         {"cloth_lo", vecJson(lo)},
                         {"cloth_hi", vecJson(hi)}});
  }
  // A new step, or a grab or pin that an edit published without a step: an interrupting click
  // before the next step (SimRunner), or a pin or grab dragged while paused. The log records
  // those too: it shows when the edit took effect.
  const bool newStep = latest->step != lastLoggedStep_;
  const std::optional<Vec3> grabTarget =
      latest->grab ? std::optional<Vec3>(latest->grab->target) : std::nullopt;
  const bool edited = log_.enabled() && (grabTarget != lastLoggedGrabTarget_ ||
                                         latest->pinVertices != lastLoggedPinVertices_ ||
                                         latest->pinTargets != lastLoggedPinTargets_);
  if (latest != snapshot_ && (newStep || edited)) {
    const StepStats& st = latest->stats;
    if (newStep) {
      history_.push_back({static_cast<float>(glfwGetTime() - startWall_), float(st.msTotal), float(st.msFactor),
                          float(st.msForces), float(st.msVelocity), float(st.msPosition), float(st.msCollision),
                          float(st.positionIterations), float(st.maxPositionError), float(st.maxEdgeStrain),
                          float(runner_->realTimeFactor()), st.converged});
    }
    while (!history_.empty() && history_.back().wall - history_.front().wall > 10.0f) history_.pop_front();
    if (log_.enabled()) {
      nlohmann::json e = {{"step", latest->step},
                          {"t", latest->time},
                          {"ms_total", st.msTotal},
                          {"max_position_error", st.maxPositionError},
                          {"max_edge_strain", st.maxEdgeStrain},
                          {"density", latest->sim.density},
                          {"dt", latest->sim.dt},
                          {"substeps", latest->sim.substeps},
                          {"bending", latest->sim.bending},
                          {"bending_rest", latest->sim.bendingRest},
                          {"gravity", vecJson(latest->sim.gravity)},
                          {"wind", vecJson(latest->sim.wind)},
                          {"air_density", latest->sim.airDensity},
                          {"solver", latest->solverId},
                          {"scene", latest->sceneName},
                          {"vertices", latest->vertexCount()},
                          {"obstacles", latest->obstacles.size()}};
      nlohmann::json pins = nlohmann::json::array();
      for (size_t i = 0; i < latest->pinVertices.size(); ++i)
        pins.push_back({{"vertex", latest->pinVertices[i]},
                        {"position", vecJson(latest->vertex(latest->pinVertices[i]))},
                        {"target", vecJson(latest->pinTargets[i])}});
      e["pins"] = pins;
      if (const auto gap = st.extra.find("max_stitch_gap"); gap != st.extra.end())
        e["max_stitch_gap"] = *gap;
      if (!latest->jellyStates.empty()) {
        nlohmann::json jellies = nlohmann::json::array();
        for (const auto& j : latest->jellyStates)
          jellies.push_back({{"center", vecJson(j.center)},
                             {"walls", j.step.walls},
                             {"squash", j.step.maxDisplacement}});
        e["jellies"] = jellies;
      }
      if (latest->grab)
        e["grab"] = {{"triangle", latest->grab->triangle}, {"point", vecJson(latest->grabPoint)},
                     {"target", vecJson(latest->grab->target)}};
      log_.write("snapshot", e);
      lastLoggedGrabTarget_ = grabTarget;
      lastLoggedPinVertices_ = latest->pinVertices;
      lastLoggedPinTargets_ = latest->pinTargets;
    }
    lastLoggedStep_ = latest->step;
  }
  snapshot_ = latest;
}

void Viewer::frame(bool last) {
  if (panes_.empty()) {
    for (auto& m : runner_->takeMessages()) message(m.kind, m.text);
  } else {
    consumePanes();
  }
  if (finished(sceneToCompare_)) startComparingScene(sceneToCompare_.get());
  finishComparingScene();
  finishOpenInCompare();
  lettingGo_.erase(std::remove_if(lettingGo_.begin(), lettingGo_.end(),
                                  [](const std::future<void>& w) { return finished(w); }),
                   lettingGo_.end());
  listSavedScenes();
  glfwGetWindowSize(window_, &winWidth_, &winHeight_);
  if (!panes_.empty()) layoutPanes();  // before a new scene's camera fit, which needs the pane shape
  consumeSnapshot();
  if (!obstaclesFromCommandLine_ && snapshot_) {  // placed under the cloth: needs its first snapshot
    obstaclesFromCommandLine_ = true;
    loadMeshObstacles(options_.obstacles);  // together: in a row under the cloth
  }

  glfwGetFramebufferSize(window_, &fbWidth_, &fbHeight_);
  glfwGetWindowSize(window_, &winWidth_, &winHeight_);
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  windowRects_.clear();
  drawPanel();
  if (!panes_.empty()) drawCompareOverlay();
  drawOverlayText();
  if (showHelp_) drawHelpWindow();
  ImGui::Render();

  // The scene's centre sits in the middle of the area right of the panel.
  // In compare mode the panes fill the area right of the panel, each centred.
  camera_.shift = winWidth_ > 0 && panes_.empty() ? 0.5 * std::min<double>(panelWidth_, 0.5 * winWidth_) / winWidth_ : 0.0;
  if (!panes_.empty()) {
    layoutPanes();
    refitChangedPane();
  }
  if (options_.layout && snapshot_) printProbes();
  if (panes_.empty() && snapshot_ && fbWidth_ > 0 && fbHeight_ > 0)
    renderer_->draw(*snapshot_, camera_, render_, 0, 0, fbWidth_, fbHeight_);
  if (!panes_.empty() && fbWidth_ > 0 && winWidth_ > 0) {
    glViewport(0, 0, fbWidth_, fbHeight_);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(0.2f, 0.22f, 0.25f, 1);  // the gaps between panes
    glClear(GL_COLOR_BUFFER_BIT);
    const double scale = double(fbWidth_) / winWidth_;
    for (const Pane& pane : panes_)
      if (pane.snapshot)
        renderer_->draw(*pane.snapshot, camera_, render_, int(pane.x * scale), int(fbHeight_ - (pane.y + pane.h) * scale),
                        int(pane.w * scale), int(pane.h * scale));
  }
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

  const double now = glfwGetTime();
  frameTimes_.push_back(now);
  while (frameTimes_.size() > 2 && frameTimes_.back() - frameTimes_.front() > 2.0) frameTimes_.pop_front();
  if (now - lastFpsLog_ >= 1.0 && frameTimes_.size() > 1) {
    const double fps = (frameTimes_.size() - 1) / (frameTimes_.back() - frameTimes_.front());
    log_.write("fps", {{"fps", fps},
                       {"rtf", runner_->realTimeFactor()},
                       {"step", snapshot_ ? snapshot_->step : 0},
                       {"pace", FramePace::name(framePace_.pace)}});
    lastFpsLog_ = now;
  }

  // Screenshots read the back buffer before the swap.
  if (screenshotRequested_) {
    takeScreenshot(screenshotPath_);
    screenshotRequested_ = false;
  }
  if (last && !options_.screenshot.empty() && !takeScreenshot(options_.screenshot))
    finalScreenshotFailed_ = true;
  if (recording_) {
    char name[64];
    std::snprintf(name, sizeof name, "frame_%05ld.png", recordIndex_++);
    if (auto e = writePng((fs::path(recordDir_) / name).string(), fbWidth_, fbHeight_, readPixels(fbWidth_, fbHeight_))) {
      message(RunnerMessage::Kind::Error, "recording stopped: " + *e);
      recording_ = false;
    }
  }
  glfwSwapBuffers(window_);
}

void Viewer::printProbes() {
  // Two material points for GUI tests to aim at: the centres of the triangles nearest the cloth's
  // centroid and nearest the point halfway from there to the lowest vertex, chosen once per
  // scene, printed where they are on screen whenever that moves by 2 pixels or more. A triangle's
  // centre is inside it, so a click there always lands on the cloth.
  const Snapshot& s = *snapshot_;
  auto centre = [&](int t) { return s.surfacePoint(t, Vec3(1.0 / 3, 1.0 / 3, 1.0 / 3)); };
  if (probeScene_ != s.triangles.get()) {
    probeScene_ = s.triangles.get();
    Vec3 centroid = Vec3::Zero();
    int lowest = 0;
    for (int v = 0; v < s.vertexCount(); ++v) {
      centroid += s.vertex(v) / s.vertexCount();
      if (s.vertex(v).y() < s.vertex(lowest).y()) lowest = v;
    }
    auto nearest = [&](const Vec3& p) {
      int best = 0;
      for (int t = 1; t < s.triangleCount(); ++t)
        if ((centre(t) - p).norm() < (centre(best) - p).norm()) best = t;
      return best;
    };
    probes_[0].index = nearest(centroid);
    probes_[1].index = nearest(0.5 * (centroid + s.vertex(lowest)));
  }
  // Where a point is on screen, in the active view.
  auto screen = [&](const Vec3& p) {
    const ViewRect view = activeView();
    return camera_.project({p.x(), p.y(), p.z()}, int(view.w), int(view.h)) +
           glm::dvec2(view.x, view.y);
  };
  const char* names[2] = {"cloth_center", "cloth_lower"};
  for (int i = 0; i < 2; ++i) {
    const glm::dvec2 q = screen(centre(probes_[i].index));
    if (std::hypot(q.x - probes_[i].x, q.y - probes_[i].y) < 2) continue;
    probes_[i].x = q.x;
    probes_[i].y = q.y;
    std::printf("LAYOUT %s %d %d %d %d triangle %d\n", names[i], int(std::lround(q.x)),
                int(std::lround(q.y)), int(std::lround(q.x)), int(std::lround(q.y)),
                probes_[i].index);
  }
  // Where the last pin's vertex is on screen (tests drag it).
  if (!s.pinVertices.empty()) {
    const int v = s.pinVertices.back();
    const glm::dvec2 q = screen(s.vertex(v));
    if (v != pinProbe_.index || std::hypot(q.x - pinProbe_.x, q.y - pinProbe_.y) >= 2) {
      pinProbe_ = {v, q.x, q.y};
      std::printf("LAYOUT pin_last %d %d %d %d vertex %d\n", int(std::lround(q.x)),
                  int(std::lround(q.y)), int(std::lround(q.x)), int(std::lround(q.y)), v);
    }
  }
  // The screen rectangle around the cloth's vertices in the active view (tests check framing).
  const ViewRect view = activeView();
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
  for (int v = 0; v < s.vertexCount(); ++v) {
    const Vec3 p = s.vertex(v);
    const glm::dvec2 q = camera_.project({p.x(), p.y(), p.z()}, int(view.w), int(view.h));
    x0 = std::min(x0, q.x + view.x), x1 = std::max(x1, q.x + view.x);
    y0 = std::min(y0, q.y + view.y), y1 = std::max(y1, q.y + view.y);
  }
  const std::array<int, 4> box = {int(std::lround(x0)), int(std::lround(y0)), int(std::lround(x1)),
                                  int(std::lround(y1))};
  bool moved = false;
  for (int k = 0; k < 4; ++k) moved = moved || std::abs(box[k] - printedClothBox_[k]) >= 2;
  if (moved && s.vertexCount() > 0) {
    printedClothBox_ = box;
    std::printf("LAYOUT cloth_box %d %d %d %d\n", box[0], box[1], box[2], box[3]);
  }
}

void Viewer::message(RunnerMessage::Kind kind, const std::string& text) {
  addPanelMessage(messages_, kind, text);
  const bool error = kind == RunnerMessage::Kind::Error, warning = kind == RunnerMessage::Kind::Warning;
  log_.write(error ? "error" : warning ? "warning" : "info", {{"message", text}});
  std::fprintf(error || warning ? stderr : stdout, "[clothlab] %s%s\n", warning ? "warning: " : "", text.c_str());
}

bool Viewer::takeScreenshot(const std::string& path) {
  if (auto e = writePng(path, fbWidth_, fbHeight_, readPixels(fbWidth_, fbHeight_))) {
    message(RunnerMessage::Kind::Error, *e);
    return false;
  }
  log_.write("screenshot", {{"path", path}, {"width", fbWidth_}, {"height", fbHeight_}});
  std::printf("[clothlab] screenshot %dx%d -> %s\n", fbWidth_, fbHeight_, path.c_str());
  return true;
}

// ---- Mouse and keyboard --------------------------------------------------------------------

Vec3 Viewer::viewPlanePoint(double x, double y, const Vec3& through) const {
  const ViewRect v = activeView();
  const glm::dvec3 p = camera_.onViewPlane(x - v.x, y - v.y, int(v.w), int(v.h), {through.x(), through.y(), through.z()});
  return {p.x, p.y, p.z};
}

std::optional<int> Viewer::pinNearCursor(double x, double y, double radius) const {
  if (!snapshot_) return std::nullopt;
  std::optional<int> best;
  double bestDistance = radius;
  for (int v : snapshot_->pinVertices) {
    const Vec3 p = snapshot_->vertex(v);
    bool front = false;
    const ViewRect view = activeView();
    const glm::dvec2 s = camera_.project({p.x(), p.y(), p.z()}, int(view.w), int(view.h), &front);
    const double d = std::hypot(s.x + view.x - x, s.y + view.y - y);
    if (front && d <= bestDistance) {
      bestDistance = d;
      best = v;
    }
  }
  return best;
}

void Viewer::onMouseButton(int button, int action, int mods) {
  const bool press = action == GLFW_PRESS;
  // The panel has it. ImGui learns where the cursor is only at its next frame: a press that comes
  // with the move onto a window (within one frame) is told by the windows' last rectangles.
  if (press && (ImGui::GetIO().WantCaptureMouse || overWindow(cursorX_, cursorY_))) return;
  if (!press) {
    endDrag(true);
    return;
  }
  pressX_ = cursorX_;
  pressY_ = cursorY_;
  moved_ = false;
  unpinOnClick_ = false;
  if (button == GLFW_MOUSE_BUTTON_RIGHT) {
    drag_ = (mods & GLFW_MOD_SHIFT) ? Drag::Pan : Drag::Orbit;
    return;
  }
  if (button == GLFW_MOUSE_BUTTON_MIDDLE) {
    drag_ = Drag::Pan;
    return;
  }
  if (!panes_.empty()) {
    // The pane under the cursor becomes the active one: picking and the panel act on it.
    const int pane = paneAt(cursorX_, cursorY_);
    if (pane >= 0 && pane != activePane_) activatePane(pane);
  }
  if (button != GLFW_MOUSE_BUTTON_LEFT || !snapshot_) return;
  const bool modifier = (mods & GLFW_MOD_CONTROL) != 0;
  // A pinned vertex near the cursor: drag its pin (Ctrl-click without moving unpins it).
  if (auto pinned = pinNearCursor(cursorX_, cursorY_, 12)) {
    drag_ = Drag::Pin;
    pinDragEdit_.reset();  // recorded at the first move (a click without one changes nothing)
    dragVertex_ = *pinned;
    dragThrough_ = snapshot_->vertex(*pinned);
    unpinOnClick_ = modifier;
    log_.write("pin_drag_start", {{"vertex", dragVertex_}, {"x", cursorX_}, {"y", cursorY_}});
    return;
  }
  const ViewRect view = activeView();
  const Ray ray = camera_.ray(cursorX_ - view.x, cursorY_ - view.y, int(view.w), int(view.h));
  const auto hit = pickSurface(*snapshot_, ray);
  if (!hit) {
    drag_ = Drag::Orbit;  // a left drag on empty space turns the camera
    log_.write("orbit_start", {{"x", cursorX_}, {"y", cursorY_}, {"reason", "no cloth under the cursor"}});
    return;
  }
  if (modifier) {
    // Pin the triangle corner nearest the click where it is now, then let a drag move it.
    const auto& tris = *snapshot_->triangles;
    int vertex = static_cast<int>(tris[3 * hit->triangle]);
    for (int k = 1; k < 3; ++k) {
      const int v = static_cast<int>(tris[3 * hit->triangle + k]);
      if ((snapshot_->vertex(v) - hit->point).norm() < (snapshot_->vertex(vertex) - hit->point).norm()) vertex = v;
    }
    pinDragEdit_ = setPin(vertex, snapshot_->vertex(vertex), "click");
    drag_ = Drag::Pin;
    dragVertex_ = vertex;
    dragThrough_ = snapshot_->vertex(vertex);
    return;
  }
  drag_ = Drag::Grab;
  grab_ = Grab{};
  grab_.triangle = hit->triangle;
  grab_.barycentric = hit->barycentric;
  grab_.target = hit->point;
  dragThrough_ = hit->point;
  const Grab g = grab_;
  postClick("grab", [this, g](int pane) {
    // Mapped once per drag: the point stays, only the target follows the mouse.
    const Grab mapped = mapGrab(pane, g);
    if (pane >= 0) panes_[pane].grab = mapped;
    return [mapped](Simulation& s) { return s.setGrab(mapped); };
  });
  log_.write("grab_start", {{"x", cursorX_}, {"y", cursorY_}, {"triangle", hit->triangle},
                            {"barycentric", vecJson(hit->barycentric)}, {"point", vecJson(hit->point)}});
}

void Viewer::onCursor(double x, double y) {
  const double dx = x - cursorX_, dy = y - cursorY_;
  cursorX_ = x;
  cursorY_ = y;
  if (std::hypot(x - pressX_, y - pressY_) > 3) moved_ = true;
  switch (drag_) {
    case Drag::Orbit:
      camera_.orbit(dx, dy);
      framed_.reset();
      break;
    case Drag::Pan:
      camera_.pan(dx, dy, winHeight_);
      framed_.reset();
      break;
    case Drag::Grab: {
      grab_.target = viewPlanePoint(x, y, dragThrough_);
      const Grab g = grab_;
      postEach("drag", [this, g](int pane) {
        Grab mapped = pane >= 0 ? panes_[pane].grab : g;
        mapped.target = g.target;
        return [mapped](Simulation& s) { return s.setGrab(mapped); };
      });
      log_.write("grab_move", {{"x", x}, {"y", y}, {"target", vecJson(g.target)}});
      break;
    }
    case Drag::Pin:
      if (moved_) {
        const Vec3 target = viewPlanePoint(x, y, dragThrough_);
        const int vertex = dragVertex_;
        auto move = [this, vertex, target](int pane) -> SimRunner::Edit {
          const int v = mapVertex(pane, vertex);
          return [v, target](Simulation& s) { return s.setPin(v, target); };
        };
        // The whole drag is one step of the history (with the Ctrl+click that began it).
        if (pinDragEdit_)
          postEach("move pin", [&](int pane) { return pinDragEdit_->extend(pane, move(pane)); });
        else
          pinDragEdit_ = postSceneEdit("move pin", EditedPart::Pins, move, false);
        log_.write("pin_move", {{"vertex", vertex}, {"target", vecJson(target)}});
      }
      break;
    case Drag::None: break;
  }
}

void Viewer::endDrag(bool byButton) {
  const char* by = byButton ? "button" : "escape";
  if (drag_ == Drag::Grab) {
    postClick("release", [](int) { return [](Simulation& s) { return s.setGrab(std::nullopt); }; });
    log_.write("grab_release", {{"x", cursorX_}, {"y", cursorY_}, {"by", by}});
  } else if (drag_ == Drag::Pin) {
    if (byButton && unpinOnClick_ && !moved_)
      removePin(dragVertex_);
    else
      log_.write("pin_drag_end", {{"vertex", dragVertex_}, {"by", by}});
    pinDragEdit_.reset();
  }
  drag_ = Drag::None;
}

void Viewer::onScroll(double dy) {
  if (ImGui::GetIO().WantCaptureMouse) return;
  camera_.zoom(dy);
  framed_.reset();
}

void Viewer::onKey(int physical, int scancode, int action, int mods) {
  if (action != GLFW_PRESS || ImGui::GetIO().WantCaptureKeyboard) return;
  const bool ctrl = (mods & GLFW_MOD_CONTROL) != 0;
  const int key = shortcutKey(physical, glfwGetKeyName(physical, scancode));
  switch (key) {
    case GLFW_KEY_SPACE: {
      const bool pause = !runner_->paused();
      forEachRunner([pause](SimRunner& r) { r.setPaused(pause); });
      break;
    }
    case GLFW_KEY_PERIOD:
    case GLFW_KEY_N: forEachRunner([](SimRunner& r) { r.stepOnce(); }); break;
    case GLFW_KEY_R: resetScene(); break;
    case GLFW_KEY_F: if (snapshot_) fitCamera(*snapshot_, false); break;
    case GLFW_KEY_W: render_.wireframe = !render_.wireframe; break;
    case GLFW_KEY_H: render_.heatMap = !render_.heatMap; break;
    case GLFW_KEY_T:
      setPattern(render_.pattern == ClothPattern::None ? lastPattern_ : ClothPattern::None);
      break;
    case GLFW_KEY_O: {
      render_.overlay = !render_.overlay;
      const bool overlay = render_.overlay;
      forEachRunner([overlay](SimRunner& r) { r.setOverlay(overlay); });
      break;
    }
    case GLFW_KEY_P: screenshotRequested_ = true; break;
    case GLFW_KEY_C: clearPins(); break;
    case GLFW_KEY_K:
      keepMoment();
      break;
    case GLFW_KEY_B:
      backToMoment();
      break;
    case GLFW_KEY_Z:
      if (ctrl) undoEdit((mods & GLFW_MOD_SHIFT) != 0);
      break;
    case GLFW_KEY_Y:
      if (ctrl) undoEdit(true);
      break;
    case GLFW_KEY_F1: showHelp_ = !showHelp_; break;
    case GLFW_KEY_SLASH: showHelp_ = !showHelp_; break;
    case GLFW_KEY_Q: if (ctrl) glfwSetWindowShouldClose(window_, GLFW_TRUE); break;
    // Esc never quits: a stray one would lose the scene's edits (Ctrl+Q or the window's close
    // button quit). It closes the help, else lets go of what a mouse button holds.
    case GLFW_KEY_ESCAPE:
      if (showHelp_) showHelp_ = false;
      else
        endDrag(false);
      break;
    default: break;
  }
  nlohmann::json event = {{"key", key}, {"mods", mods}};
  if (key != physical) event["physical"] = physical;  // the US layout's name for the key pressed
  log_.write("key", event);
}

void Viewer::onDrop(int count, const char** paths) {
  for (int i = 0; i < count; ++i) {
    log_.write("drop", {{"path", paths[i]}});
    openPath(paths[i], "drop");
  }
}

// ---- Files ---------------------------------------------------------------------------------

void Viewer::addRecent(const std::string& path) {
  std::error_code ec;
  const std::string absolute = fs::absolute(path, ec).string();
  recent_.erase(std::remove(recent_.begin(), recent_.end(), absolute), recent_.end());
  recent_.insert(recent_.begin(), absolute);
  if (recent_.size() > 10) recent_.resize(10);
  const std::string file = recentFile();
  if (file.empty()) return;
  fs::create_directories(fs::path(file).parent_path(), ec);
  std::ofstream out(file, std::ios::trunc);
  for (const auto& r : recent_) out << r << '\n';
}

void Viewer::openPath(const std::string& path, const std::string& how) {
  if (path.empty()) {
    message(RunnerMessage::Kind::Error, "open: type a path, a built-in scene name, or drop a file");
    return;
  }
  log_.write("open", {{"path", path}, {"via", how}, {"as", objAs_}});
  if (isObjPath(path) && objAs_ != static_cast<int>(ObjAs::Cloth)) {
    loadObjObstacle(path, static_cast<ObjAs>(objAs_));
    return;
  }
  std::error_code ec;
  if ((isObjPath(path) || fs::path(path).extension() == ".json") && fs::exists(path, ec)) addRecent(path);
  openScene(path);
}

Transform Viewer::jellyUnderCloth(const Positions& vertices) const {
  Vec3 clothLo = Vec3::Zero(), clothHi = Vec3::Zero();
  std::optional<double> ground;
  if (snapshot_) {
    snapshot_->clothBounds(clothLo, clothHi);
    ground = groundHeight(snapshot_->obstacles);
  }
  const Vec3 lo = vertices.colwise().minCoeff(), hi = vertices.colwise().maxCoeff();
  double bottom = clothLo.y() - 0.02 - (hi.y() - lo.y());
  if (ground) bottom = std::max(bottom, *ground + 0.01);
  Transform placement;
  placement.translate =
      Vec3(0.5 * (clothLo.x() + clothHi.x()) - 0.5 * (lo.x() + hi.x()), bottom - lo.y(),
           0.5 * (clothLo.z() + clothHi.z()) - 0.5 * (lo.z() + hi.z()));
  return placement;
}

void Viewer::loadObjObstacle(const std::string& path, ObjAs as) {
  if (as == ObjAs::ObstacleMesh) {
    loadMeshObstacles({path});
    return;
  }
  // A jelly, or an analytic stand-in: the mesh's bounding box or bounding sphere.
  auto mesh = loadObj(path);
  if (!mesh) {
    message(RunnerMessage::Kind::Error, mesh.error());
    return;
  }
  addRecent(path);
  const Positions& p = mesh->mesh.positions;
  const Vec3 lo = p.colwise().minCoeff(), hi = p.colwise().maxCoeff();
  if (as == ObjAs::Jelly) {
    // Scaled to 30% of the cloth's size and placed under it.
    Vec3 clothLo = Vec3::Zero(), clothHi = Vec3::Zero();
    if (snapshot_) snapshot_->clothBounds(clothLo, clothHi);
    const double scale =
        0.3 * std::max((clothHi - clothLo).maxCoeff(), 0.1) / std::max((hi - lo).maxCoeff(), 1e-9);
    Transform placement = jellyUnderCloth(scale * p);
    placement.scale = scale;
    JellySpec jelly;
    jelly.json = {
        {"obj", fs::absolute(path).lexically_normal().string()},
        {"transform", {{"scale", placement.scale}, {"translate", vecJson(placement.translate)}}}};
    jelly.surface = std::make_shared<const TriangleMesh>(
        TriangleMesh{placement.applied(mesh->mesh.positions), mesh->mesh.triangles});
    if (auto e = validateJelly(jelly, path)) {
      message(RunnerMessage::Kind::Error, "not added as a jelly: " + *e);
      return;
    }
    const auto shapeWarning = jellyShapeWarning(jelly, path);
    addJelly(std::move(jelly), path + " as a jelly (" + std::to_string(mesh->mesh.triangleCount()) +
                                   " triangles, scaled by " +
                                   std::to_string(placement.scale).substr(0, 6) + ")");
    for (const std::string& warning : mesh->warnings)
      message(RunnerMessage::Kind::Warning, warning);
    if (shapeWarning) message(RunnerMessage::Kind::Warning, *shapeWarning);
    return;
  }
  Obstacle ob;
  ob.point = 0.5 * (lo + hi);
  ob.friction = sim_.friction;
  const bool sphere = as == ObjAs::ObstacleSphere;
  if (sphere) {
    ob.type = Obstacle::Type::Sphere;
    ob.radius = 0;
    for (Eigen::Index i = 0; i < p.rows(); ++i) ob.radius = std::max(ob.radius, (p.row(i).transpose() - ob.point).norm());
  } else {
    ob.type = Obstacle::Type::Box;
    ob.halfExtents = (0.5 * (hi - lo)).cwiseMax(1e-3);
  }
  addObstacles(
      {{std::move(ob), path, sphere ? "a bounding-sphere obstacle" : "a bounding-box obstacle",
        std::move(mesh->warnings)}});
}

void Viewer::loadMeshObstacles(const std::vector<std::string>& paths) {
  std::vector<ObjToPlace> objs;
  std::vector<std::string> loaded;  // the paths of objs, which the placement takes
  std::vector<std::vector<std::string>> warnings;
  for (const std::string& path : paths) {
    auto mesh = loadObj(path);
    if (!mesh) {
      message(RunnerMessage::Kind::Error, mesh.error());
      continue;
    }
    addRecent(path);
    objs.push_back({std::move(mesh->mesh), path});
    loaded.push_back(path);
    warnings.push_back(std::move(mesh->warnings));
  }
  if (objs.empty()) return;
  Vec3 clothLo = Vec3::Zero(), clothHi = Vec3::Zero();
  std::vector<Obstacle> present;
  bool pinned = false;
  if (snapshot_) {
    snapshot_->clothBounds(clothLo, clothHi);
    present = snapshot_->obstacles;
    pinned = !snapshot_->pinVertices.empty();
  }
  std::vector<PlacedObstacle> placed =
      meshObstaclesUnderCloth(std::move(objs), clothLo, clothHi, sim_.friction, present, pinned);
  std::vector<AddedObstacle> added;
  for (size_t i = 0; i < placed.size(); ++i) {
    const MeshShape& shape = *placed[i].obstacle.shape;
    std::string what = "a mesh obstacle (" + std::to_string(shape.mesh().triangleCount()) +
                       " triangles, " + (shape.closed() ? "closed" : "open") + ", scaled by " +
                       std::to_string(placed[i].scale).substr(0, 6) + ")";
    added.push_back(
        {std::move(placed[i].obstacle), loaded[i], std::move(what), std::move(warnings[i])});
  }
  addObstacles(std::move(added));
}

void Viewer::addObstacles(std::vector<AddedObstacle> added) {
  std::vector<Obstacle> obstacles;
  for (const AddedObstacle& a : added) obstacles.push_back(a.obstacle);
  postSceneEdit(added.size() == 1 ? "add obstacle" : "add obstacles", EditedPart::Obstacles,
                [obstacles](int) {
                  return [obstacles](Simulation& s) {
                    auto all = s.obstacles();
                    all.insert(all.end(), obstacles.begin(), obstacles.end());
                    return s.setObstacles(all);
                  };
                });  // (not editObstacles: an addition does not depend on the list the panel saw)
  for (const AddedObstacle& a : added) {
    log_.write("obstacle_added", {{"path", a.path}, {"type", obstacleTypeName(a.obstacle.type)}});
    message(RunnerMessage::Kind::Info, a.path + ": added as " + a.what);
    for (const std::string& warning : a.warnings) message(RunnerMessage::Kind::Warning, warning);
  }
}

void Viewer::saveScene(const std::string& path) {
  // The runner owns the Simulation; the scene is serialized on its thread, written here.
  runner_->postLasting("save scene", [this, path](Simulation& s) -> std::optional<std::string> {
    // A file that would not load is not written (an obstacle moved into where the cloth rests).
    if (auto e = startsInsideObstacle(s.cloth(), s.obstacles(), s.sim().thickness))
      return path + ": not saved, it would not load: " + *e;
    if (auto e = writeSceneFile(path, s.currentScene())) return e;
    log_.write("saved_scene", {{"path", path}});
    std::lock_guard lock(savedMutex_);
    savedScenes_.push_back(path);
    return std::nullopt;
  });
  message(RunnerMessage::Kind::Info, "saving the scene to " + path);
}

void Viewer::listSavedScenes() {
  std::vector<std::string> saved;
  {
    std::lock_guard lock(savedMutex_);
    saved.swap(savedScenes_);
  }
  for (const std::string& path : saved) {
    addRecent(path);
    message(RunnerMessage::Kind::Info, "saved the scene to " + path);
  }
}

void Viewer::exportObj(const std::string& path) {
  if (!snapshot_ || !snapshot_->cloth) return;
  if (auto e = writeDrawnSurface(*snapshot_, path)) {
    message(RunnerMessage::Kind::Error, *e);
    return;
  }
  const bool fine = snapshot_->fine != nullptr;
  log_.write("exported_obj",
             {{"path", path},
              {"step", snapshot_->step},
              {"vertices", fine ? snapshot_->fine->nodeCount() : snapshot_->vertexCount()}});
  message(RunnerMessage::Kind::Info, "wrote the surface at step " +
                                         std::to_string(snapshot_->step) + " to " + path +
                                         (fine ? " (the solver's adaptive mesh, as drawn)" : ""));
}

// ---- Scene, pins and parameters --------------------------------------------------------------

double Viewer::frameCap() {
  bool running = false, allBehind = true;
  forEachRunner([&](SimRunner& r) {
    if (r.paused()) return;
    running = true;
    allBehind = allBehind && FramePace::runsBehind(r.realTimeFactor(), r.speed());
  });
  return framePace_.cap(options_.maxFps, options_.laggingFps, options_.idleFps,
                        glfwGetTime() - lastInput_, running, running && allBehind);
}

void Viewer::setPattern(ClothPattern pattern) {
  render_.pattern = pattern;
  if (pattern != ClothPattern::None) lastPattern_ = pattern;
  log_.write("pattern", {{"pattern", patternName(pattern)}, {"size", render_.patternSize}});
}

void Viewer::fitCamera(const Snapshot& snapshot, bool newScene) {
  const auto [lo, hi] = framedBounds(snapshot, newScene);
  const ViewRect view = activeView();
  framed_.emplace(glm::dvec3(lo.x(), lo.y(), lo.z()), glm::dvec3(hi.x(), hi.y(), hi.z()));
  framedAspect_ = panes_.empty() ? 1.0 : view.w / view.h;
  camera_.fit(framed_->first, framed_->second, !newScene, framedAspect_);
}

void Viewer::refitChangedPane() {
  if (!framed_ || panes_.empty()) return;
  const ViewRect view = activeView();
  const double aspect = view.w / view.h;
  if (std::abs(aspect / framedAspect_ - 1) < 0.01) return;
  framedAspect_ = aspect;
  camera_.fit(framed_->first, framed_->second, true, aspect);
}

std::string Viewer::runningStepText(long step, double seconds) {
  return "step " + std::to_string(step + 1) + ": " + std::to_string(std::lround(seconds)) +
         " s so far";
}

void Viewer::postPlacement(const std::string& label,
                           std::function<Result<ClothPlacement>(const Simulation&)> choose) {
  // Every pane, as Reset does: the panes compare one cloth, and restart together.
  postSceneEdit(label, EditedPart::Placement, [&](int pane, SceneEdit& record) {
    return runnerOf(pane).restartEdit(
        record.placing(pane, [choose](const Simulation& simulation) -> Result<Scene> {
          auto placement = choose(simulation);
          if (!placement) return Error{placement.error()};
          return placeCloth(simulation.currentScene(), simulation.cloth().mesh.positions,
                            *placement);
        }));
  });
}

void Viewer::resetScene() {
  forEachRunner([](SimRunner& r) { r.reset(); });
  log_.write("reset");
}

void Viewer::keepMoment() {
  forEachRunner([](SimRunner& r) { r.keepMoment(); });
  log_.write("moment_kept", {{"t", snapshot_ ? snapshot_->time : 0.0}});
  message(RunnerMessage::Kind::Info, "moment kept: B goes back to it");
}

void Viewer::backToMoment() {
  const double t = runner_->momentTime();
  if (std::isnan(t)) {
    message(RunnerMessage::Kind::Info, "no moment kept: K keeps one");
    return;
  }
  forEachRunner([](SimRunner& r) { r.backToMoment(); });
  log_.write("moment_back", {{"t", t}});  // the runners say whether they went back
}

void Viewer::clearPins() {
  if (snapshot_ && snapshot_->pinVertices.empty()) return;  // nothing to clear, nothing to undo
  postSceneEdit("clear pins", EditedPart::Pins, [](int) {
    return [](Simulation& s) {
      s.clearPins();
      return std::optional<std::string>();
    };
  });
  log_.write("pins_cleared");
  message(RunnerMessage::Kind::Info, "pins cleared (Ctrl+Z puts them back)");
}

std::shared_ptr<SceneEdit> Viewer::setPin(int vertex, const Vec3& target, const std::string& why) {
  auto edit = postSceneEdit("pin", EditedPart::Pins, [this, vertex, target](int pane) {
    const int v = mapVertex(pane, vertex);
    return [v, target](Simulation& s) { return s.setPin(v, target); };
  });
  log_.write("pin_add", {{"vertex", vertex}, {"target", vecJson(target)}, {"via", why}});
  return edit;
}

void Viewer::removePin(int vertex) {
  postSceneEdit("unpin", EditedPart::Pins, [this, vertex](int pane) {
    const int v = mapVertex(pane, vertex);
    return [v](Simulation& s) {
      s.removePin(v);
      return std::optional<std::string>();
    };
  });
  log_.write("pin_remove", {{"vertex", vertex}});
}

std::shared_ptr<SceneEdit> Viewer::postSceneEdit(
    const std::string& label, EditedPart part, const std::function<SimRunner::Edit(int pane)>& make,
    bool interrupt, bool continuous) {
  return postSceneEdit(
      label, part, [&](int pane, SceneEdit&) { return make(pane); }, interrupt, continuous);
}

std::shared_ptr<SceneEdit> Viewer::postSceneEdit(
    const std::string& label, EditedPart part,
    const std::function<SimRunner::Edit(int pane, SceneEdit& record)>& make, bool interrupt,
    bool continuous) {
  dropStaleHistory();
  const double now = glfwGetTime();
  auto newest = edits_.newest();
  // A continuous edit of the same field within kContinuousSeconds joins the newest record.
  const bool joins = continuous && newest && newest->label() == label && newest->part() == part &&
                     now - continuousWall_ < kContinuousSeconds;
  continuousWall_ = continuous ? now : -1e9;
  auto edit = joins ? newest
                    : std::make_shared<SceneEdit>(
                          label, part, std::max<int>(1, static_cast<int>(panes_.size())));
  postEach(
      label,
      [&](int pane) -> SimRunner::Edit {
        auto e = make(pane, *edit);  // null: the edit leaves this pane alone
        if (!e) return {};
        return joins ? edit->extend(pane, std::move(e)) : edit->record(pane, std::move(e));
      },
      true, interrupt);
  if (!joins) edits_.push(edit);
  return edit;
}

void Viewer::undoEdit(bool redo) {
  if (drag_ == Drag::Pin) endDrag(false);  // the drag ends first, so that it is undone too
  dropStaleHistory();
  continuousWall_ = -1e9;  // a continuous edit after the undo starts a record of its own
  auto edit = redo ? edits_.redo() : edits_.undo();
  const std::string what = redo ? "redo" : "undo";
  if (!edit) {
    message(RunnerMessage::Kind::Info, "nothing to " + what);
    return;
  }
  postClick(what + " " + edit->label(),
            [&](int pane) { return edit->restore(pane, redo, runnerOf(pane)); });
  if (edit->part() == EditedPart::Parameters) {
    paramsRunner_ = runner_;
    paramsShownAfter_ = runner_->editsPosted();
  }
  log_.write(redo ? "redo" : "undo", {{"edit", edit->label()}});
}

void Viewer::dropStaleHistory() {
  if (whatRuns() == editsFor_) return;
  edits_.clear();
  pinDragEdit_.reset();
  editsFor_ = whatRuns();
}

void Viewer::applyPreset(const std::string& preset) {
  postSceneEdit("pin preset " + preset, EditedPart::Pins, [preset](int) {
    return [preset](Simulation& s) -> std::optional<std::string> {
      for (int v : pinPresetVertices(s.cloth().mesh, preset))
        if (auto e = s.setPin(v, s.surface().row(v).transpose())) return e;
      return std::nullopt;
    };
  });
  log_.write("pin_preset", {{"preset", preset}});
}

void Viewer::postSimParams(const SimParams& before) {
  const SimParams p = sim_;
  const nlohmann::json now = writeParams(SimParams::table(), p);
  const nlohmann::json was = writeParams(SimParams::table(), before);
  std::string changed;  // names the edit in the history: "density", "gravity"
  auto name = [&changed](const std::string& key) {
    changed += (changed.empty() ? "" : ", ") + key;
  };
  // A checkbox or a choice: each click one edit, not joined like a drag's frames.
  bool toggled = false;
  for (const auto& [key, value] : now.items())
    if (was.value(key, nlohmann::json()) != value) {
      name(key);
      toggled |= value.is_boolean() || value.is_string();
    }
  if (p.gravity != before.gravity) name("gravity");
  if (p.wind != before.wind) name("wind");
  postSceneEdit(
      changed.empty() ? "parameters" : changed, EditedPart::Parameters,
      [this, p](int pane) -> SimRunner::Edit {
        if (!parameterEditsReach(pane)) return {};
        return [p](Simulation& s) { return s.setSimParams(p); };
      },
      true, !toggled);
  log_.write("param",
             {{"simulation", now}, {"gravity", vecJson(p.gravity)}, {"wind", vecJson(p.wind)}});
}

void Viewer::postSolverParams(const std::string& key) {
  const nlohmann::json p = solverParams_;
  // A number joins the edits of the second before (a drag); a checkbox or a choice is one edit.
  const bool continuous = p.contains(key) && p[key].is_number();
  // Solver parameters reach the panes that run the same solver.
  const std::string solver = snapshot_ ? snapshot_->solverId : "";
  postSceneEdit(
      key, EditedPart::Parameters,
      [this, p, solver](int pane) -> SimRunner::Edit {
        if (!parameterEditsReach(pane)) return {};
        if (pane >= 0 && panes_[pane].snapshot && panes_[pane].snapshot->solverId != solver)
          return {};
        return [p](Simulation& s) { return s.setSolverParams(p); };
      },
      true, continuous);
  log_.write("param", {{"solver", p}, {"key", key}});
}

}  // namespace clothlab
