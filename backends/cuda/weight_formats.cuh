#pragma once
// Device-side readers of every weight format the foundation supports, AoS and SoA
// (engine/quant/quant.h documents the layouts; engine/quant/blocks.h the block structs).
//
// Two families share the GEMV kernel (gemv_kernel.cuh):
//  * Deq<T>   — the float path: a "unit" is 32 consecutive elements of a row, dequantized to
//               fp32 and dotted with fp32 activations. Every dtype, any row length.
//  * Dp4a<T>  — the int8-activation path (llama.cpp's mmvq idea): activations quantized to int8
//               per 32 elements, weights kept as small integers, 4 MACs per dp4a. Only Q4_K,
//               Q6_K, Q8_0 (AoS and SoA) and rows that are a multiple of 32.
// Both read weights with 16-byte loads where the layout's alignment allows (SoA, Q4_K AoS);
// AoS Q6_K/Q8_0/Q5_0 blocks (210/34/22 bytes) are only 2-byte aligned and use 2-byte loads.
#include <cuda_fp16.h>

#include <cstdint>

namespace p64::cuda {

enum DT : uint32_t {
  kF32 = 0, kF16 = 1, kQ5_0 = 6, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14, kBF16 = 30,
  kQ8_0S = 108, kQ4_KS = 112, kQ6_KS = 114,
};

// One matrix row's view: `w` is the tensor base, `nb` the block count of the whole tensor
// (SoA field arrays are sized by it), `row` the row index inside that tensor.
struct RowRef {
  const uint8_t* w;
  int64_t nb;
  int64_t row;
  int64_t n;
};

// p moved by a byte count (a SwiGLU up row is its gate row's pointers moved by the tensors' distance).
__device__ __forceinline__ const uint16_t* moved(const uint16_t* p, int64_t bytes) {
  return reinterpret_cast<const uint16_t*>(reinterpret_cast<const uint8_t*>(p) + bytes);
}

// The activation vector in both forms; producers write both (norm.cu, attention.cu).
struct ActRef {
  const float* xf;   // fp32 [n]
  const void* xq;    // int8 or int16 [n] (the GEMV path knows which), one scale per 32
  const float* xd;   // [n / 32] scale of each 32
  const float* xs;   // [n / 16] sum of the fp32 values of each 16 (Q4_K's min term)
};

__device__ __forceinline__ float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
__device__ __forceinline__ uint16_t ld_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
__device__ __forceinline__ uint32_t ld_u32_a2(const uint8_t* p) {
  return uint32_t(ld_u16(p)) | (uint32_t(ld_u16(p + 2)) << 16);
}
__device__ __forceinline__ uint32_t ld_u32(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
// Weights are read once per token: bypass L1 so it keeps the activations.
__device__ __forceinline__ uint4 ld_stream16(const void* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}
__device__ __forceinline__ uint2 ld_stream8(const void* p) {
  uint2 r;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}
__device__ __forceinline__ uint4 ld16_a2(const uint8_t* p) {
  return make_uint4(ld_u32_a2(p), ld_u32_a2(p + 4), ld_u32_a2(p + 8), ld_u32_a2(p + 12));
}
__device__ __forceinline__ uint32_t word_of(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ __forceinline__ uint32_t byte_of3(uint32_t w0, uint32_t w1, uint32_t w2, int i) {
  const uint32_t w = i < 4 ? w0 : (i < 8 ? w1 : w2);
  return (w >> (8 * (i & 3))) & 0xFF;
}
// Q4_K's 6-bit scale and min of sub-block s (the packing of blocks.h unpack_scale_min_k4).
__device__ __forceinline__ void q4k_scale_min(uint32_t w0, uint32_t w1, uint32_t w2, int s, float& sc, float& m) {
  if (s < 4) {
    sc = float(byte_of3(w0, w1, w2, s) & 63);
    m = float(byte_of3(w0, w1, w2, s + 4) & 63);
  } else {
    const uint32_t a = byte_of3(w0, w1, w2, s + 4);
    sc = float((a & 0xF) | ((byte_of3(w0, w1, w2, s - 4) >> 6) << 4));
    m = float((a >> 4) | ((byte_of3(w0, w1, w2, s) >> 6) << 4));
  }
}

// Both scales and mins of sub-blocks 2j and 2j+1 at once, without per-byte selects: the pair's
// bytes sit 16 bits apart in each scale word (the same packing as q4k_scale_min).
__device__ __forceinline__ void q4k_scale_pair(uint32_t w0, uint32_t w1, uint32_t w2, int j, float sc[2], float m[2]) {
  const int sh = (j & 1) * 16;
  const uint32_t x0 = w0 >> sh, x1 = w1 >> sh, x2 = w2 >> sh;
  const uint32_t s = j < 2 ? x0 & 0x3F3F : (x2 & 0x0F0F) | ((x0 >> 2) & 0x3030);
  const uint32_t mm = j < 2 ? x1 & 0x3F3F : ((x2 >> 4) & 0x0F0F) | ((x1 >> 2) & 0x3030);
  sc[0] = float(s & 0xFF);
  sc[1] = float(s >> 8);
  m[0] = float(mm & 0xFF);
  m[1] = float(mm >> 8);
}

// ---------------------------------------------------------------- float path: 32-element units
template <uint32_t T>
struct Deq;

template <uint32_t T>
__device__ __forceinline__ int64_t deq_units(int64_t n) { return (n + 31) / 32; }

// F32 / F16 / BF16: rows of any length; the tail unit is padded with zeros.
template <>
struct Deq<kF32> {
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const float* p = reinterpret_cast<const float*>(r.w) + r.row * r.n + u * 32;
    const int64_t left = r.n - u * 32;
    if (left >= 32 && (r.n & 3) == 0) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        float4 v = __ldg(reinterpret_cast<const float4*>(p) + i);
        out[4 * i] = v.x; out[4 * i + 1] = v.y; out[4 * i + 2] = v.z; out[4 * i + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) out[i] = i < left ? p[i] : 0.f;
    }
  }
};
template <uint32_t T>
struct DeqHalfLike {
  __device__ static float cvt(uint16_t h) {
    if constexpr (T == kF16) return h2f(h);
    else return __uint_as_float(uint32_t(h) << 16);
  }
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const uint16_t* p = reinterpret_cast<const uint16_t*>(r.w) + r.row * r.n + u * 32;
    const int64_t left = r.n - u * 32;
    if (left >= 32 && (r.n & 7) == 0) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + i);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const uint32_t w = word_of(v, k);
          out[8 * i + 2 * k] = cvt(uint16_t(w & 0xFFFF));
          out[8 * i + 2 * k + 1] = cvt(uint16_t(w >> 16));
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) out[i] = i < left ? cvt(p[i]) : 0.f;
    }
  }
};
template <> struct Deq<kF16> : DeqHalfLike<kF16> {};
template <> struct Deq<kBF16> : DeqHalfLike<kBF16> {};

