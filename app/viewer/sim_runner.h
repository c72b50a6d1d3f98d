#pragma once
// SimRunner: the viewer's simulation thread. It owns the Simulation; the UI thread never touches
// it and never waits for a step. The UI posts edits (applied in order between steps), reads the
// newest published Snapshot, and collects messages (errors, divergence reports).
//
// Pacing: simulated time follows wall time times `speed`. A step slower than real time makes the
// simulation fall behind (the debt is capped, so it never tries to catch up in a burst); the UI
// is unaffected. Snapshots are published after a step at most `publishHz` times per second of
// wall time (kPublishHz), while paused after every edit, single step or load, and at once after
// an interrupting edit (post) or a load, before the next step.
//
// Loading a scene builds the new Simulation on a loader thread while the current one keeps
// running; it is swapped in at a step boundary, or, on failure, the message is reported and
// nothing changes.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/simulation.h"
#include "sim/snapshot.h"

namespace clothlab {

struct RunnerMessage {
  enum class Kind { Info, Warning, Error };
  Kind kind = Kind::Info;
  std::string text;
};

// The messages of several runners (one list per compare pane, named by `paneNames`), each kind
// and text once, in the order first sent, prefixed with the panes that sent it: "every pane: "
// when all of several did (they share one cloth, so they report its loader warnings alike), else
// "NAME, NAME: ".
std::vector<RunnerMessage> mergePaneMessages(const std::vector<std::vector<RunnerMessage>>& perPane,
                                             const std::vector<std::string>& paneNames);

struct LoadProgress {
  bool active = false;
  std::string what;   // what is being loaded
  std::string stage;  // "reading", "building the solver", ...
  double seconds = 0;  // since the load started
};

// Told each stage of a load by name; returns false when the load has been given up, which then
// ends before its next stage (a stage itself cannot be stopped part-way).
using LoadStage = std::function<bool(const std::string&)>;

// A load on a thread of its own, and whether it has been given up. Its thread runs a little
// below the window's priority (as the simulation's does), and once the load is given up at the
// lowest: it still runs on to the end of its stage (up to a minute of a core for a 600 000-
// triangle disk's solver set-up) beside the scene, which then keeps more of its core (Xvfb on
// two cores: hanging's thread 52% of a core instead of 35%, ckv-corners-fine's 75% instead of
// 68%), while the given-up stage takes longer (30 s instead of 11 s beside hanging). Linux nice
// values, which a thread has of its own. Thread-safe.
class LoadTicket {
 public:
  // Runs `job` on the calling thread, the load's, at the load's priority; returns its result.
  // The ticket forgets the thread however the job ends, a throw included: a later giveUp() must
  // not lower the priority of whichever thread reuses its id.
  template <class Job>
  auto run(Job&& job) {
    struct Running {
      LoadTicket& ticket;
      explicit Running(LoadTicket& t) : ticket(t) { ticket.started(); }
      ~Running() { ticket.ended(); }
      Running(const Running&) = delete;
      Running& operator=(const Running&) = delete;
    } running(*this);
    return job();
  }
  // Whether a job is running under the ticket now.
  bool running() const;
  void giveUp();
  bool givenUp() const;

 private:
  void started();
  void ended();
  mutable std::mutex mutex_;
  pid_t thread_ = 0;  // while between started() and ended()
  bool givenUp_ = false;
};

// Reads `argument` (as above) and builds its Simulation in three stages: reading, the cloth,
// the solver's set-up. Given up between two of them, it ends with an error nobody reads.
Result<std::unique_ptr<Simulation>> loadSimulation(const std::string& argument,
                                                   const LoadStage& stage);

// "loaded NAME (V vertices, solver ID)": what the panel says when a loaded scene takes over.
std::string loadedMessage(const Simulation& simulation);

// Keeps several runners (compare mode's panes) in step: a member may take a step only while its
// simulated time is below the slowest running member's plus the largest member step, so that the
// fast panes wait for the slow ones and every pane shows the same moment (and a drag meets each
// at the same simulated time, within a step). Paused or diverged members hold no one back.
// Thread-safe; members report from their simulation threads.
class PaceGroup {
 public:
  // A new member; `wake` is called under the group's lock when the limit may have moved, so it must
  // not call back into the group.
  int join(std::function<void()> wake);
  void leave(int member);
  // The member's state after a step or a change; wakes the others when that moves their limit.
  void report(int member, double time, double dt, bool running);
  bool mayStep(int member) const;
  // Counts the wakes: a member that read it before mayStep() and finds it changed need not wait.
  long generation() const { return generation_; }
  void setEnabled(bool enabled);

