#pragma once
// Numbers in messages and labels.
#include <cstdio>
#include <string>

namespace clothlab {

// The value with `digits` significant digits (printf's %g): 0.001, 1e-05, 2.5.
inline std::string formatG(double value, int digits = 6) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

// The message of a step stopped for a runaway speed: "runaway speed: a vertex reached 1657.58 m/s,
// above max_speed 1000 m/s" (`what`: "a vertex", "a particle"). An infinite speed reads "inf".
inline std::string runawaySpeedMessage(const std::string& what, double speed, double maxSpeed) {
  return "runaway speed: " + what + " reached " + formatG(speed) + " m/s, above max_speed " + formatG(maxSpeed) +
         " m/s";
}

}  // namespace clothlab