template <>
struct Deq<kQ5_0> {
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const uint8_t* b = r.w + (r.row * (r.n / 32) + u) * 22;
    const float d = h2f(ld_u16(b));
    const uint32_t qh = ld_u32_a2(b + 2);
#pragma unroll
    for (int j = 0; j < 16; j += 2) {
      const uint32_t two = ld_u16(b + 6 + j);
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const uint32_t q = (two >> (8 * k)) & 0xFF;
        const int jj = j + k;
        const int lo = int((q & 0xF) | (((qh >> jj) & 1) << 4)) - 16;
        const int hi = int((q >> 4) | (((qh >> (jj + 16)) & 1) << 4)) - 16;
        out[jj] = d * float(lo);
        out[jj + 16] = d * float(hi);
      }
    }
  }
};

template <bool SOA>
struct DeqQ8_0 {
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const int64_t gb = r.row * (r.n / 32) + u;
    uint4 q0, q1;
    float d;
    if constexpr (SOA) {
      q0 = ld_stream16(r.w + gb * 32);
      q1 = ld_stream16(r.w + gb * 32 + 16);
      d = h2f(ld_u16(r.w + r.nb * 32 + gb * 2));
    } else {
      const uint8_t* b = r.w + gb * 34;
      d = h2f(ld_u16(b));
      q0 = ld16_a2(b + 2);
      q1 = ld16_a2(b + 18);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t w = i < 4 ? word_of(q0, i) : word_of(q1, i - 4);
#pragma unroll
      for (int k = 0; k < 4; ++k) out[4 * i + k] = d * float(int8_t((w >> (8 * k)) & 0xFF));
    }
  }
};
template <> struct Deq<kQ8_0> : DeqQ8_0<false> {};
template <> struct Deq<kQ8_0S> : DeqQ8_0<true> {};

