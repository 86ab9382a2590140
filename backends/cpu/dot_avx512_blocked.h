// AVX-512 int8 kernels blocked over weight rows and tokens; included once, by dot_avx512.cpp,
// after dot_x86.h (whose helpers it uses).
//
// Why a second set: the 256-bit kernels of dot_x86.h spend most of their time per 32-block on
// scale conversion and the float FMA, not on the integer dot, and reach about 11 GB/s of
// weights on one core, under the memory bandwidth of two. Here one 512-bit vector holds two
// 32-blocks, a tile of RM rows x NT tokens shares each activation load across rows and each
// weight decode across tokens, and every (row, token) pair keeps its own accumulator, so the
// sum for a row is the same sequence of operations whatever the tile shape: a prefill and a
// decode of the same token give bit-identical products.
//
// Signed weights (Q8_0, Q4_0, Q5_0) take x + 128 as the unsigned operand and start the integer
// sum from -128 * sum(w); the K-quants keep their unsigned quants and subtract their offset (Q6_K's 32, Q4_K's
// min) once per super-block through the activation sums of each 16-group.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/dot.h"

namespace p64::dot::avx512 {
namespace blocked {

// Two 32-blocks of one weight row: 64 quants, and the scale of each 4-element lane of the dot
// (lanes 0-7 are the first block's, 8-15 the second's).
struct Pair {
  __m512i q;
  __m512 scale;
};

inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_zextsi256_si512(lo), hi, 1); }

// [a] in lanes 0-7 and [b] in lanes 8-15, from a vector whose lanes 0 and 1 hold a and b.
inline __m512 spread_two(__m128 ab) {
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_zextps128_ps512(ab));
}

inline __m256i nibbles_of_block(const uint8_t* qs) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}

// ---- weight decoders: begin(u) for unit u (a pair of blocks, or a 256-super-block), then
// pair(i) for each of its kPairs pairs, and coef() for the K-quants' per-16-group offset.

// The fp16 scales of a legacy row, eight blocks at a time: one gather from the field's stride
// every fourth pair (fewer lanes at the end of the row), then one permute per pair.
struct LegacyScales {
  __m512 eight;  // blocks [b - b % 8, + 8) in lanes 0-7
  void load(const RowFields& F, int field, int64_t b, int64_t nb) {
    if (b % 8 != 0) return;
    const __m256i offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                               _mm256_set1_epi32(static_cast<int>(F.stride[field])));
    const int64_t left = nb - b;
    const __mmask8 lanes = left >= 8 ? 0xFF : static_cast<__mmask8>((1u << left) - 1);
    // 32-bit words that hold each fp16 and stay inside the tensor: AoS blocks start with their
    // scale, so the word begins there; SoA scale arrays (stride 2) end the tensor, so the word
    // ends there instead and the scale is its high half.
    const bool packed = F.stride[field] == 2;
    const uint8_t* first = F.at(field, b) - (packed ? 2 : 0);
    __m256i words = _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), lanes, offsets, first, 1);
    if (packed) words = _mm256_srli_epi32(words, 16);
    eight = _mm512_zextps256_ps512(_mm256_cvtph_ps(_mm256_cvtepi32_epi16(words)));
  }
  __m512 pair(int64_t b) const {
    const __m512i lane_block = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(b % 8)),
                                                _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    return _mm512_permutexvar_ps(lane_block, eight);
  }
};

struct Q8_0Rows {
  static constexpr bool kSigned = true, kOffset = false;
  static constexpr int kPairs = 1;
  RowFields F;
  int64_t b = 0, nb = 0;
  LegacyScales d;
  void begin(int64_t u) { d.load(F, 1, b = 2 * u, nb); }
  Pair pair(int) const { return {join(load32(F.at(0, b)), load32(F.at(0, b + 1))), d.pair(b)}; }
  __m512 coef() const { return _mm512_setzero_ps(); }
};

struct Q4_0Rows {
  static constexpr bool kSigned = true, kOffset = false;
  static constexpr int kPairs = 1;
  RowFields F;
  int64_t b = 0, nb = 0;
  LegacyScales d;
  void begin(int64_t u) { d.load(F, 1, b = 2 * u, nb); }
  Pair pair(int) const {
    const __m512i q = join(nibbles_of_block(F.at(0, b)), nibbles_of_block(F.at(0, b + 1)));
    return {_mm512_sub_epi8(q, _mm512_set1_epi8(8)), d.pair(b)};
  }
  __m512 coef() const { return _mm512_setzero_ps(); }
};

