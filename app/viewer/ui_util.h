#pragma once
// Small ImGui helpers shared by the panel and compare mode.
#include <imgui.h>

#include <string>
#include <string_view>

namespace clothlab {

// The text as a tooltip of the last item while it is hovered.
inline void tooltip(const std::string& text) {
  if (!text.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

// The width of `text` in the current font [pixels] (the measure of text_wrap.h).
inline float textWidth(std::string_view text) { return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x; }

// A hint in the disabled text colour, wrapped at the panel's edge (ImGui::TextDisabled does not
// wrap, and the panel is narrower than some hints).
inline void hint(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

}  // namespace clothlab
