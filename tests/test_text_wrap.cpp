// Wrapping of the viewer's panel messages (app/viewer/text_wrap.h), measured here in characters,
// and the list they are kept in (app/viewer/message_list.h).
#include <gtest/gtest.h>

#include "app/viewer/message_list.h"
#include "app/viewer/text_wrap.h"

using clothlab::wrapText;

namespace {
std::vector<std::string> wrap(const std::string& text, float width) {
  return wrapText(text, width, [](std::string_view s) { return static_cast<float>(s.size()); });
}
}  // namespace

TEST(TextWrap, BreaksAtSpacesAndKeepsNewlines) {
  EXPECT_EQ(wrap("the cloth diverged at step 12", 12),
            (std::vector<std::string>{"the cloth", "diverged at", "step 12"}));
  EXPECT_EQ(wrap("one\ntwo three", 20), (std::vector<std::string>{"one", "two three"}));
  EXPECT_EQ(wrap("fits", 4), (std::vector<std::string>{"fits"}));
}

// A path longer than the line breaks after its last '/' that fits, never after a lone "." (what
// ImGui::TextWrapped did with "../shared/...").
TEST(TextWrap, LongPathBreaksAfterSlashes) {
  const auto lines = wrap("../shared/testdata/obstacles/spot/spot_triangulated.obj: added as a mesh obstacle", 24);
  EXPECT_EQ(lines, (std::vector<std::string>{"../shared/testdata/", "obstacles/spot/",
                                             "spot_triangulated.obj:", "added as a mesh obstacle"}));
  for (const auto& line : lines) EXPECT_LE(line.size(), 24u) << line;
}

// A word without a '/' that fits is cut at the line's width; a line narrower than one character
// still takes one, so wrapping always ends.
TEST(TextWrap, WordWithoutSlashIsCutAtTheWidth) {
  EXPECT_EQ(wrap("abcdefghij k", 4), (std::vector<std::string>{"abcd", "efgh", "ij k"}));
  EXPECT_EQ(wrap("abc", 0), (std::vector<std::string>{"a", "b", "c"}));
}

// The compare panes' labels: parts joined by the separator while they fit; a part too wide for
// a row gets one of its own, whole.
TEST(TextWrap, PartsPackIntoRowsWithTheirSeparator) {
  const auto measure = [](std::string_view s) { return static_cast<float>(s.size()); };
  EXPECT_EQ(clothlab::packIntoRows({"hanging", "625 vertices", "h 0.001 s"}, ", ", 22, measure),
            (std::vector<std::string>{"hanging, 625 vertices", "h 0.001 s"}));
  EXPECT_EQ(clothlab::packIntoRows({"a", "a-very-long-part", "b"}, ", ", 6, measure),
            (std::vector<std::string>{"a", "a-very-long-part", "b"}));
}

// A message repeated counts up on the newest instead of pushing older ones (an error) out; the
// same text of another kind, or after another message, is a message of its own.
TEST(PanelMessages, ARepeatCountsUpInsteadOfPushingOthersOut) {
  using clothlab::PanelMessage;
  using Kind = clothlab::RunnerMessage::Kind;
  std::deque<PanelMessage> messages;
  clothlab::addPanelMessage(messages, Kind::Error, "bad.obj: line 3: face index 7 is out of range");
  for (int i = 0; i < 20; ++i) clothlab::addPanelMessage(messages, Kind::Info, "nothing to undo");
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].shown(), "nothing to undo (x20)");
  EXPECT_EQ(messages[1].shown(), "bad.obj: line 3: face index 7 is out of range");
  clothlab::addPanelMessage(messages, Kind::Warning, "nothing to undo");
  clothlab::addPanelMessage(messages, Kind::Info, "nothing to undo");
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0].shown(), "nothing to undo");
  for (int i = 0; i < 20; ++i)
    clothlab::addPanelMessage(messages, Kind::Info, "message " + std::to_string(i));
  EXPECT_EQ(messages.size(), clothlab::kMaxPanelMessages);
  EXPECT_EQ(messages[0].text, "message 19");
}
