#include "engine/format/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define P64_CRC32C_X86 1
#endif

namespace p64 {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;

// tables[k][b]: CRC of byte b followed by k zero bytes, so eight bytes fold in one step.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (kPoly & (0u - (c & 1u)));
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
};

const Tables& tables() {
  static const Tables tab;
  return tab;
}

#ifdef P64_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* p, size_t n, uint32_t c) {
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = static_cast<uint32_t>(_mm_crc32_u64(c, w));
    p += 8;
    n -= 8;
  }
  while (n--) c = _mm_crc32_u8(c, *p++);
  return c;
}
#endif

}  // namespace

uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc) {
  const auto& t = tables().t;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;  // little-endian hosts only, like the rest of the file formats
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^
        t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return ~c;
}

bool crc32c_hardware_available() {
#ifdef P64_CRC32C_X86
  static const bool ok = __builtin_cpu_supports("sse4.2");
  return ok;
#else
  return false;
#endif
}

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
#ifdef P64_CRC32C_X86
  if (crc32c_hardware_available()) return ~crc32c_sse42(static_cast<const uint8_t*>(data), n, ~crc);
#endif
  return crc32c_portable(data, n, crc);
}

}  // namespace p64
