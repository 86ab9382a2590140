#include "engine/model/utf8.h"

namespace p64::utf8 {

size_t sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xC0) return 0;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF8) return 4;
  return 0;
}

void append(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string encode(char32_t cp) {
  std::string s;
  append(s, cp);
  return s;
}

char32_t decode_at(std::string_view s, size_t pos, size_t& len) {
  len = 1;
  const auto b0 = static_cast<uint8_t>(s[pos]);
  const size_t n = sequence_length(b0);
  if (n == 1) return b0;
  if (n == 0) return 0xFFFD;
  char32_t cp = b0 & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    // A sequence cut short is one malformed unit (one U+FFFD), not one per byte.
    if (pos + i >= s.size() || (static_cast<uint8_t>(s[pos + i]) & 0xC0) != 0x80) {
      len = i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (static_cast<uint8_t>(s[pos + i]) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are malformed, not characters.
  static constexpr char32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_of_len[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
  len = n;
  return cp;
}

size_t incomplete_tail(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<uint8_t>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation: keep looking for its lead
    const size_t need = sequence_length(b);
    return need > back ? back : 0;
  }
  return 0;
}

std::string sanitize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    size_t len = 0;
    const char32_t cp = decode_at(s, pos, len);
    if (cp == 0xFFFD && !(len == 3 && s.substr(pos, 3) == "\xEF\xBF\xBD"))
      append(out, 0xFFFD);
    else
      out.append(s.substr(pos, len));
    pos += len;
  }
  return out;
}

}  // namespace p64::utf8
