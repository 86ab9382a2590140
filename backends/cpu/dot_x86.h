// x86 kernels shared by dot_avx2.cpp and dot_avx512.cpp: each includes this file once,
// compiled with its own ISA flags, after defining P64_DOT_VNNI (1: vpdpbusd, 0: maddubs+madd)
// and P64_DOT_NS (the namespace that keeps the two copies apart).
//
// Shape of every int8 kernel: the weight block is loaded and unpacked to unsigned bytes once,
// then multiplied against NT activation rows (a token tile), so in a prefill each weight row
// is read from memory once per batch and unpacked once per tile of NT tokens.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "engine/quant/blocks.h"
#include "backends/cpu/dot.h"

namespace p64::dot::P64_DOT_NS {
namespace {

inline float f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 8 int32 lanes; lane i = sum over bytes 4i..4i+3 of u[k] * s[k] (u unsigned, s signed).
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if P64_DOT_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The 32 4-bit quants of a legacy block: low nibbles are elements 0..15, high 16..31.
inline __m256i unpack_nibbles_16(const uint8_t* qs) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}

// 0x10 in byte j where bit j of qh is set (the fifth bit of Q5_0's quants).
inline __m256i fifth_bits(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(qh)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

struct Tile {
  const ActBatch& x;
  int t0;
  const int8_t* q(int t, int64_t elem) const { return x.q8 + (t0 + t) * x.n + elem; }
  float d(int t, int64_t blk) const { return x.d8[(t0 + t) * (x.n / 32) + blk]; }
  float xs(int t, int64_t grp) const { return x.xs16[(t0 + t) * (x.n / 16) + grp]; }
};

// Every int8 kernel keeps two accumulators per token (even and odd blocks, or the low and
// high nibbles) so consecutive FMAs do not wait on each other's latency.

template <int NT>
void q8_0_tile(const RowFields& F, const Tile& T, float* res) {
  __m256 acc[2][NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  const int64_t nb = T.x.n / 32;
  auto block = [&](int64_t b, __m256* a) {
    const __m256i w = load32(F.at(0, b));
    const __m256i aw = _mm256_sign_epi8(w, w);  // |w|; the sign moves onto the activation
    const float dw = f16(F.at(1, b));
    for (int t = 0; t < NT; ++t) {
      const __m256i sx = _mm256_sign_epi8(load32(T.q(t, 32 * b)), w);
      a[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * T.d(t, b)), _mm256_cvtepi32_ps(dot_u8s8(aw, sx)), a[t]);
    }
  };
  int64_t b = 0;
  for (; b + 1 < nb; b += 2) block(b, acc[0]), block(b + 1, acc[1]);
  if (b < nb) block(b, acc[0]);
  for (int t = 0; t < NT; ++t) res[t] = hsum(_mm256_add_ps(acc[0][t], acc[1][t]));
}

// Q4_0 and Q5_0: the fixed offset (8 or 16) is taken off the quants in int8, so the block is a
// signed dot like Q8_0's and needs no activation sums.
template <int NT, bool Q5>
void q4_5_0_tile(const RowFields& F, const Tile& T, float* res) {
  __m256 acc[2][NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  const int64_t nb = T.x.n / 32;
  const __m256i offset = _mm256_set1_epi8(Q5 ? 16 : 8);
  auto block = [&](int64_t b, __m256* a) {
    __m256i w = unpack_nibbles_16(F.at(0, b));
    if constexpr (Q5) {
#if P64_DOT_VNNI
      // AVX-512BW: the fifth bits are a byte mask; subtract 16 only where the bit is clear.
      uint32_t qh;
      std::memcpy(&qh, F.at(1, b), 4);
      w = _mm256_mask_sub_epi8(w, _cvtu32_mask32(~qh), w, offset);
#else
      w = _mm256_sub_epi8(_mm256_or_si256(w, fifth_bits(F.at(1, b))), offset);
#endif
    } else {
      w = _mm256_sub_epi8(w, offset);
    }
    const __m256i aw = _mm256_sign_epi8(w, w);
    const float dw = f16(F.at(Q5 ? 2 : 1, b));
    for (int t = 0; t < NT; ++t) {
      const __m256i sx = _mm256_sign_epi8(load32(T.q(t, 32 * b)), w);
      a[t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * T.d(t, b)), _mm256_cvtepi32_ps(dot_u8s8(aw, sx)), a[t]);
    }
  };
  int64_t b = 0;
  for (; b + 1 < nb; b += 2) block(b, acc[0]), block(b + 1, acc[1]);
  if (b < nb) block(b, acc[0]);
  for (int t = 0; t < NT; ++t) res[t] = hsum(_mm256_add_ps(acc[0][t], acc[1][t]));
}

// The 8 six-bit scales (bytes 0..7 of the result) and 8 mins (bytes 8..15) of a Q4_K/Q5_K
// super-block, unpacked in four 32-bit words instead of byte by byte.
inline void unpack_k4_scales(const uint8_t* sc, uint8_t out[16]) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t u[4];
  std::memcpy(u, sc, 12);
  u[3] = ((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kLow2) << 4);
  const uint32_t mins_lo = u[1] & kLow6;
  u[1] = (u[2] & kLow4) | (((u[0] >> 6) & kLow2) << 4);
  u[2] = mins_lo;
  u[0] &= kLow6;
  std::memcpy(out, u, 16);
}

// The sums of adjacent pairs of 16 floats: 8 floats, one per 32-block.
inline __m256 pair_sums(const float* p) {
  const __m256 h = _mm256_hadd_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(h), 0xD8));
}

