#pragma once
// Text the lab store holds is valid UTF-8, so every whole-store export (report --format json,
// runs show, the GUI) can print it. Bytes that are not UTF-8 arrive from files the lab reads
// as bytes (a llama-bench CSV cell, a GGUF general.name, a path on a file system that is not
// UTF-8); they become U+FFFD (utf8::sanitize). The store's SQL layer applies it to every text
// it binds and reads (sqlite_util.cpp), so nothing reaches SQLite or leaves it unchecked;
// store_text() is the same replacement where the lab still knows which file and field the
// text came from, and says so.
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

// `text` as valid UTF-8. When bytes had to be replaced, one warning per `source` and `field`
// goes to the text warning sink: "SOURCE: FIELD is not valid UTF-8; ...".
std::string store_text(std::string_view text, std::string_view source, std::string_view field);

// Where store_text's warnings go; by default "p64: warning: ..." lines on stderr. Returns the
// sink it replaces (tests and the GUI put their own in).
using TextWarningSink = std::function<void(const std::string& warning)>;
TextWarningSink set_text_warning_sink(TextWarningSink sink);

// `j` as JSON text, strings that are not UTF-8 written with U+FFFD: nlohmann's plain dump()
// throws type_error 316 on them, after the measurement that produced them.
std::string json_text(const nlohmann::json& j, int indent = -1);
std::string json_text(const nlohmann::ordered_json& j, int indent = -1);

}  // namespace p64