template <bool SOA>
struct DeqQ4_K {
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    const int s = int(u & 7), j = s >> 1, hi = s & 1;
    const uint8_t *qs, *sc;
    uint16_t dh, mh;
    if constexpr (SOA) {
      qs = r.w + gb * 128 + 32 * j;
      sc = r.w + r.nb * 128 + gb * 12;
      dh = ld_u16(r.w + r.nb * 140 + gb * 2);
      mh = ld_u16(r.w + r.nb * 142 + gb * 2);
    } else {
      const uint8_t* b = r.w + gb * 144;
      dh = ld_u16(b);
      mh = ld_u16(b + 2);
      sc = b + 4;
      qs = b + 16 + 32 * j;
    }
    float scale, mn;
    q4k_scale_min(ld_u32(sc), ld_u32(sc + 4), ld_u32(sc + 8), s, scale, mn);
    const float d = h2f(dh) * scale, m = h2f(mh) * mn;
    const uint4 q0 = ld_stream16(qs), q1 = ld_stream16(qs + 16);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t w = (i < 4 ? word_of(q0, i) : word_of(q1, i - 4)) >> (hi * 4);
#pragma unroll
      for (int k = 0; k < 4; ++k) out[4 * i + k] = d * float((w >> (8 * k)) & 0xF) - m;
    }
  }
};
template <> struct Deq<kQ4_K> : DeqQ4_K<false> {};
template <> struct Deq<kQ4_KS> : DeqQ4_K<true> {};

template <bool SOA>
struct DeqQ6_K {
  // Unit u covers elements [32k, 32k + 32) of super-block u / 8 (k = u % 8): half n = k / 4,
  // quarter kk = k % 4 picks which ql half-byte and which qh bit pair hold them.
  __device__ static void unit(const RowRef& r, int64_t u, float out[32]) {
    const int64_t gb = r.row * (r.n / 256) + (u >> 3);
    const int k = int(u & 7), n = k >> 2, kk = k & 3;
    const uint8_t *ql, *qh;
    const int8_t* sc;
    uint16_t dh;
    if constexpr (SOA) {
      ql = r.w + gb * 128;
      qh = r.w + r.nb * 128 + gb * 64;
      sc = reinterpret_cast<const int8_t*>(r.w + r.nb * 192 + gb * 16);
      dh = ld_u16(r.w + r.nb * 208 + gb * 2);
    } else {
      const uint8_t* b = r.w + gb * 210;
      ql = b;
      qh = b + 128;
      sc = reinterpret_cast<const int8_t*>(b + 192);
      dh = ld_u16(b + 208);
    }
    const uint8_t* lp = ql + 64 * n + (kk & 1) * 32;
    const uint8_t* hp = qh + 32 * n;
    uint4 l0, l1, h0, h1;
    if constexpr (SOA) {
      l0 = ld_stream16(lp); l1 = ld_stream16(lp + 16);
      h0 = ld_stream16(hp); h1 = ld_stream16(hp + 16);
    } else {
      l0 = ld16_a2(lp); l1 = ld16_a2(lp + 16);
      h0 = ld16_a2(hp); h1 = ld16_a2(hp + 16);
    }
    const float d = h2f(dh);
    const float s0 = d * float(sc[8 * n + 2 * kk]), s1 = d * float(sc[8 * n + 2 * kk + 1]);
    const int lshift = (kk >> 1) * 4, hshift = 2 * kk;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t lw = (i < 4 ? word_of(l0, i) : word_of(l1, i - 4)) >> lshift;
      const uint32_t hw = (i < 4 ? word_of(h0, i) : word_of(h1, i - 4)) >> hshift;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int q = int(((lw >> (8 * b)) & 0xF) | (((hw >> (8 * b)) & 3) << 4)) - 32;
        out[4 * i + b] = (i < 4 ? s0 : s1) * float(q);
      }
    }
  }
};
template <> struct Deq<kQ6_K> : DeqQ6_K<false> {};
template <> struct Deq<kQ6_KS> : DeqQ6_K<true> {};

