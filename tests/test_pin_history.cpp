// Undo and redo of the viewer's pin edits (app/viewer/pin_history.h): each edit records the pins
// before and after it on the simulation's thread; undo and redo put them back, on the cloth they
// were recorded on only.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "app/viewer/pin_history.h"
#include "sim/scene_library.h"

namespace clothlab {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Simulation> hanging(int columns = 9) {
  auto scene = resolveScene("hanging");
  EXPECT_TRUE(scene) << scene.error();
  scene->cloth.kind = ClothSource::Kind::Grid;
  scene->cloth.columns = scene->cloth.rows = columns;
  auto simulation = Simulation::create(*scene);
  EXPECT_TRUE(simulation) << simulation.error();
  return std::move(*simulation);
}

SimRunner::Edit clear() {
  return [](Simulation& s) {
    s.clearPins();
    return std::optional<std::string>();
  };
}

TEST(PinHistory, UndoPutsClearedPinsBackAndRedoClearsThemAgain) {
  auto s = hanging();
  const PinList pins = s->pins();
  ASSERT_GE(pins.size(), 2u);
  auto edit = std::make_shared<PinEdit>("clear pins", 1);
  EXPECT_FALSE(edit->record(-1, clear())(*s));
  EXPECT_TRUE(s->pins().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  EXPECT_EQ(s->pins(), pins);
  EXPECT_FALSE(edit->restore(-1, true)(*s));
  EXPECT_TRUE(s->pins().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  EXPECT_EQ(s->pins(), pins);
}

// A drag posts many moves; the record taken at its first move and completed at its end undoes
// them all at once.
TEST(PinHistory, AWholeDragIsOneEdit) {
  auto s = hanging();
  const PinList pins = s->pins();
  const int vertex = pins[0].first;
  auto edit = std::make_shared<PinEdit>("move pin", 1);
  EXPECT_FALSE(edit->record(-1, [](Simulation&) { return std::optional<std::string>(); })(*s));
  for (int i = 1; i <= 5; ++i)
    ASSERT_FALSE(s->setPin(vertex, pins[0].second + Vec3(0.02 * i, 0, 0)));
  EXPECT_FALSE(edit->recordAfter(-1)(*s));
  const PinList dragged = s->pins();
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  EXPECT_EQ(s->pins(), pins);
  EXPECT_FALSE(edit->restore(-1, true)(*s));
  EXPECT_EQ(s->pins(), dragged);
  EXPECT_EQ(s->pins()[0].second, pins[0].second + Vec3(0.1, 0, 0));
}

// The scene replaced between an edit and its undo: the vertex numbers mean other points there,
// so the undo is refused by name and changes nothing. A pane the edit never reached has nothing
// to put back.
TEST(PinHistory, PinsAreNotPutBackOnAnotherCloth) {
  auto s = hanging(9);
  auto edit = std::make_shared<PinEdit>("clear pins", 2);
  EXPECT_FALSE(edit->record(0, clear())(*s));
  auto other = hanging(11);
  const PinList pins = other->pins();
  EXPECT_EQ(edit->restore(0, false)(*other).value_or(""),
            "the pins of \"clear pins\" belong to another cloth (the scene changed since)");
  EXPECT_EQ(other->pins(), pins);
  EXPECT_FALSE(edit->restore(1, false)(*other)) << "pane 2 never ran the edit";
  EXPECT_EQ(other->pins(), pins);
  EXPECT_NE(topologyKey(s->cloth().mesh), topologyKey(other->cloth().mesh));
  EXPECT_EQ(topologyKey(s->cloth().mesh), topologyKey(hanging(9)->cloth().mesh));
}

TEST(PinHistory, ANewEditEndsTheRedoAndTheOldestGoFirst) {
  PinHistory history;
  EXPECT_EQ(history.undo(), nullptr);
  EXPECT_EQ(history.redo(), nullptr);
  auto a = std::make_shared<PinEdit>("a", 1), b = std::make_shared<PinEdit>("b", 1);
  history.push(a);
  history.push(b);
  EXPECT_EQ(history.nextUndo(), b.get());
  EXPECT_EQ(history.undo(), b);
  EXPECT_EQ(history.nextUndo(), a.get());
  EXPECT_EQ(history.nextRedo(), b.get());
  EXPECT_EQ(history.redo(), b);
  EXPECT_EQ(history.undo(), b);
  history.push(std::make_shared<PinEdit>("c", 1));
  EXPECT_EQ(history.nextRedo(), nullptr) << "b can no longer be redone";
  EXPECT_EQ(history.nextUndo()->label(), "c");

  for (size_t i = 0; i < PinHistory::kLimit + 5; ++i)
    history.push(std::make_shared<PinEdit>(std::to_string(i), 1));
  size_t undone = 0;
  std::string oldest;
  while (auto edit = history.undo()) {
    ++undone;
    oldest = edit->label();
  }
  EXPECT_EQ(undone, PinHistory::kLimit);
  EXPECT_EQ(oldest, "5");
  history.clear();
  EXPECT_EQ(history.nextRedo(), nullptr);
}

// Through the simulation thread, as the viewer posts them: the record and the undo run in order
// there, whenever the snapshots catch up.
TEST(PinHistory, UndoThroughTheSimulationThread) {
  auto simulation = hanging();
  const PinList pins = simulation->pins();
  SimRunner runner(std::move(simulation), true);
  auto edit = std::make_shared<PinEdit>("clear pins", 1);
  runner.post("clear pins", edit->record(-1, clear()), true);
  runner.post("undo clear pins", edit->restore(-1, false), true);
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (runner.editsApplied() < 2 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(2ms);
  ASSERT_EQ(runner.editsApplied(), 2);
  const auto snapshot = runner.snapshot();
  ASSERT_EQ(snapshot->pinVertices.size(), pins.size());
  for (size_t i = 0; i < pins.size(); ++i) {
    EXPECT_EQ(snapshot->pinVertices[i], pins[i].first);
    EXPECT_EQ(snapshot->pinTargets[i], pins[i].second);
  }
  EXPECT_TRUE(runner.takeMessages().empty());
}

}  // namespace
}  // namespace clothlab
