// The viewer's simulation thread: pacing, pause/step, edits between steps, loads that fail
// without losing the scene, divergence, and a stress test of concurrent edits and reads (run it
// under ThreadSanitizer too: see README "Tests").
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "app/viewer/sim_runner.h"
#include "sim/scene_library.h"
#include "tests/test_util.h"

namespace clothlab {
namespace {

using namespace std::chrono_literals;

Scene smallScene() {
  auto scene = resolveScene("hanging");
  EXPECT_TRUE(scene) << scene.error();
  scene->cloth.kind = ClothSource::Kind::Grid;
  scene->cloth.columns = scene->cloth.rows = 9;
  return *scene;
}

// Every step takes seconds: 100 000 sweeps of xpbd over 4 600 edges, the tolerance never met.
Scene slowStepScene() {
  Scene scene = smallScene();
  scene.cloth.columns = scene.cloth.rows = 40;
  scene.solverId = "xpbd";
  scene.solverParams = {{"iterations", 100000}, {"tolerance", 0.0}};
  return scene;
}

std::unique_ptr<SimRunner> startRunner(const Scene& scene, bool paused) {
  auto sim = Simulation::create(scene);
  EXPECT_TRUE(sim) << sim.error();
  return std::make_unique<SimRunner>(std::move(*sim), paused);
}

// Waits until `predicate` holds (or `limit` passes).
template <class F>
bool waitFor(F predicate, std::chrono::seconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// Waits until every given-up load's thread has ended. Those threads run at the lowest priority
// (nice 19): beside two busy threads on two cores such a thread gets about 1.5% of a core, so a
// stage that takes 0.3 s alone took more than 30 s there (measured with two busy loops beside
// the test). The limit stays below ctest's 600 s.
bool waitForGivenUpLoads(const SimRunner& runner) {
  return waitFor([&] { return runner.loadsGivenUpStillRunning() == 0; }, 300s);
}

// The runner's messages, collected until there is at least one (and, with `loadDone`, until no
// load is running), or 10 s pass.
std::vector<RunnerMessage> collectMessages(SimRunner& runner, bool loadDone = false) {
  std::vector<RunnerMessage> messages;
  waitFor([&] {
    auto m = runner.takeMessages();
    messages.insert(messages.end(), m.begin(), m.end());
    return !messages.empty() && !(loadDone && runner.loadProgress().active);
  });
  return messages;
}

bool finite(const Snapshot& s) {
  for (float x : s.positions)
    if (!std::isfinite(x)) return false;
  return true;
}

TEST(SimRunner, PausedDoesNotStepAndSingleStepAdvancesOne) {
  auto runner = startRunner(smallScene(), true);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(runner->snapshot()->step, 0);
  runner->stepOnce();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 1; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(runner->snapshot()->step, 1);
  EXPECT_TRUE(runner->paused());
}

TEST(SimRunner, SimulatedTimeFollowsWallTimeAndNeverRunsAhead) {
  auto runner = startRunner(smallScene(), false);
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(800ms);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double simulated = runner->snapshot()->time;
  EXPECT_GT(simulated, 0.0);
  EXPECT_LE(simulated, wall * 1.02 + 0.02) << "simulation ran ahead of the wall clock";
  EXPECT_GT(runner->realTimeFactor(), 0.0);
  // Measured over windows of at least 0.5 s, in which the runner may also pay off what it owed
  // when the window began (up to its debt cap, 0.1 s): at most 1.2 times real time.
  EXPECT_LE(runner->realTimeFactor(), 1.25);
  // Half speed: half the simulated time per wall second (at most), measured over the time that
  // really passed (a loaded machine oversleeps), plus what the runner may owe wall time at that
  // speed (its debt cap, 0.1 s of wall time: 0.05 s simulated).
  runner->setSpeed(0.5);
  const auto halfStart = std::chrono::steady_clock::now();
  const double t0 = runner->snapshot()->time;
  std::this_thread::sleep_for(600ms);
  const double halfWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - halfStart).count();
  EXPECT_LE(runner->snapshot()->time - t0, halfWall * 0.5 * 1.05 + 0.05);
}

// Compare mode's pacing: a 9 x 9 sheet beside a 50 x 50 one (about 7400 particles, far slower
// than real time at h = 1 ms on any machine here).
TEST(SimRunner, PacedPanesShowTheSameMomentUnlessTheSlowOneStops) {
  Scene large = smallScene();
  large.cloth.columns = large.cloth.rows = 50;
  // Both run for a second of wall time, and on until the large sheet has taken 5 steps (a slow
  // machine, or ThreadSanitizer, takes about a second a step).
  auto runPair = [&](std::shared_ptr<PaceGroup> pace) {
    auto fast = Simulation::create(smallScene()), slow = Simulation::create(large);
    EXPECT_TRUE(fast && slow);
    auto a = std::make_unique<SimRunner>(std::move(*fast), false, pace);
    auto b = std::make_unique<SimRunner>(std::move(*slow), false, pace);
    std::this_thread::sleep_for(1s);
    EXPECT_TRUE(waitFor([&] { return b->snapshot()->step >= 5; }));
    a->setPaused(true);
    b->setPaused(true);
    EXPECT_TRUE(waitFor([&] { return a->realTimeFactor() == 0 && b->realTimeFactor() == 0; }));
    std::this_thread::sleep_for(100ms);  // the last steps published
    return std::pair{std::move(a), std::move(b)};
  };
  const double dt = smallScene().sim.dt;

  // Unpaced, the small sheet keeps up with wall time and the large one falls behind.
  auto [freeA, freeB] = runPair(nullptr);
  const double freeFast = freeA->snapshot()->time, freeSlow = freeB->snapshot()->time;
  std::printf("unpaced: %.3f s and %.3f s simulated\n", freeFast, freeSlow);
  ASSERT_GT(freeFast - freeSlow, 0.2) << "the large sheet should be slower than real time";

  // Paced, neither runs more than a step ahead of the other.
  auto pace = std::make_shared<PaceGroup>();
  auto [a, b] = runPair(pace);
  const double fast = a->snapshot()->time, slow = b->snapshot()->time;
  std::printf("paced: %.4f s and %.4f s simulated\n", fast, slow);
  EXPECT_LE(std::abs(fast - slow), 2 * dt + 1e-9);

  // A paused member holds no one back; switched off, the group holds no one back either.
  b->setPaused(false);
  a->setPaused(false);
  b->setPaused(true);
  EXPECT_TRUE(waitFor([&] { return a->snapshot()->time - b->snapshot()->time > 0.1; })) << "held by a paused pane";
  b->setPaused(false);
  const double ahead = a->snapshot()->time;  // published up to 1/60 s of wall time ago
  std::this_thread::sleep_for(300ms);
  EXPECT_LE(a->snapshot()->time, ahead + 0.02) << "the pane ahead waits for the resumed one";
  pace->setEnabled(false);
  const double gap = a->snapshot()->time - b->snapshot()->time;
  EXPECT_TRUE(waitFor([&] { return a->snapshot()->time - b->snapshot()->time > gap + 0.1; }))
      << "switched off, the small sheet runs ahead";
}

TEST(SimRunner, EditsReachTheSimulationInOrder) {
  auto runner = startRunner(smallScene(), true);
  const long before = runner->editsApplied();
  SimParams p = runner->snapshot()->sim;
  p.density = 0.37;
  runner->post("density", [p](Simulation& s) { return s.setSimParams(p); });
  runner->post("pin", [](Simulation& s) { return s.setPin(40, Vec3(0.1, 0.2, 0.3)); });
  runner->post("unpin", [](Simulation& s) {
    s.removePin(40);
    return std::optional<std::string>();
  });
  runner->post("pin again", [](Simulation& s) { return s.setPin(41, Vec3(0.1, 0.2, 0.3)); });
  ASSERT_TRUE(waitFor([&] { return runner->editsApplied() == before + 4; }));
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->sim.density == 0.37; }));
  const auto s = runner->snapshot();
  EXPECT_EQ(std::count(s->pinVertices.begin(), s->pinVertices.end(), 40), 0);
  EXPECT_EQ(std::count(s->pinVertices.begin(), s->pinVertices.end(), 41), 1);
  EXPECT_TRUE(runner->takeMessages().empty());
}

