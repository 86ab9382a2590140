#include "engine/lab/store_text.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "engine/model/utf8.h"

namespace p64 {
namespace {

struct WarningState {
  std::mutex mutex;
  TextWarningSink sink;
  std::set<std::string> said;  // source + '\0' + field: a file of bad rows warns once per column
};

WarningState& warnings() {
  static WarningState s;
  return s;
}

}  // namespace

std::string store_text(std::string_view text, std::string_view source, std::string_view field) {
  std::string valid = utf8::sanitize(text);
  if (valid == text) return valid;
  const std::string message = utf8::sanitize(source) + ": " + std::string(field) +
                              " is not valid UTF-8; stored with U+FFFD in place of the bytes that are not";
  WarningState& w = warnings();
  std::lock_guard lock(w.mutex);
  if (!w.said.insert(std::string(source) + '\0' + std::string(field)).second) return valid;
  if (w.sink) w.sink(message);
  else std::fprintf(stderr, "p64: warning: %s\n", message.c_str());
  return valid;
}

TextWarningSink set_text_warning_sink(TextWarningSink sink) {
  WarningState& w = warnings();
  std::lock_guard lock(w.mutex);
  w.said.clear();
  return std::exchange(w.sink, std::move(sink));
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_text(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace p64
