#pragma once
// Work offered to a second thread, which the offering thread takes back if no helper has started
// it by the time its result is needed.
//
// A step hands part of its work to another thread only while a hardware thread is free of this
// process's simulations (StepInProgress). Another process, or the viewer's own drawing under
// software OpenGL, may still hold that core: a thread started then waited up to a scheduler time
// slice before it ran, and the step waited for it (`diagonal-corners` under `impulse-nc` beside a
// compile: steps of 23 ms instead of 2 to 4). Here the helper threads claim a task before running
// it, and so does get(): whichever comes first runs it, so a step never waits for a helper that has
// not begun, and a helper that is late finds the task taken and leaves it. The result is the
// same whichever thread runs the task.
//
// The helpers are a few threads kept for the whole process (at most the hardware threads less
// one), started as offers find none idle, so an offer costs a wake-up instead of a new thread.
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace clothlab {

namespace alongside_detail {

// One offered task. `body` runs once, on whichever thread claims it first.
struct Task {
  std::function<void()> body;
  std::mutex mutex;
  std::condition_variable finished;
  bool claimed = false;
  bool done = false;
  bool ranByHelper = false;
  std::exception_ptr error;

  // Takes the task for the calling thread; false if another thread has.
  bool claim() {
    std::lock_guard lock(mutex);
    if (claimed) return false;
    claimed = true;
    return true;
  }
  // Runs the claimed task and says it is done.
  void run(bool byHelper) {
    std::exception_ptr caught;
    try {
      body();
    } catch (...) {
      caught = std::current_exception();
    }
    {
      std::lock_guard lock(mutex);
      error = caught;
      ranByHelper = byHelper;
      done = true;
    }
    finished.notify_all();
  }
  void waitUntilDone() {
    std::unique_lock lock(mutex);
    finished.wait(lock, [this] { return done; });
  }
};

// Hands `task` to a helper thread. False if none could be started (the task stays unclaimed).
bool offer(const std::shared_ptr<Task>& task);

// The most helper threads the process keeps: the hardware threads less one, at least one.
int helperLimit();

}  // namespace alongside_detail

// `Result fn()`, offered to a helper thread where `offer` is true; get() returns its result (or
// throws its exception), running it on the calling thread if no helper has started it, or if it
// was not offered (or no helper could be reached). Destroyed before get(), it still waits for a
// helper that has started (the task may use the caller's locals), and keeps one that has not from
// starting.
template <class Result>
class Alongside {
 public:
  Alongside() = default;
  template <class Fn>
  explicit Alongside(Fn fn, bool offer = true)
      : task_(std::make_shared<alongside_detail::Task>()),
        result_(std::make_shared<std::optional<Stored>>()) {
    auto result = result_;
    task_->body = [fn = std::move(fn), result]() mutable {
      if constexpr (std::is_void_v<Result>)
        fn();
      else
        result->emplace(fn());
    };
    offered_ = offer && alongside_detail::offer(task_);
  }
  Alongside(Alongside&&) noexcept = default;
  Alongside& operator=(Alongside&& other) noexcept {
    finish();
    task_ = std::move(other.task_);
    result_ = std::move(other.result_);
    offered_ = other.offered_;
    return *this;
  }
  Alongside(const Alongside&) = delete;
  Alongside& operator=(const Alongside&) = delete;
  ~Alongside() { finish(); }

  // Whether there is a task whose result is not yet taken.
  bool valid() const { return task_ != nullptr; }
  // Whether the task was handed to a helper thread (asked for, and one could be reached).
  bool offered() const { return offered_; }

  Result get() {
    auto task = std::exchange(task_, nullptr);
    if (task->claim())
      task->run(false);
    else
      task->waitUntilDone();
    ranByHelper_ = task->ranByHelper;
    if (task->error) std::rethrow_exception(task->error);
    if constexpr (!std::is_void_v<Result>) return std::move(**result_);
  }

  // After get(): whether a helper thread ran the task (else the calling thread did).
  bool ranByHelper() const { return ranByHelper_; }

 private:
  void finish() {
    if (!task_) return;
    auto task = std::exchange(task_, nullptr);
    if (!task->claim()) task->waitUntilDone();
  }

  using Stored = std::conditional_t<std::is_void_v<Result>, char, Result>;
  std::shared_ptr<alongside_detail::Task> task_;
  std::shared_ptr<std::optional<Stored>> result_;
  bool offered_ = false;
  bool ranByHelper_ = false;
};

}  // namespace clothlab
