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

}  // namespace clothlab
