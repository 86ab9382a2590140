#include "engine/runtime/switch_table.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "engine/common/error.h"

namespace p64 {
namespace {

bool whole_int(const std::string& text, long long& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool finite_number(const std::string& text, double& v) {
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(v);
}

SwitchInfo entry(std::string name, SwitchType type, std::string doc, std::string default_value, std::string status) {
  SwitchInfo s;
  s.name = std::move(name);
  s.type = type;
  s.description = std::move(doc);
  s.default_value = std::move(default_value);
  s.status = std::move(status);
  return s;
}

}  // namespace

SwitchInfo bool_switch(std::string name, std::string doc, bool default_on, std::string status) {
  SwitchInfo s = entry(std::move(name), SwitchType::Bool, std::move(doc), default_on ? "1" : "0", std::move(status));
  s.choices = {"0", "1"};
  return s;
}

SwitchInfo int_switch(std::string name, std::string doc, int default_value, std::initializer_list<int> allowed,
                      std::string status) {
  SwitchInfo s =
      entry(std::move(name), SwitchType::Int, std::move(doc), std::to_string(default_value), std::move(status));
  for (int v : allowed) s.choices.push_back(std::to_string(v));
  return s;
}

SwitchInfo int_range_switch(std::string name, std::string doc, int default_value, int64_t min, int64_t max,
                            std::string status) {
  SwitchInfo s =
      entry(std::move(name), SwitchType::Int, std::move(doc), std::to_string(default_value), std::move(status));
  s.min = min;
  s.max = max;
  return s;
}

SwitchInfo enum_switch(std::string name, std::string doc, std::string default_value,
                       std::initializer_list<const char*> allowed, std::string status) {
  SwitchInfo s = entry(std::move(name), SwitchType::Enum, std::move(doc), std::move(default_value), std::move(status));
  for (const char* v : allowed) s.choices.emplace_back(v);
  return s;
}

SwitchInfo float_switch(std::string name, std::string doc, double default_value, std::string status) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", default_value);
  return entry(std::move(name), SwitchType::Float, std::move(doc), text, std::move(status));
}

std::string SwitchInfo::values() const {
  if (type == SwitchType::Float) return "float";
  if (choices.empty()) return std::to_string(min) + ".." + std::to_string(max);
  std::string s;
  for (const auto& c : choices) s += (s.empty() ? "" : "|") + c;
  return s;
}

bool SwitchInfo::allows(const std::string& value) const {
  if (type == SwitchType::Float) {
    double v = 0;
    return finite_number(value, v);
  }
  if (choices.empty()) {
    long long v = 0;
    return whole_int(value, v) && v >= min && v <= max;
  }
  for (const auto& c : choices)
    if (c == value) return true;
  return false;
}

std::string SwitchInfo::expected() const {
  if (type == SwitchType::Float) return "a finite number";
  if (choices.empty()) return "an integer in " + values();
  return "one of " + values();
}

std::string SwitchInfo::canonical(const std::string& value) const {
  if (!allows(value)) return value;
  if (type == SwitchType::Float) {
    double v = 0;
    finite_number(value, v);
    if (v == 0) v = 0;  // -0 runs as 0
    // The shortest text that reads back as the same double: equal numbers, equal text.
    char text[32];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, v);
      double back = 0;
      if (finite_number(text, back) && back == v) break;
    }
    return text;
  }
  if (type == SwitchType::Int) {
    long long v = 0;
    whole_int(value, v);
    return std::to_string(v);
  }
  return value;  // Bool and Enum: one of the choices, spelled as the table spells it
}

std::vector<std::string> SwitchInfo::picker_values() const {
  if (type == SwitchType::Float) return {default_value};
  if (!choices.empty()) return choices;
  std::vector<std::string> v = {std::to_string(min)};
  if (default_value != v.front() && default_value != std::to_string(max)) v.push_back(default_value);
  if (max != min) v.push_back(std::to_string(max));
  return v;
}

void check_switch_values(const std::string& backend, const std::vector<SwitchInfo>& offered,
                         const std::map<std::string, std::string>& given) {
  for (const SwitchInfo& s : offered) {
    const auto it = given.find(s.name);
    if (it == given.end() || s.allows(it->second)) continue;
    throw Error(backend + " backend: switch " + s.name + "=" + it->second + " is not " + s.expected() + " (default " +
                s.default_value + ")");
  }
}

SwitchValues::SwitchValues(const std::string& backend, const std::vector<SwitchInfo>& table,
                           const std::map<std::string, std::string>& given) {
  for (const SwitchInfo& s : table) entries_[s.name] = Entry{s.type, s.default_value, false};
  for (const auto& [name, value] : given) {
    const auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string names;
      for (const SwitchInfo& s : table) names += (names.empty() ? "" : ", ") + s.name;
      throw Error(backend + " backend: unknown switch '" + name + "' (offered: " + (names.empty() ? "none" : names) +
                  ")");
    }
    it->second.value = value;
    it->second.given = true;
  }
  check_switch_values(backend, table, given);
}

const SwitchValues::Entry& SwitchValues::entry(std::string_view name, SwitchType type) const {
  // Reading a switch the table lacks, or as another type, is the backend's own mistake.
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw std::logic_error("switch '" + std::string(name) + "' is not in the table");
  if (it->second.type != type) throw std::logic_error("switch '" + std::string(name) + "' read as another type");
  return it->second;
}

bool SwitchValues::flag(std::string_view name) const { return entry(name, SwitchType::Bool).value == "1"; }

int SwitchValues::integer(std::string_view name) const {
  long long v = 0;
  whole_int(entry(name, SwitchType::Int).value, v);  // checked against the table already
  return static_cast<int>(v);
}

double SwitchValues::number(std::string_view name) const {
  double v = 0;
  finite_number(entry(name, SwitchType::Float).value, v);
  return v;
}

const std::string& SwitchValues::text(std::string_view name) const { return entry(name, SwitchType::Enum).value; }

bool SwitchValues::given(std::string_view name) const {
  const auto it = entries_.find(name);
  return it != entries_.end() && it->second.given;
}

}  // namespace p64
