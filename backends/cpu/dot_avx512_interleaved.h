// AVX-512 VNNI kernel for row-interleaved blocks (Q8_0_R16, Q5_0_R16, Q4_K_R16, Q6_K_R16;
// layouts in quant.h); included once, by dot_avx512.cpp.
//
// One 64-byte load holds the same four quants of sixteen rows, so a vpdpbusd against those four
// activation bytes broadcast advances sixteen rows at once, and eight of them finish a 32-block:
// the integer sum of each row lands in its own lane with no reduction, and the float work is one
// convert, one multiply and one FMA per block for sixteen rows (Q4_K: one more FMA for its
// mins; Q6_K: twice that, its scales being per 16 elements). The blocked AoS kernel
// (dot_avx512_blocked.h) instead spends that float work per two blocks of one row.
//
// The weights enter VNNI as its unsigned operand: Q8_0_R16 stores q + 128, the other quants are
// unsigned already. A zero point (128, 16) makes each block's integer sum start from
// -zero * (sum of the activation's int8 values in that block), computed once per call; Q4_K's
// min and Q6_K's zero point (32, under a per-16 scale) are taken off in float with the
// activation's sums.
// Each (row, token) pair has its own accumulator and sees the same operations in the same order
// whatever the tile shape, so a prefill and a decode of the same token give identical products.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/dot.h"
#include "engine/quant/interleaved_layout.h"

namespace p64::dot::avx512 {
namespace interleaved {

constexpr int64_t kGroupRows = r16::kGroupRows;

// Four bits of each byte of a 64-byte load of nibbles: granule k's (the low halves for k < 4,
// the high halves for k >= 4).
inline __m512i nibble_granule(const uint8_t* nibbles, int k) {
  const __m512i v = _mm512_loadu_si512(nibbles + r16::nibble_granule_at(k, 0));
  return _mm512_and_si512(k < 4 ? v : _mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
}

inline __m512 f16x16(const uint8_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
inline __m512 u8x16(__m128i bytes) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)); }

// The forms. kUnitBytes: one unit (kBlocks 32-element blocks of the 16 rows); kParts: integer
// sums per block, each with its own scale (Q6_K: one per 16 elements); kZero: the weights'
// integer zero point; kMins: a float term per part, min(...) times the activation's sum.
// scale(unit, j, p): the 16 rows' factor for part p of block j; granule(unit, j, k): quants
// 4k .. 4k + 3 of block j for the 16 rows, as u8.
// The legacy blocks: units of two 32-blocks, one f16 scale per block and row.
struct PairForm {
  static constexpr int kBlocks = r16::Q8_0::kBlocks, kParts = 1;  // Q5_0's alike
  static constexpr bool kMins = false;
  static __m512 scale(const uint8_t* unit, int j, int) { return f16x16(unit + r16::Q8_0::scales(j)); }  // Q5_0's alike
  static __m512 min(const uint8_t*, int, int, __m512) { return _mm512_setzero_ps(); }
};

struct Q8_0Form : PairForm {
  static constexpr size_t kUnitBytes = r16::Q8_0::kUnitBytes;
  static constexpr int32_t kZero = 128;
  static __m512i granule(const uint8_t* unit, int j, int k) {
    return _mm512_loadu_si512(unit + r16::Q8_0::quants(j) + r16::granule_at(k, 0));
  }
};

struct Q5_0Form : PairForm {
  static constexpr size_t kUnitBytes = r16::Q5_0::kUnitBytes;
  static constexpr int32_t kZero = 16;
  static __m512i granule(const uint8_t* unit, int j, int k) {
    const __m512i low4 = nibble_granule(unit + r16::Q5_0::nibbles(j), k);
    uint64_t fifth;
    std::memcpy(&fifth, unit + r16::Q5_0::masks(j) + 8 * k, 8);
    return _mm512_mask_add_epi8(low4, _cvtu64_mask64(fifth), low4, _mm512_set1_epi8(0x10));  // low4 < 16: add is or
  }
};

struct Q4_KForm {
  static constexpr size_t kUnitBytes = r16::Q4_K::kUnitBytes;
  static constexpr int kBlocks = r16::Q4_K::kBlocks, kParts = 1;
  static constexpr int32_t kZero = 0;
  static constexpr bool kMins = true;
  static __m128i scale_byte(const uint8_t* unit, int k) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(unit + r16::Q4_K::scale_byte(k))); }
  // The K-quant 6-bit scale / min of sub-block j, for the 16 rows at once.
  static __m128i sc_bytes(const uint8_t* unit, int j) {
    if (j < 4) return _mm_and_si128(scale_byte(unit, j), _mm_set1_epi8(63));
    return _mm_or_si128(_mm_and_si128(scale_byte(unit, j + 4), _mm_set1_epi8(0x0F)),
                        _mm_and_si128(_mm_srli_epi16(scale_byte(unit, j - 4), 2), _mm_set1_epi8(0x30)));
  }
  static __m128i m_bytes(const uint8_t* unit, int j) {
    if (j < 4) return _mm_and_si128(scale_byte(unit, j + 4), _mm_set1_epi8(63));
    return _mm_or_si128(_mm_and_si128(_mm_srli_epi16(scale_byte(unit, j + 4), 4), _mm_set1_epi8(0x0F)),
                        _mm_and_si128(_mm_srli_epi16(scale_byte(unit, j), 2), _mm_set1_epi8(0x30)));
  }
  static __m512 scale(const uint8_t* unit, int j, int) {
    return _mm512_mul_ps(f16x16(unit + r16::Q4_K::kD), u8x16(sc_bytes(unit, j)));
  }
  static __m512 min(const uint8_t* unit, int j, int, __m512) {
    return _mm512_mul_ps(f16x16(unit + r16::Q4_K::kDmin), u8x16(m_bytes(unit, j)));
  }
  static __m512i granule(const uint8_t* unit, int j, int k) { return nibble_granule(unit + r16::Q4_K::nibbles(j), k); }
};