// An interrupting edit (parameters, reset, a solver switch) gives a step in progress up instead of
// waiting for it: here every step takes seconds (100 000 sweeps of xpbd over 4 600 edges), and
// the edit is in the simulation before its first step has ended. Pausing gives it up too. Drags
// and pins (post without interrupt) still wait for the step.
TEST(SimRunner, AnInterruptingEditDoesNotWaitForASlowStep) {
  const Scene scene = slowStepScene();
  auto runner = startRunner(scene, false);
  std::this_thread::sleep_for(100ms);  // the first step is under way
  SimParams p = runner->snapshot()->sim;
  p.density = 0.37;
  runner->post("density", [p](Simulation& s) { return s.setSimParams(p); }, true);
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->sim.density == 0.37; }));
  EXPECT_EQ(runner->snapshot()->step, 0) << "the edit waited for the step";
  runner->setPaused(true);
  EXPECT_EQ(runner->snapshot()->step, 0);
  EXPECT_TRUE(runner->takeMessages().empty()) << "a step given up is not an error";
}

// A step in progress says how long it has run (the panel shows a slow one, so that a large
// cloth held at its first step does not look stuck); between steps, and once pausing has given
// the step up, it reads 0.
TEST(SimRunner, AStepInProgressSaysHowLongItHasRun) {
  const Scene scene = slowStepScene();
  auto runner = startRunner(scene, false);
  std::this_thread::sleep_for(300ms);
  const double running = runner->stepRunningSeconds();
  EXPECT_GT(running, 0.25);
  EXPECT_LT(running, 30.0);
  EXPECT_EQ(runner->snapshot()->step, 0) << "the step was meant to take seconds";
  runner->setPaused(true);
  EXPECT_TRUE(waitFor([&] { return runner->stepRunningSeconds() == 0; }));
  auto paused = startRunner(smallScene(), true);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(paused->stepRunningSeconds(), 0);
}

