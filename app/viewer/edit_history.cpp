#include "app/viewer/edit_history.h"

#include "sim/placement.h"

namespace clothlab {

std::uint64_t topologyKey(const TriangleMesh& mesh) {
  // FNV-1a over the vertex count and every triangle's indices.
  std::uint64_t key = 14695981039346656037ull;
  auto add = [&](std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      key ^= (value >> (8 * byte)) & 0xffu;
      key *= 1099511628211ull;
    }
  };
  add(static_cast<std::uint64_t>(mesh.vertexCount()));
  for (const Tri& t : mesh.triangles)
    for (int v : t) add(static_cast<std::uint64_t>(v));
  return key;
}

SceneEdit::SceneEdit(std::string label, EditedPart part, int panes)
    : label_(std::move(label)), part_(part), slots_(static_cast<size_t>(panes < 1 ? 1 : panes)) {}

SceneEdit::State SceneEdit::read(const Simulation& s) const {
  State state;
  switch (part_) {
    case EditedPart::Pins:
      state.pins = s.pins();
      break;
    case EditedPart::Obstacles:
      state.obstacles = s.obstacles();
      break;
    case EditedPart::Jellies:
      state.jellies = s.jellySpecs();
      state.jellyBodies = s.jellies();
      break;
    case EditedPart::Parameters:
      state.sim = s.sim();
      state.solver = s.solver().id();
      state.solverParams = s.solver().params();
      break;
    case EditedPart::Placement:
      state.placement = s.scene().transform;
      break;
  }
  return state;
}

std::optional<std::string> SceneEdit::write(Simulation& s, const Slot& slot, bool after) const {
  const State& state = after ? slot.after : slot.before;
  switch (part_) {
    case EditedPart::Pins:
      return s.setPins(state.pins);
    case EditedPart::Obstacles:
      return s.setObstacles(state.obstacles);
    case EditedPart::Jellies:
      return s.setJellies(state.jellies, state.jellyBodies);
    case EditedPart::Parameters: {
      if (auto error = s.setSimParams(state.sim)) return error;
      if (s.solver().id() == state.solver) return s.setSolverParams(state.solverParams);
      // Another solver runs since: the simulation's parameters are back, and where the edit
      // changed the solver's, those cannot go to another solver.
      if (slot.before.solverParams != slot.after.solverParams)
        return "\"" + label_ + "\" was a parameter of " + state.solver + ", and " +
               s.solver().id() + " runs now";
      return std::nullopt;
    }
    case EditedPart::Placement:
      break;  // restarts the simulation: restore(pane, after, runner)
  }
  return std::nullopt;
}

void SceneEdit::begin(Slot& slot, const Simulation& s) const {
  slot.recorded = true;
  slot.cloth = s.clothModel();
  slot.topology = topologyKey(s.cloth().mesh);
  slot.before = read(s);
}

SimRunner::Edit SceneEdit::record(int pane, SimRunner::Edit edit) {
  return [self = shared_from_this(), pane, edit = std::move(edit)](Simulation& s) {
    Slot& slot = self->slot(pane);
    self->begin(slot, s);
    auto error = edit(s);
    self->ran(error);
    if (self->part_ != EditedPart::Placement)
      slot.after = self->read(s);
    else if (error)
      slot.after = slot.before;  // placing() noted a placement that did not start
    return error;
  };
}

std::function<Result<Scene>(const Simulation&)> SceneEdit::placing(
    int pane, std::function<Result<Scene>(const Simulation&)> change) {
  return [self = shared_from_this(), pane, change = std::move(change)](const Simulation& s) {
    auto scene = change(s);
    if (scene) self->slot(pane).after.placement = scene->transform;
    return scene;
  };
}

SimRunner::Edit SceneEdit::extend(int pane, SimRunner::Edit edit) {
  return [self = shared_from_this(), pane, edit = std::move(edit)](Simulation& s) {
    Slot& slot = self->slot(pane);
    // A pane the record had not reached (a parameter edit made in one pane, then in every pane):
    // recorded from here.
    if (!slot.recorded) self->begin(slot, s);
    auto error = edit(s);
    self->ran(error);
    if (onRecordedCloth(slot, s)) slot.after = self->read(s);
    return error;
  };
}

SimRunner::Edit SceneEdit::onSlot(
    int pane, std::function<std::optional<std::string>(Simulation&, const Slot&)> put) {
  return [self = shared_from_this(), pane, put = std::move(put)](Simulation& s) {
    const Slot& slot = self->slot(pane);
    if (!slot.recorded)
      return std::optional<std::string>();  // it never ran here: nothing to put back
    if (!onRecordedCloth(slot, s))
      return std::optional<std::string>("\"" + self->label_ +
                                        "\" belongs to another cloth (the scene changed since)");
    return put(s, slot);
  };
}

SimRunner::Edit SceneEdit::restore(int pane, bool after) {
  return onSlot(pane, [self = shared_from_this(), after](Simulation& s, const Slot& slot) {
    return self->write(s, slot, after);
  });
}

SimRunner::Edit SceneEdit::restore(int pane, bool after, SimRunner& runner) {
  if (part_ != EditedPart::Placement) return restore(pane, after);
  auto restart = runner.restartEdit([self = shared_from_this(), pane, after](const Simulation& s) {
    const Slot& slot = self->slot(pane);
    return placeClothAt(s.currentScene(), s.cloth().mesh.positions,
                        after ? slot.after.placement : slot.before.placement);
  });
  return onSlot(pane, [restart = std::move(restart)](Simulation& s, const Slot& slot) {
    const Transform &was = slot.before.placement, &is = slot.after.placement;
    if (was.scale == is.scale && was.rotateDeg == is.rotateDeg && was.translate == is.translate)
      return std::optional<std::string>();  // the placement was refused: no restart to undo
    return restart(s);
  });
}

void EditHistory::push(std::shared_ptr<SceneEdit> edit) {
  undone_.clear();
  done_.push_back(std::move(edit));
  while (done_.size() > kLimit) done_.pop_front();
}

std::shared_ptr<SceneEdit> EditHistory::newestKept(
    const std::deque<std::shared_ptr<SceneEdit>>& edits) {
  for (auto it = edits.rbegin(); it != edits.rend(); ++it)
    if (!(*it)->refused()) return *it;
  return nullptr;
}

std::shared_ptr<SceneEdit> EditHistory::moveNewest(std::deque<std::shared_ptr<SceneEdit>>& from,
                                                   std::deque<std::shared_ptr<SceneEdit>>& to) {
  while (!from.empty() && from.back()->refused()) from.pop_back();
  if (from.empty()) return nullptr;
  auto edit = std::move(from.back());
  from.pop_back();
  to.push_back(edit);
  return edit;
}

void EditHistory::clear() {
  done_.clear();
  undone_.clear();
}

}  // namespace clothlab
