#pragma once
// JSON as text for output and messages.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace clothlab {

// A 3-vector as a JSON array [x, y, z] (scene files, the viewer's log).
inline nlohmann::json vecJson(const Eigen::Vector3d& v) { return {v.x(), v.y(), v.z()}; }

// `value` written as JSON (indented by `indent`, or on one line), with a replacement character
// for bytes that are not UTF-8 (a Latin-1 file name): JSON cannot hold them, and nlohmann's
// plain dump throws on them.
inline std::string jsonText(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON value as an error message quotes it: scalars as written (long strings cut), arrays and
// objects of a few scalars as written, others by their size. A whole value was once quoted:
// 200 000 nested arrays where an object belongs overflowed the stack in the serializer.
inline std::string describeJson(const nlohmann::json& value) {
  constexpr size_t kMaxText = 60, kMaxElements = 8;
  const auto text = [](const nlohmann::json& v) {
    std::string out = jsonText(v);
    return out.size() > kMaxText ? out.substr(0, kMaxText) + "..." : out;
  };
  if (!value.is_structured()) return text(value);
  const bool flat = value.size() <= kMaxElements &&
                    std::none_of(value.begin(), value.end(),
                                 [](const nlohmann::json& v) { return v.is_structured(); });
  if (flat) return text(value);
  const std::string count = std::to_string(value.size()), plural = value.size() == 1 ? "" : "s";
  return value.is_array() ? "an array of " + count + " element" + plural
                          : "an object with " + count + " key" + plural;
}

// The value of a JSON number that is whole: an integer, or a number written with a point or an
// exponent but no fraction (8.0, 1e3: how many tools and people write counts); nullopt for
// anything else, a fraction (2.5), a value beyond a double's integers, or not a number.
inline std::optional<double> wholeNumber(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<double>();
  if (!value.is_number_float()) return std::nullopt;
  const double v = value.get<double>();
  if (!std::isfinite(v) || v != std::floor(v) || std::abs(v) > 9007199254740992.0)
    return std::nullopt;
  return v;
}

// "AT: expected WHAT, got VALUE", the value quoted briefly (describeJson): what the readers of
// scene files and parameters say of a value of the wrong kind.
inline std::string expectedButGot(const std::string& at, const std::string& what,
                                  const nlohmann::json& got) {
  return at + ": expected " + what + ", got " + describeJson(got);
}

}  // namespace clothlab
