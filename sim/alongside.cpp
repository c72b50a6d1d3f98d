#include "sim/alongside.h"

#include <deque>
#include <system_error>
#include <thread>

namespace clothlab::alongside_detail {

namespace {

// The helper threads: started as offers find none idle, up to one less than the hardware
// threads, and kept (never destroyed, so no simulation thread can offer to a pool being torn
// down at exit; the threads wait on the queue until the process ends).
class Helpers {
 public:
  static Helpers& instance() {
    static Helpers* helpers = new Helpers;
    return *helpers;
  }

  bool offer(const std::shared_ptr<Task>& task) {
    std::unique_lock lock(mutex_);
    if (idle_ <= static_cast<int>(queue_.size()) && threads_ < helperLimit()) {
      try {
        std::thread([this] { serve(); }).detach();
        ++threads_;
        ++idle_;
      } catch (const std::system_error&) {
        if (threads_ == 0) return false;
      }
    }
    queue_.push_back(task);
    lock.unlock();
    ready_.notify_one();
    return true;
  }

 private:
  void serve() {
    for (;;) {
      std::shared_ptr<Task> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
        --idle_;
      }
      if (task->claim()) task->run(true);
      task.reset();
      std::lock_guard lock(mutex_);
      ++idle_;
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Task>> queue_;
  int threads_ = 0;
  int idle_ = 0;  // threads not running a task (the queued tasks are theirs to take first)
};

}  // namespace

bool offer(const std::shared_ptr<Task>& task) { return Helpers::instance().offer(task); }

int helperLimit() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return hardware > 1 ? hardware - 1 : 1;
}

}  // namespace clothlab::alongside_detail
