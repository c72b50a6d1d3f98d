#pragma once
// Compare-mode presets: which scene variant each pane runs with which solver. Shared by the
// viewer (`clothlab --compare PRESET`) and the CLI (`clothlab-cli compare PRESET`).
#include <memory>
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
};

struct ComparePreset {
  std::string name, description;
  std::vector<ComparePane> panes;  // 2 to 4
};

const std::vector<ComparePreset>& comparePresets();
const ComparePreset* findComparePreset(const std::string& name);
// "pinned-corners, diagonal-corners, ...": the preset names for messages and help.
std::string comparePresetNames();

// Parses a pane list "ID[@SCENE],ID[@SCENE],..." where a pane without @SCENE runs `scene`.
// Errors name the entry that is wrong (unknown solver, empty entry, fewer than 1 or more than 8).
struct PaneListResult {
  std::vector<ComparePane> panes;
  std::string error;  // empty when valid
};
PaneListResult parsePaneList(const std::string& list, const std::string& scene);

}  // namespace clothlab
