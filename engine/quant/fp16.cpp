// IEEE binary16 and bfloat16 conversions. Written with integer operations so every platform
// rounds the same way (round to nearest, ties to even), whatever its FPU offers.
#include <cstring>

#include "engine/quant/quant.h"

namespace p64 {
namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    // Subnormal (or zero): mant * 2^-24 is exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));  // inf / NaN keeps payload
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00 | ((ax >> 13) & 0x3ff));  // quiet NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // >= 65520 rounds to inf (tie goes to even)
  if (ax < 0x38800000u) {
    // Result is a half subnormal: count units of 2^-24 and round the dropped bits.
    const int e = static_cast<int>(ax >> 23);
    if (e < 102) return sign;  // below 2^-25: rounds to zero
    const uint32_t mant = (ax & 0x7fffff) | 0x800000;
    const int shift = 126 - e;  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // q may carry into the smallest normal: still right
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (ax - 0x38000000u) >> 13;  // rebias exponent 127 -> 15, keep 10 mantissa bits
  const uint32_t rem = ax & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is correct rounding
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_fp32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // keep NaN a NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

}  // namespace p64
