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

}  // namespace clothlab
