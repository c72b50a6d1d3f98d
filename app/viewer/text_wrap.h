#pragma once
// Packing text into rows of a given width, measured by the caller (ImGui::CalcTextSize(...).x in
// the viewer), for the compare panes' labels and the panel's messages. ImGui 1.86's TextWrapped
// breaks a word too long for the line after any '.', so a message that starts with
// "../shared/testdata/..." showed as a line ".", a line "." and then the path cut at the panel's
// edge.
#include <string>
#include <string_view>
#include <vector>

namespace clothlab {

// The parts joined by `separator`, in rows no wider than `width` where a part fits alone (a
// part wider than that gets a row of its own).
template <typename Measure>
std::vector<std::string> packIntoRows(const std::vector<std::string>& parts, std::string_view separator, float width,
                                      Measure measure) {
  std::vector<std::string> rows;
  for (const std::string& part : parts) {
    if (!rows.empty()) {
      std::string joined = rows.back();
      joined.append(separator).append(part);
      if (measure(std::string_view(joined)) <= width) {
        rows.back() = std::move(joined);
        continue;
      }
    }
    rows.push_back(part);
  }
  return rows;
}

// `text` in lines no wider than `width`, broken at spaces, '\n' ending a line. A word longer than
// a line is broken after the last '/' that fits, else after the last character that fits (always
// at least one); the words after it continue its last piece's line.
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
  while (true) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view paragraph = text.substr(start, end - start);
    const size_t before = lines.size();
    std::vector<std::string> run;  // words that fit a line, packed together
    auto flush = [&] {
      for (std::string& row : packIntoRows(run, " ", width, measure)) lines.push_back(std::move(row));
      run.clear();
    };
    while (!paragraph.empty()) {
      const size_t space = paragraph.find(' ');
      std::string_view word = paragraph.substr(0, space);
      paragraph.remove_prefix(space == std::string_view::npos ? paragraph.size() : space + 1);
      if (measure(word) > width) {
        flush();
        for (size_t cut; (cut = fittingPrefix(word)) < word.size(); word.remove_prefix(cut))
          lines.emplace_back(word.substr(0, cut));
      }
      run.emplace_back(word);
    }
    flush();
    if (lines.size() == before) lines.emplace_back();  // an empty paragraph is an empty line
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace clothlab
