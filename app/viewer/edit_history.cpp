#include "app/viewer/edit_history.h"

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
    slot.after = self->read(s);
    return error;
  };
}

SimRunner::Edit SceneEdit::extend(int pane, SimRunner::Edit edit) {
  return [self = shared_from_this(), pane, edit = std::move(edit)](Simulation& s) {
    Slot& slot = self->slot(pane);
    // A pane the record had not reached (a parameter edit made in one pane, then in every pane):
    // recorded from here.
    if (!slot.recorded) self->begin(slot, s);
    auto error = edit(s);
    if (onRecordedCloth(slot, s)) slot.after = self->read(s);
    return error;
  };
}

SimRunner::Edit SceneEdit::restore(int pane, bool after) {
  return [self = shared_from_this(), pane, after](Simulation& s) -> std::optional<std::string> {
    const Slot& slot = self->slot(pane);
    if (!slot.recorded) return std::nullopt;  // it never ran here: nothing to put back
    if (!onRecordedCloth(slot, s))
      return "\"" + self->label_ + "\" belongs to another cloth (the scene changed since)";
    return self->write(s, slot, after);
  };
}

void EditHistory::push(std::shared_ptr<SceneEdit> edit) {
  undone_.clear();
  done_.push_back(std::move(edit));
  while (done_.size() > kLimit) done_.pop_front();
}

std::shared_ptr<SceneEdit> EditHistory::moveNewest(std::deque<std::shared_ptr<SceneEdit>>& from,
                                                   std::deque<std::shared_ptr<SceneEdit>>& to) {
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