// Float-path GEMV traits: X is 32 fp32 activations, Raw the dequantized unit.
template <uint32_t T>
struct FloatPath {
  static constexpr int kInFlight = 1;  // 32 dequantized floats per row already fill registers
  struct X { float v[32]; };
  struct Raw { float v[32]; };
  using RowPtr = RowRef;
  __device__ static RowPtr row_ptr(const RowRef& r) { return r; }
  __device__ static RowPtr shift(RowPtr r, int64_t bytes) { r.w += bytes; return r; }
  __device__ static int64_t units(int64_t n) { return (n + 31) / 32; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t n, int64_t u) {
    const float* p = a.xf + u * 32;
    if (u * 32 + 32 <= n && (n & 3) == 0) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        float4 v = *reinterpret_cast<const float4*>(p + 4 * i);
        x.v[4 * i] = v.x; x.v[4 * i + 1] = v.y; x.v[4 * i + 2] = v.z; x.v[4 * i + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) x.v[i] = u * 32 + i < n ? p[i] : 0.f;
    }
  }
  __device__ static void load(Raw& raw, const RowRef& r, int64_t u) { Deq<T>::unit(r, u, raw.v); }
  __device__ static float dot(const Raw& raw, const X& x, int64_t) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 32; ++i) s = fmaf(raw.v[i], x.v[i], s);
    return s;
  }
};

// ---------------------------------------------------------------- int8-activation path (dp4a)
__device__ __forceinline__ int dp4a(uint32_t a, uint32_t b, int c) { return __dp4a(int(a), int(b), c); }

template <uint32_t T>
struct Dp4a;

// Q4_K unit = 16 bytes of qs = 16 low nibbles (sub-block 2j) + 16 high nibbles (2j+1):
// 8 lanes read one super-block's 128 qs bytes with consecutive 16-byte loads.
template <bool SOA>
struct Dp4aQ4_K {
  static constexpr int kInFlight = 2;  // most units per lane loaded before any arithmetic (gemv_in_flight)
  struct X { uint4 lo, hi; float dlo, dhi, slo, shi; };
  struct Raw { uint4 q; uint32_t s0, s1, s2; uint16_t d, dm; };
  // The row's first block in each field (AoS: the block itself), so a unit's addresses are
  // 32-bit offsets from them.
  struct RowPtr { const uint8_t* qs; const uint8_t* sc; const uint16_t* d; const uint16_t* dm; };
  __device__ static RowPtr row_ptr(const RowRef& r) {
    const int64_t g0 = r.row * (r.n / 256);
    if constexpr (SOA) {
      return RowPtr{r.w + g0 * 128, r.w + r.nb * 128 + g0 * 12, reinterpret_cast<const uint16_t*>(r.w + r.nb * 140) + g0,
                    reinterpret_cast<const uint16_t*>(r.w + r.nb * 142) + g0};
    } else {
      return RowPtr{r.w + g0 * 144, nullptr, nullptr, nullptr};
    }
  }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) {
    if constexpr (SOA) return RowPtr{p.qs + bytes, p.sc + bytes, moved(p.d, bytes), moved(p.dm, bytes)};
    else return RowPtr{p.qs + bytes, nullptr, nullptr, nullptr};
  }
  __device__ static int64_t units(int64_t n) { return n / 32; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64), k = u & 7, j = k >> 1, h = k & 1;
    const int e = (u >> 3) * 256 + 64 * j + 16 * h;
    const int8_t* xq = static_cast<const int8_t*>(a.xq);
    x.lo = *reinterpret_cast<const uint4*>(xq + e);
    x.hi = *reinterpret_cast<const uint4*>(xq + e + 32);
    x.dlo = a.xd[e >> 5];
    x.dhi = a.xd[(e >> 5) + 1];
    x.slo = a.xs[e >> 4];
    x.shi = a.xs[(e >> 4) + 2];
  }
  __device__ static void load(Raw& raw, const RowPtr& r, int64_t u64) {
    const int u = int(u64), b = u >> 3, k = u & 7;
    if constexpr (SOA) {
      raw.q = ld_stream16(r.qs + b * 128 + 16 * k);
      const uint8_t* sc = r.sc + b * 12;
      raw.s0 = ld_u32(sc);
      raw.s1 = ld_u32(sc + 4);
      raw.s2 = ld_u32(sc + 8);
      raw.d = r.d[b];
      raw.dm = r.dm[b];
    } else {
      const uint8_t* blk = r.qs + b * 144;
      const uint32_t ddm = ld_u32(blk);
      raw.d = uint16_t(ddm & 0xFFFF);
      raw.dm = uint16_t(ddm >> 16);
      raw.s0 = ld_u32(blk + 4);
      raw.s1 = ld_u32(blk + 8);
      raw.s2 = ld_u32(blk + 12);
      raw.q = ld_stream16(blk + 16 + 16 * k);
    }
  }
  // Sub-blocks 2j (integer sum ilo) and 2j+1 (ihi) scaled, minus the mins times the fp32 sums.
  __device__ static float finish(const Raw& raw, int j, int ilo, int ihi, float dlo, float dhi, float slo, float shi) {
    float sc[2], m[2];
    q4k_scale_pair(raw.s0, raw.s1, raw.s2, j, sc, m);
    return h2f(raw.d) * (sc[0] * dlo * float(ilo) + sc[1] * dhi * float(ihi)) - h2f(raw.dm) * (m[0] * slo + m[1] * shi);
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t u) {
    const int j = int(u & 7) >> 1;
    int ilo = 0, ihi = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t w = word_of(raw.q, i);
      ilo = dp4a(w & 0x0F0F0F0F, word_of(x.lo, i), ilo);
      ihi = dp4a((w >> 4) & 0x0F0F0F0F, word_of(x.hi, i), ihi);
    }
    return finish(raw, j, ilo, ihi, x.dlo, x.dhi, x.slo, x.shi);
  }
};
template <> struct Dp4a<kQ4_K> : Dp4aQ4_K<false> {};
template <> struct Dp4a<kQ4_KS> : Dp4aQ4_K<true> {};

