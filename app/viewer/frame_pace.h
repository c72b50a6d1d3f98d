#pragma once
// How often the window draws when nobody is touching it.
// - Lagging: under software OpenGL on a small machine a frame costs the simulation thread much of
//   a core: on 2 cores with Mesa's llvmpipe, `hanging` reached 4.5 s of simulated time in 12 s of
//   wall time at the uncapped 52 frames per second, and 6.1 s at 20 (docs/measurements.md). Once
//   nothing has been touched for a second while every running simulation lags, the window draws
//   at most `laggingFps` frames per second, until the next input. It does not end when the
//   simulation catches up, which the freed time may let it do, so the rate does not swing.
// - Idle: with every simulation paused (or diverged) nothing moves but what the panel shows, and
//   the window draws at most `idleFps` frames per second instead of spending a core on the same
//   picture, until the next input or a simulation runs again.
// Orbits, drags and typing keep the full rate. The window waits for the next frame with
// glfwWaitEventsTimeout, so an input is answered at once, not after the paced frame's wait.
#include <algorithm>

namespace clothlab {

struct FramePace {
  static constexpr double kQuietSeconds = 1.0;  // since the last input, before a pace starts
  static constexpr double kLagging = 0.9;  // a real-time factor below this share of the speed lags
  enum class Pace { Full, Lagging, Idle };
  Pace pace = Pace::Full;

  // The frame rate cap for the next frame [1/s], 0 for none: `maxFps` (0: none), or at most
  // `laggingFps` or `idleFps` (0: that pace never starts) while paced. `quietFor`: seconds since
  // the last input; `running`: some simulation runs; `lagging`: every running one lags
  // (runsBehind).
  double cap(double maxFps, double laggingFps, double idleFps, double quietFor, bool running,
             bool lagging) {
    if (quietFor < kQuietSeconds)
      pace = Pace::Full;
    else if (!running)
      pace = idleFps > 0 ? Pace::Idle : Pace::Full;
    else if (lagging && laggingFps > 0)
      pace = Pace::Lagging;
    else if (pace == Pace::Idle)
      pace = Pace::Full;  // running again; a lagging pace lasts until the next input
    const double paced = pacedRate(laggingFps, idleFps);
    if (paced <= 0) return maxFps;
    return maxFps > 0 ? std::min(maxFps, paced) : paced;
  }
  // The rate of the pace now [1/s]; 0 at the full rate.
  double pacedRate(double laggingFps, double idleFps) const {
    return pace == Pace::Lagging ? laggingFps : pace == Pace::Idle ? idleFps : 0.0;
  }
  static const char* name(Pace p) {
    return p == Pace::Lagging ? "lagging" : p == Pace::Idle ? "idle" : "full";
  }
  // Whether a running simulation with this real-time factor at this speed lags.
  static bool runsBehind(double realTimeFactor, double speed) {
    return realTimeFactor < kLagging * speed;
  }
};

}  // namespace clothlab
