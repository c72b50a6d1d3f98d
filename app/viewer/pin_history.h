#pragma once
// Undo and redo of the viewer's pin edits (a pin set, moved, removed, a preset, "clear all"): a
// stray C no longer loses every pin for good.
//
// Each edit is recorded where it happens, on each pane's simulation thread: the pins just before
// it and just after it, as that pane's Simulation holds them. Undo puts the pins recorded before
// back (Simulation::setPins: they travel back together), redo those recorded after. Recording
// on the simulation thread needs no locks and sees what the edit really changed, however late
// the snapshots are: a pane's slot is written and read only by edits posted to that pane's
// runner, which run in order on its thread.
//
// A record belongs to the cloth it was taken on (its vertex count and triangles): put back on
// another (the scene replaced between the edit and the undo), it is refused, saying so.
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/viewer/sim_runner.h"

namespace clothlab {

using PinList = std::vector<std::pair<int, Vec3>>;

// Identifies a cloth's topology: vertex indices mean the same points on clothes with equal ones.
std::uint64_t topologyKey(const TriangleMesh& mesh);

class PinEdit : public std::enable_shared_from_this<PinEdit> {
 public:
  // `label` names the edit ("clear pins"); `panes` is how many panes it is posted to (1 outside
  // compare mode).
  PinEdit(std::string label, int panes);
  const std::string& label() const { return label_; }

  // `edit` for pane `pane` (-1 outside compare mode), recording the pins before and after it.
  SimRunner::Edit record(int pane, SimRunner::Edit edit);
  // Records the pins after what was posted to the pane since (the moves of a pin's drag).
  SimRunner::Edit recordAfter(int pane);
  // Puts the pane's pins back as they were before the edit (`after` false: undo) or after it
  // (redo). Refused when the pane's cloth is not the one recorded on; nothing to do when the
  // edit never ran there.
  SimRunner::Edit restore(int pane, bool after);

 private:
  struct Slot {
    bool recorded = false;
    std::uint64_t topology = 0;
    PinList before, after;
  };
  Slot& slot(int pane) { return slots_.at(static_cast<size_t>(pane < 0 ? 0 : pane)); }
  std::string label_;
  std::vector<Slot> slots_;  // per pane; each written and read on its pane's thread only
};

// The edits to undo (newest last) and to redo, on the viewer's thread.
class PinHistory {
 public:
  static constexpr size_t kLimit = 100;  // edits kept for undo; the oldest go first
  // A new edit: it can be undone; what was undone before can no longer be redone.
  void push(std::shared_ptr<PinEdit> edit);
  // The edit to undo / redo now, moved to the other list; null when there is none.
  std::shared_ptr<PinEdit> undo();
  std::shared_ptr<PinEdit> redo();
  const PinEdit* nextUndo() const { return done_.empty() ? nullptr : done_.back().get(); }
  const PinEdit* nextRedo() const { return undone_.empty() ? nullptr : undone_.back().get(); }
  void clear();

 private:
  std::deque<std::shared_ptr<PinEdit>> done_;
  std::vector<std::shared_ptr<PinEdit>> undone_;
};

}  // namespace clothlab
