#include "sim/compare_presets.h"

#include <sstream>

#include "sim/solver_registry.h"

namespace clothlab {

const std::vector<ComparePreset>& comparePresets() {
  static const std::vector<ComparePreset> presets = {
      {"pinned-corners",
       "CKV19's test: conforming vs impulse-nc vs mls-isometry on one irregular mesh hung from two "
       "adjacent corners at their rest distance: the locked conforming mesh hangs as a flat plate, "
       "the "
       "others sag a little (the stretch their tolerance allows) and drape",
       {{"conforming", "corners-coarse"},
        {"impulse-nc", "corners-coarse"},
        {"mls-isometry", "corners-coarse"}}},
      {"diagonal-corners",
       "one irregular mesh held by two opposite corners: the locked conforming mesh cannot fold "
       "along "
       "the diagonal and stays a stiff board; impulse-nc and mls-isometry fold and hang (tip "
       "height)",
       {{"conforming", "corners-diagonal"},
        {"impulse-nc", "corners-diagonal"},
        {"mls-isometry", "corners-diagonal"}}},
      {"cantilever",
       "cantilever droop of a clamped irregular sheet: conforming vs impulse-nc vs mls-isometry vs "
       "xpbd",
       {{"conforming", "cantilever-coarse"},
        {"impulse-nc", "cantilever-coarse"},
        {"mls-isometry", "cantilever-coarse"},
        {"xpbd", "cantilever-coarse"}}},
      {"shear",
       "CKV19 shear test: one side pinned, a heavy point mass on the other; impulse-nc vs "
       "mls-isometry",
       {{"impulse-nc", "ckv-shear"}, {"mls-isometry", "ckv-shear"}}},
      {"resolution-sweep",
       "one solver (mls-isometry) on the coarse and the fine cantilever: the droop should not "
       "depend "
       "on the mesh",
       {{"mls-isometry", "cantilever-coarse"}, {"mls-isometry", "cantilever-fine"}}},
      {"sewing",
       "the pillowcase sewn round its ball: the locked conforming mesh cannot wrap the ball and "
       "its seams stay centimetres open; impulse-nc and xpbd close them",
       {{"conforming", "pillow"}, {"impulse-nc", "pillow"}, {"xpbd", "pillow"}}},
  };
  return presets;
}

const ComparePreset* findComparePreset(const std::string& name) {
  for (const auto& preset : comparePresets())
    if (preset.name == name) return &preset;
  return nullptr;
}

std::string comparePresetNames() {
  std::string names;
  for (const auto& preset : comparePresets()) names += (names.empty() ? "" : ", ") + preset.name;
  return names;
}

PaneListResult parsePaneList(const std::string& list, const std::string& scene) {
  PaneListResult result;
  std::stringstream in(list);
  std::string entry;
  int index = 0;
  while (std::getline(in, entry, ',')) {
    ++index;
    const std::string where = "--solvers entry " + std::to_string(index);
    if (entry.empty()) {
      result.error = where + " is empty";
      return result;
    }
    ComparePane pane;
    const auto at = entry.find('@');
    pane.solver = entry.substr(0, at);
    pane.scene = at == std::string::npos ? scene : entry.substr(at + 1);
    if (pane.solver.empty()) {
      result.error = where + ": no solver id before '@'";
      return result;
    }
    if (!findSolver(pane.solver)) {
      result.error = where + ": unknown solver '" + pane.solver + "' (known: " + solverIdList() + ")";
      return result;
    }
    if (pane.scene.empty()) {
      result.error = where + ": empty scene after '@'";
      return result;
    }
    result.panes.push_back(pane);
  }
  if (result.panes.empty()) result.error = "--solvers: give at least one solver id";
  else if (result.panes.size() > 8) result.error = "--solvers: at most 8 entries";
  return result;
}

}  // namespace clothlab
