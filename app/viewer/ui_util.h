#pragma once
// Small ImGui helpers shared by the panel and compare mode.
#include <imgui.h>

#include <algorithm>
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

// Made right after a section's collapsing header or tree node has been drawn and found open, and
// ended once the section's widgets are drawn: when a click has just opened the section, the panel
// scrolls so that the section shows to its end, or, taller than the panel, from its header down.
// (A section opened near the panel's bottom edge otherwise seemed to do nothing.)
class RevealWhenOpened {
 public:
  RevealWhenOpened() : opened_(ImGui::IsItemToggledOpen()), headerTop_(ImGui::GetItemRectMin().y) {}
  ~RevealWhenOpened() {
    if (!opened_) return;
    const ImGuiStyle& style = ImGui::GetStyle();
    const float top = ImGui::GetWindowPos().y + ImGui::GetFrameHeight() +
                      style.WindowPadding.y;  // under the title
    const float bottom = ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - style.WindowPadding.y;
    const float end = ImGui::GetCursorScreenPos().y;  // under the section's last widget
    const float by = std::min(end - bottom, headerTop_ - top);
    if (by > 0) ImGui::SetScrollY(ImGui::GetScrollY() + by);
  }
  RevealWhenOpened(const RevealWhenOpened&) = delete;
  RevealWhenOpened& operator=(const RevealWhenOpened&) = delete;

 private:
  bool opened_;
  float headerTop_;
};

}  // namespace clothlab
