#pragma once
// Parameter structs described by tables.
//
// Each parameter struct (solver parameters, simulation parameters) is plain data with defaults.
// A ParamTable lists its fields with key, unit, range and meaning, so that one generic piece of
// code reads them from JSON with clear errors, validates them, writes them back, and (in app/)
// draws a panel for them. sim/ never sees the panel.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/format.h"
#include "sim/json_text.h"

namespace clothlab {

template <class Params>
struct ParamInfo {
  using Field = std::variant<double Params::*, int Params::*, bool Params::*, std::string Params::*>;
  ParamInfo(std::string key_, std::string unit_, std::string description_, Field field_,
            double min_ = 0, double max_ = 0, bool logarithmic_ = false,
            std::vector<std::string> choices_ = std::vector<std::string>())
      : key(std::move(key_)), unit(std::move(unit_)), description(std::move(description_)),
        field(field_), min(min_), max(max_), logarithmic(logarithmic_), choices(std::move(choices_)) {}
  std::string key;          // JSON key, e.g. "max_iterations"
  std::string unit;         // SI unit or "" for dimensionless
  std::string description;  // one line
  Field field;
  double min = 0, max = 0;  // valid closed range for numbers
  bool logarithmic = false;  // range spans decades: logarithmic slider
  std::vector<std::string> choices;  // for string fields
};

template <class Params>
using ParamTable = std::vector<ParamInfo<Params>>;

// The entry for `key`, or nullptr.
template <class Params>
const ParamInfo<Params>* findParam(const ParamTable<Params>& table, const std::string& key) {
  for (const auto& entry : table)
    if (entry.key == key) return &entry;
  return nullptr;
}

// A number in a message: whole ones as integers (100, not 100.0; 2147483647, not 2.1e+09),
// others as JSON writes them (shortest exact), NaN and infinities as nan and inf (JSON: null).
inline std::string numberText(double v) {
  if (!std::isfinite(v)) return formatG(v);
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  return nlohmann::json(v).dump();
}

// "AT: SHOWN is outside the valid range [min, max] unit".
inline std::string outsideRange(const std::string& at, const std::string& shown, double min,
                                double max, const std::string& unit = "") {
  return at + ": " + shown + " is outside the valid range [" + numberText(min) + ", " +
         numberText(max) + "]" + (unit.empty() ? "" : " " + unit);
}

// Checks ranges and choices. Returns the first problem, naming `where` + key.
template <class Params>
std::optional<std::string> validateParams(const ParamTable<Params>& table, const Params& params,
                                          const std::string& where) {
  for (const auto& info : table) {
    const std::string at = where + "." + info.key;
    auto range = [&](double v) -> std::optional<std::string> {
      if (!(v >= info.min && v <= info.max))  // also catches NaN
        return outsideRange(at, numberText(v), info.min, info.max, info.unit);
      return std::nullopt;
    };
    if (auto member = std::get_if<double Params::*>(&info.field)) {
      if (auto e = range(params.*(*member))) return e;
    } else if (auto member = std::get_if<int Params::*>(&info.field)) {
      if (auto e = range(params.*(*member))) return e;
    } else if (auto member = std::get_if<std::string Params::*>(&info.field)) {
      const std::string& v = params.*(*member);
      if (!info.choices.empty() &&
          std::find(info.choices.begin(), info.choices.end(), v) == info.choices.end()) {
        std::string list;
        for (const auto& c : info.choices) list += (list.empty() ? "" : ", ") + c;
        return at + ": '" + v + "' is not one of " + list;
      }
    }
  }
  return std::nullopt;
}

// Reads the keys of `object` into `params`. Unknown keys, wrong types and out-of-range values are
// errors naming `where` + key. Keys in `ignoredKeys` are skipped (handled by the caller).
template <class Params>
std::optional<std::string> readParams(const nlohmann::json& object, const ParamTable<Params>& table,
                                      Params& params, const std::string& where,
                                      const std::vector<std::string>& ignoredKeys = {}) {
  if (!object.is_object()) return expectedButGot(where, "an object", object);
  for (const auto& [key, value] : object.items()) {
    if (std::find(ignoredKeys.begin(), ignoredKeys.end(), key) != ignoredKeys.end()) continue;
    const ParamInfo<Params>* info = findParam(table, key);
    if (!info) {
      std::string known;
      for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.key;
      for (const auto& k : ignoredKeys) known += (known.empty() ? "" : ", ") + k;
      return where + "." + key + ": unknown key (known: " + known + ")";
    }
    const std::string at = where + "." + key;
    if (auto member = std::get_if<double Params::*>(&info->field)) {
      if (!value.is_number()) return expectedButGot(at, "a number", value);
      params.*(*member) = value.template get<double>();
    } else if (auto member = std::get_if<int Params::*>(&info->field)) {
      const std::optional<double> wide = wholeNumber(value);
      if (!wide) return expectedButGot(at, "an integer", value);
      // Checked before the narrowing to int: 4294967297 wrapped to 1 and passed.
      if (!(*wide >= info->min && *wide <= info->max))
        return outsideRange(at, value.dump(), info->min, info->max, info->unit);
      params.*(*member) = static_cast<int>(*wide);
    } else if (auto member = std::get_if<bool Params::*>(&info->field)) {
      if (!value.is_boolean()) return expectedButGot(at, "true or false", value);
      params.*(*member) = value.template get<bool>();
    } else if (auto member = std::get_if<std::string Params::*>(&info->field)) {
      if (!value.is_string()) return expectedButGot(at, "a string", value);
      params.*(*member) = value.template get<std::string>();
    }
  }
  return validateParams(table, params, where);
}

template <class Params>
nlohmann::json writeParams(const ParamTable<Params>& table, const Params& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& info : table)
    std::visit([&](auto member) { out[info.key] = params.*member; }, info.field);
  return out;
}

// A parameter table without its struct type: what a panel needs to draw an editor for a
// parameter object it only knows as JSON (solver parameters in the viewer).
struct ParamDescription {
  enum class Type { Number, Integer, Boolean, Text };
  std::string key, unit, description;
  Type type = Type::Number;
  double min = 0, max = 0;
  bool logarithmic = false;
  std::vector<std::string> choices;  // Text: the allowed values (empty: free text)
};

template <class Params>
std::vector<ParamDescription> describeParams(const ParamTable<Params>& table) {
  std::vector<ParamDescription> out;
  for (const auto& info : table) {
    ParamDescription d;
    d.key = info.key;
    d.unit = info.unit;
    d.description = info.description;
    d.min = info.min;
    d.max = info.max;
    d.logarithmic = info.logarithmic;
    d.choices = info.choices;
    if (std::holds_alternative<int Params::*>(info.field)) d.type = ParamDescription::Type::Integer;
    else if (std::holds_alternative<bool Params::*>(info.field)) d.type = ParamDescription::Type::Boolean;
    else if (std::holds_alternative<std::string Params::*>(info.field)) d.type = ParamDescription::Type::Text;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace clothlab
