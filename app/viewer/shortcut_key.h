#pragma once
// The key a keyboard shortcut means. GLFW's key codes name physical keys by their places on the
// US layout: on a German keyboard the key labelled Z reports GLFW_KEY_Y, so Ctrl+Z redid and
// Ctrl+Y undid, and on a French one Ctrl+Q sat on the key labelled A. A shortcut goes by the
// label instead: `name` is the character the active layout puts on the key (glfwGetKeyName, null
// for keys that print nothing). A single ASCII letter, '.' or '/' names the shortcut's key; any
// other name (a Cyrillic letter, a digit, a dead key) leaves the physical key, as US positions
// are what such layouts' users press for shortcuts.
#include <GLFW/glfw3.h>

namespace clothlab {

inline int shortcutKey(int key, const char* name) {
  if (name == nullptr || name[0] == '\0' || name[1] != '\0') return key;
  const char c = name[0];
  if (c >= 'a' && c <= 'z') return GLFW_KEY_A + (c - 'a');
  if (c >= 'A' && c <= 'Z') return GLFW_KEY_A + (c - 'A');
  if (c == '.') return GLFW_KEY_PERIOD;
  if (c == '/') return GLFW_KEY_SLASH;
  return key;
}

// The physical key (GLFW key code) that the active layout labels `letter` ('a' to 'z'), found
// through `nameOf(key)` (glfwGetKeyName(key, 0)) over the keys that print a character; the US
// layout's place of the letter where no key carries it (a Cyrillic layout). Dear ImGui 1.86 reads
// its text fields' shortcuts (Ctrl+A, C, V, X, Y, Z) at the physical places its GLFW back end
// gives it; the viewer points them at these keys instead.
template <class NameOf>
int keyLabelled(char letter, NameOf nameOf) {
  static constexpr int kPrintable[] = {GLFW_KEY_APOSTROPHE,  GLFW_KEY_COMMA,
                                       GLFW_KEY_MINUS,       GLFW_KEY_PERIOD,
                                       GLFW_KEY_SLASH,       GLFW_KEY_0,
                                       GLFW_KEY_1,           GLFW_KEY_2,
                                       GLFW_KEY_3,           GLFW_KEY_4,
                                       GLFW_KEY_5,           GLFW_KEY_6,
                                       GLFW_KEY_7,           GLFW_KEY_8,
                                       GLFW_KEY_9,           GLFW_KEY_SEMICOLON,
                                       GLFW_KEY_EQUAL,       GLFW_KEY_LEFT_BRACKET,
                                       GLFW_KEY_BACKSLASH,   GLFW_KEY_RIGHT_BRACKET,
                                       GLFW_KEY_GRAVE_ACCENT};
  auto labelled = [&](int key) {
    const char* name = nameOf(key);
    return name != nullptr && name[0] != '\0' && name[1] == '\0' &&
           (name[0] == letter || name[0] == letter - 'a' + 'A');
  };
  for (int key = GLFW_KEY_A; key <= GLFW_KEY_Z; ++key)
    if (labelled(key)) return key;
  for (int key : kPrintable)
    if (labelled(key)) return key;
  return GLFW_KEY_A + (letter - 'a');
}

}  // namespace clothlab
