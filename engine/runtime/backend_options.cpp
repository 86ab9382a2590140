#include "engine/runtime/backend.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/common/error.h"

namespace p64 {

int BackendOptions::get_int(std::string_view name, int fallback) const {
  auto it = switches.find(std::string(name));
  if (it == switches.end()) return fallback;
  int v = 0;
  const std::string& text = it->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error("switch " + std::string(name) + "=" + text + ": not an integer");
  return v;
}

namespace {

bool parse_whole_int(const std::string& text, long long& v) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool allowed(const std::string& value, const std::string& values) {
  if (values.empty()) return true;
  if (values == "float") {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    return !value.empty() && end == value.c_str() + value.size() && std::isfinite(v);
  }
  if (const auto dots = values.find(".."); dots != std::string::npos) {
    long long lo = 0, hi = 0, v = 0;
    return parse_whole_int(values.substr(0, dots), lo) && parse_whole_int(values.substr(dots + 2), hi) &&
           parse_whole_int(value, v) && v >= lo && v <= hi;
  }
  size_t at = 0;
  for (;;) {
    const size_t bar = values.find('|', at);
    if (values.compare(at, bar == std::string::npos ? std::string::npos : bar - at, value) == 0) return true;
    if (bar == std::string::npos) return false;
    at = bar + 1;
  }
}

}  // namespace

void check_switch_values(const std::string& backend, const std::vector<SwitchInfo>& offered,
                         const std::map<std::string, std::string>& given) {
  for (const SwitchInfo& s : offered) {
    const auto it = given.find(s.name);
    if (it == given.end() || allowed(it->second, s.values)) continue;
    const bool range = s.values.find("..") != std::string::npos;
    const std::string expected = s.values == "float" ? "a finite number"
                                 : range             ? "an integer in " + s.values
                                                     : "one of " + s.values;
    throw Error(backend + " backend: switch " + s.name + "=" + it->second + " is not " + expected + " (default " +
                s.default_value + ")");
  }
}

bool BackendOptions::get_bool(std::string_view name, bool fallback) const {
  auto it = switches.find(std::string(name));
  if (it == switches.end()) return fallback;
  const std::string& v = it->second;
  return v == "1" || v == "on" || v == "true" || v == "yes";
}

}  // namespace p64