template <int NT>
void q4_k_tile(const RowFields& F, const Tile& T, float* res) {
  __m256 acc[2][NT], mins[NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = mins[t] = _mm256_setzero_ps();
  const int64_t nsb = T.x.n / 256;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const uint8_t* qs = F.at(0, sb);
    alignas(16) uint8_t sm[16];
    unpack_k4_scales(F.at(1, sb), sm);
    const __m256 d = _mm256_set1_ps(f16(F.at(2, sb))), dmin = _mm256_set1_ps(f16(F.at(3, sb)));
    const __m128i sm_bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(sm));
    const __m256 scale = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm_bytes)));
    const __m256 mn = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sm_bytes, 8))));
    const int64_t b0 = sb * 8;  // first 32-block of the super-block in the row
    __m256 s[NT];               // per token: super-block scale x activation scale, per 32-block
    for (int t = 0; t < NT; ++t) {
      s[t] = _mm256_mul_ps(scale, _mm256_loadu_ps(&T.x.d8[(T.t0 + t) * (T.x.n / 32) + b0]));
      mins[t] = _mm256_fmadd_ps(mn, pair_sums(&T.x.xs16[(T.t0 + t) * (T.x.n / 16) + 2 * b0]), mins[t]);
    }
    alignas(32) float sv[NT][8];
    for (int t = 0; t < NT; ++t) _mm256_store_ps(sv[t], s[t]);
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load32(qs + 32 * c);
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      const int64_t b = b0 + 2 * c;  // 32-block of the low nibbles; b + 1 for the high ones
      for (int t = 0; t < NT; ++t) {
        const __m256i p_lo = dot_u8s8(lo, load32(T.q(t, 32 * b)));
        const __m256i p_hi = dot_u8s8(hi, load32(T.q(t, 32 * b + 32)));
        acc[0][t] = _mm256_fmadd_ps(_mm256_set1_ps(sv[t][2 * c]), _mm256_cvtepi32_ps(p_lo), acc[0][t]);
        acc[1][t] = _mm256_fmadd_ps(_mm256_set1_ps(sv[t][2 * c + 1]), _mm256_cvtepi32_ps(p_hi), acc[1][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) res[t] = hsum(_mm256_add_ps(acc[0][t], acc[1][t])) - hsum(mins[t]);
}

template <int NT>
void q6_k_tile(const RowFields& F, const Tile& T, float* res) {
  __m256 acc[2][NT], offs[NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = offs[t] = _mm256_setzero_ps();
  const int64_t nsb = T.x.n / 256;
  const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const uint8_t* ql = F.at(0, sb);
    const uint8_t* qh = F.at(1, sb);
    const int8_t* sc = reinterpret_cast<const int8_t*>(F.at(2, sb));
    const float d = f16(F.at(3, sb));
    // The -32 offset of the quants, through the activation sums of each 16-group: vectorised
    // over the super-block's 16 scales.
    const __m128i sc_bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc));
    const __m256 vd = _mm256_set1_ps(d);
    const __m256 sc_lo = _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc_bytes)));
    const __m256 sc_hi = _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc_bytes, 8))));
    for (int t = 0; t < NT; ++t) {
      const float* xs = &T.x.xs16[(T.t0 + t) * (T.x.n / 16) + sb * 16];
      offs[t] = _mm256_fmadd_ps(sc_lo, _mm256_loadu_ps(xs), offs[t]);
      offs[t] = _mm256_fmadd_ps(sc_hi, _mm256_loadu_ps(xs + 8), offs[t]);
    }
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = load32(ql + 64 * h), l1 = load32(ql + 64 * h + 32), hv = load32(qh + 32 * h);
      // Quants 0..63 of the four 32-element runs of this half: ql nibble | two qh bits << 4.
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(hv, 4), bits45)),
          _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(hv, 2), bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), _mm256_and_si256(hv, bits45)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                          _mm256_and_si256(_mm256_srli_epi16(hv, 2), bits45))};
      for (int k = 0; k < 4; ++k) {
        const int g = 8 * h + 2 * k;         // first 16-group of the run within the super-block
        const int64_t b = sb * 8 + g / 2;    // its 32-block in the row
        const float s0 = d * sc[g], s1 = d * sc[g + 1];
        for (int t = 0; t < NT; ++t) {
          const float dx = T.d(t, b);
          const __m256 scale = _mm256_set_m128(_mm_set1_ps(s1 * dx), _mm_set1_ps(s0 * dx));
          acc[k & 1][t] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(dot_u8s8(q[k], load32(T.q(t, 32 * b)))), acc[k & 1][t]);
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) res[t] = hsum(_mm256_add_ps(acc[0][t], acc[1][t])) - 32.0f * hsum(offs[t]);
}