// Q6_K unit = 8 consecutive l of one half: 8 bytes of ql[l], 8 of ql[l+32], 8 of qh[l] give
// 4 groups of 8 elements (offsets 0, 32, 64, 96 in the half), each with its own scale.
template <bool SOA>
struct Dp4aQ6_K {
  static constexpr int kInFlight = 2;  // most units per lane loaded before any arithmetic (gemv_in_flight)
  struct X { uint2 g[4]; float d[4]; };
  struct Raw { uint2 la, lb, h; uint32_t sc; uint16_t d; };
  __device__ static int64_t units(int64_t n) { return n / 32; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64), k = u & 7, n = k >> 2, l0 = (k & 3) * 8;
    const int e = (u >> 3) * 256 + 128 * n + l0;
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      x.g[g] = *reinterpret_cast<const uint2*>(static_cast<const int8_t*>(a.xq) + e + 32 * g);
      x.d[g] = a.xd[(e >> 5) + g];
    }
  }
  struct RowPtr { const uint8_t* ql; const uint8_t* qh; const uint8_t* sc; const uint16_t* d; };
  __device__ static RowPtr row_ptr(const RowRef& r) {
    const int64_t g0 = r.row * (r.n / 256);
    if constexpr (SOA) {
      return RowPtr{r.w + g0 * 128, r.w + r.nb * 128 + g0 * 64, r.w + r.nb * 192 + g0 * 16,
                    reinterpret_cast<const uint16_t*>(r.w + r.nb * 208) + g0};
    } else {
      return RowPtr{r.w + g0 * 210, nullptr, nullptr, nullptr};
    }
  }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) {
    if constexpr (SOA) return RowPtr{p.ql + bytes, p.qh + bytes, p.sc + bytes, moved(p.d, bytes)};
    else return RowPtr{p.ql + bytes, nullptr, nullptr, nullptr};
  }
  __device__ static void load(Raw& raw, const RowPtr& r, int64_t u64) {
    const int u = int(u64), b = u >> 3, k = u & 7, n = k >> 2, l0 = (k & 3) * 8;
    const uint8_t *ql, *qh, *sc;
    if constexpr (SOA) {
      ql = r.ql + b * 128;
      qh = r.qh + b * 64;
      sc = r.sc + b * 16;
      raw.d = r.d[b];
      raw.la = ld_stream8(ql + 64 * n + l0);
      raw.lb = ld_stream8(ql + 64 * n + 32 + l0);
      raw.h = ld_stream8(qh + 32 * n + l0);
    } else {
      const uint8_t* blk = r.ql + b * 210;
      ql = blk;
      qh = blk + 128;
      sc = blk + 192;
      raw.d = ld_u16(blk + 208);
      raw.la = make_uint2(ld_u32_a2(ql + 64 * n + l0), ld_u32_a2(ql + 64 * n + l0 + 4));
      raw.lb = make_uint2(ld_u32_a2(ql + 64 * n + 32 + l0), ld_u32_a2(ql + 64 * n + 36 + l0));
      raw.h = make_uint2(ld_u32_a2(qh + 32 * n + l0), ld_u32_a2(qh + 32 * n + l0 + 4));
    }
    // scales 8n + l0/16 + {0, 2, 4, 6}
    const int is = 8 * n + (l0 >> 4);
    raw.sc = uint32_t(sc[is]) | (uint32_t(sc[is + 2]) << 8) | (uint32_t(sc[is + 4]) << 16) |
             (uint32_t(sc[is + 6]) << 24);
  }
  // q - 32 per byte for bytes in [0, 63], without cross-byte borrows.
  __device__ static uint32_t minus32(uint32_t v) { return ((v | 0x80808080u) - 0x20202020u) ^ 0x80808080u; }
  // Word w (elements 4w..4w+3) of group g as four signed 6-bit weights.
  __device__ static uint32_t q_word(const Raw& raw, int g, int w) {
    const uint32_t l = (g & 1) ? (w ? raw.lb.y : raw.lb.x) : (w ? raw.la.y : raw.la.x);
    const uint32_t hb = w ? raw.h.y : raw.h.x;
    return minus32(((l >> ((g >> 1) * 4)) & 0x0F0F0F0Fu) | (((hb >> (2 * g)) & 0x03030303u) << 4));
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t) {
    float acc = 0.f;
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      int isum = 0;
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        isum = dp4a(q_word(raw, g, w), w ? x.g[g].y : x.g[g].x, isum);
      }
      const float s = float(int8_t((raw.sc >> (8 * g)) & 0xFF));
      acc = fmaf(s * x.d[g], float(isum), acc);
    }
    return h2f(raw.d) * acc;
  }
};
template <> struct Dp4a<kQ6_K> : Dp4aQ6_K<false> {};
template <> struct Dp4a<kQ6_KS> : Dp4aQ6_K<true> {};

