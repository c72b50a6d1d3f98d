// Undo and redo of the viewer's scene edits (app/viewer/edit_history.h): each edit records the
// part it changes (pins, obstacles, jellies, parameters) before and after it on the simulation's
// thread; undo and redo put it back, on the cloth it was recorded on only.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "app/viewer/edit_history.h"
#include "sim/generators.h"
#include "sim/placement.h"
#include "sim/scene_library.h"
#include "test_util.h"

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

TEST(EditHistory, UndoPutsClearedPinsBackAndRedoClearsThemAgain) {
  auto s = hanging();
  const PinList pins = s->pins();
  ASSERT_GE(pins.size(), 2u);
  auto edit = std::make_shared<SceneEdit>("clear pins", EditedPart::Pins, 1);
  EXPECT_FALSE(edit->record(-1, clear())(*s));
  EXPECT_TRUE(s->pins().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  EXPECT_EQ(s->pins(), pins);
  EXPECT_FALSE(edit->restore(-1, true)(*s));
  EXPECT_TRUE(s->pins().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  EXPECT_EQ(s->pins(), pins);
}

// A drag posts many moves: the record taken at the first and extended by the others undoes them
// all at once.
TEST(EditHistory, AWholeDragIsOneEdit) {
  auto s = hanging();
  const PinList pins = s->pins();
  const int vertex = pins[0].first;
  auto edit = std::make_shared<SceneEdit>("move pin", EditedPart::Pins, 1);
  auto move = [&](int i) -> SimRunner::Edit {
    return [vertex, target = Vec3(pins[0].second + Vec3(0.02 * i, 0, 0))](Simulation& s) {
      return s.setPin(vertex, target);
    };
  };
  EXPECT_FALSE(edit->record(-1, move(1))(*s));
  for (int i = 2; i <= 5; ++i) EXPECT_FALSE(edit->extend(-1, move(i))(*s));
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
TEST(EditHistory, PinsAreNotPutBackOnAnotherCloth) {
  auto s = hanging(9);
  auto edit = std::make_shared<SceneEdit>("clear pins", EditedPart::Pins, 2);
  EXPECT_FALSE(edit->record(0, clear())(*s));
  auto other = hanging(11);
  const PinList pins = other->pins();
  EXPECT_EQ(edit->restore(0, false)(*other).value_or(""),
            "\"clear pins\" belongs to another cloth (the scene changed since)");
  EXPECT_EQ(other->pins(), pins);
  EXPECT_FALSE(edit->restore(1, false)(*other)) << "pane 2 never ran the edit";
  EXPECT_EQ(other->pins(), pins);
  EXPECT_NE(topologyKey(s->cloth().mesh), topologyKey(other->cloth().mesh));
  EXPECT_EQ(topologyKey(s->cloth().mesh), topologyKey(hanging(9)->cloth().mesh));
}

// An obstacle removed by mistake comes back with Ctrl+Z, moved ones go back; redo removes it again.
TEST(EditHistory, ObstaclesRemovedOrMovedComeBack) {
  auto s = hanging();
  Obstacle sphere;
  sphere.type = Obstacle::Type::Sphere;
  sphere.point = Vec3(0, -1, 0);
  sphere.radius = 0.2;
  ASSERT_FALSE(s->setObstacles({sphere}));
  auto edit = std::make_shared<SceneEdit>("remove obstacle 1", EditedPart::Obstacles, 1);
  EXPECT_FALSE(edit->record(-1, [](Simulation& s) { return s.setObstacles({}); })(*s));
  EXPECT_TRUE(s->obstacles().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  ASSERT_EQ(s->obstacles().size(), 1u);
  EXPECT_EQ(s->obstacles()[0].type, Obstacle::Type::Sphere);
  EXPECT_EQ(s->obstacles()[0].point, sphere.point);
  EXPECT_EQ(s->obstacles()[0].radius, sphere.radius);
  EXPECT_FALSE(edit->restore(-1, true)(*s));
  EXPECT_TRUE(s->obstacles().empty());

  ASSERT_FALSE(s->setObstacles({sphere}));
  auto move = std::make_shared<SceneEdit>("move obstacle 1", EditedPart::Obstacles, 1);
  auto by = [](double dy) -> SimRunner::Edit {
    return [dy](Simulation& s) {
      auto obstacles = s.obstacles();
      obstacles[0].point.y() += dy;
      return s.setObstacles(obstacles);
    };
  };
  EXPECT_FALSE(move->record(-1, by(-0.1))(*s));
  EXPECT_FALSE(move->extend(-1, by(-0.1))(*s));
  EXPECT_FALSE(move->restore(-1, false)(*s));
  EXPECT_EQ(s->obstacles()[0].point, sphere.point);
  EXPECT_FALSE(move->restore(-1, true)(*s));
  EXPECT_NEAR(s->obstacles()[0].point.y(), -1.2, 1e-12);
  EXPECT_EQ(s->pins().size(), 2u) << "an obstacle edit's undo leaves the pins alone";
}

// A jelly removed by mistake comes back with its material.
TEST(EditHistory, AJellyRemovedComesBack) {
  auto s = hanging();
  JellySpec ball = test::jellyBall(0.1, Vec3(3, 1, 0), 16, 8);  // beside the cloth, in the air
  ball.material.young = 5e4;
  ASSERT_FALSE(s->setJellies({ball}));
  const Vec3 start = s->jellies()[0].center();
  for (int i = 0; i < 50; ++i) ASSERT_FALSE(s->step());  // it falls for 50 ms
  const Vec3 center = s->jellies()[0].center(), velocity = s->jellies()[0].velocity();
  ASSERT_LT(velocity.y(), -0.3);
  auto edit = std::make_shared<SceneEdit>("remove jelly 1", EditedPart::Jellies, 1);
  EXPECT_FALSE(edit->record(-1, [](Simulation& s) { return s.setJellies({}); })(*s));
  EXPECT_TRUE(s->jellySpecs().empty());
  EXPECT_FALSE(edit->restore(-1, false)(*s));
  ASSERT_EQ(s->jellySpecs().size(), 1u);
  EXPECT_EQ(s->jellySpecs()[0].surface, ball.surface);
  EXPECT_EQ(s->jellySpecs()[0].material.young, 5e4);
  ASSERT_EQ(s->jellies().size(), 1u);
  // Where it was removed, falling as it was: not back at its start.
  EXPECT_EQ(s->jellies()[0].center(), center);
  EXPECT_EQ(s->jellies()[0].velocity(), velocity);
  EXPECT_GT((center - start).norm(), 0.01);
  // The redo removes it again; a new "add" of the same surface starts it afresh.
  EXPECT_FALSE(edit->restore(-1, true)(*s));
  EXPECT_TRUE(s->jellies().empty());
  ASSERT_FALSE(s->setJellies({ball}));
  EXPECT_EQ(s->jellies()[0].center(), start);
}

TEST(EditHistory, ANewEditEndsTheRedoAndTheOldestGoFirst) {
  EditHistory history;
  EXPECT_EQ(history.undo(), nullptr);
  EXPECT_EQ(history.redo(), nullptr);
  auto a = std::make_shared<SceneEdit>("a", EditedPart::Pins, 1),
       b = std::make_shared<SceneEdit>("b", EditedPart::Pins, 1);
  history.push(a);
  history.push(b);
  EXPECT_EQ(history.nextUndo(), b);
  EXPECT_EQ(history.undo(), b);
  EXPECT_EQ(history.nextUndo(), a);
  EXPECT_EQ(history.nextRedo(), b);
  EXPECT_EQ(history.redo(), b);
  EXPECT_EQ(history.undo(), b);
  history.push(std::make_shared<SceneEdit>("c", EditedPart::Pins, 1));
  EXPECT_EQ(history.nextRedo(), nullptr) << "b can no longer be redone";
  EXPECT_EQ(history.nextUndo()->label(), "c");

  for (size_t i = 0; i < EditHistory::kLimit + 5; ++i)
    history.push(std::make_shared<SceneEdit>(std::to_string(i), EditedPart::Pins, 1));
  size_t undone = 0;
  std::string oldest;
  while (auto edit = history.undo()) {
    ++undone;
    oldest = edit->label();
  }
  EXPECT_EQ(undone, EditHistory::kLimit);
  EXPECT_EQ(oldest, "5");
  history.clear();
  EXPECT_EQ(history.nextRedo(), nullptr);
}

// An edit refused wherever it ran changed nothing: undo and redo pass it by, and the panel's
// buttons name the edit before it. One that has not run yet, or that ran somewhere, is kept; a
// continuous edit that joins a refused one and goes through makes it one to undo.
TEST(EditHistory, ARefusedEditIsPassedBy) {
  auto s = hanging();
  EditHistory history;
  auto cleared = std::make_shared<SceneEdit>("clear pins", EditedPart::Pins, 1);
  EXPECT_FALSE(cleared->record(-1, clear())(*s));
  history.push(cleared);
  auto offCloth = [](Simulation& s) { return s.setPin(1000000, Vec3::Zero()); };
  auto refused = std::make_shared<SceneEdit>("pin", EditedPart::Pins, 1);
  EXPECT_FALSE(refused->refused()) << "not run yet";
  history.push(refused);
  EXPECT_EQ(history.nextUndo(), refused);
  EXPECT_TRUE(refused->record(-1, offCloth)(*s));
  EXPECT_TRUE(refused->refused());
  EXPECT_EQ(history.nextUndo(), cleared);
  EXPECT_EQ(history.undo(), cleared);
  EXPECT_EQ(history.nextUndo(), nullptr);
  EXPECT_EQ(history.redo(), cleared);

  // Two panes: refused in one, done in the other.
  auto twoPanes = std::make_shared<SceneEdit>("pin", EditedPart::Pins, 2);
  auto other = hanging();
  EXPECT_TRUE(twoPanes->record(0, offCloth)(*s));
  EXPECT_FALSE(
      twoPanes->record(1, [](Simulation& s) { return s.setPin(0, Vec3::Zero()); })(*other));
  EXPECT_FALSE(twoPanes->refused());
  // A drag whose first move was refused and whose next one went through.
  auto drag = std::make_shared<SceneEdit>("move pin", EditedPart::Pins, 1);
  EXPECT_TRUE(drag->record(-1, offCloth)(*s));
  EXPECT_TRUE(drag->refused());
  EXPECT_FALSE(drag->extend(-1, [](Simulation& s) { return s.setPin(0, Vec3::Zero()); })(*s));
  EXPECT_FALSE(drag->refused());
}

SimRunner::Edit density(double value) {
  return [value](Simulation& s) {
    SimParams p = s.sim();
    p.density = value;
    return s.setSimParams(p);
  };
}

SimRunner::Edit tolerance(double value) {
  return [value](Simulation& s) {
    nlohmann::json p = s.solver().params();
    p["tolerance"] = value;
    return s.setSolverParams(p);
  };
}

// A density dragged from 0.1 to 0.5 (the first change recorded, the later ones extending it) goes
// back to 0.1 in one undo and to 0.5 in the redo; a solver's tolerance comes back the same way.
TEST(EditHistory, ParametersComeBack) {
  auto s = hanging();
  const double rho = s->sim().density;
  auto drag = std::make_shared<SceneEdit>("density", EditedPart::Parameters, 1);
  EXPECT_FALSE(drag->record(-1, density(0.2))(*s));
  EXPECT_FALSE(drag->extend(-1, density(0.5))(*s));
  EXPECT_EQ(s->sim().density, 0.5);
  EXPECT_FALSE(drag->restore(-1, false)(*s));
  EXPECT_EQ(s->sim().density, rho);
  EXPECT_FALSE(drag->restore(-1, true)(*s));
  EXPECT_EQ(s->sim().density, 0.5);

  const double tol = s->solver().params().at("tolerance").get<double>();
  auto typed = std::make_shared<SceneEdit>("tolerance", EditedPart::Parameters, 1);
  EXPECT_FALSE(typed->record(-1, tolerance(1e-3))(*s));
  EXPECT_FALSE(typed->restore(-1, false)(*s));
  EXPECT_EQ(s->solver().params().at("tolerance").get<double>(), tol);
  EXPECT_EQ(s->sim().density, 0.5) << "the tolerance's undo leaves the density as it is";
  EXPECT_FALSE(typed->restore(-1, true)(*s));
  EXPECT_EQ(s->solver().params().at("tolerance").get<double>(), 1e-3);
}

// Another solver on the same cloth (a solver switch keeps the history): the simulation's
// parameters come back, a solver's parameter is refused by name and the new solver's stay.
TEST(EditHistory, ASolversParametersGoBackToThatSolverOnly) {
  auto s = hanging();
  const double rho = s->sim().density;
  auto typed = std::make_shared<SceneEdit>("tolerance", EditedPart::Parameters, 1);
  EXPECT_FALSE(typed->record(-1, tolerance(1e-3))(*s));
  auto dragged = std::make_shared<SceneEdit>("density", EditedPart::Parameters, 1);
  EXPECT_FALSE(dragged->record(-1, density(0.4))(*s));

  Scene scene = s->currentScene();
  scene.solverId = "xpbd";
  scene.solverParams = nlohmann::json::object();
  auto other = Simulation::create(scene);
  ASSERT_TRUE(other) << other.error();
  auto& x = **other;
  const nlohmann::json xpbd = x.solver().params();
  EXPECT_EQ(typed->restore(-1, false)(x).value_or(""),
            "\"tolerance\" was a parameter of impulse-nc, and xpbd runs now");
  EXPECT_EQ(x.solver().params(), xpbd);
  EXPECT_FALSE(dragged->restore(-1, false)(x));
  EXPECT_EQ(x.sim().density, rho);
  EXPECT_EQ(x.solver().params(), xpbd);
}

// A record extended in a pane it had not reached (an edit made in one pane, then in every
// pane, within the second that joins them) puts that pane back too.
TEST(EditHistory, AnExtendedRecordCoversThePanesItReachesLater) {
  auto a = hanging(), b = hanging();
  const double rho = a->sim().density;
  auto edit = std::make_shared<SceneEdit>("density", EditedPart::Parameters, 2);
  EXPECT_FALSE(edit->record(0, density(0.3))(*a));
  EXPECT_FALSE(edit->extend(0, density(0.6))(*a));
  EXPECT_FALSE(edit->extend(1, density(0.6))(*b));
  EXPECT_FALSE(edit->restore(0, false)(*a));
  EXPECT_FALSE(edit->restore(1, false)(*b));
  EXPECT_EQ(a->sim().density, rho);
  EXPECT_EQ(b->sim().density, rho);
}

// Through the simulation thread, as the viewer posts them: the record and the undo run in order
// there, whenever the snapshots catch up.
TEST(EditHistory, UndoThroughTheSimulationThread) {
  auto simulation = hanging();
  const PinList pins = simulation->pins();
  SimRunner runner(std::move(simulation), true);
  auto edit = std::make_shared<SceneEdit>("clear pins", EditedPart::Pins, 1);
  runner.post("clear pins", edit->record(-1, clear()), true);
  runner.post("undo clear pins", edit->restore(-1, false), true);
  EXPECT_EQ(runner.editsPosted(), 2);
  // The first snapshot published after both ran (what the viewer's panel waits for).
  const auto end = std::chrono::steady_clock::now() + 10s;
  std::shared_ptr<const Snapshot> snapshot;
  while (!(snapshot = runner.snapshotAfter(2)) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(2ms);
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(runner.editsApplied(), 2);
  ASSERT_EQ(snapshot->pinVertices.size(), pins.size());
  for (size_t i = 0; i < pins.size(); ++i) {
    EXPECT_EQ(snapshot->pinVertices[i], pins[i].first);
    EXPECT_EQ(snapshot->pinTargets[i], pins[i].second);
  }
  EXPECT_TRUE(runner.takeMessages().empty());
}

// The first snapshot published after the runner's first `edits` edits ran.
std::shared_ptr<const Snapshot> after(const SimRunner& runner, long edits) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  std::shared_ptr<const Snapshot> snapshot;
  while (!(snapshot = runner.snapshotAfter(edits)) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(2ms);
  return snapshot;
}

// A placement restarts the cloth from rest, and so do its undo and redo: the cloth placed as it
// was, its pins carried along. A pin set before the placement and undone after it then goes back
// where it was on the cloth as placed then, not dragged across. A placement that was refused is
// not undone by a restart.
TEST(EditHistory, APlacementIsUndoneAndRedoneWithThePinsThatMoveWithIt) {
  auto simulation = hanging();
  const Transform placedFirst = simulation->scene().transform;
  SimRunner runner(std::move(simulation), true);
  long posted = 0;
  auto run = [&](SimRunner::Edit e) {
    runner.post("edit", std::move(e), true);
    auto snapshot = after(runner, ++posted);
    EXPECT_TRUE(snapshot);
    return snapshot;
  };
  // A pin at vertex 40 where it stands, then the cloth moved up by 0.5 m.
  auto pin = std::make_shared<SceneEdit>("pin", EditedPart::Pins, 1);
  const auto start = run(
      pin->record(-1, [](Simulation& s) { return s.setPin(40, s.surface().row(40).transpose()); }));
  ASSERT_TRUE(start);
  ASSERT_EQ(start->pinVertices.size(), 3u);
  const Vec3 pinnedAt = start->pinTargets.back();
  auto place = std::make_shared<SceneEdit>("placement", EditedPart::Placement, 1);
  auto moveUp = [](const Simulation& s) {
    return placeCloth(s.currentScene(), s.cloth().mesh.positions,
                      {s.scene().transform.rotateDeg, s.scene().transform.scale, Vec3(0, 0.5, 0)});
  };
  const auto moved = run(place->record(-1, runner.restartEdit(place->placing(-1, moveUp))));
  ASSERT_TRUE(moved);
  EXPECT_NEAR(moved->clothTransform.translate.y() - placedFirst.translate.y(), 0.5, 1e-12);
  ASSERT_EQ(moved->pinTargets.size(), 3u);
  EXPECT_LT((moved->pinTargets.back() - pinnedAt - Vec3(0, 0.5, 0)).norm(), 1e-12);

  // Undo: the placement first (the cloth back down, restarted), then the pin.
  const auto back = run(place->restore(-1, false, runner));
  ASSERT_TRUE(back);
  EXPECT_NE(back->triangles.get(), moved->triangles.get());  // restarted
  EXPECT_LT((back->clothTransform.translate - placedFirst.translate).norm(), 1e-12);
  ASSERT_EQ(back->pinTargets.size(), 3u);
  EXPECT_LT((back->pinTargets.back() - pinnedAt).norm(), 1e-12);
  const auto unpinned = run(pin->restore(-1, false, runner));
  ASSERT_TRUE(unpinned);
  EXPECT_EQ(unpinned->pinVertices.size(), 2u);
  for (const Vec3& target : unpinned->pinTargets)
    EXPECT_LT((target - placedFirst.translate).y(), 0.01);  // the corners where they were

  // Redo both: the pin, then the cloth up again with it.
  run(pin->restore(-1, true, runner));
  const auto redone = run(place->restore(-1, true, runner));
  ASSERT_TRUE(redone);
  EXPECT_LT((redone->clothTransform.translate - moved->clothTransform.translate).norm(), 1e-12);
  ASSERT_EQ(redone->pinTargets.size(), 3u);
  EXPECT_LT((redone->pinTargets.back() - moved->pinTargets.back()).norm(), 1e-12);

  // Scaled by 0: refused, and its undo does not restart the cloth.
  auto refused = std::make_shared<SceneEdit>("placement", EditedPart::Placement, 1);
  runner.takeMessages();
  const auto still =
      run(refused->record(-1, runner.restartEdit(refused->placing(-1, [](const Simulation& s) {
        return placeCloth(s.currentScene(), s.cloth().mesh.positions,
                          {Vec3::Zero(), 0, Vec3::Zero()});
      }))));
  ASSERT_TRUE(still);
  EXPECT_EQ(still->triangles.get(), redone->triangles.get());
  const auto messages = runner.takeMessages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].text.find("scale must be"), std::string::npos) << messages[0].text;
  const auto notRestarted = run(refused->restore(-1, false, runner));
  ASSERT_TRUE(notRestarted);
  EXPECT_EQ(notRestarted->triangles.get(), redone->triangles.get());
  EXPECT_TRUE(runner.takeMessages().empty());
}

}  // namespace
}  // namespace clothlab
