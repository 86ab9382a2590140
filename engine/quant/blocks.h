#pragma once
#include <cstdint>

// GGML's quantized block structs, byte for byte (ggml-common.h defines the same layouts).
// Every multi-byte field is little-endian, as GGUF stores it; `d`/`dmin`/`m` are IEEE fp16 bits.
namespace p64::blocks {

constexpr int kQK = 32;    // elements per legacy block (Q4_0 ... Q8_0)
constexpr int kQKK = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high nibble
};
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // bit j = 5th bit of element j (a little-endian uint32)
  uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
// 8 sub-blocks of 32; value = d * scale_j * q - dmin * min_j with 6-bit scale_j/min_j packed in
// `scales` (see unpack_scale_min_k4) and 4-bit q.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// 16 sub-blocks of 16; value = d * scales[j] * (q - 32) with 6-bit q split into ql (4) + qh (2).
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block. Sub-blocks 0-3 keep
// theirs in the low 6 bits of bytes 0-3 / 4-7; sub-blocks 4-7 keep the low 4 bits in bytes
// 8-11 and the top 2 bits in the spare top bits of bytes 0-7.
inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}
// Inverse of unpack_scale_min_k4 for all eight sub-blocks (each value 0..63).
inline void pack_scale_min_k4(const uint8_t scale[8], const uint8_t min[8], uint8_t q[12]) {
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>((scale[j] & 63) | ((scale[j + 4] >> 4) << 6));
    q[j + 4] = static_cast<uint8_t>((min[j] & 63) | ((min[j + 4] >> 4) << 6));
    q[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0xF) | ((min[j + 4] & 0xF) << 4));
  }
}

}  // namespace p64::blocks