struct Q5_0Rows {
  static constexpr bool kSigned = true, kOffset = false;
  static constexpr int kPairs = 1;
  RowFields F;
  int64_t b = 0, nb = 0;
  LegacyScales d;
  void begin(int64_t u) { d.load(F, 2, b = 2 * u, nb); }
  Pair pair(int) const {
    const __m512i q = join(nibbles_of_block(F.at(0, b)), nibbles_of_block(F.at(0, b + 1)));
    uint32_t h0, h1;
    std::memcpy(&h0, F.at(1, b), 4);
    std::memcpy(&h1, F.at(1, b + 1), 4);
    const uint64_t fifth = h0 | (static_cast<uint64_t>(h1) << 32);
    // value = (nibble | fifth bit << 4) - 16: subtract 16 where the fifth bit is clear.
    return {_mm512_mask_sub_epi8(q, _cvtu64_mask64(~fifth), q, _mm512_set1_epi8(16)), d.pair(b)};
  }
  __m512 coef() const { return _mm512_setzero_ps(); }
};

// value = d * sc[g] * (q - 32) for 16-group g: unsigned q here, 32 * d * sc[g] in coef().
struct Q6_KRows {
  static constexpr bool kSigned = false, kOffset = true;
  static constexpr int kPairs = 4;
  RowFields F;
  int64_t nb = 0;
  const uint8_t* ql = nullptr;
  const uint8_t* qh = nullptr;
  __m512 scales;  // d * sc[g], g = 0..15
  void begin(int64_t sb) {
    ql = F.at(0, sb);
    qh = F.at(1, sb);
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(F.at(2, sb)));
    scales = _mm512_mul_ps(_mm512_set1_ps(f16(F.at(3, sb))), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)));
  }
  // Pair i = blocks 2i, 2i+1 of the super-block: half h = i / 2, runs k = 2 (i % 2) and k + 1.
  Pair pair(int i) const {
    const int h = i / 2, k = 2 * (i % 2);
    const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
    const __m256i l = load32(ql + 64 * h), l1 = load32(ql + 64 * h + 32);
    const __m256i hv = load32(qh + 32 * h);
    __m256i a, b;
    if (k == 0) {
      a = _mm256_or_si256(_mm256_and_si256(l, low4), _mm256_and_si256(_mm256_slli_epi16(hv, 4), bits45));
      b = _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(hv, 2), bits45));
    } else {
      a = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l, 4), low4), _mm256_and_si256(hv, bits45));
      b = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                          _mm256_and_si256(_mm256_srli_epi16(hv, 2), bits45));
    }
    const __m512i group_of_lane = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i lane_group = _mm512_add_epi32(group_of_lane, _mm512_set1_epi32(4 * i));
    return {join(a, b), _mm512_permutexvar_ps(lane_group, scales)};
  }
  __m512 coef() const { return _mm512_mul_ps(_mm512_set1_ps(32.0f), scales); }
};

// value = d * sc[j] * q - dmin * m[j] for 32-block j: the min term in coef(), per 16-group.
struct Q4_KRows {
  static constexpr bool kSigned = false, kOffset = true;
  static constexpr int kPairs = 4;
  RowFields F;
  int64_t nb = 0;
  const uint8_t* qs = nullptr;
  __m512 scales;  // lanes 0-7: d * sc[j]
  __m512 mins;    // lane g: dmin * m[g / 2]
  void begin(int64_t sb) {
    qs = F.at(0, sb);
    alignas(16) uint8_t sm[16];
    unpack_k4_scales(F.at(1, sb), sm);
    const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(sm))));
    scales = _mm512_mul_ps(_mm512_set1_ps(f16(F.at(2, sb))), f);
    const __m512i min_of_group = _mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    mins = _mm512_mul_ps(_mm512_set1_ps(f16(F.at(3, sb))), _mm512_permutexvar_ps(min_of_group, f));
  }
  // Pair i = the 32 bytes qs[32i..]: low nibbles are block 2i, high nibbles block 2i + 1.
  Pair pair(int i) const {
    const __m512i both = _mm512_broadcast_i64x4(load32(qs + 32 * i));
    const __m512i q = _mm512_and_si512(_mm512_mask_srli_epi16(both, 0xFFFF0000u, both, 4), _mm512_set1_epi8(0x0F));
    const __m512i block_of_lane = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    return {q, _mm512_permutexvar_ps(_mm512_add_epi32(block_of_lane, _mm512_set1_epi32(2 * i)), scales)};
  }
  __m512 coef() const { return mins; }
};

