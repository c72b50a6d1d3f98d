#pragma once
// Small ImGui helpers shared by the panel and compare mode.
#include <imgui.h>

#include <string>

namespace clothlab {

// The text as a tooltip of the last item while it is hovered.
inline void tooltip(const std::string& text) {
  if (!text.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

}  // namespace clothlab