// A lasting edit (a save) posted just before the runner stops is still carried out, also when
// the stop is seen first, at the top of the loop where the other edits are dropped; stop() waits
// for the simulation thread only. The step in progress takes seconds, so the save's interrupt and
// the stop reach the thread together.
TEST(SimRunner, ALastingEditPostedJustBeforeStoppingIsCarriedOut) {
  const Scene scene = slowStepScene();
  std::atomic<int> lasting{0}, plain{0};
  constexpr int kTrials = 8;
  for (int trial = 0; trial < kTrials; ++trial) {
    auto runner = startRunner(scene, false);
    std::this_thread::sleep_for(30ms);  // a step is under way
    runner->postLasting("save", [&](Simulation&) {
      ++lasting;
      return std::optional<std::string>();
    });
    runner->post("edit", [&](Simulation&) {
      ++plain;
      return std::optional<std::string>();
    });
    runner->stop();
    EXPECT_EQ(lasting, trial + 1) << "trial " << trial;
  }
  std::printf("plain edits carried out before the stop: %d of %d\n", plain.load(), kTrials);
}

// requestStop does not wait; waitStopped gives up after its timeout while the thread is busy
// with something that cannot be given up (here an edit that takes 1.5 s), except while a lasting
// edit is still to run: then it waits for it, however long.
TEST(SimRunner, WaitStoppedTimesOutUnlessALastingEditIsToRun) {
  for (const bool withSave : {false, true}) {
    SCOPED_TRACE(withSave ? "with a save queued" : "without");
    auto runner = startRunner(smallScene(), true);
    std::atomic<bool> busy{false}, saved{false};
    runner->post("busy", [&](Simulation&) {
      busy = true;
      std::this_thread::sleep_for(1500ms);
      return std::optional<std::string>();
    });
    ASSERT_TRUE(waitFor([&] { return busy.load(); }));
    if (withSave)
      runner->postLasting("save", [&](Simulation&) {
        saved = true;
        return std::optional<std::string>();
      });
    runner->requestStop();
    const auto start = std::chrono::steady_clock::now();
    const bool stopped = runner->waitStopped(100ms);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(stopped, withSave);
    EXPECT_EQ(saved.load(), withSave);
    if (withSave)
      EXPECT_GT(waited, 1.0);
    else
      EXPECT_LT(waited, 1.0);
    EXPECT_TRUE(runner->waitStopped(5000ms));
  }
}

