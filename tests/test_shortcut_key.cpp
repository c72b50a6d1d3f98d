// Keyboard shortcuts go by the key's label on the active layout (app/viewer/shortcut_key.h).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "app/viewer/shortcut_key.h"

using clothlab::keyLabelled;
using clothlab::shortcutKey;

namespace {
// A layout as glfwGetKeyName sees it: the US one with some keys relabelled.
struct Layout {
  std::vector<std::pair<int, std::string>> changed;
  const char* operator()(int key) const {
    for (const auto& [k, name] : changed)
      if (k == key) return name.c_str();
    static std::string us[GLFW_KEY_LAST + 1];
    if (key >= GLFW_KEY_A && key <= GLFW_KEY_Z)
      return (us[key] = std::string(1, char('a' + key - GLFW_KEY_A))).c_str();
    return nullptr;
  }
};
}  // namespace

// On a German layout the key in the US layout's Y place is labelled Z, and the other way round:
// Ctrl on the key labelled Z must undo, not redo.
TEST(ShortcutKey, GermanLayoutSwapsZAndY) {
  EXPECT_EQ(shortcutKey(GLFW_KEY_Y, "z"), GLFW_KEY_Z);
  EXPECT_EQ(shortcutKey(GLFW_KEY_Z, "y"), GLFW_KEY_Y);
}

// On a French layout the US layout's A place is labelled Q (Ctrl+Q quits there) and its Q place A.
TEST(ShortcutKey, FrenchLayoutMovesQ) {
  EXPECT_EQ(shortcutKey(GLFW_KEY_A, "q"), GLFW_KEY_Q);
  EXPECT_EQ(shortcutKey(GLFW_KEY_Q, "a"), GLFW_KEY_A);
  EXPECT_EQ(shortcutKey(GLFW_KEY_W, "z"), GLFW_KEY_Z);
  EXPECT_EQ(shortcutKey(GLFW_KEY_SEMICOLON, "m"), GLFW_KEY_M);
}

// The US layout changes nothing; capitals count as their letter; '.' and '/' are shortcuts too.
TEST(ShortcutKey, UsLayoutAndPunctuation) {
  for (int key = GLFW_KEY_A; key <= GLFW_KEY_Z; ++key) {
    const char name[2] = {static_cast<char>('a' + (key - GLFW_KEY_A)), '\0'};
    EXPECT_EQ(shortcutKey(key, name), key) << name;
  }
  EXPECT_EQ(shortcutKey(GLFW_KEY_C, "C"), GLFW_KEY_C);
  EXPECT_EQ(shortcutKey(GLFW_KEY_E, "."), GLFW_KEY_PERIOD);
  EXPECT_EQ(shortcutKey(GLFW_KEY_SLASH, "/"), GLFW_KEY_SLASH);
}

// Keys that print nothing (F1, Esc, Space: glfwGetKeyName gives null), and names that are no
// ASCII letter (a Cyrillic letter, a digit, '-', a dead key's diacritic): the physical key.
TEST(ShortcutKey, OtherNamesKeepThePhysicalKey) {
  EXPECT_EQ(shortcutKey(GLFW_KEY_F1, nullptr), GLFW_KEY_F1);
  EXPECT_EQ(shortcutKey(GLFW_KEY_ESCAPE, nullptr), GLFW_KEY_ESCAPE);
  EXPECT_EQ(shortcutKey(GLFW_KEY_SPACE, ""), GLFW_KEY_SPACE);
  EXPECT_EQ(shortcutKey(GLFW_KEY_Z, "\xd1\x8f"), GLFW_KEY_Z);  // "я" on a Russian layout
  EXPECT_EQ(shortcutKey(GLFW_KEY_SLASH, "-"), GLFW_KEY_SLASH);
  EXPECT_EQ(shortcutKey(GLFW_KEY_7, "7"), GLFW_KEY_7);
  EXPECT_EQ(shortcutKey(GLFW_KEY_LEFT_BRACKET, "^"), GLFW_KEY_LEFT_BRACKET);
}

// Dear ImGui's text-field shortcuts are pointed at the keys the layout labels with their letters.
TEST(ShortcutKey, TextFieldLettersFindTheirLabelledKeys) {
  const Layout us;
  for (char c : {'a', 'c', 'v', 'x', 'y', 'z'})
    EXPECT_EQ(keyLabelled(c, us), GLFW_KEY_A + (c - 'a')) << c;
  const Layout german{{{GLFW_KEY_Y, "z"}, {GLFW_KEY_Z, "y"}}};
  EXPECT_EQ(keyLabelled('z', german), GLFW_KEY_Y);
  EXPECT_EQ(keyLabelled('y', german), GLFW_KEY_Z);
  EXPECT_EQ(keyLabelled('c', german), GLFW_KEY_C);
  // AZERTY: a and q swap, z and w swap, m sits where the US layout has ';' and its own place
  // prints ','.
  const Layout french{{{GLFW_KEY_A, "q"},
                       {GLFW_KEY_Q, "a"},
                       {GLFW_KEY_W, "z"},
                       {GLFW_KEY_Z, "w"},
                       {GLFW_KEY_SEMICOLON, "m"},
                       {GLFW_KEY_M, ","}}};
  EXPECT_EQ(keyLabelled('a', french), GLFW_KEY_Q);
  EXPECT_EQ(keyLabelled('z', french), GLFW_KEY_W);
  EXPECT_EQ(keyLabelled('m', french), GLFW_KEY_SEMICOLON);
  // No key carries the letter (Russian): the US layout's place.
  const Layout russian{{{GLFW_KEY_Z, "\xd1\x8f"}, {GLFW_KEY_C, "\xd1\x81"}}};
  EXPECT_EQ(keyLabelled('z', russian), GLFW_KEY_Z);
  EXPECT_EQ(keyLabelled('c', russian), GLFW_KEY_C);
}
