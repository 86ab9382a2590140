#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace p64::utf8 {

// Length of the UTF-8 sequence a lead byte starts (1..4), or 0 for a byte that cannot start
// one (a continuation byte 0x80..0xBF or 0xF8..0xFF).
size_t sequence_length(uint8_t lead);

// Appends the UTF-8 encoding of one code point (invalid code points become U+FFFD).
void append(std::string& out, char32_t cp);
std::string encode(char32_t cp);

// Decodes the sequence at s[pos]; sets `len` to the bytes it used (at least 1). Returns
// U+FFFD for a malformed sequence; a lead byte with too few continuation bytes is one unit
// (len covers them), so a character cut short becomes a single U+FFFD.
char32_t decode_at(std::string_view s, size_t pos, size_t& len);

// How many bytes at the end of `s` form the start of a sequence that is not yet complete
// (0..3): a streaming decoder holds these back until the next token brings the rest.
size_t incomplete_tail(std::string_view s);

// `s` with every malformed sequence replaced by U+FFFD; valid text comes back unchanged.
std::string sanitize(std::string_view s);

}  // namespace p64::utf8