// value = d * sc[g] * (q - 32) for 16-group g: q (6 bits) = nibble | two high bits << 4.
struct Q6_KForm {
  static constexpr size_t kUnitBytes = r16::Q6_K::kUnitBytes;
  static constexpr int kBlocks = r16::Q6_K::kBlocks, kParts = 2;
  static constexpr int32_t kZero = 0;
  static constexpr bool kMins = true;
  static __m512 scale(const uint8_t* unit, int j, int p) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(unit + r16::Q6_K::scale(2 * j + p)));
    return _mm512_mul_ps(f16x16(unit + r16::Q6_K::kD), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)));
  }
  static __m512 min(const uint8_t*, int, int, __m512 scale) { return _mm512_mul_ps(scale, _mm512_set1_ps(32.0f)); }
  static __m512i granule(const uint8_t* unit, int j, int k) {
    const __m512i high = _mm512_loadu_si512(unit + r16::Q6_K::high(j) + r16::granule_at(k / 4, 0));
    // bits 2 (k % 4) and up of each byte, moved to bits 4-5
    const __m512i moved = k % 4 == 0   ? _mm512_slli_epi16(high, 4)
                          : k % 4 == 1 ? _mm512_slli_epi16(high, 2)
                          : k % 4 == 2 ? high
                                       : _mm512_srli_epi16(high, 2);
    return _mm512_or_si512(nibble_granule(unit + r16::Q6_K::nibbles(j), k), _mm512_and_si512(moved, _mm512_set1_epi8(0x30)));
  }
};

