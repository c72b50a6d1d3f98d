#include "app/viewer/sim_runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "sim/scene_library.h"

namespace clothlab {

using Clock = std::chrono::steady_clock;

namespace {
// The simulation yields to the window: on Linux a thread has its own nice value, and a slightly
// lower priority than the UI (and the software rasterizer's threads) keeps redraws and mouse
// answers smooth when steps are slow; the simulation falls behind instead (see the header).
void lowerThreadPriority() { setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 5); }
void lowestThreadPriority(pid_t thread) {
  setpriority(PRIO_PROCESS, static_cast<id_t>(thread), 19);
}
}  // namespace

void LoadTicket::started() {
  lowerThreadPriority();
  std::lock_guard lock(mutex_);
  thread_ = gettid();
  if (givenUp_) lowestThreadPriority(thread_);
}

void LoadTicket::ended() {
  std::lock_guard lock(mutex_);
  thread_ = 0;  // the thread id may be another's from here on
}

void LoadTicket::giveUp() {
  std::lock_guard lock(mutex_);
  givenUp_ = true;
  if (thread_ != 0) lowestThreadPriority(thread_);
}

bool LoadTicket::running() const {
  std::lock_guard lock(mutex_);
  return thread_ != 0;
}

bool LoadTicket::givenUp() const {
  std::lock_guard lock(mutex_);
  return givenUp_;
}

int PaceGroup::join(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  members_.push_back({});
  members_.back().wake = std::move(wake);
  return static_cast<int>(members_.size()) - 1;
}

void PaceGroup::leave(int member) {
  std::lock_guard lock(mutex_);
  members_[member].present = false;
  members_[member].wake = nullptr;
  wakeAll();
}

void PaceGroup::report(int member, double time, double dt, bool running) {
  std::lock_guard lock(mutex_);
  Member& m = members_[member];
  if (m.time == time && m.dt == dt && m.running == running) return;
  // Only the slowest running member's steps, a member starting or stopping, or a new step size
  // move the others' limit; the steps of a member ahead wake no one.
  const bool movesLimit =
      m.running != running || (running && (m.dt != dt || m.time <= slowestAndWidest().first));
  m.time = time;
  m.dt = dt;
  m.running = running;
  if (enabled_ && movesLimit) wakeAll();
}

std::pair<double, double> PaceGroup::slowestAndWidest() const {
  double slowest = std::numeric_limits<double>::infinity(), widest = 0;
  for (const Member& m : members_)
    if (m.present && m.running) {
      slowest = std::min(slowest, m.time);
      widest = std::max(widest, m.dt);
    }
  return {slowest, widest};
}

bool PaceGroup::mayStep(int member) const {
  std::lock_guard lock(mutex_);
  if (!enabled_) return true;
  const auto [slowest, widest] = slowestAndWidest();
  // Strictly below, less rounding: the slowest member itself is always below its limit.
  return members_[member].time < slowest + widest - 1e-9 * widest;
}

void PaceGroup::setEnabled(bool enabled) {
  std::lock_guard lock(mutex_);
  enabled_ = enabled;
  wakeAll();
}

void PaceGroup::wakeAll() {
  ++generation_;
  for (const Member& m : members_)
    if (m.present && m.wake) m.wake();
}

SimRunner::SimRunner(std::unique_ptr<Simulation> simulation, bool paused, std::shared_ptr<PaceGroup> pace)
    : simulation_(std::move(simulation)), paused_(paused), pace_(std::move(pace)) {
  simulation_->setStopFlag(&interrupt_);
  reportWarnings(*simulation_);
  publish(*simulation_);
  // The wake takes this runner's lock, so it cannot fall between the thread's last look at the
  // group and its wait (the thread never asks the group anything while holding that lock).
  if (pace_)
    paceMember_ = pace_->join([this] {
      { std::lock_guard lock(mutex_); }
      wake_.notify_all();
    });
  thread_ = std::thread([this] { run(); });
}