 private:
  struct Member {
    bool present = true, running = false;
    double time = 0, dt = 0;
    std::function<void()> wake;
  };
  void wakeAll();  // with mutex_ held
  // The slowest running member's time and the largest running member's step (mutex_ held).
  std::pair<double, double> slowestAndWidest() const;
  mutable std::mutex mutex_;
  std::vector<Member> members_;
  bool enabled_ = true;
  std::atomic<long> generation_{0};
};

class SimRunner {
 public:
  static constexpr double kPublishHz = 60.0;
  using Edit = std::function<std::optional<std::string>(Simulation&)>;

  // Starts the thread with `simulation` (paused if `paused`), paced with the other members of
  // `pace` when given.
  explicit SimRunner(std::unique_ptr<Simulation> simulation, bool paused = false,
                     std::shared_ptr<PaceGroup> pace = nullptr);
  ~SimRunner();
  // Stops the simulation thread (after the lasting edits posted so far) without waiting for a
  // load in progress, which the destructor does wait for.
  void stop();
  // Asks the simulation thread to stop (a step in progress is given up where the solver looks
  // for that) without waiting; waitStopped then waits up to `timeout` for it to end, or for as
  // long as lasting edits are still to run. True when it has ended. Quitting uses the two, and
  // ends the process rather than wait for a step that cannot be given up (Viewer::run).
  void requestStop();
  bool waitStopped(std::chrono::milliseconds timeout);
  SimRunner(const SimRunner&) = delete;
  SimRunner& operator=(const SimRunner&) = delete;

  // Queues an edit; `label` names it in messages. An edit that returns a message is reported as
  // an error and changes nothing (the Simulation's setters validate before changing). With
  // `interrupt` a step in progress is given up (Simulation::setStopFlag: undone, taken again
  // after the edit) instead of waited for: parameter edits, reset, a solver switch, saving and
  // the viewer's clicks (Viewer::postClick) take effect at once even where one step takes seconds
  // (ckv-cylinder-fine under mls-isometry: 1.5 to 6 s). The moves of a drag wait: they come with
  // every mouse move.
  void post(std::string label, Edit edit, bool interrupt = false);
  // An interrupting edit that is carried out even when the runner stops before it is taken (a
  // save clicked just before quitting); its error then goes to stderr, there being no panel.
  void postLasting(std::string label, Edit edit);
  // Rebuilds the simulation from `argument` (built-in name, scene .json or .obj) on the loader
  // thread (see above). A bare .obj cloth lands on a ground below it (Scene::groundBelowCloth).
  void load(std::string argument);
  // Gives the load in progress up: its progress goes, and its result is dropped when its thread
  // ends (the reading and the solver's set-up cannot be stopped part-way). A load started while
  // another is in progress gives that one up the same way, saying so.
  void giveUpLoad();
  // Loads given up whose threads have not ended yet (the destructor waits for them).
  int loadsGivenUpStillRunning() const;
  // Restarts the current scene from rest, keeping its current parameters and pins.
  void reset();
  // An edit that restarts from rest with the scene `change` makes of the current one
  // (Simulation::currentScene), or reports why it cannot, changing nothing: a reset, a solver
  // switch, the cloth placed anew. Post it with `interrupt` (post).
  Edit restartEdit(std::function<Result<Scene>(const Simulation&)> change);
  // Replaces the solver, re-initializing from the current scene.
  void switchSolver(const std::string& solverId);

  // A moment of the motion to go back to (Simulation::moment, goBack): keepMoment keeps the one
  // at the end of the step in progress (given up for it) in place of any kept before;
  // backToMoment puts it back, keeping the edits made since, and says so (an Info message), or
  // says why it cannot (none kept, another solver runs). Both on the simulation thread, in order
  // with the other edits. A reset keeps the moment (the cloth is the same), a scene loaded since
  // drops it.
  void keepMoment();
  void backToMoment();
  // The simulated time of the kept moment [s]; NaN when none is kept.
  double momentTime() const { return momentTime_; }

  // Pausing gives up a step in progress (see post); resuming takes it again.
  void setPaused(bool paused);
  bool paused() const { return paused_; }
  void stepOnce();                 // one step while paused
  void setSpeed(double speed);     // simulated seconds per wall second, (0, 10]
  double speed() const { return speed_; }
  void setOverlay(bool overlay);   // ask the solver for debug geometry in snapshots
  void setContacts(bool contacts); // mark the vertices touching obstacles in snapshots