// -zero * (sum of token t's int8 quants in block b), at [t * nb + b].
inline void block_offsets(const ActBatch& x, int32_t zero, std::vector<int32_t>& out) {
  const int64_t nb = x.n / 32;
  out.resize(static_cast<size_t>(x.ntok * nb));
  const __m256i flip = _mm256_set1_epi8(-128);
  for (int64_t t = 0; t < x.ntok; ++t)
    for (int64_t b = 0; b < nb; ++b) {
      // sad(q ^ 0x80, 0) sums q + 128 over each 8 bytes
      const __m256i u = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q8 + t * x.n + 32 * b)), flip);
      const __m256i s = _mm256_sad_epu8(u, _mm256_setzero_si256());
      const int64_t biased = _mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 1) + _mm256_extract_epi64(s, 2) +
                             _mm256_extract_epi64(s, 3);
      out[static_cast<size_t>(t * nb + b)] = -zero * static_cast<int32_t>(biased - 32 * 128);
    }
}

inline int32_t four_bytes(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Prefetch into L2 this far ahead of the unit being read (8 and 32 KiB measured the same).
constexpr size_t kPrefetchAhead = 16384;

// acc[g][t] = 16 rows of group g dotted with token t0 + t, for G consecutive groups from `group`.
template <class Form, int G, int NT>
void tile(const uint8_t* group, size_t group_bytes, const ActBatch& x, int64_t t0, const int32_t* offsets,
          bool prefetch, __m512 (&acc)[G][NT]) {
  const int64_t nb = x.n / 32, ng = x.n / 16;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t u = 0; u < nb / Form::kBlocks; ++u) {
    const uint8_t* unit[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      unit[g] = group + g * group_bytes + u * Form::kUnitBytes;
      if (prefetch) {
        const char* ahead = reinterpret_cast<const char*>(unit[g] + kPrefetchAhead);
        for (size_t line = 0; line < Form::kUnitBytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T1);
      }
    }
#pragma GCC unroll 2
    for (int j = 0; j < Form::kBlocks; ++j) {
      const int64_t b = u * Form::kBlocks + j;
#pragma GCC unroll 2
      for (int part = 0; part < Form::kParts; ++part) {
        __m512i sum[G][NT];
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t)
            sum[g][t] = Form::kZero ? _mm512_set1_epi32(offsets[(t0 + t) * nb + b]) : _mm512_setzero_si512();
        constexpr int kGranules = 8 / Form::kParts;
#pragma GCC unroll 8
        for (int k = part * kGranules; k < (part + 1) * kGranules; ++k) {
          __m512i xk[NT];
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) xk[t] = _mm512_set1_epi32(four_bytes(x.q8 + (t0 + t) * x.n + 32 * b + 4 * k));
#pragma GCC unroll 4
          for (int g = 0; g < G; ++g) {
            const __m512i q = Form::granule(unit[g], j, k);
#pragma GCC unroll 4
            for (int t = 0; t < NT; ++t) sum[g][t] = _mm512_dpbusd_epi32(sum[g][t], q, xk[t]);
          }
        }
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) {
          const __m512 scale = Form::scale(unit[g], j, part);
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t)
            acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[g][t]),
                                        _mm512_mul_ps(scale, _mm512_set1_ps(x.d8[(t0 + t) * nb + b])), acc[g][t]);
          if constexpr (Form::kMins) {
            const __m512 mins = Form::min(unit[g], j, part, scale);
#pragma GCC unroll 4
            for (int t = 0; t < NT; ++t) {
              const float* xs = x.xs16 + (t0 + t) * ng + 2 * b;  // d8 * (sum of each 16 int8 values)
              const float part_sum = Form::kParts == 2 ? xs[part] : xs[0] + xs[1];
              acc[g][t] = _mm512_fnmadd_ps(mins, _mm512_set1_ps(part_sum), acc[g][t]);
            }
          }
        }
      }
    }
  }
}

