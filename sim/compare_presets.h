#pragma once
// Compare-mode presets: which scene variant each pane runs with which solver. Shared by the
// viewer (`clothlab --compare PRESET`) and the CLI (`clothlab-cli compare PRESET`).
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/scene.h"

namespace clothlab {

struct ComparePane {
  std::string solver;  // solver id
  std::string scene;   // built-in scene name or scene .json path (the mesh variant)
  // The scene itself, when it is neither (the viewer's current scene, as it stands); `scene`
  // then only names it.
  std::shared_ptr<const Scene> source = nullptr;
  // Solver parameters set over the scene's (the solver checks them when the pane is built), so
  // that one solver can run beside itself with another setting.
  nlohmann::json params = nlohmann::json::object();
};

// A solver parameter's value as a pane list writes it: a string bare (surface), anything else as
// JSON (1e-07, true).
std::string solverParamText(const nlohmann::json& value);

// The pane's solver and its parameters as written in a pane list: "impulse-nc" or
// "impulse-nc:bending_model=surface" (keys in order).
std::string paneSolverLabel(const ComparePane& pane);

// The scene a pane runs with its solver and parameters set: `scene` as resolved (useSolver, then
// the pane's parameters over the scene's).
void applyPaneSolver(const ComparePane& pane, Scene& scene);

// One solver parameter written as KEY=VALUE (a pane list's entry, `clothlab-cli run --param`):
// VALUE is read as JSON where it is a number, true, false or a quoted string, else as the text
// itself (bending_model=surface). Sets params[KEY]; an error says what is wrong with `text`.
std::optional<std::string> parseSolverParam(const std::string& text, nlohmann::json& params);

struct ComparePreset {
  std::string name, description;
  std::vector<ComparePane> panes;  // 2 to 4
};

const std::vector<ComparePreset>& comparePresets();
const ComparePreset* findComparePreset(const std::string& name);
// "pinned-corners, diagonal-corners, ...": the preset names for messages and help.
std::string comparePresetNames();

// Parses a pane list "ID[:KEY=VALUE...][@SCENE],..." where a pane without @SCENE runs `scene`
// and each KEY=VALUE sets one of its solver's parameters (parseSolverParam). Errors name the
// entry that is wrong (unknown solver, empty entry, a parameter not KEY=VALUE or one its solver
// refuses, fewer than 1 or more than 8).
struct PaneListResult {
  std::vector<ComparePane> panes;
  std::string error;  // empty when valid
};
PaneListResult parsePaneList(const std::string& list, const std::string& scene);

}  // namespace clothlab