TEST(SimRunner, RefusedEditIsReportedAndChangesNothing) {
  auto runner = startRunner(smallScene(), true);
  SimParams p = runner->snapshot()->sim;
  p.dt = -1;
  runner->post("parameters", [p](Simulation& s) { return s.setSimParams(p); });
  const std::vector<RunnerMessage> messages = collectMessages(*runner);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0].kind, RunnerMessage::Kind::Error);
  EXPECT_NE(messages[0].text.find("dt"), std::string::npos) << messages[0].text;
  EXPECT_GT(runner->snapshot()->sim.dt, 0);
}

TEST(SimRunner, FailedLoadKeepsTheCurrentSceneRunning) {
  auto runner = startRunner(smallScene(), false);
  const std::string name = runner->snapshot()->sceneName;
  runner->load("/nonexistent/folder/cloth.obj");
  const std::vector<RunnerMessage> messages = collectMessages(*runner, true);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages.back().kind, RunnerMessage::Kind::Error);
  EXPECT_NE(messages.back().text.find("/nonexistent/folder/cloth.obj"), std::string::npos);
  const long step = runner->snapshot()->step;
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step > step + 10; }));
  EXPECT_EQ(runner->snapshot()->sceneName, name);
}

// A load started while another is in progress gives that one up and wins (it was refused until
// the first ended); the give-up button's giveUpLoad drops a load and keeps the scene that runs.
// The given-up loads' results never swap in, and the destructor waits for their threads.
TEST(SimRunner, ANewerLoadOrGivingUpDropsTheLoadInProgress) {
  auto runner = startRunner(smallScene(), false);
  const std::string big = test::writeFile(
      "runner_big_disk.json",
      R"({"cloth": {"generator": {"type": "irregular-disk", "radius": 0.5, "triangles": 8000, "seed": 1}}})");
  runner->load(big);
  runner->load("ckv-corners");
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->sceneName == "ckv-corners"; }));
  runner->load(big);
  EXPECT_TRUE(runner->loadProgress().active);
  runner->giveUpLoad();
  EXPECT_FALSE(runner->loadProgress().active);
  EXPECT_GE(runner->loadsGivenUpStillRunning(), 1);
  ASSERT_TRUE(waitForGivenUpLoads(*runner));
  std::this_thread::sleep_for(100ms);  // a given-up result would have been swapped in by now
  EXPECT_EQ(runner->snapshot()->sceneName, "ckv-corners");
  EXPECT_EQ(runner->loadsSwappedIn(), 1);
  std::vector<std::string> texts;
  for (const RunnerMessage& m : runner->takeMessages()) {
    EXPECT_NE(m.kind, RunnerMessage::Kind::Error) << m.text;
    texts.push_back(m.text);
  }
  const auto said = [&](const std::string& text) {
    return std::count(texts.begin(), texts.end(), text) == 1;
  };
  EXPECT_TRUE(said("the load of " + big + " was given up for ckv-corners"));
  EXPECT_TRUE(said("gave up the load of " + big));
}

// The nice value of each of this process's threads by thread id (Linux: /proc/self/task/T/stat,
// field 19).
std::map<int, int> threadNiceValues() {
  std::map<int, int> values;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t nameEnd = text.rfind(')');
    if (nameEnd == std::string::npos) continue;  // the thread ended since the folder was listed
    std::istringstream fields(text.substr(nameEnd + 2));  // after the thread's name
    std::string field;
    for (int k = 3; k <= 19 && fields >> field; ++k)
      if (k == 19) values[std::stoi(task.path().filename().string())] = std::stoi(field);
  }
  return values;
}

// The threads of `now` at the lowest priority (nice 19) that were not there already in `before`.
// Others may run at 19 too: Mesa's shader-cache thread, started by an earlier test's GL context.
int threadsLoweredSince(const std::map<int, int>& before, const std::map<int, int>& now) {
  int lowered = 0;
  for (const auto& [thread, nice] : now) {
    const auto was = before.find(thread);
    if (nice == 19 && (was == before.end() || was->second != 19)) ++lowered;
  }
  return lowered;
}

