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
      {"bending-models",
       "impulse-nc's two bending energies on the clamped cantilever, beside xpbd: with BDB11's "
       "Crouzeix-Raviart energy (the default) the sheet creases beyond the clamp; with the hinges "
       "of the surface drawn (bending_model surface) it bends in an arc, as xpbd's does",
       {{"impulse-nc", "cantilever-coarse"},
        {"impulse-nc", "cantilever-coarse", nullptr, {{"bending_model", "surface"}}},
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

std::string solverParamText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string paneSolverLabel(const ComparePane& pane) {
  std::string label = pane.solver;
  for (const auto& [key, value] : pane.params.items()) label += ":" + key + "=" + solverParamText(value);
  return label;
}

void applyPaneSolver(const ComparePane& pane, Scene& scene) {
  useSolver(scene, pane.solver);
  scene.solverParams.update(pane.params);
}

std::optional<std::string> parseSolverParam(const std::string& text, nlohmann::json& params) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    return "solver parameter '" + text + "': expected KEY=VALUE";
  const std::string key = text.substr(0, equals), value = text.substr(equals + 1);
  if (value.empty()) return "solver parameter '" + text + "': no value after '='";
  if (params.contains(key)) return "solver parameter '" + key + "' is given twice";
  // JSON where the value is one (1e-7, true, "text"), the bare text otherwise.
  const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  params[key] = parsed.is_discarded() || parsed.is_structured() ? nlohmann::json(value) : parsed;
  return std::nullopt;
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
    const std::string solverPart = entry.substr(0, at);
    const auto colon = solverPart.find(':');
    pane.solver = solverPart.substr(0, colon);
    pane.scene = at == std::string::npos ? scene : entry.substr(at + 1);
    if (pane.solver.empty()) {
      result.error =
          where + ": no solver id before " + (colon == std::string::npos ? "'@'" : "':'");
      return result;
    }
    for (size_t start = colon; start != std::string::npos;) {
      const size_t next = solverPart.find(':', start + 1);
      const std::string param = solverPart.substr(
          start + 1, next == std::string::npos ? std::string::npos : next - start - 1);
      if (auto e = parseSolverParam(param, pane.params)) {
        result.error = where + ": " + *e;
        return result;
      }
      start = next;
    }
    const SolverEntry* solver = findSolver(pane.solver);
    if (!solver) {
      result.error = where + ": unknown solver '" + pane.solver + "' (known: " + solverIdList() + ")";
      return result;
    }
    // Checked here, so that the error names the entry, not the scene file the pane runs.
    if (auto e = solver->create()->setParams(pane.params)) {
      result.error = where + ": " + *e;
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