// Decode streams every weight once from memory. A prefetch per unit, this far ahead of each row,
// spread over the loop rather than issued in a burst per row group, into L2 (T1) and one per
// line: prefetches into L1 run out of its miss buffers, and bursts stall on the first use of each
// line. 16 or 64 KiB ahead, or the T2 hint, measured the same within noise; the measurements are
// in docs/cpu-backend.md.
constexpr size_t kSpreadPrefetchAhead = 32768;
inline void prefetch_weights(uintptr_t at) { _mm_prefetch(reinterpret_cast<const char*>(at), _MM_HINT_T1); }

// The arrays a row is read from, each contiguous over the matrix's rows: the whole row (AoS),
// or each field's array (SoA: quants, scales, ...), and the bytes of one row in each.
struct RowStreams {
  int count = 0;
  size_t row_bytes[4] = {0, 0, 0, 0};
};
inline RowStreams row_streams(const WeightMatrix& w) {
  RowStreams s;
  if (const size_t aos = contiguous_row_bytes(w)) {
    s.count = 1;
    s.row_bytes[0] = aos;
    return s;
  }
  const RowFields F = row_fields(w, 0);
  const int64_t blocks = w.n / dtype_info(w.dtype)->block_elems;
  while (s.count < 4 && F.f[s.count]) {
    s.row_bytes[s.count] = static_cast<size_t>(blocks) * F.stride[s.count];
    ++s.count;
  }
  return s;
}

// res[r][t] = dot(row r, token t0 + t) for RM rows and NT tokens.
// Software prefetch spread over the loop: in each stream of each row, the bytes `ahead` of
// where it is read, one unit (pair or super-block) at a time; every stream the same number of
// rows ahead. streams = 0: none (not the first tile of a row group).
struct Prefetch {
  int streams = 0;
  size_t ahead[4] = {0, 0, 0, 0}, unit_bytes[4] = {0, 0, 0, 0};
};

// The lines that start inside unit u's bytes of a stream, `ahead` bytes past them, each once.
inline void prefetch_unit(const uint8_t* stream, size_t ahead, size_t unit_bytes, int64_t u) {
  // integer arithmetic: the address may lie past the tensor (a prefetch there is harmless)
  const uintptr_t at = reinterpret_cast<uintptr_t>(stream) + ahead + static_cast<size_t>(u) * unit_bytes;
  for (uintptr_t line = (at + 63) & ~uintptr_t(63); line < at + unit_bytes; line += 64) prefetch_weights(line);
}

