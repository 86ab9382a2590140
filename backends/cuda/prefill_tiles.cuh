#pragma once
// Weight-tile readers of the prefill GEMM (prefill_gemm.cu): a k-tile is 64 consecutive
// elements of a row; two threads share it, thread `h` (0 or 1) reading its half of the
// row's bytes. The read is split in two so the GEMM can keep it in flight over a tile of
// MMAs: load() fetches the raw bytes into registers, store() dequantizes them (f32 math,
// one rounding to f16) into the row's 64 shared-memory columns. Which columns a thread
// writes depends on the format; the two threads of a row always cover all 64.
//
// Q4_K, Q6_K, Q8_0 (AoS and SoA) have their own readers that touch each weight byte once;
// every other dtype (F32, F16, BF16, Q5_0) goes through the decode's Deq<T> unit reader.
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/tiled_formats.cuh"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda::prefill {

__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}
// Eight f32 values as eight f16 in one 16-byte shared-memory store.
__device__ __forceinline__ void store8(__half* dst, const float v[8]) {
  uint4 u;
  u.x = pack_half2(v[0], v[1]);
  u.y = pack_half2(v[2], v[3]);
  u.z = pack_half2(v[4], v[5]);
  u.w = pack_half2(v[6], v[7]);
  *reinterpret_cast<uint4*>(dst) = u;
}
__device__ __forceinline__ uint4 ldg16(const uint8_t* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
__device__ __forceinline__ uint32_t byte_at(const uint4& v, int i) { return (word_of(v, i >> 2) >> (8 * (i & 3))) & 0xFF; }

// Fallback: the decode's 32-element unit reader (already dequantized at load time).
template <uint32_t T>
struct WTile {
  struct Raw { float v[32]; };
  __device__ static void load(Raw& r, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int kt, int h) {
    Deq<T>::unit(RowRef{w, nb, row, n}, int64_t(2 * kt + h), r.v);
  }
  __device__ static void zero(Raw& r) {
#pragma unroll
    for (int i = 0; i < 32; ++i) r.v[i] = 0.f;
  }
  __device__ static void store(const Raw& r, __half* dst, int, int h) {
#pragma unroll
    for (int i = 0; i < 4; ++i) store8(dst + 32 * h + 8 * i, r.v + 8 * i);
  }
};

// Q4_K: k-tile kt is sub-blocks 2j, 2j+1 (j = kt % 4) of super-block kt / 4, both packed in
// the same 32 qs bytes (low nibbles: 2j, high: 2j+1). Thread h reads qs bytes [16h, 16h+16):
// elements 16h.. of both sub-blocks, i.e. columns [16h, 16h+16) and [32+16h, 32+16h+16).
template <bool SOA>
struct WTileQ4_K {
  struct Raw { uint4 q; uint32_t s0, s1, s2; uint32_t dd; };
  __device__ static void load(Raw& r, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int kt, int h) {
    const int64_t gb = row * (n / 256) + kt / 4;
    const int j = kt & 3;
    const uint8_t *qs, *sc;
    if constexpr (SOA) {
      qs = w + gb * 128 + 32 * j + 16 * h;
      sc = w + nb * 128 + gb * 12;
      r.dd = uint32_t(ld_u16(w + nb * 140 + gb * 2)) | (uint32_t(ld_u16(w + nb * 142 + gb * 2)) << 16);
    } else {
      const uint8_t* b = w + gb * 144;
      r.dd = ld_u32(b);  // d then dmin
      sc = b + 4;
      qs = b + 16 + 32 * j + 16 * h;
    }
    r.q = ldg16(qs);
    r.s0 = ld_u32(sc);
    r.s1 = ld_u32(sc + 4);
    r.s2 = ld_u32(sc + 8);
  }
  __device__ static void zero(Raw& r) { r = Raw{make_uint4(0, 0, 0, 0), 0, 0, 0, 0}; }
  __device__ static void store(const Raw& r, __half* dst, int kt, int h) {
    const int j = kt & 3;
    float sl, ml, sh, mh;
    q4k_scale_min(r.s0, r.s1, r.s2, 2 * j, sl, ml);
    q4k_scale_min(r.s0, r.s1, r.s2, 2 * j + 1, sh, mh);
    const float d = h2f(uint16_t(r.dd & 0xFFFF)), dm = h2f(uint16_t(r.dd >> 16));
    const float dl = d * sl, ol = dm * ml, dh = d * sh, oh = dm * mh;
#pragma unroll
    for (int half8 = 0; half8 < 2; ++half8) {
      float lo[8], hi[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const uint32_t b = byte_at(r.q, 8 * half8 + i);
        lo[i] = dl * float(b & 0xF) - ol;
        hi[i] = dh * float(b >> 4) - oh;
      }
      store8(dst + 16 * h + 8 * half8, lo);
      store8(dst + 32 + 16 * h + 8 * half8, hi);
    }
  }
};

// Q6_K: k-tile kt covers quarter q = kt % 4 of super-block kt / 4: half n6 = q / 2 and the
// two 32-element groups kk = 2m, 2m+1 (m = q % 2). Both take nibble m of ql (bytes l and
// l + 32 of the half's 64) and bit pairs 4m and 4m+2 of qh[l]. Thread h takes l in
// [16h, 16h+16): columns [16h, 16h+16) (kk = 2m) and [32+16h, 32+16h+16) (kk = 2m+1).
template <bool SOA>
struct WTileQ6_K {
  struct Raw { uint4 la, lb, hq; uint32_t sc; uint32_t d; };
  __device__ static void load(Raw& r, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int kt, int h) {
    const int64_t gb = row * (n / 256) + kt / 4;
    const int q = kt & 3, n6 = q >> 1, m = q & 1;
    const uint8_t *ql, *qh, *sc;
    if constexpr (SOA) {
      ql = w + gb * 128;
      qh = w + nb * 128 + gb * 64;
      sc = w + nb * 192 + gb * 16;
      r.d = ld_u16(w + nb * 208 + gb * 2);
      r.la = ldg16(ql + 64 * n6 + 16 * h);
      r.lb = ldg16(ql + 64 * n6 + 32 + 16 * h);
      r.hq = ldg16(qh + 32 * n6 + 16 * h);
    } else {
      const uint8_t* b = w + gb * 210;  // 2-byte aligned blocks
      ql = b;
      qh = b + 128;
      sc = b + 192;
      r.d = ld_u16(b + 208);
      r.la = ld16_a2(ql + 64 * n6 + 16 * h);
      r.lb = ld16_a2(ql + 64 * n6 + 32 + 16 * h);
      r.hq = ld16_a2(qh + 32 * n6 + 16 * h);
    }
    const int is = 8 * n6 + 4 * m + h;
    r.sc = uint32_t(sc[is]) | (uint32_t(sc[is + 2]) << 8);
  }
  __device__ static void zero(Raw& r) {
    const uint4 z = make_uint4(0, 0, 0, 0);
    r = Raw{z, z, z, 0, 0};
  }
  __device__ static void store(const Raw& r, __half* dst, int kt, int h) {
    const int m = kt & 1;  // (kt % 4) % 2
    const float d = h2f(uint16_t(r.d));
    const float sa = d * float(int8_t(r.sc & 0xFF)), sb = d * float(int8_t((r.sc >> 8) & 0xFF));
#pragma unroll
    for (int half8 = 0; half8 < 2; ++half8) {
      float a[8], b[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int k = 8 * half8 + i;
        const uint32_t hb = byte_at(r.hq, k);
        const int qa = int(((byte_at(r.la, k) >> (4 * m)) & 0xF) | (((hb >> (4 * m)) & 3) << 4)) - 32;
        const int qb = int(((byte_at(r.lb, k) >> (4 * m)) & 0xF) | (((hb >> (4 * m + 2)) & 3) << 4)) - 32;
        a[i] = sa * float(qa);
        b[i] = sb * float(qb);
      }
      store8(dst + 16 * h + 8 * half8, a);
      store8(dst + 32 + 16 * h + 8 * half8, b);
    }
  }
};

// Q8_0: thread h reads block 2 kt + h of the row (32 int8 and a scale): columns [32h, 32h+32).
template <bool SOA>
struct WTileQ8_0 {
  struct Raw { uint4 q0, q1; uint32_t d; };
  __device__ static void load(Raw& r, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int kt, int h) {
    const int64_t gb = row * (n / 32) + 2 * kt + h;
    if constexpr (SOA) {
      r.q0 = ldg16(w + gb * 32);
      r.q1 = ldg16(w + gb * 32 + 16);
      r.d = ld_u16(w + nb * 32 + gb * 2);
    } else {
      const uint8_t* b = w + gb * 34;  // 2-byte aligned blocks
      r.d = ld_u16(b);
      r.q0 = ld16_a2(b + 2);
      r.q1 = ld16_a2(b + 18);
    }
  }
  __device__ static void zero(Raw& r) {
    const uint4 z = make_uint4(0, 0, 0, 0);
    r = Raw{z, z, 0};
  }
  __device__ static void store(const Raw& r, __half* dst, int, int h) {
    const float d = h2f(uint16_t(r.d));
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const uint4& q = g < 2 ? r.q0 : r.q1;
      float v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = d * float(int8_t(byte_at(q, 8 * (g & 1) + i)));
      store8(dst + 32 * h + 8 * g, v);
    }
  }
};

