#pragma once
// How often the window draws while the simulation runs behind wall time. Under software OpenGL
// on a small machine a frame costs the simulation thread much of a core: on 2 cores with Mesa's
// llvmpipe, `hanging` reached 4.5 s of simulated time in 12 s of wall time at the uncapped 52
// frames per second, and 6.1 s at 20 (docs/measurements.md). Once nothing has been touched for a
// second while every running simulation lags, the window draws at most `laggingFps` frames per
// second, until the next input: orbits, drags and typing keep the full rate. It does not end when
// the simulation catches up, which the freed time may let it do, so the rate does not swing.
#include <algorithm>

namespace clothlab {

struct FramePace {
  static constexpr double kQuietSeconds = 1.0;  // since the last input, before the pace starts
  static constexpr double kLagging = 0.9;  // a real-time factor below this share of the speed lags
  bool paced = false;

  // The frame rate cap for the next frame [1/s], 0 for none: `maxFps` (0: none), or at most
  // `laggingFps` (0: never paced) while paced. `quietFor`: seconds since the last input;
  // `lagging`: some simulation runs and every running one lags (runsBehind).
  double cap(double maxFps, double laggingFps, double quietFor, bool lagging) {
    if (quietFor < kQuietSeconds || laggingFps <= 0)
      paced = false;
    else if (lagging)
      paced = true;
    if (!paced) return maxFps;
    return maxFps > 0 ? std::min(maxFps, laggingFps) : laggingFps;
  }
  // Whether a running simulation with this real-time factor at this speed lags.
  static bool runsBehind(double realTimeFactor, double speed) {
    return realTimeFactor < kLagging * speed;
  }
};

}  // namespace clothlab
