#pragma once
// The panel's messages, newest first and at most kMaxPanelMessages of them. A message that
// repeats the newest one (the same kind and text: "nothing to undo" for every Ctrl+Z pressed past
// the history's start) counts up on it, shown as "nothing to undo (x4)", instead of pushing the
// older ones, an error among them, out of the list.
#include <cstddef>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "app/viewer/sim_runner.h"

namespace clothlab {

struct PanelMessage {
  RunnerMessage::Kind kind = RunnerMessage::Kind::Info;
  std::string text;
  int repeats = 1;
  std::vector<std::string> lines;  // shown() wrapped (text_wrap.h) at width `linesWidth`
  float linesWidth = -1;
  std::string shown() const {
    return repeats > 1 ? text + " (x" + std::to_string(repeats) + ")" : text;
  }
};

inline constexpr size_t kMaxPanelMessages = 12;

inline void addPanelMessage(std::deque<PanelMessage>& messages, RunnerMessage::Kind kind,
                            const std::string& text) {
  if (!messages.empty() && messages.front().kind == kind && messages.front().text == text) {
    ++messages.front().repeats;
    messages.front().linesWidth = -1;  // wrapped again with the count
    return;
  }
  PanelMessage message;
  message.kind = kind;
  message.text = text;
  messages.push_front(std::move(message));
  while (messages.size() > kMaxPanelMessages) messages.pop_back();
}

}  // namespace clothlab
