#pragma once
// The strain heat map's colours, shared by the cloth shader (shaders/mesh.frag, same stops) and
// the panel's legend: blue (0) -> cyan -> green -> yellow -> red (1).
#include <algorithm>
#include <array>

namespace clothlab {

inline std::array<float, 3> heatColor(float s) {
  static constexpr float stops[5][3] = {
      {0.10f, 0.20f, 0.85f}, {0.05f, 0.75f, 0.90f}, {0.20f, 0.80f, 0.25f},
      {0.95f, 0.85f, 0.15f}, {0.90f, 0.15f, 0.10f}};
  const float x = std::clamp(s, 0.0f, 1.0f) * 4.0f;
  const int i = std::min(static_cast<int>(x), 3);
  const float f = x - static_cast<float>(i);
  return {stops[i][0] + f * (stops[i + 1][0] - stops[i][0]),
          stops[i][1] + f * (stops[i + 1][1] - stops[i][1]),
          stops[i][2] + f * (stops[i + 1][2] - stops[i][2])};
}

}  // namespace clothlab