// A given-up load's thread runs on to the end of its stage (up to a minute of a core for a
// 600 000-triangle disk) beside the scene, so it drops to the lowest priority: measured under
// Xvfb, ckv-corners-fine's thread then had 75% of a core instead of 68%.
TEST(SimRunner, AGivenUpLoadRunsOnAtTheLowestPriority) {
  auto runner = startRunner(smallScene(), false);
  const std::string big = test::writeFile(
      "runner_lowest_disk.json",
      R"({"cloth": {"generator": {"type": "irregular-disk", "radius": 0.5, "triangles": 60000, "seed": 1}}})");
  const std::map<int, int> before = threadNiceValues();
  runner->load(big);
  ASSERT_TRUE(waitFor([&] { return runner->loadProgress().stage == "building the cloth"; }));
  runner->giveUpLoad();
  const std::map<int, int> nice = threadNiceValues();
  ASSERT_GE(runner->loadsGivenUpStillRunning(), 1) << "the load ended before it could be looked at";
  EXPECT_EQ(threadsLoweredSince(before, nice), 1);
  EXPECT_TRUE(waitForGivenUpLoads(*runner));
}

// A job that throws leaves the ticket as one that returned: it no longer holds the thread, so
// giving up afterwards lowers no thread's priority (the id may be another thread's by then).
TEST(SimRunner, ALoadTicketForgetsItsThreadWhenTheJobThrows) {
  LoadTicket ticket;
  std::thread loader([&] {  // run() lowers its thread's priority: not this one's
    EXPECT_EQ(ticket.run([&] { return ticket.running(); }), true);
    EXPECT_FALSE(ticket.running());
    EXPECT_THROW(ticket.run([&]() -> int { throw std::runtime_error("bad mesh"); }),
                 std::runtime_error);
  });
  loader.join();
  EXPECT_FALSE(ticket.running());
  const std::map<int, int> before = threadNiceValues();
  ticket.giveUp();
  EXPECT_EQ(threadNiceValues(), before);
  EXPECT_TRUE(ticket.givenUp());
}

// A load names its three stages, and one given up ends before its next stage: given up while
// the cloth is built, it never sets up the solver (CHOLMOD's analysis: most of a large load).
TEST(SimRunner, AGivenUpLoadEndsBeforeItsNextStage) {
  std::vector<std::string> stages;
  const auto full = loadSimulation("hanging", [&](const std::string& s) {
    stages.push_back(s);
    return true;
  });
  ASSERT_TRUE(full) << full.error();
  EXPECT_EQ(stages, (std::vector<std::string>{"reading", "building the cloth",
                                              "setting up the impulse-nc solver"}));
  stages.clear();
  const auto cut = loadSimulation("hanging", [&](const std::string& s) {
    stages.push_back(s);
    return stages.size() < 3;  // given up while the cloth was built
  });
  EXPECT_FALSE(cut);
  EXPECT_EQ(stages.size(), 3u);
}

// What the loader warned about (here a zero-area triangle dropped) reaches the panel's messages.
TEST(SimRunner, LoadedClothsWarningsAreReported) {
  auto runner = startRunner(smallScene(), true);
  const std::string path = test::writeFile(
      "runner_sliver.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\nf 1 2 3\nf 1 3 4\nf 1 2 5\n");
  runner->load(path);
  std::vector<RunnerMessage> messages;
  ASSERT_TRUE(waitFor([&] {
    for (auto& m : runner->takeMessages()) messages.push_back(m);
    return std::any_of(messages.begin(), messages.end(),
                       [](const RunnerMessage& m) { return m.kind == RunnerMessage::Kind::Warning; });
  }));
  const bool named = std::any_of(messages.begin(), messages.end(), [&](const RunnerMessage& m) {
    return m.kind == RunnerMessage::Kind::Warning && m.text.find(path + ": dropped 1 zero-area triangle(s)") == 0;
  });
  EXPECT_TRUE(named);
}

