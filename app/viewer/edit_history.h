#pragma once
// Undo and redo of the viewer's scene edits: the pins (set, moved, removed, a preset, "clear
// all"), the obstacles (added, moved, friction, removed), the jellies (added, material, removed),
// the parameters (the simulation's and the solver's) and the cloth's placement. A stray C or a
// "remove" clicked by mistake no longer loses anything for good.
//
// Each edit is recorded where it happens, on each pane's simulation thread: the part it changes
// (the pins, the obstacles, the jellies or the parameters) just before it and just after it, as
// that pane's Simulation holds them. Undo puts the part recorded before back, redo the one
// recorded after: pins through Simulation::setPins (they travel back together), obstacles,
// jellies and parameters through their setters (a removed jelly put back takes up where it
// stood when it was removed, with its motion; a solver's parameters go back only to the solver
// they were recorded on). A placement restarts the cloth from rest, and so does its undo: the
// cloth placed as it was before (placeClothAt), its pins and point masses carried along. Recording
// on the simulation thread needs no locks and sees what the edit really changed, however late the
// snapshots are: a pane's slot is written and read only by edits posted to that pane's runner,
// which run in order on its thread.
//
// A record belongs to the cloth it was taken on (its vertex count and triangles): put back on
// another (the scene replaced between the edit and the undo), it is refused, saying so.
#include <atomic>
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

// What an edit changes, and so what its undo puts back.
enum class EditedPart { Pins, Obstacles, Jellies, Parameters, Placement };

class SceneEdit : public std::enable_shared_from_this<SceneEdit> {
 public:
  // `label` names the edit ("clear pins"); `panes` is how many panes it is posted to (1 outside
  // compare mode).
  SceneEdit(std::string label, EditedPart part, int panes);
  const std::string& label() const { return label_; }
  EditedPart part() const { return part_; }
  // Whether the edit has run and was refused wherever it ran (a placement inside an obstacle, a
  // pin on a vertex that is gone): it changed nothing, so undo and redo pass it by.
  bool refused() const { return ran_ && !applied_; }

  // `edit` for pane `pane` (-1 outside compare mode), recording the part before and after it.
  SimRunner::Edit record(int pane, SimRunner::Edit edit);
  // `edit` for the pane, made part of this record: the part after it is what redo puts back
  // (the later moves of a drag, a slider held: one step of the history). In a pane the record
  // had not reached it starts the pane's record there.
  SimRunner::Edit extend(int pane, SimRunner::Edit edit);
  // Puts the pane's part back as it was before the edit (`after` false: undo) or after it
  // (redo). Refused when the pane's cloth is not the one recorded on; nothing to do when the
  // edit never ran there. A placement is put back by restarting `runner`'s simulation, the
  // pane's; the other parts need no runner.
  SimRunner::Edit restore(int pane, bool after, SimRunner& runner);
  SimRunner::Edit restore(int pane, bool after);

  // For a record of the Placement part, taken with record(pane, runner.restartEdit(placing(pane,
  // change))): `change`, noting the placement of the scene it makes as the one after the edit
  // (redo's). The simulation that runs after the restart is not the one the record sees.
  std::function<Result<Scene>(const Simulation&)> placing(
      int pane, std::function<Result<Scene>(const Simulation&)> change);

 private:
  struct State {
    PinList pins;
    std::vector<Obstacle> obstacles;
    std::vector<JellySpec> jellies;
    std::vector<JellyBody> jellyBodies;  // where each of `jellies` stood, and its motion
    SimParams sim;
    std::string solver;  // the solver's id, and its parameters
    nlohmann::json solverParams;
    Transform placement;  // the cloth's (Scene::transform)
  };
  State read(const Simulation& s) const;
  struct Slot {
    bool recorded = false;
    // The cloth recorded on: the object itself while it lives (compared at no cost, so that each
    // move of a drag need not hash a large cloth's triangles), and its topologyKey for a cloth
    // built anew since (a reset, a solver switch: the same mesh).
    std::weak_ptr<const ClothModel> cloth;
    std::uint64_t topology = 0;
    State before, after;
  };
  // Starts the slot's record on `s`: its cloth, and the part before the edit.
  void begin(Slot& slot, const Simulation& s) const;
  // Puts the slot's part before (or after) the edit back on `s`.
  std::optional<std::string> write(Simulation& s, const Slot& slot, bool after) const;
  // An edit that does `put` with the pane's slot where the record ran on the cloth `s` runs now;
  // nothing where it never ran, and a refusal naming it on another cloth.
  SimRunner::Edit onSlot(int pane,
                         std::function<std::optional<std::string>(Simulation&, const Slot&)> put);
  static bool onRecordedCloth(const Slot& slot, const Simulation& s) {
    return slot.cloth.lock() == s.clothModel() || slot.topology == topologyKey(s.cloth().mesh);
  }
  Slot& slot(int pane) { return slots_.at(static_cast<size_t>(pane < 0 ? 0 : pane)); }
  std::string label_;
  EditedPart part_;
  std::vector<Slot> slots_;  // per pane; each written and read on its pane's thread only
  // Set on the panes' threads, read on the viewer's (refused()); applied_ is set first.
  std::atomic<bool> ran_{false}, applied_{false};
  void ran(const std::optional<std::string>& error) {
    if (!error) applied_ = true;
    ran_ = true;
  }
};

// The edits to undo (newest last) and to redo, on the viewer's thread.
class EditHistory {
 public:
  static constexpr size_t kLimit = 100;  // edits kept for undo; the oldest go first
  // A new edit: it can be undone; what was undone before can no longer be redone.
  void push(std::shared_ptr<SceneEdit> edit);
  // The edit to undo / redo now, moved to the other list; null when there is none.
  std::shared_ptr<SceneEdit> undo() { return moveNewest(done_, undone_); }
  std::shared_ptr<SceneEdit> redo() { return moveNewest(undone_, done_); }
  // The edits undo() and redo() would take next (null when none): the newest that was not
  // refused (SceneEdit::refused); undo() and redo() drop the refused ones above it.
  std::shared_ptr<SceneEdit> nextUndo() const { return newestKept(done_); }
  std::shared_ptr<SceneEdit> nextRedo() const { return newestKept(undone_); }
  // The newest edit made, refused or not (what a continuous edit joins).
  std::shared_ptr<SceneEdit> newest() const { return done_.empty() ? nullptr : done_.back(); }
  void clear();

 private:
  static std::shared_ptr<SceneEdit> newestKept(const std::deque<std::shared_ptr<SceneEdit>>& edits);
  static std::shared_ptr<SceneEdit> moveNewest(std::deque<std::shared_ptr<SceneEdit>>& from,
                                               std::deque<std::shared_ptr<SceneEdit>>& to);
  std::deque<std::shared_ptr<SceneEdit>> done_, undone_;
};

}  // namespace clothlab