// Float activations against float weights (F32 / F16 / BF16 rows, or a dequantized row).
template <int NT, DType WT>
void float_tile(const uint8_t* wrow, int64_t n, const ActBatch& x, int t0, float* res) {
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 w;
    if constexpr (WT == DType::F32) {
      w = _mm256_loadu_ps(reinterpret_cast<const float*>(wrow) + i);
    } else if constexpr (WT == DType::F16) {
      w = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wrow + 2 * i)));
    } else {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wrow + 2 * i));
      w = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x.f32 + (t0 + t) * x.ld_f32 + i), acc[t]);
  }
  for (int t = 0; t < NT; ++t) {
    float s = hsum(acc[t]);
    for (int64_t k = i; k < n; ++k) {
      float wk;
      if constexpr (WT == DType::F32) {
        wk = reinterpret_cast<const float*>(wrow)[k];
      } else if constexpr (WT == DType::F16) {
        wk = f16(wrow + 2 * k);
      } else {
        uint32_t u = static_cast<uint32_t>(wrow[2 * k] | (wrow[2 * k + 1] << 8)) << 16;
        std::memcpy(&wk, &u, 4);
      }
      s += wk * x.f32[(t0 + t) * x.ld_f32 + k];
    }
    res[t] = s;
  }
}

template <int NT>
void row_tile(const WeightMatrix& w, const RowFields& F, const uint8_t* frow, DType ft, const ActBatch& x, int t0,
              bool int8, float* res) {
  if (int8) {
    const Tile T{x, t0};
    switch (w.dtype) {
      case DType::Q8_0: case DType::Q8_0_SOA: q8_0_tile<NT>(F, T, res); return;
      case DType::Q4_0: q4_5_0_tile<NT, false>(F, T, res); return;
      case DType::Q5_0: q4_5_0_tile<NT, true>(F, T, res); return;
      case DType::Q4_K: case DType::Q4_K_SOA: q4_k_tile<NT>(F, T, res); return;
      case DType::Q6_K: case DType::Q6_K_SOA: q6_k_tile<NT>(F, T, res); return;
      default: break;
    }
  }
  switch (ft) {
    case DType::F16: float_tile<NT, DType::F16>(frow, w.n, x, t0, res); return;
    case DType::BF16: float_tile<NT, DType::BF16>(frow, w.n, x, t0, res); return;
    default: float_tile<NT, DType::F32>(frow, w.n, x, t0, res); return;
  }
}

constexpr int kTile = 4;  // tokens per weight-block unpack; 4 accumulators stay in registers

