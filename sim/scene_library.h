#pragma once
// Built-in scenes (assets/scenes/*.json) and resolution of a scene argument: a built-in name, a
// scene .json path, or an .obj path (a cloth with default parameters).
#include <string>
#include <vector>

#include "sim/scene.h"

namespace clothlab {

struct SceneEntry {
  std::string name, description, path;
};

// The assets folder: $CLOTHLAB_ASSETS, else the source tree's assets/ (compiled in), else
// ../assets next to the executable.
std::string assetDirectory();
std::vector<SceneEntry> builtinScenes();
Result<Scene> resolveScene(const std::string& argument);
bool isObjPath(const std::string& path);  // extension .obj, any case

}  // namespace clothlab
