#pragma once
// Wrapping of panel messages. ImGui 1.86's TextWrapped breaks a word too long for the line after
// any '.', so a message that starts with "../shared/testdata/..." showed as a line ".", a line "."
// and then the path cut at the panel's edge. Messages here mostly start with a file path: this
// breaks at spaces, and a word longer than the line after its last '/' that fits.
#include <string>
#include <string_view>
#include <vector>

namespace clothlab {

// `text` in lines no wider than `width` by `measure` (string_view -> width, as
// ImGui::CalcTextSize(...).x), '\n' ending a line. A word longer than a line is broken after the
// last '/' that fits, else after the last character that fits (always at least one).
template <typename Measure>
std::vector<std::string> wrapText(std::string_view text, float width, Measure measure) {
  std::vector<std::string> lines;
  // The longest prefix of `word` that fits, preferring one that ends in '/'.
  auto fittingPrefix = [&](std::string_view word) {
    size_t fits = 1, slash = 0;
    while (fits < word.size() && measure(word.substr(0, fits + 1)) <= width) ++fits;
    for (size_t k = 0; k < fits; ++k)
      if (word[k] == '/') slash = k + 1;
    return slash > 0 && fits < word.size() ? slash : fits;
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view paragraph = text.substr(start, end - start);
    std::string line;
    while (!paragraph.empty()) {
      const size_t space = paragraph.find(' ');
      std::string_view word = paragraph.substr(0, space);
      const std::string joined = line.empty() ? std::string(word) : line + ' ' + std::string(word);
      if (measure(joined) <= width) {
        line = joined;
      } else if (!line.empty()) {
        lines.push_back(std::move(line));
        line.clear();
        continue;  // the word again, on a line of its own
      } else if (const size_t cut = fittingPrefix(word); cut < word.size()) {
        lines.emplace_back(word.substr(0, cut));
        paragraph.remove_prefix(cut);
        continue;
      } else {
        line = word;  // one character wider than the line
      }
      paragraph.remove_prefix(space == std::string_view::npos ? paragraph.size() : space + 1);
    }
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace clothlab
