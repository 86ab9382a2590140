#pragma once
// Decode GEMV readers of the tiled Q4_K / Q6_K forms (tiled_weights.h has the layout), on the
// int16-activation path. A unit is one 32-element sub-block: one 16-byte load of its quants,
// its header (Q4_K) or scale pair and high bits (Q6_K), and 32 activations. Compared with the
// block forms' units (two half sub-blocks, three scale words, two f16 loads each) a unit costs
// one scale/min pair and about half the loads.
#include "backends/cuda/tiled_weights.h"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda {

// Sub-block u's 32 int16 activations (elements 0..15 in v[0..1], 16..31 in v[2..3]), its
// scale and the fp32 sums of each 16.
struct TileX {
  uint4 v[4];
  float d, s0, s1;
};
__device__ __forceinline__ void load_tile_x(TileX& x, const ActRef& a, int u) {
  const int e = 32 * u;
#pragma unroll
  for (int i = 0; i < 4; ++i) x.v[i] = ld_x16(a, e + 8 * i);
  x.d = a.xd[u];
  const float2 s = *reinterpret_cast<const float2*>(a.xs + 2 * u);
  x.s0 = s.x;
  x.s1 = s.y;
}
// Four quants (bytes of `q`, elements 4k..4k+3 of half h) against their activations.
__device__ __forceinline__ int tile_dot4(uint32_t q, const TileX& x, int h, int k, int acc) {
  const uint4& v = x.v[2 * h + (k >> 1)];
  const int p = (k & 1) * 2;
  return dp2(q, word_of(v, p), word_of(v, p + 1), acc);
}
__device__ __forceinline__ uint4 ld_shared16(const uint8_t* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

struct TiledQ4_K {
  static constexpr int kInFlight = 2;
  using X = TileX;
  struct Raw { uint4 q, h; };
  struct RowPtr { const uint8_t* qs; const uint8_t* hdr; };
  __device__ static RowPtr row_ptr(const RowRef& r) {
    return RowPtr{r.w + r.row * (r.n / 32) * 16, r.w + r.nb * 128 + r.row * (r.n / 256) * 16};
  }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) { return RowPtr{p.qs + bytes, p.hdr + bytes}; }
  __device__ static int64_t units(int64_t n) { return n / 32; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u) { load_tile_x(x, a, int(u)); }
  __device__ static void load(Raw& raw, const RowPtr& p, int64_t u64) {
    const int u = int(u64);
    raw.q = ld_stream16(p.qs + 16 * u);
    raw.h = ld_shared16(p.hdr + 16 * (u >> 3));  // one address for the sub-block's 8 lanes
  }
  // Sub-block u of row `row` (absolute addressing: the embedding lookup and the prefill tiles)
  // and its 32 values.
  __device__ static void load_unit(Raw& raw, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int64_t u) {
    load(raw, row_ptr(RowRef{w, nb, row, n}), u);
  }
  __device__ static void scale_min(const Raw& raw, int s, float& scale, float& min) {
    const uint64_t scales = uint64_t(raw.h.y) | (uint64_t(raw.h.z) << 32);
    const uint64_t mins = uint64_t(raw.h.z) | (uint64_t(raw.h.w) << 32);
    scale = h2f(uint16_t(raw.h.x & 0xFFFF)) * float(uint32_t(scales >> (6 * s)) & 63u);
    min = h2f(uint16_t(raw.h.x >> 16)) * float(uint32_t(mins >> (16 + 6 * s)) & 63u);
  }
  __device__ static void dequant(const Raw& raw, int s, float out[32]) {
    float scale, min;
    scale_min(raw, s, scale, min);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const uint32_t b = (word_of(raw.q, i >> 2) >> (8 * (i & 3))) & 0xFF;
      out[i] = scale * float(b & 0xF) - min;
      out[16 + i] = scale * float(b >> 4) - min;
    }
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t u) {
    int isum = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t w = word_of(raw.q, k);
      isum = tile_dot4(w & 0x0F0F0F0Fu, x, 0, k, isum);
      isum = tile_dot4((w >> 4) & 0x0F0F0F0Fu, x, 1, k, isum);
    }
    float scale, min;
    scale_min(raw, int(u & 7), scale, min);
    return scale * x.d * float(isum) - min * (x.s0 + x.s1);
  }
};

