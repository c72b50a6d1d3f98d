#pragma once
// The viewer's machine-readable log (--log FILE): one JSON object per line, for every user action
// and every snapshot the window draws, so scripts and tests can check what happened.
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/json_text.h"
#include "sim/mesh.h"

namespace clothlab {

class EventLog {
 public:
  // Opens `path` (empty: logging off). Returns false if the file cannot be written.
  bool open(const std::string& path) {
    if (path.empty()) return true;
    out_.open(path, std::ios::trunc);
    start_ = std::chrono::steady_clock::now();
    return static_cast<bool>(out_);
  }
  bool enabled() const { return out_.is_open(); }
  // Writes {"event": name, "wall": seconds since start, ...fields}.
  void write(const std::string& event, nlohmann::json fields = nlohmann::json::object()) {
    std::lock_guard lock(mutex_);
    if (!out_.is_open()) return;
    fields["event"] = event;
    fields["wall"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    out_ << jsonText(fields) << '\n';  // a non-UTF-8 path gets replacement characters
    out_.flush();
  }

 private:
  std::ofstream out_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace clothlab