// Writes (or adds) the rows of group `g` that lie in [r0, r1) for NT tokens from t0.
template <int NT>
void store(const __m512 (&acc)[NT], int64_t g, int64_t r0, int64_t r1, int64_t t0, float* out, int64_t ldo,
           bool accumulate) {
  const int64_t first = g * kGroupRows;
  uint32_t lanes = 0xFFFF;
  if (first < r0) lanes &= 0xFFFFu << (r0 - first);
  if (first + kGroupRows > r1) lanes &= 0xFFFFu >> (first + kGroupRows - r1);
  const __mmask16 m = static_cast<__mmask16>(lanes);
  for (int t = 0; t < NT; ++t) {
    float* o = out + (t0 + t) * ldo + first;
    const __m512 v = accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, o), acc[t]) : acc[t];
    _mm512_mask_storeu_ps(o, m, v);
  }
}

template <class Form, int G, int NT>
void groups_by_tokens(const uint8_t* data, size_t group_bytes, int64_t g, const ActBatch& x, int64_t t0,
                      const int32_t* offsets, bool prefetch, int64_t r0, int64_t r1, float* out, int64_t ldo,
                      bool accumulate) {
  __m512 acc[G][NT];
  tile<Form, G, NT>(data + g * group_bytes, group_bytes, x, t0, offsets, prefetch, acc);
  for (int i = 0; i < G; ++i) store<NT>(acc[i], g + i, r0, r1, t0, out, ldo, accumulate);
}

template <class Form, int G>
void groups(const uint8_t* data, size_t group_bytes, int64_t g, const ActBatch& x, const int32_t* offsets,
            int64_t r0, int64_t r1, float* out, int64_t ldo, bool accumulate) {
  for (int64_t t0 = 0; t0 < x.ntok; t0 += 4) {
    const bool prefetch = t0 == 0;  // later token tiles find the group in cache
    const auto args = [&](auto run) { run(data, group_bytes, g, x, t0, offsets, prefetch, r0, r1, out, ldo, accumulate); };
    switch (x.ntok - t0 < 4 ? x.ntok - t0 : 4) {
      case 4: args(groups_by_tokens<Form, G, 4>); break;
      case 3: args(groups_by_tokens<Form, G, 3>); break;
      case 2: args(groups_by_tokens<Form, G, 2>); break;
      default: args(groups_by_tokens<Form, G, 1>); break;
    }
  }
}

template <class Form>
void run_form(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
              bool accumulate) {
  std::vector<int32_t> offsets;
  if (Form::kZero) block_offsets(x, Form::kZero, offsets);
  const size_t group_bytes = static_cast<size_t>(x.n / 32 / Form::kBlocks) * Form::kUnitBytes;
  const int64_t g0 = r0 / kGroupRows, g1 = (r1 + kGroupRows - 1) / kGroupRows;
  // The loop's prefetch runs kPrefetchAhead bytes ahead, so the first that many are fetched here.
  const uint8_t* first = w.data + g0 * group_bytes;
  const size_t span = std::min(kPrefetchAhead, static_cast<size_t>(g1 - g0) * group_bytes);
  for (size_t off = 0; off < span; off += 64) _mm_prefetch(reinterpret_cast<const char*>(first + off), _MM_HINT_T1);
  // One group at a time for a decode (its stream runs ahead of the arithmetic); two for a batch,
  // which share each activation broadcast.
  int64_t g = g0;
  if (x.ntok > 1)
    for (; g + 2 <= g1; g += 2) groups<Form, 2>(w.data, group_bytes, g, x, offsets.data(), r0, r1, out, ldo, accumulate);
  for (; g < g1; ++g) groups<Form, 1>(w.data, group_bytes, g, x, offsets.data(), r0, r1, out, ldo, accumulate);
}

// Runs the kernel of a row-interleaved dtype; false for any other dtype.
inline bool run(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                bool accumulate) {
  switch (w.dtype) {
    case DType::Q8_0_R16: run_form<Q8_0Form>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q5_0_R16: run_form<Q5_0Form>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q4_K_R16: run_form<Q4_KForm>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q6_K_R16: run_form<Q6_KForm>(w, x, r0, r1, out, ldo, accumulate); return true;
    default: return false;
  }
}

}  // namespace interleaved
}  // namespace p64::dot::avx512
