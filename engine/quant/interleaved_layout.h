#pragma once
// Where things sit inside one unit of a row-interleaved form (the layouts of quant.h), named
// once for the packer (interleave.cpp) and the AVX-512 kernel (dot_avx512_interleaved.h).
// Offsets are bytes from the unit's start; `lane` is a row's place in its group of 16.
#include <cstddef>

namespace p64::r16 {

inline constexpr int kGroupRows = 16;

// A granule: quants 4k .. 4k + 3 of a 32-quant run for one row, 4 bytes at lane * 4 inside a
// 64-byte vector. Nibble runs (256 bytes) hold granule k in vector k % 4, low halves for k < 4.
constexpr size_t granule_at(int k, int lane) { return 64 * static_cast<size_t>(k) + 4 * static_cast<size_t>(lane); }
constexpr size_t nibble_granule_at(int k, int lane) { return granule_at(k % 4, lane); }

struct Q8_0 {  // two blocks: their scales, then each block's 8 granules of q + 128
  static constexpr size_t kUnitBytes = 1088;
  static constexpr int kBlocks = 2;
  static constexpr size_t scales(int j) { return 32 * static_cast<size_t>(j); }
  static constexpr size_t quants(int j) { return 64 + 512 * static_cast<size_t>(j); }
};

struct Q5_0 {  // two blocks: their scales, then each block's 8 fifth-bit masks and a nibble run
  static constexpr size_t kUnitBytes = 704;
  static constexpr int kBlocks = 2;
  static constexpr size_t scales(int j) { return 32 * static_cast<size_t>(j); }
  static constexpr size_t masks(int j) { return 64 + 320 * static_cast<size_t>(j); }  // mask k: 8 bytes at + 8k
  static constexpr size_t nibbles(int j) { return masks(j) + 64; }
};

struct Q4_K {  // one super-block: d, dmin, the 12 packed scale bytes by row, 8 nibble runs
  static constexpr size_t kUnitBytes = 2304;
  static constexpr int kBlocks = 8;
  static constexpr size_t kD = 0, kDmin = 32;
  static constexpr size_t scale_byte(int k) { return 64 + 16 * static_cast<size_t>(k); }
  static constexpr size_t nibbles(int s) { return 256 + 256 * static_cast<size_t>(s); }
};

struct Q6_K {  // one super-block: d, the 16 int8 scales by row, 8 nibble runs, 8 high-bit runs
  static constexpr size_t kUnitBytes = 3360;
  static constexpr int kBlocks = 8;
  static constexpr size_t kD = 0;
  static constexpr size_t scale(int g) { return 32 + 16 * static_cast<size_t>(g); }
  static constexpr size_t nibbles(int s) { return 288 + 256 * static_cast<size_t>(s); }
  // granule k's two high bits sit at bits 2 (k % 4) of the granule-(k / 4) vector
  static constexpr size_t high(int s) { return 2336 + 128 * static_cast<size_t>(s); }
};

}  // namespace p64::r16