#ifndef P64_PREFETCH_AHEAD
#define P64_PREFETCH_AHEAD 2048
#endif
// Decode streams every weight once. Rows are contiguous in AoS and float matrices, so while a
// row is computed the bytes this far past its start are prefetched: the quantized kernels
// spend long enough per cache line that the hardware prefetcher alone falls behind
// (Q5_0 from memory: 4-5 -> 7 GB/s of CPU time on a 2-core Xeon VM).
constexpr size_t kPrefetchAhead = P64_PREFETCH_AHEAD;

inline size_t contiguous_row_bytes(const WeightMatrix& w) {
  switch (w.dtype) {
    case DType::F32: return static_cast<size_t>(w.n) * 4;
    case DType::F16: case DType::BF16: return static_cast<size_t>(w.n) * 2;
    case DType::Q8_0: return static_cast<size_t>(w.n / 32) * 34;
    case DType::Q4_0: return static_cast<size_t>(w.n / 32) * 18;
    case DType::Q5_0: return static_cast<size_t>(w.n / 32) * 22;
    case DType::Q4_K: return static_cast<size_t>(w.n / 256) * 144;
    case DType::Q6_K: return static_cast<size_t>(w.n / 256) * 210;
    default: return 0;  // SoA: a row's fields are apart
  }
}

}  // namespace

void matmul(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo, bool int8,
            bool accumulate) {
  const bool native_float = w.dtype == DType::F32 || w.dtype == DType::F16 || w.dtype == DType::BF16;
  std::vector<float> dequant(!int8 && !native_float ? static_cast<size_t>(w.n) : 0);
  const size_t row_bytes = kPrefetchAhead > 0 ? contiguous_row_bytes(w) : 0;
  const uint8_t* const end = w.data + row_bytes * static_cast<size_t>(w.rows);
  for (int64_t r = r0; r < r1; ++r) {
    if (row_bytes > 0) {
      const uint8_t* row = w.data + row_bytes * static_cast<size_t>(r);
      for (const uint8_t* p = row + kPrefetchAhead; p < row + kPrefetchAhead + row_bytes && p < end; p += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
    }
    const RowFields F = row_fields(w, r);
    const uint8_t* frow = F.f[0];
    DType ft = w.dtype;
    if (!int8 && !native_float) {
      dot::dequantize_row(w, r, dequant.data());
      frow = reinterpret_cast<const uint8_t*>(dequant.data());
      ft = DType::F32;
    }
    for (int t0 = 0; t0 < x.ntok; t0 += kTile) {
      float res[kTile];
      const int nt = x.ntok - t0 < kTile ? x.ntok - t0 : kTile;
      switch (nt) {
        case 4: row_tile<4>(w, F, frow, ft, x, t0, int8, res); break;
        case 3: row_tile<3>(w, F, frow, ft, x, t0, int8, res); break;
        case 2: row_tile<2>(w, F, frow, ft, x, t0, int8, res); break;
        default: row_tile<1>(w, F, frow, ft, x, t0, int8, res); break;
      }
      for (int t = 0; t < nt; ++t) {
        float& o = out[(t0 + t) * ldo + r];
        o = accumulate ? o + res[t] : res[t];
      }
    }
  }
}

void quantize_acts(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(xb + 8 * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float d = _mm_cvtss_f32(m) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i qi[4];
    for (int k = 0; k < 4; ++k) qi[k] = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], vid));  // round to nearest even
    // Group sums of 16 from the int32 lanes, before narrowing.
    const __m256i s0 = _mm256_add_epi32(qi[0], qi[1]), s1 = _mm256_add_epi32(qi[2], qi[3]);
    auto hsum_i = [](__m256i s) {
      __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
      t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
      t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
      return _mm_cvtsi128_si32(t);
    };
    d8[b] = d;
    xs16[2 * b] = d * static_cast<float>(hsum_i(s0));
    xs16[2 * b + 1] = d * static_cast<float>(hsum_i(s1));
    // Narrow 32 int32 to int8; packs work per 128-bit lane, so a final permute restores order.
    const __m256i p01 = _mm256_packs_epi32(qi[0], qi[1]), p23 = _mm256_packs_epi32(qi[2], qi[3]);
    __m256i p = _mm256_packs_epi16(p01, p23);
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q8 + 32 * b), p);
  }
}

}  // namespace p64::dot::P64_DOT_NS