SimRunner::~SimRunner() {
  stop();
  if (loader_.joinable()) loader_.join();
  for (std::thread& loader : givenUp_) loader.join();
  if (pace_) pace_->leave(paceMember_);
}

void SimRunner::stop() {
  requestStop();
  if (thread_.joinable()) thread_.join();
}

void SimRunner::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  interrupt_ = true;  // closing does not wait for a slow step either
  wake_.notify_all();
}

bool SimRunner::waitStopped(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  auto ended = [this] { return ended_; };
  if (lastingPending_ > 0) {
    endedCondition_.wait(lock, ended);
    return true;
  }
  return endedCondition_.wait_for(lock, timeout, ended);
}

void SimRunner::post(std::string label, Edit edit, bool interrupt) {
  {
    std::lock_guard lock(mutex_);
    edits_.push_back({std::move(label), std::move(edit)});
    ++editsPosted_;
  }
  if (interrupt) interrupt_ = true;
  wake_.notify_all();
}

void SimRunner::postLasting(std::string label, Edit edit) {
  {
    std::lock_guard lock(mutex_);
    edits_.push_back({std::move(label), std::move(edit), true});
    ++lastingPending_;
    ++editsPosted_;
  }
  interrupt_ = true;
  wake_.notify_all();
}

void SimRunner::reportWarnings(const Simulation& simulation) {
  for (const std::string& warning : simulation.cloth().warnings)
    report(RunnerMessage::Kind::Warning, warning);
}

void SimRunner::report(RunnerMessage::Kind kind, std::string text) {
  std::lock_guard lock(mutex_);
  messages_.push_back({kind, std::move(text)});
  if (messages_.size() > 100) messages_.erase(messages_.begin());
}

std::vector<RunnerMessage> mergePaneMessages(const std::vector<std::vector<RunnerMessage>>& perPane,
                                             const std::vector<std::string>& paneNames) {
  std::vector<std::pair<const RunnerMessage*, std::vector<size_t>>> distinct;
  for (size_t pane = 0; pane < perPane.size(); ++pane)
    for (const RunnerMessage& m : perPane[pane]) {
      auto same = std::find_if(distinct.begin(), distinct.end(), [&](const auto& entry) {
        return entry.first->kind == m.kind && entry.first->text == m.text;
      });
      if (same == distinct.end()) distinct.push_back({&m, {pane}});
      else if (same->second.back() != pane) same->second.push_back(pane);
    }
  std::vector<RunnerMessage> merged;
  for (const auto& [m, panes] : distinct) {
    std::string from;
    if (panes.size() == perPane.size() && panes.size() > 1) {
      from = "every pane";
    } else {
      for (size_t k = 0; k < panes.size(); ++k) from += (k ? ", " : "") + paneNames[panes[k]];
    }
    merged.push_back({m->kind, from + ": " + m->text});
  }
  return merged;
}

std::vector<RunnerMessage> SimRunner::takeMessages() {
  std::lock_guard lock(mutex_);
  return std::exchange(messages_, {});
}

LoadProgress SimRunner::loadProgress() const {
  std::lock_guard lock(mutex_);
  LoadProgress p = progress_;
  if (p.active) p.seconds = std::chrono::duration<double>(Clock::now() - loadStart_).count();
  return p;
}

namespace {
// The steady clock in nanoseconds since its epoch (SimRunner::stepStartedNs_).
std::int64_t steadyNanoseconds() {
  return Clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
}
}  // namespace

double SimRunner::stepRunningSeconds() const {
  const std::int64_t started = stepStartedNs_;
  if (started == 0) return 0;
  return std::max<std::int64_t>(0, steadyNanoseconds() - started) * 1e-9;
}