struct TiledQ6_K {
  static constexpr int kInFlight = 2;
  using X = TileX;
  struct Raw { uint4 q; uint2 h; uint32_t sd; };  // sd: the two int8 scales, d above them
  struct RowPtr { const uint8_t* lo; const uint8_t* hi; const uint8_t* sc; const uint16_t* d; };
  __device__ static RowPtr row_ptr(const RowRef& r) {
    const int64_t units = r.row * (r.n / 32), blocks = r.row * (r.n / 256);
    return RowPtr{r.w + units * 16, r.w + r.nb * 128 + units * 8, r.w + r.nb * 192 + blocks * 16,
                  reinterpret_cast<const uint16_t*>(r.w + r.nb * 208) + blocks};
  }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) {
    return RowPtr{p.lo + bytes, p.hi + bytes, p.sc + bytes, moved(p.d, bytes)};
  }
  __device__ static int64_t units(int64_t n) { return n / 32; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u) { load_tile_x(x, a, int(u)); }
  __device__ static void load(Raw& raw, const RowPtr& p, int64_t u64) {
    const int u = int(u64);
    raw.q = ld_stream16(p.lo + 16 * u);
    raw.h = ld_stream8(p.hi + 8 * u);
    const uint32_t pair = ld_u16(p.sc + 16 * (u >> 3) + 2 * (u & 7));
    raw.sd = pair | (uint32_t(p.d[u >> 3]) << 16);
  }
  // The high bit pair of quants 4k..4k+3 moved to bits 4-5 of each byte.
  __device__ static uint32_t high_bits(uint32_t h, int k) {
    return (k < 2 ? h << (4 - 2 * k) : h >> (2 * k - 4)) & 0x30303030u;
  }
  __device__ static void load_unit(Raw& raw, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int64_t u) {
    load(raw, row_ptr(RowRef{w, nb, row, n}), u);
  }
  __device__ static void dequant(const Raw& raw, int, float out[32]) {
    const float d = h2f(uint16_t(raw.sd >> 16));
    const float s0 = d * float(int8_t(raw.sd & 0xFF)), s1 = d * float(int8_t((raw.sd >> 8) & 0xFF));
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t w = word_of(raw.q, k);
      const uint32_t lo = (w & 0x0F0F0F0Fu) | high_bits(raw.h.x, k);
      const uint32_t hi = ((w >> 4) & 0x0F0F0F0Fu) | high_bits(raw.h.y, k);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[4 * k + j] = s0 * float(int((lo >> (8 * j)) & 0xFF) - 32);
        out[16 + 4 * k + j] = s1 * float(int((hi >> (8 * j)) & 0xFF) - 32);
      }
    }
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t) {
    int lo = 0, hi = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t w = word_of(raw.q, k);
      lo = tile_dot4((w & 0x0F0F0F0Fu) | high_bits(raw.h.x, k), x, 0, k, lo);
      hi = tile_dot4(((w >> 4) & 0x0F0F0F0Fu) | high_bits(raw.h.y, k), x, 1, k, hi);
    }
    const float s0 = float(int8_t(raw.sd & 0xFF)), s1 = float(int8_t((raw.sd >> 8) & 0xFF));
    // (q - 32) x summed as q x on the integer activations minus 32 times the fp32 sums
    const float d = h2f(uint16_t(raw.sd >> 16));
    return d * (s0 * (x.d * float(lo) - 32.f * x.s0) + s1 * (x.d * float(hi) - 32.f * x.s1));
  }
};

// The embedding lookup's reader (Deq, weight_formats.cuh): unit u is sub-block u.
template <class P>
struct DeqTiled {
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    typename P::Raw raw;
    P::load_unit(raw, r.w, r.nb, r.row, r.n, u);
    P::dequant(raw, int(u & 7), out);
  }
};
template <> struct Deq<kTiledQ4_K> : DeqTiled<TiledQ4_K> {};
template <> struct Deq<kTiledQ6_K> : DeqTiled<TiledQ6_K> {};

}  // namespace p64::cuda
