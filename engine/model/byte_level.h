#pragma once
#include <string>
#include <string_view>

namespace p64::byte_level {

// GPT-2's byte-to-unicode alphabet: printable Latin-1 bytes map to themselves, the other 68
// bytes (controls, space, 0x7F..0xA0, 0xAD) map to U+0100 upwards, so that every byte string
// is a printable string and a BPE vocabulary never needs a raw space or control byte.
const std::string& char_of_byte(uint8_t b);  // UTF-8 of the code point that stands for byte b

// Raw bytes -> byte-level string (each byte becomes its code point's UTF-8).
std::string encode(std::string_view bytes);

// Byte-level string -> raw bytes. Code points outside the alphabet are copied as their UTF-8
// (added tokens are often stored in plain text); returns false when any was.
bool decode(std::string_view text, std::string& bytes);

}  // namespace p64::byte_level