std::shared_ptr<const Snapshot> SimRunner::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void SimRunner::startLoad(
    std::string label,
    std::function<Result<std::unique_ptr<Simulation>>(const LoadStage& stage)> job) {
  std::unique_lock lock(mutex_);
  if (progress_.active)
    giveUpLoadLocked("the load of " + progress_.what + " was given up for " + label);
  if (loader_.joinable()) loader_.join();  // the previous load has finished
  if (loadersRunning_ == 0) {  // the given-up loaders have passed their last use of the lock
    for (std::thread& loader : givenUp_) loader.join();
    givenUp_.clear();
  }
  progress_ = {true, label, "starting", 0};
  loadStart_ = Clock::now();
  ++loadersRunning_;
  loadTicket_ = std::make_shared<LoadTicket>();
  loader_ = std::thread([this, label, ticket = loadTicket_, job = std::move(job)] {
    // Given up (giveUpLoadLocked, under mutex_): the stages stop, the result is dropped.
    const LoadStage setStage = [this, &ticket](const std::string& s) {
      std::lock_guard lock(mutex_);
      if (ticket->givenUp()) return false;
      progress_.stage = s;
      return true;
    };
    Result<std::unique_ptr<Simulation>> result = ticket->run([&] { return job(setStage); });
    std::unique_lock lock(mutex_);
    if (ticket->givenUp()) {  // dropped without a word, outside the lock
      lock.unlock();
      result = Error{};
      lock.lock();
      --loadersRunning_;  // after this the thread only ends: startLoad may join it at once
      return;
    }
    --loadersRunning_;
    progress_.active = false;
    if (!result) {
      messages_.push_back({RunnerMessage::Kind::Error,
                           "could not load " + label + ": " + result.error()});
    } else {
      loaded_ = std::move(*result);
      interrupt_ = true;  // swapped in at once, not after a slow step
    }
    wake_.notify_all();
  });
}

void SimRunner::giveUpLoad() {
  std::lock_guard lock(mutex_);
  if (progress_.active) giveUpLoadLocked("gave up the load of " + progress_.what);
}

void SimRunner::giveUpLoadLocked(std::string message) {
  loadTicket_->giveUp();  // progress_.active: the ticket is that load's
  progress_.active = false;
  givenUp_.push_back(std::move(loader_));
  messages_.push_back({RunnerMessage::Kind::Info, std::move(message)});
}

int SimRunner::loadsGivenUpStillRunning() const {
  std::lock_guard lock(mutex_);
  return loadersRunning_ - (progress_.active ? 1 : 0);
}

Result<std::unique_ptr<Simulation>> loadSimulation(const std::string& argument,
                                                   const LoadStage& stage) {
  const Error givenUp{"given up"};
  if (!stage("reading")) return givenUp;
  auto scene = resolveScene(argument);
  if (!scene) return Error{scene.error()};
  if (!stage("building the cloth")) return givenUp;
  auto cloth = buildClothModel(*scene);
  if (!cloth) return Error{cloth.error()};
  if (!stage("setting up the " + scene->solverId + " solver")) return givenUp;
  return Simulation::create(*scene, std::move(*cloth));
}

std::string loadedMessage(const Simulation& simulation) {
  return "loaded " + simulation.scene().name + " (" +
         std::to_string(simulation.cloth().mesh.vertexCount()) + " vertices, solver " +
         simulation.solver().id() + ")";
}

void SimRunner::load(std::string argument) {
  startLoad(argument,
            [argument](const LoadStage& stage) { return loadSimulation(argument, stage); });
}

std::optional<std::string> SimRunner::rebuild(const Scene& scene) {
  auto fresh = Simulation::create(scene);
  if (!fresh) return fresh.error();
  rebuilt_ = std::move(*fresh);  // swapped in right after this edit (simulation thread only)
  return std::nullopt;
}

SimRunner::Edit SimRunner::restartEdit(std::function<Result<Scene>(const Simulation&)> change) {
  return [this, change = std::move(change)](Simulation& simulation) -> std::optional<std::string> {
    auto scene = change(simulation);
    if (!scene) return scene.error();
    return rebuild(*scene);
  };
}

void SimRunner::reset() {
  post("reset", restartEdit([](const Simulation& simulation) { return simulation.currentScene(); }),
       true);
}