TEST(SimRunner, ComparePanesMessagesAreMergedByText) {
  // Three panes share one cloth: its loader warning arrives from each, and is shown once.
  using Kind = RunnerMessage::Kind;
  const RunnerMessage warning{Kind::Warning, "a.obj: dropped 1 zero-area triangle(s) (triangle 5)"};
  const std::vector<std::vector<RunnerMessage>> sent = {
      {warning, {Kind::Info, "switched"}},
      {warning, {Kind::Error, "diverged at step 9"}, {Kind::Error, "diverged at step 9"}},
      {warning, {Kind::Info, "switched"}}};
  const auto merged = mergePaneMessages(sent, {"conforming (pane 1)", "impulse-nc (pane 2)", "xpbd (pane 3)"});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].kind, Kind::Warning);
  EXPECT_EQ(merged[0].text, "every pane: " + warning.text);
  EXPECT_EQ(merged[1].text, "conforming (pane 1), xpbd (pane 3): switched");
  EXPECT_EQ(merged[2].kind, Kind::Error);
  EXPECT_EQ(merged[2].text, "impulse-nc (pane 2): diverged at step 9");
  // The same text with another kind is another message; one pane alone is named.
  const auto single = mergePaneMessages({{{Kind::Info, "x"}, {Kind::Warning, "x"}}}, {"xpbd (pane 1)"});
  ASSERT_EQ(single.size(), 2u);
  EXPECT_EQ(single[0].text, "xpbd (pane 1): x");
  EXPECT_EQ(single[1].kind, Kind::Warning);
}

// Loads are counted (the viewer drops a comparison built for a scene replaced meanwhile); a
// solver switch and a reset keep the scene and are not.
TEST(SimRunner, LoadSwapsInTheNewSceneAndSolverSwitchKeepsPins) {
  auto runner = startRunner(smallScene(), false);
  EXPECT_EQ(runner->loadsSwappedIn(), 0);
  runner->load("hanging");
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->vertexCount() > 81; }));
  EXPECT_EQ(runner->loadsSwappedIn(), 1);
  const int vertices = runner->snapshot()->vertexCount();
  const auto pins = runner->snapshot()->pinVertices;
  runner->switchSolver("conforming");
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->solverId == "conforming"; }));
  EXPECT_EQ(runner->snapshot()->vertexCount(), vertices);
  EXPECT_EQ(runner->snapshot()->pinVertices, pins);
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step > 5; }));
  const long step = runner->snapshot()->step;
  runner->reset();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step < step; }));
  EXPECT_EQ(runner->loadsSwappedIn(), 1);
}

// A moment kept through the runner is gone back to on its thread: the snapshot shows the
// moment's step and time again. A reset keeps it (the same cloth from rest, and back to the
// moment); a solver switch refuses it, naming both solvers; a scene loaded drops it. Going back
// with none kept says so.
TEST(SimRunner, AMomentKeptIsGoneBackToAndALoadDropsIt) {
  auto runner = startRunner(smallScene(), true);
  EXPECT_TRUE(std::isnan(runner->momentTime()));
  runner->backToMoment();
  auto messages = collectMessages(*runner);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].text, "back to the moment: no moment kept (K keeps one)");
  for (int i = 0; i < 3; ++i) runner->stepOnce();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 3; }));
  runner->keepMoment();
  ASSERT_TRUE(waitFor([&] { return !std::isnan(runner->momentTime()); }));
  const double t = runner->momentTime();
  EXPECT_EQ(t, runner->snapshot()->time);
  for (int i = 0; i < 5; ++i) runner->stepOnce();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 8; }));
  runner->backToMoment();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 3; }));
  EXPECT_EQ(runner->snapshot()->time, t);
  messages = collectMessages(*runner);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].kind, RunnerMessage::Kind::Info);
  EXPECT_EQ(messages[0].text, "back to the moment at t = 0.003 s");
  runner->reset();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 0; }));
  runner->backToMoment();
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->step == 3; })) << "back after a reset";
  messages = collectMessages(*runner);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].kind, RunnerMessage::Kind::Info) << messages[0].text;
  runner->switchSolver("xpbd");
  ASSERT_TRUE(waitFor([&] { return runner->snapshot()->solverId == "xpbd"; }));
  runner->backToMoment();
  messages = collectMessages(*runner);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].text,
            "back to the moment: the moment was kept under impulse-nc, and xpbd runs now");
  runner->load("hanging");
  ASSERT_TRUE(waitFor([&] { return runner->loadsSwappedIn() == 1; }));
  EXPECT_TRUE(std::isnan(runner->momentTime()));
}