// Q8_0 unit = half a block (16 int8): one 16-byte load.
template <bool SOA>
struct Dp4aQ8_0 {
  static constexpr int kInFlight = 2;  // most units per lane loaded before any arithmetic (gemv_in_flight)
  struct X { uint4 q; float d; };
  struct Raw { uint4 q; uint16_t d; };
  __device__ static int64_t units(int64_t n) { return n / 16; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64);
    x.q = *reinterpret_cast<const uint4*>(static_cast<const int8_t*>(a.xq) + u * 16);
    x.d = a.xd[u >> 1];
  }
  struct RowPtr { const uint8_t* qs; const uint16_t* d; };
  __device__ static RowPtr row_ptr(const RowRef& r) {
    const int64_t g0 = r.row * (r.n / 32);
    if constexpr (SOA) return RowPtr{r.w + g0 * 32, reinterpret_cast<const uint16_t*>(r.w + r.nb * 32) + g0};
    else return RowPtr{r.w + g0 * 34, nullptr};
  }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) {
    if constexpr (SOA) return RowPtr{p.qs + bytes, moved(p.d, bytes)};
    else return RowPtr{p.qs + bytes, nullptr};
  }
  __device__ static void load(Raw& raw, const RowPtr& r, int64_t u64) {
    const int u = int(u64), b = u >> 1, h = u & 1;
    if constexpr (SOA) {
      raw.q = ld_stream16(r.qs + b * 32 + 16 * h);
      raw.d = r.d[b];
    } else {
      const uint8_t* blk = r.qs + b * 34;
      raw.d = ld_u16(blk);
      raw.q = ld16_a2(blk + 2 + 16 * h);
    }
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t) {
    int s = 0;
    s = dp4a(raw.q.x, x.q.x, s);
    s = dp4a(raw.q.y, x.q.y, s);
    s = dp4a(raw.q.z, x.q.z, s);
    s = dp4a(raw.q.w, x.q.w, s);
    return h2f(raw.d) * x.d * float(s);
  }
};
template <> struct Dp4a<kQ8_0> : Dp4aQ8_0<false> {};
template <> struct Dp4a<kQ8_0S> : Dp4aQ8_0<true> {};

