// AVX-512 VNNI kernel for row-interleaved blocks (Q8_0_R16, Q5_0_R16; layouts in quant.h);
// included once, by dot_avx512.cpp.
//
// One 64-byte load holds the same four quants of sixteen rows, so a vpdpbusd against those four
// activation bytes broadcast advances sixteen rows at once, and eight of them finish a block:
// the integer sum of each row lands in its own lane with no reduction, and the float work is one
// convert, one multiply and one FMA per block for sixteen rows. The blocked AoS kernel
// (dot_avx512_blocked.h) instead spends that float work per two blocks of one row.
//
// The weights enter VNNI as its unsigned operand: Q8_0_R16 stores q + 128, Q5_0's 5-bit quants
// are unsigned already (value = q - 16). So each block's integer sum starts from -zero * (sum of
// the activation's int8 values in that block), zero being 128 or 16, computed once per call.
// Each (row, token) pair has its own accumulator and sees the same operations in the same order
// whatever the tile shape, so a prefill and a decode of the same token give identical products.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/quant/dot.h"

// GCC 12's AVX-512 intrinsics start from _mm*_undefined_*() values, which its own
// -Wmaybe-uninitialized then reports once per template instance.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace p64::dot::avx512 {
namespace interleaved {

constexpr int64_t kGroupRows = 16;

// The forms: bytes per unit (a pair of blocks of one group: 64 bytes of scales, then each
// block's half), the weights' zero point, and granule k (quants 4k .. 4k + 3 of the 16 rows)
// of the block whose half starts at `half`.
struct Q8_0Form {
  static constexpr size_t kUnitBytes = 1088;
  static constexpr int32_t kZero = 128;
  static __m512i granule(const uint8_t* half, int k) { return _mm512_loadu_si512(half + 64 * k); }
};
struct Q5_0Form {
  static constexpr size_t kUnitBytes = 704;
  static constexpr int32_t kZero = 16;
  static __m512i granule(const uint8_t* half, int k) {
    const __m512i nibbles = _mm512_loadu_si512(half + 64 + 64 * (k % 4));
    const __m512i low4 = _mm512_and_si512(k < 4 ? nibbles : _mm512_srli_epi16(nibbles, 4), _mm512_set1_epi8(0x0F));
    uint64_t fifth;
    std::memcpy(&fifth, half + 8 * k, 8);
    return _mm512_mask_add_epi8(low4, _cvtu64_mask64(fifth), low4, _mm512_set1_epi8(0x10));  // low4 < 16: add is or
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

// Prefetch into L2 this far ahead of the unit being read.
constexpr size_t kPrefetchAhead = 16384;

// acc[g][t] = 16 rows of group g dotted with token t0 + t, for G consecutive groups from `group`.
template <class Form, int G, int NT>
void tile(const uint8_t* group, size_t group_bytes, const ActBatch& x, int64_t t0, const int32_t* offsets,
          bool prefetch, __m512 (&acc)[G][NT]) {
  const int64_t nb = x.n / 32;
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < nb / 2; ++p) {
    if (prefetch)
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const char* ahead = reinterpret_cast<const char*>(group + g * group_bytes + p * Form::kUnitBytes + kPrefetchAhead);
        for (size_t line = 0; line < Form::kUnitBytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T1);
      }
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t b = 2 * p + h;
      __m512i sum[G][NT];
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) sum[g][t] = _mm512_set1_epi32(offsets[(t0 + t) * nb + b]);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        __m512i xk[NT];
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) xk[t] = _mm512_set1_epi32(four_bytes(x.q8 + (t0 + t) * x.n + 32 * b + 4 * k));
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) {
          const __m512i q =
              Form::granule(group + g * group_bytes + p * Form::kUnitBytes + 64 + h * (Form::kUnitBytes - 64) / 2, k);
#pragma GCC unroll 4
          for (int t = 0; t < NT; ++t) sum[g][t] = _mm512_dpbusd_epi32(sum[g][t], q, xk[t]);
        }
      }
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        const __m512 dw = _mm512_cvtph_ps(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + g * group_bytes + p * Form::kUnitBytes + 32 * h)));
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t)
          acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[g][t]),
                                      _mm512_mul_ps(dw, _mm512_set1_ps(x.d8[(t0 + t) * nb + b])), acc[g][t]);
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
  thread_local std::vector<int32_t> offsets;
  block_offsets(x, Form::kZero, offsets);
  const size_t group_bytes = static_cast<size_t>(x.n / 64) * Form::kUnitBytes;
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
    default: return false;
  }
}

}  // namespace interleaved
}  // namespace p64::dot::avx512

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
