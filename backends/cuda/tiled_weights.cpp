#include "backends/cuda/tiled_weights.h"

#include <cstring>
#include <mutex>

#include "engine/common/error.h"
#include "engine/quant/blocks.h"
#include "engine/runtime/thread_pool.h"

namespace p64::cuda {
namespace {

using namespace p64::blocks;

constexpr int kSub = 8;  // 32-element sub-blocks per super-block

// Bits [at, at + 6) of a little-endian byte field.
void put6(uint8_t* field, int at, uint8_t v) {
  for (int b = 0; b < 6; ++b)
    if ((v >> b) & 1) field[(at + b) / 8] |= uint8_t(1u << ((at + b) % 8));
}
uint8_t get6(const uint8_t* field, int at) {
  uint8_t v = 0;
  for (int b = 0; b < 6; ++b) v |= uint8_t(((field[(at + b) / 8] >> ((at + b) % 8)) & 1) << b);
  return v;
}

// Quant e (0..255) of a Q6_K block, 6 bits, and its inverse.
uint8_t q6_get(const BlockQ6_K& b, int e) {
  const int n = e / 128, k = (e % 128) / 32, l = e % 32;
  const uint8_t nib = (b.ql[64 * n + l + 32 * (k & 1)] >> (4 * (k >> 1))) & 15;
  return uint8_t(nib | (((b.qh[32 * n + l] >> (2 * k)) & 3) << 4));
}
void q6_put(BlockQ6_K& b, int e, uint8_t q) {
  const int n = e / 128, k = (e % 128) / 32, l = e % 32;
  b.ql[64 * n + l + 32 * (k & 1)] |= uint8_t((q & 15) << (4 * (k >> 1)));
  b.qh[32 * n + l] |= uint8_t(((q >> 4) & 3) << (2 * k));
}
// Quant i of Q4_K sub-block s.
uint8_t q4_get(const BlockQ4_K& b, int s, int i) { return (b.qs[32 * (s / 2) + i] >> (4 * (s % 2))) & 15; }

// A sub-block's 32 four-bit values (the low bits of larger quants) as 16 bytes: i and 16 + i share byte i.
void nibbles_put(const uint8_t q[32], uint8_t* dst) {
  for (int i = 0; i < 16; ++i) dst[i] = uint8_t((q[i] & 15) | ((q[16 + i] & 15) << 4));
}
void nibbles_get(const uint8_t* src, uint8_t q[32]) {
  for (int i = 0; i < 16; ++i) {
    q[i] = src[i] & 15;
    q[16 + i] = src[i] >> 4;
  }
}

void pack_q4k(const BlockQ4_K* blocks, uint8_t* dst, int64_t nb, int64_t b0, int64_t b1) {
  uint8_t* hdr_base = dst + 128 * nb;
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ4_K& blk = blocks[b];
    uint8_t* hdr = hdr_base + 16 * b;
    std::memset(hdr, 0, 16);
    std::memcpy(hdr, &blk.d, 2);
    std::memcpy(hdr + 2, &blk.dmin, 2);
    for (int s = 0; s < kSub; ++s) {
      uint8_t q[32];
      for (int i = 0; i < 16; ++i) {
        q[i] = q4_get(blk, s, i);
        q[16 + i] = q4_get(blk, s, 16 + i);
      }
      nibbles_put(q, dst + 16 * (kSub * b + s));
      uint8_t sc, mn;
      unpack_scale_min_k4(s, blk.scales, sc, mn);
      put6(hdr + 4, 6 * s, sc);
      put6(hdr + 4, 48 + 6 * s, mn);
    }
  }
}

void unpack_q4k(const uint8_t* src, BlockQ4_K* blocks, int64_t nb, int64_t b0, int64_t b1) {
  const uint8_t* hdr_base = src + 128 * nb;
  for (int64_t b = b0; b < b1; ++b) {
    BlockQ4_K& blk = blocks[b];
    std::memset(&blk, 0, sizeof(blk));
    const uint8_t* hdr = hdr_base + 16 * b;
    std::memcpy(&blk.d, hdr, 2);
    std::memcpy(&blk.dmin, hdr + 2, 2);
    uint8_t sc[kSub], mn[kSub];
    for (int s = 0; s < kSub; ++s) {
      uint8_t q[32];
      nibbles_get(src + 16 * (kSub * b + s), q);
      for (int i = 0; i < 32; ++i) blk.qs[32 * (s / 2) + i] |= uint8_t(q[i] << (4 * (s % 2)));
      sc[s] = get6(hdr + 4, 6 * s);
      mn[s] = get6(hdr + 4, 48 + 6 * s);
    }
    pack_scale_min_k4(sc, mn, blk.scales);
  }
}

void pack_q6k(const BlockQ6_K* blocks, uint8_t* dst, int64_t nb, int64_t b0, int64_t b1) {
  uint8_t* high = dst + 128 * nb;
  uint8_t* scales = dst + 192 * nb;
  uint8_t* d = dst + 208 * nb;
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ6_K& blk = blocks[b];
    for (int s = 0; s < kSub; ++s) {
      const int64_t t = kSub * b + s;
      uint8_t q[32];
      for (int e = 0; e < 32; ++e) q[e] = q6_get(blk, 32 * s + e);
      nibbles_put(q, dst + 16 * t);
      uint8_t* h = high + 8 * t;
      std::memset(h, 0, 8);
      for (int e = 0; e < 32; ++e) {
        const int half = e / 16, k = (e % 16) / 4, j = e % 4;
        h[4 * half + j] |= uint8_t((q[e] >> 4) << (2 * k));
      }
    }
    std::memcpy(scales + 16 * b, blk.scales, 16);
    std::memcpy(d + 2 * b, &blk.d, 2);
  }
}