TEST(SimRunner, DivergenceIsCaughtPausedAndNeverPublished) {
  Scene scene = smallScene();
  scene.solverParams = {{"max_speed", 1.0}};  // falling faster than 1 m/s counts as divergence
  auto runner = startRunner(scene, false);
  const std::vector<RunnerMessage> messages = collectMessages(*runner);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0].kind, RunnerMessage::Kind::Error);
  EXPECT_TRUE(runner->paused());
  const auto s = runner->snapshot();
  EXPECT_TRUE(finite(*s));
  EXPECT_TRUE(waitFor([&] { return runner->snapshot()->diverged; }));
}

TEST(SimRunner, ConcurrentEditsDragsAndReadsStress) {
  auto runner = startRunner(smallScene(), false);
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  // Readers: the UI thread's view of snapshots must always be consistent and finite.
  std::thread reader([&] {
    while (!done) {
      auto s = runner->snapshot();
      ASSERT_TRUE(s);
      ASSERT_TRUE(s->triangles);
      ASSERT_EQ(s->positions.size(), s->normals.size());
      ASSERT_EQ(s->strain.size() * 3, s->positions.size());
      for (std::uint32_t i : *s->triangles) ASSERT_LT(static_cast<int>(i), s->vertexCount());
      ASSERT_TRUE(finite(*s));
      runner->takeMessages();
      runner->loadProgress();
      ++reads;
    }
  });
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  long posted = 0;
  const long base = runner->editsApplied();
  for (int i = 0; i < 600; ++i) {
    const int kind = i % 10;
    if (kind == 0 || kind == 1 || kind == 2) {
      Grab g;
      g.triangle = static_cast<int>(rng() % 128);
      g.target = Vec3(u(rng), 0.5 + u(rng), u(rng));
      runner->post("drag", [g](Simulation& s) { return s.setGrab(g); });
    } else if (kind == 3) {
      runner->post("release", [](Simulation& s) { return s.setGrab(std::nullopt); });
    } else if (kind == 4) {
      const int v = static_cast<int>(rng() % 81);
      runner->post("pin", [v](Simulation& s) { return s.setPin(v, s.surface().row(v).transpose()); });
    } else if (kind == 5) {
      runner->post("unpin", [v = static_cast<int>(rng() % 81)](Simulation& s) {
        s.removePin(v);
        return std::optional<std::string>();
      });
    } else if (kind == 6) {
      SimParams p;
      p.density = 0.05 + 0.1 * (u(rng) + 0.3);
      p.bending = 1e-5 * (u(rng) + 0.31);
      runner->post("parameters", [p](Simulation& s) { return s.setSimParams(p); });
    } else if (kind == 7) {
      runner->setPaused(i % 20 == 7);
      runner->setSpeed(0.5 + (i % 3));
      runner->setOverlay(i % 4 == 3);
    } else if (kind == 8) {
      runner->post("tolerance", [t = 1e-6 * (1 + i % 5)](Simulation& s) {
        return s.setSolverParams({{"tolerance", t}});
      });
    } else if (i % 100 == 9) {
      runner->reset();
    } else {
      runner->stepOnce();
      runner->setPaused(false);
    }
    posted += kind <= 6 || kind == 7 || kind == 8 || i % 100 == 9;  // setOverlay posts too
    if (i == 300) runner->load("hanging");  // a loader thread builds while edits keep coming
    if (i % 50 == 0) std::this_thread::sleep_for(5ms);
  }
  runner->setPaused(false);
  EXPECT_TRUE(waitFor([&] { return !runner->loadProgress().active; }));
  EXPECT_TRUE(waitFor([&] { return runner->editsApplied() >= base + posted; }))
      << runner->editsApplied() - base << " of " << posted;
  const long step = runner->snapshot()->step;
  EXPECT_TRUE(waitFor([&] { return runner->snapshot()->step > step; })) << "stopped stepping";
  done = true;
  reader.join();
  EXPECT_GT(reads, 100);
  EXPECT_TRUE(finite(*runner->snapshot()));
}

}  // namespace
}  // namespace clothlab
