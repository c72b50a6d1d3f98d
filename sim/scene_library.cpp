#include "sim/scene_library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace clothlab {
namespace fs = std::filesystem;

std::string assetDirectory() {
  if (const char* env = std::getenv("CLOTHLAB_ASSETS"); env && *env) return env;
  std::error_code ec;
  if (fs::is_directory(CLOTHLAB_ASSET_DIR, ec)) return CLOTHLAB_ASSET_DIR;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return (self.parent_path().parent_path() / "assets").string();
  return "assets";
}

std::vector<SceneEntry> builtinScenes() {
  std::vector<SceneEntry> scenes;
  std::error_code ec;
  const fs::path dir = fs::path(assetDirectory()) / "scenes";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    SceneEntry scene{entry.path().stem().string(), "", entry.path().string()};
    std::ifstream in(entry.path());
    const auto json = nlohmann::json::parse(in, nullptr, false);
    if (json.is_object() && json.contains("description") && json["description"].is_string())
      scene.description = json["description"];
    scenes.push_back(scene);
  }
  std::sort(scenes.begin(), scenes.end(),
            [](const SceneEntry& a, const SceneEntry& b) { return a.name < b.name; });
  return scenes;
}

bool isObjPath(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), ::tolower);
  return extension == ".obj";
}

Result<Scene> resolveScene(const std::string& argument) {
  const fs::path path(argument);
  if (isObjPath(argument)) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return Error{argument + ": file not found"};
    return sceneForObj(argument);
  }
  if (path.extension() == ".json" || argument.find('/') != std::string::npos) return loadSceneFile(argument);
  for (const SceneEntry& scene : builtinScenes())
    if (scene.name == argument) return loadSceneFile(scene.path);
  std::string names;
  for (const SceneEntry& scene : builtinScenes()) names += (names.empty() ? "" : ", ") + scene.name;
  return Error{argument + ": no such built-in scene (built in: " + names +
               "; or give a scene .json or an .obj path)"};
}

}  // namespace clothlab
