#pragma once
// Wall-clock timing of solver phases (the stats' ms_* figures).
#include <chrono>

namespace clothlab {

using Clock = std::chrono::steady_clock;

// Milliseconds since `start`.
inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace clothlab
