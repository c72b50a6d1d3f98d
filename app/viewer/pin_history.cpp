#include "app/viewer/pin_history.h"

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

PinEdit::PinEdit(std::string label, int panes)
    : label_(std::move(label)), slots_(static_cast<size_t>(panes < 1 ? 1 : panes)) {}

SimRunner::Edit PinEdit::record(int pane, SimRunner::Edit edit) {
  return [self = shared_from_this(), pane, edit = std::move(edit)](Simulation& s) {
    Slot& slot = self->slot(pane);
    slot.recorded = true;
    slot.topology = topologyKey(s.cloth().mesh);
    slot.before = s.pins();
    auto error = edit(s);
    slot.after = s.pins();
    return error;
  };
}

SimRunner::Edit PinEdit::recordAfter(int pane) {
  return [self = shared_from_this(), pane](Simulation& s) -> std::optional<std::string> {
    Slot& slot = self->slot(pane);
    if (slot.recorded && slot.topology == topologyKey(s.cloth().mesh)) slot.after = s.pins();
    return std::nullopt;
  };
}

SimRunner::Edit PinEdit::restore(int pane, bool after) {
  return [self = shared_from_this(), pane, after](Simulation& s) -> std::optional<std::string> {
    const Slot& slot = self->slot(pane);
    if (!slot.recorded) return std::nullopt;  // it never ran here: nothing to put back
    if (slot.topology != topologyKey(s.cloth().mesh))
      return "the pins of \"" + self->label_ +
             "\" belong to another cloth (the scene changed since)";
    return s.setPins(after ? slot.after : slot.before);
  };
}

void PinHistory::push(std::shared_ptr<PinEdit> edit) {
  undone_.clear();
  done_.push_back(std::move(edit));
  while (done_.size() > kLimit) done_.pop_front();
}

std::shared_ptr<PinEdit> PinHistory::undo() {
  if (done_.empty()) return nullptr;
  auto edit = std::move(done_.back());
  done_.pop_back();
  undone_.push_back(edit);
  return edit;
}

std::shared_ptr<PinEdit> PinHistory::redo() {
  if (undone_.empty()) return nullptr;
  auto edit = std::move(undone_.back());
  undone_.pop_back();
  done_.push_back(edit);
  return edit;
}

void PinHistory::clear() {
  done_.clear();
  undone_.clear();
}

}  // namespace clothlab
