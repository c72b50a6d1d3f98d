#pragma once
// Counts the simulation steps running at this moment in this process, so that a solver takes a
// second thread only while a core is free: the viewer's compare mode and `clothlab-cli compare`
// step several simulations at once, and a worker beside each would only crowd the cores.
#include <atomic>
#include <thread>

namespace clothlab {

class StepInProgress {
 public:
  StepInProgress() { count().fetch_add(1, std::memory_order_relaxed); }
  ~StepInProgress() { count().fetch_sub(1, std::memory_order_relaxed); }
  StepInProgress(const StepInProgress&) = delete;
  StepInProgress& operator=(const StepInProgress&) = delete;

  // Whether the steps in progress (a caller's own included) leave a hardware thread free.
  static bool threadToSpare() {
    return count().load(std::memory_order_relaxed) < static_cast<int>(std::thread::hardware_concurrency());
  }

 private:
  static std::atomic<int>& count() {
    static std::atomic<int> steps{0};
    return steps;
  }
};

}  // namespace clothlab