template <class Dec, int RM, int NT>
void tile(Dec* dec, const ActBatch& x, int t0, float (*res)[4], const Prefetch& pf) {
  __m512 acc[RM][NT];
  for (int r = 0; r < RM; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  const int64_t units = x.n / (64 * Dec::kPairs), nb = x.n / 32, ng = x.n / 16;
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t u = 0; u < units; ++u) {
    for (int r = 0; r < RM; ++r) dec[r].begin(u);
    // One stream (AoS) keeps a loop of its own: with only the general loop, and Prefetch passed
    // by value, one-thread AoS decode lost 4-8%.
    if (pf.streams == 1)
      for (int r = 0; r < RM; ++r) prefetch_unit(dec[r].F.f[0], pf.ahead[0], pf.unit_bytes[0], u);
    else
      for (int r = 0; r < RM; ++r)
        for (int f = 0; f < pf.streams; ++f) prefetch_unit(dec[r].F.f[f], pf.ahead[f], pf.unit_bytes[f], u);
    for (int i = 0; i < Dec::kPairs; ++i) {
      const int64_t p = u * Dec::kPairs + i;
      __m512i xq[NT];
      __m512 dx[NT];
      for (int t = 0; t < NT; ++t) {
        xq[t] = _mm512_loadu_si512(x.q8 + (t0 + t) * x.n + 64 * p);
        dx[t] = spread_two(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(x.d8 + (t0 + t) * nb + 2 * p))));
      }
      if constexpr (Dec::kSigned)
        for (int t = 0; t < NT; ++t) xq[t] = _mm512_xor_si512(xq[t], _mm512_set1_epi8(-128));  // x + 128, unsigned
#pragma GCC unroll 4
      for (int r = 0; r < RM; ++r) {
        const Pair w = dec[r].pair(i);
        // Signed weights: (x + 128) . w counts 128 * sum(w) too, so the integer sum starts from
        // minus that (exact: the same int32 as x . w).
        __m512i start = zero;
        if constexpr (Dec::kSigned)
          start = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, _mm512_set1_epi8(-128), w.q));
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m512i sum = Dec::kSigned ? _mm512_dpbusd_epi32(start, xq[t], w.q) : _mm512_dpbusd_epi32(zero, w.q, xq[t]);
          acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), dx[t]), w.scale, acc[r][t]);
        }
      }
    }
    if constexpr (Dec::kOffset) {
      for (int t = 0; t < NT; ++t) {
        const __m512 sums = _mm512_loadu_ps(x.xs16 + (t0 + t) * ng + 16 * u);
        for (int r = 0; r < RM; ++r) acc[r][t] = _mm512_fnmadd_ps(dec[r].coef(), sums, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < RM; ++r)
    for (int t = 0; t < NT; ++t) res[r][t] = _mm512_reduce_add_ps(acc[r][t]);
}

constexpr int kRows = 4, kTokens = 4;

template <class Dec, int RM>
void rows_by_tokens(Dec* dec, const ActBatch& x, int t0, int nt, float (*res)[4], const Prefetch& pf) {
  switch (nt) {
    case 4: tile<Dec, RM, 4>(dec, x, t0, res, pf); return;
    case 3: tile<Dec, RM, 3>(dec, x, t0, res, pf); return;
    case 2: tile<Dec, RM, 2>(dec, x, t0, res, pf); return;
    default: tile<Dec, RM, 1>(dec, x, t0, res, pf); return;
  }
}

template <class Dec>
void run(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo, bool accumulate) {
  const RowStreams streams = row_streams(w);
  size_t all_bytes = 0;
  for (int f = 0; f < streams.count; ++f) all_bytes += streams.row_bytes[f];
  Prefetch pf;
  const Prefetch none;
  pf.streams = streams.count;
  for (int f = 0; f < streams.count; ++f) {
    pf.ahead[f] = kSpreadPrefetchAhead * streams.row_bytes[f] / all_bytes;
    pf.unit_bytes[f] = streams.row_bytes[f] / static_cast<size_t>(x.n / (64 * Dec::kPairs));
  }
  if (x.ntok <= kTokens) {
    // The spread prefetch runs that far ahead of the rows being read, so the first that many
    // bytes of each stream of this range of rows would not be prefetched at all.
    const RowFields first = row_fields(w, r0);
    for (int f = 0; f < streams.count; ++f) {
      const size_t span = std::min(pf.ahead[f], static_cast<size_t>(r1 - r0) * streams.row_bytes[f]);
      for (size_t off = 0; off < span; off += 64) prefetch_weights(reinterpret_cast<uintptr_t>(first.f[f] + off));
    }
  }
  for (int64_t r = r0; r < r1; r += kRows) {
    const int rm = r1 - r < kRows ? static_cast<int>(r1 - r) : kRows;
    Dec dec[kRows];
    for (int i = 0; i < rm; ++i) dec[i].F = row_fields(w, r + i), dec[i].nb = x.n / 32;
    for (int t0 = 0; t0 < x.ntok; t0 += kTokens) {
      const int nt = x.ntok - t0 < kTokens ? x.ntok - t0 : kTokens;
      float res[kRows][4];
      if (rm == kRows) {
        rows_by_tokens<Dec, kRows>(dec, x, t0, nt, res, t0 == 0 ? pf : none);
      } else {
        for (int i = 0; i < rm; ++i) rows_by_tokens<Dec, 1>(dec + i, x, t0, nt, res + i, t0 == 0 ? pf : none);
      }
      for (int i = 0; i < rm; ++i)
        for (int t = 0; t < nt; ++t) {
          float& o = out[(t0 + t) * ldo + r + i];
          o = accumulate ? o + res[i][t] : res[i][t];
        }
    }
  }
}

}  // namespace blocked

// Runs the blocked kernel when it has one for the dtype and the row length; false otherwise
// (the caller falls back to the per-row kernels).
inline bool matmul_blocked(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                           bool accumulate) {
  if (x.n % 64 != 0) return false;  // pairs of 32-blocks
  switch (w.dtype) {
    case DType::Q8_0: case DType::Q8_0_SOA: blocked::run<blocked::Q8_0Rows>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q4_0: blocked::run<blocked::Q4_0Rows>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q5_0: blocked::run<blocked::Q5_0Rows>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q6_K: case DType::Q6_K_SOA: blocked::run<blocked::Q6_KRows>(w, x, r0, r1, out, ldo, accumulate); return true;
    case DType::Q4_K: case DType::Q4_K_SOA: blocked::run<blocked::Q4_KRows>(w, x, r0, r1, out, ldo, accumulate); return true;
    default: return false;
  }
}

}  // namespace p64::dot::avx512
