#include "engine/model/byte_level.h"

#include <array>
#include <unordered_map>

#include "engine/model/utf8.h"

namespace p64::byte_level {
namespace {

struct Alphabet {
  std::array<std::string, 256> of_byte;
  std::unordered_map<char32_t, uint8_t> byte_of_cp;
  Alphabet() {
    // Bytes that are printable Latin-1 keep their own code point; the rest are numbered
    // from U+0100 in byte order (GPT-2's bytes_to_unicode).
    auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = printable(b) ? static_cast<char32_t>(b) : next++;
      of_byte[static_cast<size_t>(b)] = utf8::encode(cp);
      byte_of_cp[cp] = static_cast<uint8_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::string& char_of_byte(uint8_t b) { return alphabet().of_byte[b]; }

std::string encode(std::string_view bytes) {
  const auto& a = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += a.of_byte[static_cast<uint8_t>(c)];
  return out;
}

bool decode(std::string_view text, std::string& bytes) {
  const auto& a = alphabet();
  bool all_mapped = true;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t len = 0;
    const char32_t cp = utf8::decode_at(text, pos, len);
    auto it = a.byte_of_cp.find(cp);
    if (it != a.byte_of_cp.end() && !(cp == 0xFFFD && len == 1)) {
      bytes += static_cast<char>(it->second);
    } else {
      bytes.append(text.substr(pos, len));
      all_mapped = false;
    }
    pos += len;
  }
  return all_mapped;
}

}  // namespace p64::byte_level
