#pragma once
// Files replaced whole or not at all: written to a temporary file beside them, then renamed over
// them (writeObj, writeSceneFile, writePng), so that a write that fails part-way leaves what was
// there as it was.
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace clothlab {

// Renames `temporary` over `path`. On failure removes `temporary` and returns why, in the
// system's words ("Is a directory").
inline std::optional<std::string> renameOver(const std::string& temporary,
                                             const std::string& path) {
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (!ec) return std::nullopt;
  std::error_code ignored;
  std::filesystem::remove(temporary, ignored);
  return ec.message();
}

}  // namespace clothlab