  // Newest published snapshot (never null after construction).
  std::shared_ptr<const Snapshot> snapshot() const;
  std::vector<RunnerMessage> takeMessages();
  LoadProgress loadProgress() const;
  // Simulated seconds per wall second over the last ~0.5 s of running (0 while paused).
  double realTimeFactor() const { return realTimeFactor_; }
  // Wall seconds the step in progress has taken so far; 0 between steps. The panel shows it
  // once a step is slow (a large cloth's first step orders its sparse system: 5 s at 100 000
  // triangles), so that a simulation still at step 0 does not look stuck.
  double stepRunningSeconds() const;
  long editsApplied() const { return editsApplied_; }
  // Edits posted so far (post and postLasting), and the newest snapshot if it was published
  // after the first `edits` of them had been applied (null otherwise): what an edit made, once
  // it shows (the panel's parameters after an undo).
  long editsPosted() const;
  std::shared_ptr<const Snapshot> snapshotAfter(long edits) const;
  // Loads swapped in so far (load(); not reset() or switchSolver(), which keep the scene).
  long loadsSwappedIn() const { return loadsSwappedIn_; }

 private:
  void run();  // the simulation thread: loop(), then ended_
  void loop();
  void publish(Simulation& simulation);
  void report(RunnerMessage::Kind kind, std::string text);
  // The cloth's warnings from loading it (sim/obj_io.h: dropped triangles, ignored records).
  void reportWarnings(const Simulation& simulation);
  void giveUpLoadLocked(std::string message);  // mutex_ held
  void startLoad(std::string label,
                 std::function<Result<std::unique_ptr<Simulation>>(const LoadStage& stage)> job);

  // Replaces the simulation by one built from `scene` (an edit: runs on the simulation thread).
  std::optional<std::string> rebuild(const Scene& scene);

  std::unique_ptr<Simulation> simulation_;  // touched by the simulation thread only
  std::unique_ptr<Simulation> rebuilt_;     // set by rebuild(), simulation thread only
  std::shared_ptr<const Simulation::Moment> moment_;  // keepMoment's, simulation thread only
  std::shared_ptr<const std::vector<std::uint32_t>> triangles_;

  mutable std::mutex mutex_;  // guards everything below up to the atomics
  std::condition_variable wake_;
  struct Posted {
    std::string label;
    Edit edit;
    bool lasting = false;  // postLasting
  };
  std::deque<Posted> edits_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::vector<RunnerMessage> messages_;
  std::unique_ptr<Simulation> loaded_;  // finished load waiting to be swapped in
  LoadProgress progress_;
  std::chrono::steady_clock::time_point loadStart_;
  std::thread loader_;
  std::vector<std::thread> givenUp_;  // loaders given up, joined once none runs, or at the end
  std::shared_ptr<LoadTicket> loadTicket_;  // the latest load's: given up, its result is dropped
  int loadersRunning_ = 0;
  bool stop_ = false;
  bool ended_ = false;  // the simulation thread has left its loop
  std::condition_variable endedCondition_;
  int lastingPending_ = 0;  // lasting edits posted and not yet carried out

  std::atomic<bool> paused_{false};
  // Watched by the simulation's step (Simulation::setStopFlag); set by interrupting edits, a
  // finished load, pausing and the destructor; cleared by the simulation thread before it takes
  // the edits.
  std::atomic<bool> interrupt_{false};
  std::atomic<int> stepRequests_{0};
  std::atomic<double> speed_{1.0};
  std::atomic<bool> overlay_{false};
  std::atomic<bool> contacts_{false};
  std::atomic<double> realTimeFactor_{0.0};
  // When the step in progress began (steady clock, ns since its epoch); 0 between steps.
  std::atomic<std::int64_t> stepStartedNs_{0};
  std::atomic<long> editsApplied_{0};
  long editsPosted_ = 0;    // under mutex_
  long snapshotEdits_ = 0;  // editsApplied_ when snapshot_ was published; under mutex_
  std::atomic<long> loadsSwappedIn_{0};
  std::atomic<double> momentTime_{std::numeric_limits<double>::quiet_NaN()};
  const std::shared_ptr<PaceGroup> pace_;
  int paceMember_ = -1;
  std::thread thread_;
};

}  // namespace clothlab