// ---------------------------------------------------------------- int16-activation path (dp2a)
// The same units and weight loads as the dp4a path; activations are int16 (one scale per 32),
// so each 32-bit weight word of four int8 lanes meets two words of activations through
// __dp2a_lo / __dp2a_hi. Rounding noise is 256 times smaller than with int8 activations.
__device__ __forceinline__ int dp2(uint32_t w, uint32_t x01, uint32_t x23, int c) {
  return __dp2a_hi(int(x23), int(w), __dp2a_lo(int(x01), int(w), c));
}
// Eight int16 activations starting at element e (16-byte aligned: e % 8 == 0).
__device__ __forceinline__ uint4 ld_x16(const ActRef& a, int e) {
  return *reinterpret_cast<const uint4*>(static_cast<const int16_t*>(a.xq) + e);
}

template <uint32_t T>
struct Dp2a;

template <bool SOA>
struct Dp2aQ4_K : Dp4aQ4_K<SOA> {
  using Base = Dp4aQ4_K<SOA>;
  struct X { uint4 lo[2], hi[2]; float dlo, dhi, slo, shi; };
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64), k = u & 7, j = k >> 1, h = k & 1;
    const int e = (u >> 3) * 256 + 64 * j + 16 * h;
    x.lo[0] = ld_x16(a, e);
    x.lo[1] = ld_x16(a, e + 8);
    x.hi[0] = ld_x16(a, e + 32);
    x.hi[1] = ld_x16(a, e + 40);
    x.dlo = a.xd[e >> 5];
    x.dhi = a.xd[(e >> 5) + 1];
    x.slo = a.xs[e >> 4];
    x.shi = a.xs[(e >> 4) + 2];
  }
  __device__ static float dot(const typename Base::Raw& raw, const X& x, int64_t u) {
    const int j = int(u & 7) >> 1;
    int ilo = 0, ihi = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t w = word_of(raw.q, i);
      const uint4& xl = x.lo[i >> 1];
      const uint4& xh = x.hi[i >> 1];
      const int p = (i & 1) * 2;
      ilo = dp2(w & 0x0F0F0F0F, word_of(xl, p), word_of(xl, p + 1), ilo);
      ihi = dp2((w >> 4) & 0x0F0F0F0F, word_of(xh, p), word_of(xh, p + 1), ihi);
    }
    return Base::finish(raw, j, ilo, ihi, x.dlo, x.dhi, x.slo, x.shi);
  }
};
template <> struct Dp2a<kQ4_K> : Dp2aQ4_K<false> {};
template <> struct Dp2a<kQ4_KS> : Dp2aQ4_K<true> {};

template <bool SOA>
struct Dp2aQ6_K : Dp4aQ6_K<SOA> {
  using Base = Dp4aQ6_K<SOA>;
  struct X { uint4 g[4]; float d[4]; };
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64), k = u & 7, n = k >> 2, l0 = (k & 3) * 8;
    const int e = (u >> 3) * 256 + 128 * n + l0;
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      x.g[g] = ld_x16(a, e + 32 * g);
      x.d[g] = a.xd[(e >> 5) + g];
    }
  }
  __device__ static float dot(const typename Base::Raw& raw, const X& x, int64_t) {
    float acc = 0.f;
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      int isum = 0;
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        isum = dp2(Base::q_word(raw, g, w), word_of(x.g[g], 2 * w), word_of(x.g[g], 2 * w + 1), isum);
      }
      const float s = float(int8_t((raw.sc >> (8 * g)) & 0xFF));
      acc = fmaf(s * x.d[g], float(isum), acc);
    }
    return h2f(raw.d) * acc;
  }
};
template <> struct Dp2a<kQ6_K> : Dp2aQ6_K<false> {};
template <> struct Dp2a<kQ6_KS> : Dp2aQ6_K<true> {};