void unpack_q6k(const uint8_t* src, BlockQ6_K* blocks, int64_t nb, int64_t b0, int64_t b1) {
  const uint8_t* high = src + 128 * nb;
  const uint8_t* scales = src + 192 * nb;
  const uint8_t* d = src + 208 * nb;
  for (int64_t b = b0; b < b1; ++b) {
    BlockQ6_K& blk = blocks[b];
    std::memset(&blk, 0, sizeof(blk));
    for (int s = 0; s < kSub; ++s) {
      const int64_t t = kSub * b + s;
      uint8_t q[32];
      nibbles_get(src + 16 * t, q);
      const uint8_t* h = high + 8 * t;
      for (int e = 0; e < 32; ++e) {
        const int half = e / 16, k = (e % 16) / 4, j = e % 4;
        q6_put(blk, 32 * s + e, uint8_t(q[e] | (((h[4 * half + j] >> (2 * k)) & 3) << 4)));
      }
    }
    std::memcpy(blk.scales, scales + 16 * b, 16);
    std::memcpy(&blk.d, d + 2 * b, 2);
  }
}

int64_t whole_blocks(DType aos, int64_t rows, int64_t n) {
  if (!tiled_dtype_for(aos, n) || rows < 0)
    throw Error("tiled weights: " + std::string(dtype_name(aos)) + " rows of " + std::to_string(n) +
                " elements have no tiled form (Q4_K or Q6_K, whole super-blocks)");
  return rows * (n / kQKK);
}

// Blocks are independent: a model's worth (millions) is packed on every core of the host.
template <class F>
void over_blocks(int64_t nb, F&& fn) {
  static ThreadPool pool(0);
  static std::mutex one_region;  // the pool runs one region at a time
  std::lock_guard<std::mutex> lock(one_region);
  pool.parallel_for(nb, 1024, fn);
}

}  // namespace

uint32_t tiled_dtype_for(DType aos, int64_t n) {
  if (n <= 0 || n % kQKK != 0) return 0;
  if (aos == DType::Q4_K) return kTiledQ4_K;
  if (aos == DType::Q6_K) return kTiledQ6_K;
  return 0;
}

void pack_tiled(DType aos, const void* blocks, void* dst, int64_t rows, int64_t n) {
  const int64_t nb = whole_blocks(aos, rows, n);
  uint8_t* out = static_cast<uint8_t*>(dst);
  over_blocks(nb, [&](int64_t b0, int64_t b1) {
    if (aos == DType::Q4_K) pack_q4k(static_cast<const BlockQ4_K*>(blocks), out, nb, b0, b1);
    else pack_q6k(static_cast<const BlockQ6_K*>(blocks), out, nb, b0, b1);
  });
}

void unpack_tiled(DType aos, const void* src, void* blocks, int64_t rows, int64_t n) {
  const int64_t nb = whole_blocks(aos, rows, n);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  over_blocks(nb, [&](int64_t b0, int64_t b1) {
    if (aos == DType::Q4_K) unpack_q4k(in, static_cast<BlockQ4_K*>(blocks), nb, b0, b1);
    else unpack_q6k(in, static_cast<BlockQ6_K*>(blocks), nb, b0, b1);
  });
}

}  // namespace p64::cuda