void SimRunner::switchSolver(const std::string& solverId) {
  post("solver " + solverId, restartEdit([solverId](const Simulation& simulation) {
         Scene scene = simulation.currentScene();
         useSolver(scene, solverId);
         return scene;
       }),
       true);
}

void SimRunner::keepMoment() {
  post(
      "keep moment",
      [this](Simulation& simulation) {
        moment_ = simulation.moment();
        momentTime_ = simulation.time();
        return std::optional<std::string>();
      },
      true);
}

void SimRunner::backToMoment() {
  post(
      "back to the moment",
      [this](Simulation& simulation) -> std::optional<std::string> {
        if (!moment_) return "no moment kept (K keeps one)";
        if (auto error = simulation.goBack(*moment_)) return error;
        char text[64];
        std::snprintf(text, sizeof text, "back to the moment at t = %.3f s", simulation.time());
        report(RunnerMessage::Kind::Info, text);
        return std::optional<std::string>();
      },
      true);
}

void SimRunner::setPaused(bool paused) {
  paused_ = paused;
  if (paused) interrupt_ = true;
  wake_.notify_all();
}

void SimRunner::stepOnce() {
  paused_ = true;
  ++stepRequests_;
  wake_.notify_all();
}

void SimRunner::setSpeed(double speed) { speed_ = std::clamp(speed, 1e-3, 10.0); }

void SimRunner::setOverlay(bool overlay) {
  overlay_ = overlay;
  post("overlay", [](Simulation&) { return std::optional<std::string>(); });
}

void SimRunner::setContacts(bool contacts) {
  contacts_ = contacts;
  post("contacts", [](Simulation&) { return std::optional<std::string>(); });
}

void SimRunner::publish(Simulation& simulation) {
  auto snapshot = std::make_shared<const Snapshot>(makeSnapshot(simulation, overlay_, triangles_, contacts_));
  triangles_ = snapshot->triangles;
  std::lock_guard lock(mutex_);
  snapshot_ = std::move(snapshot);
  snapshotEdits_ = editsApplied_;
}

long SimRunner::editsPosted() const {
  std::lock_guard lock(mutex_);
  return editsPosted_;
}

std::shared_ptr<const Snapshot> SimRunner::snapshotAfter(long edits) const {
  std::lock_guard lock(mutex_);
  return snapshotEdits_ >= edits ? snapshot_ : nullptr;
}

void SimRunner::run() {
  loop();
  {
    std::lock_guard lock(mutex_);
    ended_ = true;
  }
  endedCondition_.notify_all();
}