template <bool SOA>
struct Dp2aQ8_0 : Dp4aQ8_0<SOA> {
  using Base = Dp4aQ8_0<SOA>;
  struct X { uint4 q[2]; float d; };
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64);
    x.q[0] = ld_x16(a, u * 16);
    x.q[1] = ld_x16(a, u * 16 + 8);
    x.d = a.xd[u >> 1];
  }
  __device__ static float dot(const typename Base::Raw& raw, const X& x, int64_t) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) s = dp2(word_of(raw.q, i), word_of(x.q[i >> 1], (i & 1) * 2), word_of(x.q[i >> 1], (i & 1) * 2 + 1), s);
    return h2f(raw.d) * x.d * float(s);
  }
};
template <> struct Dp2a<kQ8_0> : Dp2aQ8_0<false> {};
template <> struct Dp2a<kQ8_0S> : Dp2aQ8_0<true> {};

// Q5_0 (llama.cpp's fallback for Q4_K rows that are not a multiple of 256 wide) on the int16
// path. A unit is one 22-byte block, read with 2-byte loads; its 5-bit quants minus 16 fit
// signed bytes, which dp2a takes as they are.
struct Dp2aQ5_0 {
  static constexpr int kInFlight = 2;
  struct X { uint4 v[4]; float d; };  // elements 0..7, 8..15, 16..23, 24..31
  struct Raw { uint32_t qs[4]; uint32_t qh; uint16_t d; };
  struct RowPtr { const uint8_t* b; };
  __device__ static int64_t units(int64_t n) { return n / 32; }
  __device__ static RowPtr row_ptr(const RowRef& r) { return RowPtr{r.w + r.row * (r.n / 32) * 22}; }
  __device__ static RowPtr shift(const RowPtr& p, int64_t bytes) { return RowPtr{p.b + bytes}; }
  __device__ static void load_x(X& x, const ActRef& a, int64_t, int64_t u64) {
    const int u = int(u64);
#pragma unroll
    for (int i = 0; i < 4; ++i) x.v[i] = ld_x16(a, 32 * u + 8 * i);
    x.d = a.xd[u];
  }
  __device__ static void load(Raw& raw, const RowPtr& p, int64_t u) {
    const uint8_t* blk = p.b + 22 * u;
    raw.d = ld_u16(blk);
    raw.qh = ld_u32_a2(blk + 2);
#pragma unroll
    for (int i = 0; i < 4; ++i) raw.qs[i] = ld_u32_a2(blk + 6 + 4 * i);
  }
  // Bits 0..3 of h moved to bit 4 of bytes 0..3: the fifth bit of four quants.
  __device__ static uint32_t fifth_bits(uint32_t h) {
    return ((h & 1u) << 4) | ((h & 2u) << 11) | ((h & 4u) << 18) | ((h & 8u) << 25);
  }
  __device__ static float dot(const Raw& raw, const X& x, int64_t) {
    int isum = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t w = raw.qs[k];
      // quants 4k..4k+3 (low nibbles) and 16+4k..16+4k+3 (high nibbles), minus 16 per byte
      const uint32_t lo = __vsub4((w & 0x0F0F0F0Fu) | fifth_bits(raw.qh >> (4 * k)), 0x10101010u);
      const uint32_t hi = __vsub4(((w >> 4) & 0x0F0F0F0Fu) | fifth_bits(raw.qh >> (16 + 4 * k)), 0x10101010u);
      const int p = (k & 1) * 2;
      isum = dp2(lo, word_of(x.v[k >> 1], p), word_of(x.v[k >> 1], p + 1), isum);
      isum = dp2(hi, word_of(x.v[2 + (k >> 1)], p), word_of(x.v[2 + (k >> 1)], p + 1), isum);
    }
    return h2f(raw.d) * x.d * float(isum);
  }
};
template <> struct Dp2a<kQ5_0> : Dp2aQ5_0 {};

}  // namespace p64::cuda