// The tiled forms: thread h reads sub-block 2 kt + h whole (columns [32h, 32h+32)).
template <class P>
struct WTileTiled {
  using Raw = typename P::Raw;
  __device__ static void load(Raw& r, const uint8_t* w, int64_t nb, int64_t row, int64_t n, int kt, int h) {
    P::load_unit(r, w, nb, row, n, int64_t(2 * kt + h));
  }
  __device__ static void zero(Raw& r) { r = Raw{}; }
  __device__ static void store(const Raw& r, __half* dst, int kt, int h) {
    float v[32];
    P::dequant(r, (2 * kt + h) & 7, v);
#pragma unroll
    for (int i = 0; i < 4; ++i) store8(dst + 32 * h + 8 * i, v + 8 * i);
  }
};

template <> struct WTile<kQ4_K> : WTileQ4_K<false> {};
template <> struct WTile<kQ4_KS> : WTileQ4_K<true> {};
template <> struct WTile<kQ6_K> : WTileQ6_K<false> {};
template <> struct WTile<kQ6_KS> : WTileQ6_K<true> {};
template <> struct WTile<kQ8_0> : WTileQ8_0<false> {};
template <> struct WTile<kQ8_0S> : WTileQ8_0<true> {};
template <> struct WTile<kTiledQ4_K> : WTileTiled<TiledQ4_K> {};
template <> struct WTile<kTiledQ6_K> : WTileTiled<TiledQ6_K> {};

}  // namespace p64::cuda::prefill