void SimRunner::loop() {
  lowerThreadPriority();
  Clock::time_point last = Clock::now(), lastPublish = last, rtfStart = last;
  double debt = 0;          // simulated seconds owed to wall time
  double rtfSimulated = 0;  // simulated seconds since rtfStart
  bool dirty = false;       // state changed since the last publish
  for (;;) {
    // 1. Edits and finished loads, in order.
    auto swapIn = [&](std::unique_ptr<Simulation> next) {
      simulation_ = std::move(next);
      simulation_->setStopFlag(&interrupt_);
      triangles_.reset();
      debt = 0;
      dirty = true;
    };
    std::deque<Posted> edits;
    std::unique_ptr<Simulation> loaded;
    bool interrupted = false;
    bool stopping = false;
    {
      std::lock_guard lock(mutex_);
      stopping = stop_;
      // Cleared before the edits are taken: one posted after this point stops the next step.
      interrupted = interrupt_.exchange(false);
      edits.swap(edits_);
      loaded = std::move(loaded_);
    }
    auto lastingDone = [&] {
      std::lock_guard lock(mutex_);
      --lastingPending_;
    };
    if (stopping) {  // only what must not be lost: the lasting edits (saves)
      for (auto& posted : edits)
        if (posted.lasting) {
          if (auto error = posted.edit(*simulation_))
            std::fprintf(stderr, "clothlab: %s: %s\n", posted.label.c_str(), error->c_str());
          lastingDone();
        }
      return;
    }
    for (auto& posted : edits) {
      if (auto error = posted.edit(*simulation_))
        report(RunnerMessage::Kind::Error, posted.label + ": " + *error);
      if (posted.lasting) lastingDone();
      ++editsApplied_;
      dirty = true;
      if (rebuilt_) swapIn(std::move(rebuilt_));  // later edits apply to the rebuilt simulation
    }
    if (loaded) {
      report(RunnerMessage::Kind::Info, loadedMessage(*loaded));
      reportWarnings(*loaded);
      swapIn(std::move(loaded));
      moment_.reset();  // of another scene
      momentTime_ = std::numeric_limits<double>::quiet_NaN();
      ++loadsSwappedIn_;
    }
    auto publishNow = [&] {
      publish(*simulation_);
      lastPublish = Clock::now();
      dirty = false;
    };
    // What an interrupting edit changed is shown before the next step, which may take seconds
    // (other edits are published at the step's pace, kPublishHz at most).
    if (interrupted && dirty) publishNow();

    // 2. Step when wall time says so (or a single step was asked for).
    const Clock::time_point now = Clock::now();
    const double wall = std::chrono::duration<double>(now - last).count();
    last = now;
    const double dt = simulation_->sim().dt;
    bool stepped = false;
    const bool running = !paused_ && !simulation_->diverged();
    if (running) {
      // Owe at most 0.1 s of wall time: a slow step makes the simulation fall behind, never
      // race to catch up.
      debt = std::min(debt + wall * speed_, std::max(0.1 * speed_, dt));
    } else {
      debt = 0;
    }
    const bool single = stepRequests_ > 0;
    if (pace_) pace_->report(paceMember_, simulation_->time(), dt, running);
    // Held back by the pace group: wait for the slower members (they wake this thread).
    const long paceGeneration = pace_ ? pace_->generation() : 0;
    const bool held = running && pace_ && !pace_->mayStep(paceMember_);
    if ((running && debt >= dt && !held) || single) {
      if (single) --stepRequests_;
      stepStartedNs_ = std::max<std::int64_t>(1, steadyNanoseconds());  // 0 means none
      std::optional<std::string> stepError = simulation_->step();
      stepStartedNs_ = 0;
      if (auto error = std::move(stepError)) {
        if (simulation_->diverged()) {
          paused_ = true;
          report(RunnerMessage::Kind::Error,
                 *error + " (state kept at the last good step; paused: lower dt, raise the "
                          "tolerance or reset)");
        } else if (single) {
          ++stepRequests_;  // given up for an edit: the single step is still owed
        }
      } else {
        debt -= dt;
        rtfSimulated += dt;
      }
      stepped = true;
      dirty = true;
    }
    const double rtfWall = std::chrono::duration<double>(now - rtfStart).count();
    if (rtfWall >= 0.5) {
      realTimeFactor_ = running ? rtfSimulated / rtfWall : 0.0;
      rtfSimulated = 0;
      rtfStart = now;
    }

    // 3. Publish.
    const double sincePublish = std::chrono::duration<double>(Clock::now() - lastPublish).count();
    if (dirty && (!running || single || sincePublish >= 1.0 / kPublishHz)) publishNow();

    // 4. Wait: for the next step's wall time while running, for an edit while paused.
    if (!stepped) {
      std::unique_lock lock(mutex_);
      if (stop_) continue;  // the loop's top runs the lasting edits posted meanwhile
      const bool paceMoved = held && pace_->generation() != paceGeneration;
      if (edits_.empty() && !loaded_ && stepRequests_ == 0 && !paceMoved) {
        double wait = running && !held ? std::max(0.0, (dt - debt) / speed_) : 0.05;
        if (dirty) wait = std::min(wait, 1.0 / kPublishHz);
        wake_.wait_for(lock, std::chrono::duration<double>(std::min(wait, 0.05)));
      }
    }
  }
}

}  // namespace clothlab
