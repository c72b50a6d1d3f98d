#pragma once
// Whether an environment variable is set to "1" (the interposers' switches back to the stock
// behaviour, read once by each).
#include <cstdlib>
#include <cstring>

namespace clothlab {
inline bool environmentFlagIsOne(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "1") == 0;
}
}  // namespace clothlab
