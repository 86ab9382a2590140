#include "engine/runtime/backend.h"

#include <string>

namespace p64 {

int BackendOptions::get_int(std::string_view name, int fallback) const {
  auto it = switches.find(std::string(name));
  if (it == switches.end()) return fallback;
  return std::stoi(it->second);
}

bool BackendOptions::get_bool(std::string_view name, bool fallback) const {
  auto it = switches.find(std::string(name));
  if (it == switches.end()) return fallback;
  const std::string& v = it->second;
  return v == "1" || v == "on" || v == "true" || v == "yes";
}

}  // namespace p64
