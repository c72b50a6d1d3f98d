// The viewer's ImGui panel (Dear ImGui 1.86 API). Every edit is posted to the simulation thread and
// takes effect at its next step.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "app/viewer/text_wrap.h"
#include "app/viewer/ui_util.h"
#include "app/viewer/viewer.h"
#include "render/colormap.h"
#include "sim/scene_library.h"
#include "sim/solver_registry.h"

namespace clothlab {

namespace {

const char* const kObjAsNames[] = {"cloth", "obstacle (mesh, placed under the cloth)",
                                   "obstacle (bounding box)", "obstacle (bounding sphere)",
                                   "jelly (a closed mesh, placed under the cloth)"};

std::string formatValue(double v, const std::string& unit) {
  char buf[64];
  if (v == 0) std::snprintf(buf, sizeof buf, "0");
  else if (std::abs(v) >= 1e-3 && std::abs(v) < 1e4) std::snprintf(buf, sizeof buf, "%.4g", v);
  else std::snprintf(buf, sizeof buf, "%.3e", v);
  std::string out = buf;
  if (!unit.empty()) out += " " + unit;
  // ImGui treats the text as a format string.
  std::string escaped;
  for (char c : out) escaped += (c == '%') ? std::string("%%") : std::string(1, c);
  return escaped;
}

// A slider on log10 of the value over [lo, hi]; with lo == 0 the left end is exactly 0 and the
// decades start 9 below hi.
bool logSlider(const char* label, double& value, double lo, double hi, const std::string& unit) {
  const double floor = lo > 0 ? lo : hi * 1e-9;
  float e = static_cast<float>(std::log10(std::max(value, floor)));
  const float eLo = static_cast<float>(std::log10(floor)), eHi = static_cast<float>(std::log10(hi));
  if (!ImGui::SliderFloat(label, &e, eLo, eHi, formatValue(value, unit).c_str())) return false;
  value = (lo == 0 && e <= eLo + 1e-3f) ? 0.0 : std::clamp(std::pow(10.0, double(e)), lo, hi);
  return true;
}

// Integer sliders: clamped also when typed (Ctrl+click), like numberEditor's.
ImGuiSliderFlags intSliderFlags(bool logarithmic) {
  return ImGuiSliderFlags_AlwaysClamp | (logarithmic ? ImGuiSliderFlags_Logarithmic : 0);
}

bool numberEditor(const char* label, double& value, double lo, double hi, bool logarithmic,
                  const std::string& unit) {
  if (logarithmic) return logSlider(label, value, lo, hi, unit);
  // Clamped also when typed (Ctrl+click): the range is the parameter's valid range, and a value
  // the simulation refused would stay in the panel's copy and fail every later edit with it.
  return ImGui::SliderScalar(label, ImGuiDataType_Double, &value, &lo, &hi, formatValue(value, unit).c_str(),
                             ImGuiSliderFlags_AlwaysClamp);
}

// An editor for each field of `table` in `params` (sliders for numbers and counts, a checkbox for
// a switch), its description and unit as tooltip, its rectangle printed through `layoutAs(key)`.
// Whether one changed.
template <class Params>
bool editParams(const ParamTable<Params>& table, Params& params,
                const std::function<void(const std::string&)>& layoutAs) {
  bool changed = false;
  for (const auto& info : table) {
    if (const auto* flag = std::get_if<bool Params::*>(&info.field)) {
      changed |= ImGui::Checkbox(info.key.c_str(), &(params.**flag));
      tooltip(info.description);
    } else if (const auto* count = std::get_if<int Params::*>(&info.field)) {
      ImGui::SetNextItemWidth(170);
      changed |=
          ImGui::SliderInt(info.key.c_str(), &(params.**count), static_cast<int>(info.min),
                           static_cast<int>(info.max), "%d", intSliderFlags(info.logarithmic));
      tooltip(info.description);
    } else if (const auto* number = std::get_if<double Params::*>(&info.field)) {
      ImGui::SetNextItemWidth(170);
      changed |= numberEditor(info.key.c_str(), params.**number, info.min, info.max,
                              info.logarithmic, info.unit);
      tooltip(info.description + (info.unit.empty() ? "" : " [" + info.unit + "]"));
    } else if (const auto* text = std::get_if<std::string Params::*>(&info.field);
               text && !info.choices.empty()) {
      std::string& value = params.**text;
      ImGui::SetNextItemWidth(170);
      if (ImGui::BeginCombo(info.key.c_str(), value.c_str())) {
        for (const auto& choice : info.choices)
          if (ImGui::Selectable(choice.c_str(), choice == value) && choice != value) {
            value = choice;
            changed = true;
          }
        ImGui::EndCombo();
      }
      tooltip(info.description);
    } else {
      continue;
    }
    layoutAs(info.key);
  }
  return changed;
}

// Each pane's edit of a list of the simulation's (`read`, written back with `write`) as the panel
// saw it, with `expected` items: refused when it has changed meanwhile (another edit came first),
// else `change`d.
template <class Item, class Read, class Write>
std::function<SimRunner::Edit(int)> listEdit(size_t expected, const char* what, Read read,
                                             Write write,
                                             std::function<void(std::vector<Item>&)> change) {
  return [=](int) -> SimRunner::Edit {
    return [=](Simulation& s) -> std::optional<std::string> {
      std::vector<Item> list = read(s);
      if (list.size() != expected)
        return "the " + std::string(what) + " changed meanwhile; try again";
      change(list);
      return write(s, std::move(list));
    };
  };
}

}  // namespace

void Viewer::layout(const char* name) {
  if (options_.layout) layoutRect(name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

void Viewer::layoutRect(const std::string& name, ImVec2 min, ImVec2 max) {
  if (!options_.layout) return;
  // Printed when they change.
  static std::map<std::string, std::array<int, 4>> printed;
  const std::array<int, 4> rect = {int(min.x), int(min.y), int(max.x), int(max.y)};
  auto it = printed.find(name);
  if (it != printed.end() && it->second == rect) return;
  printed[name] = rect;
  std::printf("LAYOUT %s %d %d %d %d\n", name.c_str(), rect[0], rect[1], rect[2], rect[3]);
  std::fflush(stdout);
}

void Viewer::rememberWindow() {
  const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  windowRects_.push_back({at.x, at.y, at.x + size.x, at.y + size.y});
}

bool Viewer::overWindow(double x, double y) const {
  return std::any_of(windowRects_.begin(), windowRects_.end(),
                     [&](const auto& r) { return x >= r[0] && y >= r[1] && x < r[2] && y < r[3]; });
}

void Viewer::drawPanel() {
  ImGui::SetNextWindowPos(ImVec2(8, 8), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(370, static_cast<float>(winHeight_) - 16), ImGuiCond_FirstUseEver);
  // In a small window the panel would hide the cloth: it starts folded to its title bar there.
  ImGui::SetNextWindowCollapsed(winWidth_ < kSmallWindowWidth || winHeight_ < kSmallWindowHeight,
                                ImGuiCond_FirstUseEver);
  ImGui::Begin("ClothLab");
  rememberWindow();
  layoutRect("panel", ImGui::GetWindowPos(),
             ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowWidth(),
                    ImGui::GetWindowPos().y + ImGui::GetWindowHeight()));

  // Run controls.
  const bool paused = runner_->paused();
  if (ImGui::Button(paused ? "Resume" : "Pause", ImVec2(70, 0))) forEachRunner([paused](SimRunner& r) { r.setPaused(!paused); });
  layout("pause");
  ImGui::SameLine();
  if (ImGui::Button("Step")) forEachRunner([](SimRunner& r) { r.stepOnce(); });
  ImGui::SameLine();
  if (ImGui::Button("Reset")) resetScene();
  ImGui::SameLine();
  if (ImGui::Button("Help (F1)")) showHelp_ = !showHelp_;
  // Undo and redo of the scene's edits (pins, obstacles, jellies, parameters, placement), naming
  // the edit they act on ("undo clear pins"); the ids stay put.
  dropStaleHistory();
  auto historyButton = [this](const char* what, const SceneEdit* edit, bool redo) {
    ImGui::BeginDisabled(!edit);
    if (ImGui::Button(((edit ? what + (" " + edit->label()) : what) + "###" + what).c_str()))
      undoEdit(redo);
    ImGui::EndDisabled();
    layout(what);
    tooltip(redo ? "Ctrl+Y or Ctrl+Shift+Z" : "Ctrl+Z");
  };
  historyButton("undo", edits_.nextUndo().get(), false);
  ImGui::SameLine();
  historyButton("redo", edits_.nextRedo().get(), true);
  // A moment of the motion to try something from again: kept in every pane, gone back to with
  // the edits made since (SimRunner::keepMoment).
  if (ImGui::Button("keep moment")) keepMoment();
  layout("keep_moment");
  tooltip("K: keep this moment of the motion, to go back to it (B) and try again from there");
  ImGui::SameLine();
  const double momentTime = runner_->momentTime();
  ImGui::BeginDisabled(std::isnan(momentTime));
  char back[48];
  std::snprintf(
      back, sizeof back,
      std::isnan(momentTime) ? "back###back_to_moment" : "back to %.2f s###back_to_moment",
      momentTime);
  if (ImGui::Button(back)) backToMoment();
  ImGui::EndDisabled();
  layout("back_to_moment");
  tooltip(
      "B: the motion back as it was at the kept moment; pins, obstacles and parameters stay as "
      "they are now (as Reset keeps them)");
  ImGui::SetNextItemWidth(150);
  if (ImGui::SliderFloat("speed", &speed_, 0.05f, 4.0f, "%.2fx", ImGuiSliderFlags_Logarithmic)) {
    const double speed = speed_;
    forEachRunner([speed](SimRunner& r) { r.setSpeed(speed); });
  }
  tooltip("simulated seconds per wall-clock second (the simulation falls behind when a step is slower)");
  ImGui::SameLine();
  // Three significant digits: a slow scene (12k vertices at 1 ms steps) runs at x0.012, not x0.00.
  ImGui::Text("real time x%.3g", runner_->realTimeFactor());
  if (snapshot_)
    ImGui::Text("t = %.3f s  step %ld  %s", snapshot_->time, snapshot_->step,
                snapshot_->diverged ? "(diverged)" : "");
  // The frame pace on the same line (the line above has no room in the panel's width), unless a
  // slow step's text below takes it.
  if (const double rate = framePace_.pacedRate(options_.laggingFps, options_.idleFps);
      rate > 0 && snapshot_ && runner_->stepRunningSeconds() < kSlowStepSeconds) {
    ImGui::SameLine();
    ImGui::TextDisabled("drawing %g/s", rate);
    tooltip(framePace_.pace == FramePace::Pace::Lagging
                ? "the simulation runs behind real time, so while nothing is touched the window "
                  "draws at most this many frames per second and leaves it the rest of the "
                  "machine; any input brings the full rate back (--lagging-fps, 0: never)"
                : "nothing runs and nothing is touched, so the window draws at most this many "
                  "frames per second; any input brings the full rate back (--idle-fps, 0: never)");
  }
  // A slow step shows that it runs, so that a simulation held at one step does not look stuck
  // (a 100 000-triangle disk's first step orders its sparse system for about 5 s). On the same
  // line: the widgets below would jump at every slow step.
  if (const double running = runner_->stepRunningSeconds();
      snapshot_ && running >= kSlowStepSeconds) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", runningStepText(snapshot_->step, running).c_str());
    layout("step_running");
    tooltip(
        "Pause, Reset and edits give a step up where the solver next looks (between its "
        "iterations); the first step of a large cloth orders its sparse system, which cannot be "
        "given up part-way, and they wait for that");
  }

  // A load's progress with its "give up" button: the single runner's (SimRunner::load), or one
  // opened in compare mode (openScene), which the comparison runs until it is built.
  auto loadBar = [&](const LoadProgress& progress) {
    const float phase = static_cast<float>(std::fmod(progress.seconds, 1.0));
    char text[256];
    // The file's name on the bar (a whole path was cut off at both ends), the stage below it.
    const std::string name = std::filesystem::path(progress.what).filename().string();
    std::snprintf(text, sizeof text, "loading %s (%.1f s)",
                  (name.empty() ? progress.what : name).c_str(), progress.seconds);
    ImGui::ProgressBar(phase, ImVec2(-70, 0), text);
    tooltip(progress.what);
    ImGui::SameLine();
    ImGui::PushID(progress.what.c_str());  // two bars at once keep their buttons apart
    const bool giveUp = ImGui::Button("give up", ImVec2(-1, 0));
    ImGui::PopID();
    layout("give_up_load");
    tooltip(
        "stops waiting for this load; what runs goes on (the load's thread ends in the "
        "background, its result dropped)");
    ImGui::TextDisabled("%s", progress.stage.c_str());
    if (giveUp)
      log_.write(
          "load_given_up",
          {{"path", progress.what}, {"seconds", progress.seconds}, {"stage", progress.stage}});
    return giveUp;
  };
  if (const LoadProgress progress = runner_->loadProgress(); progress.active && loadBar(progress))
    runner_->giveUpLoad();
  if (openedInCompare_.valid() && !finished(openedInCompare_)) {
    const LoadProgress progress{true, openedInComparePath_, "the comparison runs until it is built",
                                glfwGetTime() - openedInCompareStart_};
    if (loadBar(progress)) giveUpOpenInCompare("gave up the load of " + openedInComparePath_);
  }

  // Messages, newest first; errors in red, warnings in yellow.
  if (!messages_.empty()) {
    ImGui::BeginChild("messages", ImVec2(0, 70), true);
    const float width = ImGui::GetContentRegionAvail().x;
    for (auto& m : messages_) {
      if (m.linesWidth != width) {
        m.lines = wrapText(m.shown(), width, textWidth);
        m.linesWidth = width;
      }
      const ImVec4 color = m.kind == RunnerMessage::Kind::Error     ? ImVec4(1.0f, 0.45f, 0.4f, 1)
                           : m.kind == RunnerMessage::Kind::Warning ? ImVec4(1.0f, 0.85f, 0.35f, 1)
                                                                    : ImVec4(0.7f, 0.9f, 0.7f, 1);
      ImGui::PushStyleColor(ImGuiCol_Text, color);
      for (const auto& line : m.lines) ImGui::TextUnformatted(line.c_str());
      ImGui::PopStyleColor();
    }
    ImGui::EndChild();
    if (ImGui::SmallButton("clear messages")) messages_.clear();
  }

  drawCompareSection();
  drawSceneSection();
  drawSolverSection();
  drawParameterSection();
  drawPinSection();
  drawObstacleSection();
  drawJellySection();
  drawViewSection();
  drawStatsSection();
  panelWidth_ = ImGui::IsWindowCollapsed() ? 0.0f : ImGui::GetWindowPos().x + ImGui::GetWindowWidth();
  ImGui::End();
}

void Viewer::drawSceneSection() {
  if (!ImGui::CollapsingHeader("Scene", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const RevealWhenOpened reveal;
  const std::string current = snapshot_ ? snapshot_->sceneName : "";
  if (ImGui::BeginCombo("built-in", current.c_str())) {
    for (const auto& entry : builtinScenes()) {
      if (ImGui::Selectable(entry.name.c_str(), entry.name == current)) {
        log_.write("open", {{"path", entry.name}, {"via", "builtin"}});
        openScene(entry.name);
      }
      tooltip(entry.description);
    }
    ImGui::EndCombo();
  }
  ImGui::SetNextItemWidth(-60);
  const bool enter = ImGui::InputTextWithHint("##path", "scene.json, cloth.obj or a scene name", pathField_,
                                              sizeof pathField_, ImGuiInputTextFlags_EnterReturnsTrue);
  layout("open_path");
  ImGui::SameLine();
  if (ImGui::Button("Open") || enter) openPath(pathField_, "panel");
  layout("open_button");
  ImGui::Text("an .obj is");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  ImGui::Combo("##objas", &objAs_, kObjAsNames, IM_ARRAYSIZE(kObjAsNames));
  layout("obj_as");
  tooltip(
      "what an opened or dropped .obj becomes: the cloth, or an obstacle: the mesh itself (scaled "
      "to the cloth and placed under it, or beside the obstacles there) or its bounding box or "
      "sphere");
  if (!recent_.empty() && ImGui::TreeNode("recent files")) {
    for (const auto& r : recent_)
      if (ImGui::Selectable(r.c_str())) {
        std::snprintf(pathField_, sizeof pathField_, "%s", r.c_str());
        openPath(r, "recent");
      }
    ImGui::TreePop();
  }
  ImGui::SetNextItemWidth(-110);
  ImGui::InputText("##save", savePath_, sizeof savePath_);
  ImGui::SameLine();
  if (ImGui::Button("Save scene", ImVec2(-1, 0))) saveScene(savePath_);
  layout("save_scene");
  tooltip("writes the scene with its current parameters, pins and obstacles as JSON");
  ImGui::SetNextItemWidth(-110);
  ImGui::InputText("##export", exportPath_, sizeof exportPath_);
  ImGui::SameLine();
  if (ImGui::Button("Export OBJ", ImVec2(-1, 0))) exportObj(exportPath_);
  layout("export_obj");
  tooltip("writes the current cloth surface as OBJ");
  hint("drop .obj / .json files onto the window to open them");
}

void Viewer::drawSolverSection() {
  if (!ImGui::CollapsingHeader("Solver", ImGuiTreeNodeFlags_DefaultOpen) || !snapshot_) return;
  const RevealWhenOpened reveal;
  if (ImGui::BeginCombo("solver", snapshot_->solverId.c_str())) {
    for (const auto& entry : solverRegistry()) {
      if (ImGui::Selectable(entry.id.c_str(), entry.id == snapshot_->solverId) && entry.id != snapshot_->solverId) {
        runner_->switchSolver(entry.id);  // compare mode: the active pane's solver
        if (!panes_.empty()) {
          // The pane's parameters were its old solver's.
          panes_[activePane_].spec.solver = entry.id;
          panes_[activePane_].spec.params = nlohmann::json::object();
        }
        log_.write("solver", {{"id", entry.id}, {"pane", panes_.empty() ? -1 : activePane_}});
        if (!panes_.empty() && keepPanesInStep_) {
          // Restarted after the switch too: had the switch failed, this pane would keep its time
          // and wait for the restarted others to reach it.
          runner_->reset();
          restartOtherPanesInStep(activePane_, "runs " + entry.id);
        }
      }
      tooltip(entry.description);
    }
    ImGui::EndCombo();
  }
  layout("solver_combo");
  const SolverEntry* entry = findSolver(snapshot_->solverId);
  if (!entry || !ImGui::TreeNode("solver parameters")) return;
  const RevealWhenOpened revealParameters;
  for (const auto& d : entry->parameters) {
    if (!solverParams_.contains(d.key)) continue;
    nlohmann::json& v = solverParams_[d.key];
    bool changed = false;
    const std::string label = d.key;
    ImGui::SetNextItemWidth(170);
    switch (d.type) {
      case ParamDescription::Type::Number: {
        double x = v.get<double>();
        if ((changed = numberEditor(label.c_str(), x, d.min, d.max, d.logarithmic, d.unit))) v = x;
        break;
      }
      case ParamDescription::Type::Integer: {
        int x = v.get<int>();
        const int lo = static_cast<int>(d.min), hi = static_cast<int>(d.max);
        if ((changed = ImGui::SliderInt(label.c_str(), &x, lo, hi, "%d", intSliderFlags(d.logarithmic))))
          v = x;
        break;
      }
      case ParamDescription::Type::Boolean: {
        bool x = v.get<bool>();
        if ((changed = ImGui::Checkbox(label.c_str(), &x))) v = x;
        break;
      }
      case ParamDescription::Type::Text: {
        const std::string x = v.get<std::string>();
        if (ImGui::BeginCombo(label.c_str(), x.c_str())) {
          for (const auto& c : d.choices)
            if (ImGui::Selectable(c.c_str(), c == x) && c != x) {
              v = c;
              changed = true;
            }
          ImGui::EndCombo();
        }
        break;
      }
    }
    tooltip(d.description + (d.unit.empty() ? "" : " [" + d.unit + "]"));
    layout(("solver." + d.key).c_str());
    if (changed) postSolverParams(d.key);
  }
  ImGui::TreePop();
}

void Viewer::drawParameterSection() {
  if (!ImGui::CollapsingHeader("Cloth and simulation", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const RevealWhenOpened reveal;
  const SimParams before = sim_;
  bool changed = editParams(SimParams::table(), sim_,
                            [this](const std::string& key) { layout(("sim." + key).c_str()); });
  double lo = -50, hi = 50;
  ImGui::SetNextItemWidth(170);
  const ImVec2 slidersAt = ImGui::GetCursorScreenPos();
  changed |= ImGui::SliderScalarN("gravity", ImGuiDataType_Double, sim_.gravity.data(), 3, &lo, &hi, "%.2f",
                                  ImGuiSliderFlags_AlwaysClamp);
  // The three sliders without their label: the middle one (y) is at the rectangle's centre.
  layoutRect("sim.gravity", slidersAt, ImVec2(slidersAt.x + 170, ImGui::GetItemRectMax().y));
  tooltip("gravitational acceleration [m/s^2]");
  if (ImGui::SmallButton("earth")) {
    sim_.gravity = Vec3(0, -9.81, 0);
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("zero-g")) {
    sim_.gravity = Vec3::Zero();
    changed = true;
  }
  double windLo = -30, windHi = 30;
  ImGui::SetNextItemWidth(170);
  const ImVec2 windAt = ImGui::GetCursorScreenPos();
  changed |= ImGui::SliderScalarN("wind", ImGuiDataType_Double, sim_.wind.data(), 3, &windLo,
                                  &windHi, "%.1f", ImGuiSliderFlags_AlwaysClamp);
  layoutRect("sim.wind", windAt, ImVec2(windAt.x + 170, ImGui::GetItemRectMax().y));
  tooltip(
      "the air's velocity [m/s]: it pushes the cloth's faces where it meets them, through "
      "air_density");
  if (ImGui::SmallButton("calm")) {
    sim_.wind = Vec3::Zero();
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("air")) {
    sim_.airDensity = 1.2;
    changed = true;
  }
  layout("sim.air");
  tooltip("air_density 1.2 kg/m^3, the air at sea level");
  if (sim_.wind != Vec3::Zero() && sim_.airDensity == 0)
    hint("The wind moves nothing without air: set air_density.");
  if (changed) postSimParams(before);
  drawPlacement();
}

void Viewer::drawPlacement() {
  const bool open = ImGui::TreeNode("placement");
  layout("placement_node");
  tooltip("turn, scale or move the cloth, or lay it flat; it restarts from rest");
  if (!open) return;
  const RevealWhenOpened reveal;
  ImGui::SetNextItemWidth(170);
  ImGui::InputScalarN("rotate [deg]", ImGuiDataType_Double, placement_.rotateDeg.data(), 3, nullptr,
                      nullptr, "%.1f");
  layout("placement_rotate");
  tooltip(
      "about x, then y, then z (a scene file's cloth.transform.rotate_deg), turning the cloth "
      "about its centre");
  ImGui::SetNextItemWidth(170);
  ImGui::InputDouble("scale", &placement_.scale, 0, 0, "%.4g");
  layout("placement_scale");
  tooltip("of the cloth's own coordinates (cloth.transform.scale), about its centre");
  ImGui::SetNextItemWidth(170);
  ImGui::InputScalarN("move [m]", ImGuiDataType_Double, placement_.move.data(), 3, nullptr, nullptr,
                      "%.3f");
  layout("placement_move");
  tooltip("moves the cloth's centre by this much");
  if (ImGui::Button("Apply")) {
    const ClothPlacement chosen = placement_;
    postPlacement("placement",
                  [chosen](const Simulation&) { return Result<ClothPlacement>(chosen); });
    log_.write("placement", {{"rotate_deg", vecJson(chosen.rotateDeg)},
                             {"scale", chosen.scale},
                             {"move", vecJson(chosen.move)}});
  }
  layout("placement_apply");
  ImGui::SameLine();
  if (ImGui::Button("lay flat")) {
    postPlacement("lay flat", [](const Simulation& simulation) -> Result<ClothPlacement> {
      const Scene scene = simulation.currentScene();
      auto rotation = layFlatRotation(scene, simulation.cloth().mesh.positions);
      if (!rotation) return Error{rotation.error()};
      return ClothPlacement{*rotation, scene.transform.scale, Vec3::Zero()};
    });
    log_.write("lay_flat");
  }
  layout("placement_lay_flat");
  tooltip(
      "turns a flat cloth the least way that makes it lie level, across gravity (a cloth OBJ "
      "written in the x-y plane stands on edge)");
  ImGui::SameLine();
  if (ImGui::Button("revert") && snapshot_)
    placement_ = currentPlacement(snapshot_->clothTransform);
  tooltip("the fields back to the cloth's placement now");
  hint(
      "Applying restarts the cloth from rest. Pins and point masses move with it, obstacles stay, "
      "and a cloth placed through a plane is lifted onto it. Ctrl+Z undoes it.");
  ImGui::TreePop();
}

void Viewer::editObstacles(const std::string& label,
                           std::function<void(std::vector<Obstacle>&)> change, bool interrupt,
                           bool continuous) {
  // Every edit changes the obstacle list as it stands at t = 0 (a moving one keeps its path).
  postSceneEdit(
      label, EditedPart::Obstacles,
      listEdit(
          snapshot_ ? snapshot_->obstacles.size() : 0, "obstacles",
          [](const Simulation& s) { return s.obstacles(); },
          [](Simulation& s, std::vector<Obstacle> list) { return s.setObstacles(std::move(list)); },
          std::move(change)),
      interrupt, continuous);
}

void Viewer::drawObstacleSection() {
  const bool open = ImGui::CollapsingHeader("Obstacles");
  layout("obstacles_header");
  if (!open || !snapshot_) return;
  const RevealWhenOpened reveal;
  if (snapshot_->obstacles.empty()) hint("none; open an .obj as an obstacle (Scene section)");
  for (size_t i = 0; i < snapshot_->obstacles.size(); ++i) {
    const Obstacle& ob = snapshot_->obstacles[i];
    ImGui::PushID(static_cast<int>(i));
    std::string label = std::to_string(i + 1) + " " + obstacleTypeName(ob.type);
    if (ob.type == Obstacle::Type::Mesh && ob.shape)
      label += " (" + std::to_string(ob.shape->mesh().triangleCount()) + " triangles, " +
               (ob.shape->closed() ? "closed)" : "open)");
    ImGui::TextUnformatted(label.c_str());
    // Position: where it is now; an edit moves it (and its path, if it moves) by the difference.
    double position[3] = {ob.point.x(), ob.point.y(), ob.point.z()};
    ImGui::SetNextItemWidth(220);
    const bool moved = ImGui::DragScalarN("position", ImGuiDataType_Double, position, 3, 0.005f, nullptr, nullptr, "%.3f");
    if (i == 0) layout("obstacle_position");
    if (moved) {
      const Vec3 delta = Vec3(position[0], position[1], position[2]) - ob.point;
      editObstacles(
          "move obstacle " + std::to_string(i + 1),
          [i, delta](std::vector<Obstacle>& obstacles) { obstacles[i].point += delta; }, false,
          true);
      log_.write("obstacle_move", {{"index", i}, {"delta", vecJson(delta)}});
    }
    tooltip("drag a number (or Ctrl+click it to type) to move the obstacle [m]");
    double friction = ob.friction, lo = 0, hi = 2;
    ImGui::SetNextItemWidth(120);
    if (ImGui::SliderScalar("friction", ImGuiDataType_Double, &friction, &lo, &hi, "%.2f")) {
      editObstacles(
          "friction of obstacle " + std::to_string(i + 1),
          [i, friction](std::vector<Obstacle>& obstacles) { obstacles[i].friction = friction; },
          true, true);
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("remove")) {
      editObstacles(
          "remove obstacle " + std::to_string(i + 1),
          [i](std::vector<Obstacle>& obstacles) {
            obstacles.erase(obstacles.begin() + static_cast<long>(i));
          },
          true);
      log_.write("obstacle_remove", {{"index", i}});
    }
    ImGui::PopID();
  }
}

void Viewer::editJellies(const std::string& label,
                         std::function<void(std::vector<JellySpec>&)> change, bool interrupt,
                         bool continuous) {
  postSceneEdit(
      label, EditedPart::Jellies,
      listEdit(
          snapshot_ ? snapshot_->jellyStates.size() : 0, "jellies",
          [](const Simulation& s) { return s.jellySpecs(); },
          [](Simulation& s, std::vector<JellySpec> list) { return s.setJellies(std::move(list)); },
          std::move(change)),
      interrupt, continuous);
}

void Viewer::addJelly(JellySpec jelly, const std::string& what) {
  postSceneEdit("add jelly", EditedPart::Jellies, [jelly](int) {
    return [jelly](Simulation& s) {
      auto jellies = s.jellySpecs();
      jellies.push_back(jelly);
      return s.setJellies(jellies);
    };
  });
  log_.write("jelly_added", {{"what", what}, {"triangles", jelly.surface->triangleCount()}});
  message(RunnerMessage::Kind::Info, "added " + what);
}

void Viewer::drawJellySection() {
  const bool open = ImGui::CollapsingHeader("Jellies");
  layout("jellies_header");
  if (!open || !snapshot_) return;
  const RevealWhenOpened reveal;
  if (ImGui::Button("add a jelly ball")) {
    // A ball a fifth of the cloth's size under its centre, like an OBJ jelly (jellyUnderCloth).
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    snapshot_->clothBounds(lo, hi);
    const double radius = 0.1 * std::max((hi - lo).maxCoeff(), 0.1);
    TriangleMesh ball = makeEllipsoid(Vec3::Constant(radius), 32, 16);
    const Transform placement = jellyUnderCloth(ball.positions);
    ball.positions = placement.applied(ball.positions);
    JellySpec jelly;
    jelly.surface = std::make_shared<const TriangleMesh>(std::move(ball));
    jelly.json = {{"generator", {{"type", "ellipsoid"}, {"radii", {radius, radius, radius}}}},
                  {"transform", {{"translate", vecJson(placement.translate)}}}};
    addJelly(std::move(jelly), "a jelly ball of radius " + formatValue(radius, "m"));
  }
  layout("jelly_add");
  tooltip(
      "an elastic ball (boundary elements on two cross-sections, seed 004) under the cloth's "
      "centre: "
      "it falls onto what is below, and the cloth drapes over it (the cloth does not push it)");
  hint("or open a closed .obj as a jelly (Scene section)");
  for (size_t i = 0; i < snapshot_->jellyStates.size(); ++i) {
    const Snapshot::JellyState& j = snapshot_->jellyStates[i];
    ImGui::PushID(static_cast<int>(i));
    char line[200];
    std::snprintf(line, sizeof line,
                  "%zu: %d triangles, %.3g kg, at (%.2f, %.2f, %.2f), %.2f m/s, %.1f rad/s", i + 1,
                  j.triangles, j.mass, j.center.x(), j.center.y(), j.center.z(), j.velocity.norm(),
                  j.angularVelocity.norm());
    ImGui::TextUnformatted(line);
    if (j.step.walls > 0) {
      std::snprintf(line, sizeof line, "   touching %d, squashed %.1f mm, wall force %.3g N",
                    j.step.walls, 1e3 * j.step.maxDisplacement, j.step.contactForce);
      ImGui::TextUnformatted(line);
    }
    JellyMaterial m = j.material;
    const bool changed = editParams(JellyMaterial::table(), m, [this, i](const std::string& key) {
      if (i == 0) layout(("jelly." + key).c_str());
    });
    if (changed) {
      editJellies(
          "material of jelly " + std::to_string(i + 1),
          [i, m](std::vector<JellySpec>& jellies) { jellies[i].material = m; }, false, true);
      log_.write(
          "jelly_material",
          {{"index", i}, {"young", m.young}, {"poisson", m.poisson}, {"damping", m.damping}});
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("remove")) {
      editJellies(
          "remove jelly " + std::to_string(i + 1),
          [i](std::vector<JellySpec>& jellies) { jellies.erase(jellies.begin() + long(i)); }, true);
      log_.write("jelly_remove", {{"index", i}});
    }
    ImGui::PopID();
  }
}

void Viewer::drawPinSection() {
  if (!ImGui::CollapsingHeader("Pins", ImGuiTreeNodeFlags_DefaultOpen) || !snapshot_) return;
  const RevealWhenOpened reveal;
  if (ImGui::Button("top corners")) applyPreset("top-corners");
  ImGui::SameLine();
  if (ImGui::Button("four corners")) applyPreset("four-corners");
  ImGui::SameLine();
  if (ImGui::Button("top edge")) applyPreset("top-edge");
  ImGui::SameLine();
  if (ImGui::Button("clear all")) clearPins();
  hint("Ctrl+click the cloth: pin / unpin; drag a pin to move it");
  if (snapshot_->pinVertices.empty()) {
    ImGui::TextDisabled("no pins");
    return;
  }
  ImGui::BeginChild("pins", ImVec2(0, std::min(110.0f, 22.0f * snapshot_->pinVertices.size() + 6)), true);
  for (size_t i = 0; i < snapshot_->pinVertices.size(); ++i) {
    const int v = snapshot_->pinVertices[i];
    const Vec3& t = snapshot_->pinTargets[i];
    ImGui::PushID(v);
    if (ImGui::SmallButton("unpin")) removePin(v);
    ImGui::SameLine();
    ImGui::Text("vertex %d at (%.3f, %.3f, %.3f)", v, t.x(), t.y(), t.z());
    ImGui::PopID();
  }
  ImGui::EndChild();
}

void Viewer::drawViewSection() {
  if (!ImGui::CollapsingHeader("View", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const RevealWhenOpened reveal;
  ImGui::Checkbox("wireframe (W)", &render_.wireframe);
  ImGui::SameLine(180);
  ImGui::Checkbox("strain heat map (H)", &render_.heatMap);
  if (ImGui::Checkbox("solver overlay (O)", &render_.overlay)) {
    const bool overlay = render_.overlay;
    forEachRunner([overlay](SimRunner& r) { r.setOverlay(overlay); });
  }
  tooltip("impulse-nc: the edge-midpoint particles and their distance constraints");
  ImGui::SameLine(180);
  ImGui::Checkbox("constraints", &render_.overlayLines);
  if (ImGui::Checkbox("contacts", &render_.contacts)) {
    const bool contacts = render_.contacts;
    forEachRunner([contacts](SimRunner& r) { r.setContacts(contacts); });
  }
  tooltip("mark the cloth vertices touching obstacles");
  ImGui::Checkbox("shadows", &render_.shadows);
  ImGui::SameLine(180);
  ImGui::Checkbox("ground grid", &render_.grid);
  int pattern = static_cast<int>(render_.pattern);
  ImGui::SetNextItemWidth(170);
  if (ImGui::Combo("pattern (T)", &pattern, "none\0checks\0grid lines\0"))
    setPattern(static_cast<ClothPattern>(pattern));
  layout("pattern_combo");
  tooltip(
      "printed on the cloth in its own flat coordinates: it moves, stretches and shears with "
      "the cloth (long cells: stretch; slanted ones: shear). A cone (a flared skirt) shows its "
      "unrolled sector's, which breaks along its seam. A curved cloth without a flattening "
      "shows a pattern in space, cut by its rest shape");
  if (render_.pattern != ClothPattern::None) {
    double size = render_.patternSize;
    ImGui::SetNextItemWidth(170);
    if (logSlider("cell size", size, 1e-3, 10.0, "m"))
      render_.patternSize = static_cast<float>(size);
    if (ImGui::IsItemDeactivatedAfterEdit())
      log_.write("pattern",
                 {{"pattern", patternName(render_.pattern)}, {"size", render_.patternSize}});
    tooltip(
        "the side of a check or grid cell in the cloth's rest state; on a tube, the nearest "
        "size that fits round it");
  }
  if (render_.heatMap) {
    double heatMax = render_.heatMax;
    ImGui::SetNextItemWidth(170);
    if (logSlider("strain range", heatMax, 1e-7, 1.0, "")) render_.heatMax = static_cast<float>(heatMax);
    ImGui::SameLine();
    if (ImGui::SmallButton("fit") && snapshot_) {
      float m = 0;
      for (float s : snapshot_->fine ? snapshot_->fineStrain : snapshot_->strain)
        m = std::max(m, s);
      render_.heatMax = std::max(m, 1e-7f);
    }
    // Legend: the colour map from 0 to the range.
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x, h = 14;
    const int segments = 24;
    for (int i = 0; i < segments; ++i) {
      const auto a = heatColor(float(i) / segments), b = heatColor(float(i + 1) / segments);
      const ImU32 ca = ImGui::ColorConvertFloat4ToU32(ImVec4(a[0], a[1], a[2], 1));
      const ImU32 cb = ImGui::ColorConvertFloat4ToU32(ImVec4(b[0], b[1], b[2], 1));
      draw->AddRectFilledMultiColor(ImVec2(p.x + w * i / segments, p.y), ImVec2(p.x + w * (i + 1) / segments, p.y + h), ca, cb, cb, ca);
    }
    ImGui::Dummy(ImVec2(w, h));
    ImGui::Text("0");
    ImGui::SameLine(w - 90);
    ImGui::Text("%.2e strain", render_.heatMax);
  }
  if (ImGui::Button("Fit camera (F)") && snapshot_) fitCamera(*snapshot_, false);
  ImGui::SetNextItemWidth(-110);
  ImGui::InputText("##shot", screenshotPath_, sizeof screenshotPath_);
  ImGui::SameLine();
  if (ImGui::Button("Screenshot (P)", ImVec2(-1, 0))) screenshotRequested_ = true;
  layout("screenshot_button");
  ImGui::SetNextItemWidth(-110);
  ImGui::InputText("##record", recordDir_, sizeof recordDir_);
  ImGui::SameLine();
  if (ImGui::Checkbox("record PNGs", &recording_)) {
    recordIndex_ = 0;
    log_.write(recording_ ? "record_start" : "record_stop", {{"dir", recordDir_}});
  }
  tooltip("writes every drawn frame to this folder as frame_00000.png, ...");
}

void Viewer::drawStatsSection() {
  const bool open = ImGui::CollapsingHeader("Statistics", ImGuiTreeNodeFlags_DefaultOpen);
  layout("stats_header");
  if (!open || !snapshot_) return;
  const RevealWhenOpened reveal;
  const StepStats& s = snapshot_->stats;
  if (ImGui::BeginTable("phases", 2, ImGuiTableFlags_SizingStretchProp)) {
    auto row = [](const char* name, const char* fmt, double v) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(name);
      ImGui::TableSetColumnIndex(1);
      ImGui::Text(fmt, v);
    };
    row("step total", "%.2f ms", s.msTotal);
    row("  factorization", "%.2f ms", s.msFactor);
    row("  forces", "%.2f ms", s.msForces);
    row("  velocity pass", "%.2f ms", s.msVelocity);
    row("  position pass", "%.2f ms", s.msPosition);
    row("  collisions", "%.2f ms", s.msCollision);
    row("position iterations", "%.0f", s.positionIterations);
    row("max constraint error", "%.2e m", s.maxPositionError);
    row("max edge strain", "%.2e", s.maxEdgeStrain);
    row("contacts", "%.0f", s.contacts);
    row("real-time factor", "%.2f", runner_->realTimeFactor());
    if (s.substeps > 1) row("sub-steps per step", "%.0f", s.substeps);
    // The solver's own figures (Fast Projection iterations, fallbacks, factorizations, ...).
    for (const auto& [key, value] : s.extra.items()) {
      if (value.is_boolean()) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(key.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(value.get<bool>() ? "yes" : "no");
      } else if (value.is_number()) {
        row(key.c_str(), value.is_number_integer() ? "%.0f" : "%.3g", value.get<double>());
      }
    }
    ImGui::EndTable();
  }
  if (sleptThrough(s)) {
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1.0f),
                       "asleep: the cloth lies still and is not stepped");
    tooltip(
        "every vertex moved slower than sleep_speed for sleep_time; an edit, a grab or a pin "
        "wakes it (sleep_speed 0: never asleep)");
  }
  if (!s.converged) {
    const long above = std::count_if(history_.begin(), history_.end(), [](const Sample& h) { return !h.converged; });
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "the last step ended above the solver's tolerance");
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "(%ld of the %zu steps drawn in the last 10 s)", above,
                       history_.size());
    tooltip("try a smaller time step, more sub-steps or adaptive ones (max_substeps: a step above the tolerance "
            "is taken again in twice as many), a looser tolerance, or more iterations");
  }
  if (history_.size() < 2) return;
  auto plot = [&](const char* label, float Sample::*field, const char* fmt) {
    std::vector<float> values;
    values.reserve(history_.size());
    float hi = 0;
    for (const auto& h : history_) {
      values.push_back(h.*field);
      hi = std::max(hi, h.*field);
    }
    char overlay[64];
    std::snprintf(overlay, sizeof overlay, fmt, values.back(), hi);
    // The width given, not as -80 (to the region's right less 80): Dear ImGui 1.86 drew no plot,
    // nor its label, for a negative width, leaving only the space (seen under Xvfb).
    const float width = std::max(40.0f, ImGui::GetContentRegionAvail().x - 80);
    ImGui::PlotLines(label, values.data(), static_cast<int>(values.size()), 0, overlay, 0.0f,
                     hi > 0 ? hi * 1.1f : 1.0f, ImVec2(width, 40));
  };
  ImGui::TextDisabled("last %.0f s", history_.back().wall - history_.front().wall);
  plot("ms/step", &Sample::msTotal, "%.2f ms (max %.2f)");
  plot("iterations", &Sample::iterations, "%.0f (max %.0f)");
  plot("error [m]", &Sample::error, "%.1e (max %.1e)");
  plot("strain", &Sample::strain, "%.1e (max %.1e)");
  plot("real time", &Sample::rtf, "x%.3g (max %.3g)");
}

void Viewer::drawOverlayText() {
  // A one-line hint at the bottom of the window so the controls are discoverable.
  // (In compare mode: above the metrics table.)
  const double bottom = panes_.empty() ? winHeight_ - 8 : winHeight_ - kCompareTableHeight - 4;
  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(winWidth_) - 8, static_cast<float>(bottom)), ImGuiCond_Always,
                          ImVec2(1, 1));
  ImGui::SetNextWindowBgAlpha(0.45f);
  ImGui::Begin("hint", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                    ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  // Shortened where the whole line would run under the panel.
  const char* hint =
      "drag: pull cloth   Ctrl+click: pin/unpin   right-drag: orbit   wheel: zoom   F1: help";
  if (ImGui::CalcTextSize(hint).x + 2 * ImGui::GetStyle().WindowPadding.x >
      winWidth_ - panelWidth_ - 16)
    hint = "F1: help";
  ImGui::TextUnformatted(hint);
  rememberWindow();
  ImGui::End();
}

void Viewer::drawHelpWindow() {
  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(winWidth_) * 0.5f, static_cast<float>(winHeight_) * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::Begin("Controls", &showHelp_, ImGuiWindowFlags_AlwaysAutoResize);
  rememberWindow();
  static const char* const rows[][2] = {
      {"Left-drag on the cloth", "grab the point under the cursor and pull it in the view plane"},
      {"Release", "let go; the cloth keeps its motion"},
      {"Ctrl + left-click on the cloth", "pin the nearest vertex where it is (click a pin: unpin)"},
      {"Left-drag on a pin", "move the pin"},
      {"Right-drag / left-drag on empty space", "orbit the camera"},
      {"Middle-drag / Shift + right-drag", "pan"},
      {"Mouse wheel", "zoom"},
      {"Space", "pause / resume"},
      {"N or .", "single step (pauses)"},
      {"R", "reset the scene (keeps parameters and pins)"},
      {"F", "fit the camera to the scene"},
      {"W / H / O", "wireframe / strain heat map / solver overlay"},
      {"T",
       "checks printed on the cloth in its own coordinates, on / off (grid lines: View section)"},
      {"C", "clear all pins"},
      {"K / B", "keep this moment of the motion / go back to it (edits since stay)"},
      {"Ctrl+Z / Ctrl+Y or Ctrl+Shift+Z",
       "undo / redo an edit of the pins, obstacles, jellies, parameters or placement (also the "
       "buttons under Pause)"},
      {"P", "screenshot (path in the View section)"},
      {"F1 or ?", "this window"},
      {"Esc", "close help; let go of a drag"},
      {"Ctrl+Q", "quit"},
      {"Drop files on the window", ".obj (cloth, obstacle or jelly, see Scene) or scene .json"},
      {"Red dots", "pins (a line to the target while one moves)"},
      {"Yellow dots", "the grabbed point and the target it is pulled to"},
      {"Large dark dots", "point masses of the scene (\"point_masses\")"},
      {"Dark threads", "a garment's open stitches, closing at sewing_speed (Cloth and simulation)"},
      {"Green bodies",
       "jellies: they bounce and squash on obstacles; the cloth drapes over them (Jellies "
       "section)"},
  };
  if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
    for (const auto& r : rows) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(r[0]);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(r[1]);
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled(
      "Letter keys go by their labels on your keyboard layout (Ctrl+Z undoes on QWERTZ too).");
  ImGui::End();
}

}  // namespace clothlab
