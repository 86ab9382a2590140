// Attention over an fp32 or fp16 KV cache with AVX-512 for the query heads that share one KV head (this
// file is compiled with the AVX-512 flags; cpu_backend calls it only where the CPU runs them).
// The scalar form in cpu_ops.cpp vectorizes only to SSE under the project's baseline flags.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_ops.h"

// GCC 12's _mm512_reduce_add_ps starts from _mm256_undefined_pd(), which its own
// -Wmaybe-uninitialized then reports.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace p64::cpu {
namespace {

// Sixteen cache elements as floats.
__m512 load16(const float* p) { return _mm512_loadu_ps(p); }
__m512 load16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

// e^x for x <= 0 (a score minus the row's maximum): x = n ln2 + r with |r| <= ln2 / 2, e^r by
// its Taylor polynomial to r^7 (relative error below 2e-7), times 2^n by vscalefps.
__m512 exp_nonpositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));  // below this e^x is 0 in float anyway
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);  // ln2 in two parts
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  for (const float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
  return _mm512_scalef_ps(p, n);
}

// In place: x = exp(x - max) / sum over n floats, sixteen at a time.
void softmax_avx512(float* x, int32_t n) {
  const __mmask16 all = 0xFFFF;
  auto tail = [&](int32_t i) { return static_cast<__mmask16>(n - i >= 16 ? all : (1u << (n - i)) - 1); };
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int32_t i = 0; i < n; i += 16) mx = _mm512_mask_max_ps(mx, tail(i), mx, _mm512_maskz_loadu_ps(tail(i), x + i));
  const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (int32_t i = 0; i < n; i += 16) {
    const __m512 e = exp_nonpositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail(i), x + i), top));
    sum = _mm512_mask_add_ps(sum, tail(i), sum, e);
    _mm512_mask_storeu_ps(x + i, tail(i), e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int32_t i = 0; i < n; i += 16) _mm512_mask_storeu_ps(x + i, tail(i), _mm512_mul_ps(_mm512_maskz_loadu_ps(tail(i), x + i), inv));
}

// out[i] = sum over first[i] <= p < n_pos[i] of scores[i][p] * V[p], queries [i0, i1) at once
// with their accumulators in registers (NV vectors each, (i1 - i0) * NV <= 16).
template <int NV, class T>
void accumulate_v(const float* const* weights, float* const* out, const int32_t* first, const int32_t* n_pos, int i0,
                  int i1, const T* v_cache, int64_t kv_dim, int64_t kv_off, int32_t ahead) {
  constexpr int kPer = 16 / NV;
  __m512 acc[kPer][NV];
#pragma GCC unroll 16
  for (int i = 0; i < kPer; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  const int32_t reach = *std::max_element(n_pos + i0, n_pos + i1);
  for (int32_t p = *std::min_element(first + i0, first + i1); p < reach; ++p) {
    const T* v = v_cache + p * kv_dim + kv_off;
#pragma GCC unroll 16
    for (int j = 0; j < NV; j += 64 / (16 * static_cast<int>(sizeof(T))))  // a line per 64 bytes
      _mm_prefetch(reinterpret_cast<const char*>(v + ahead * kv_dim + 16 * j), _MM_HINT_T0);
    __m512 vr[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) vr[j] = load16(v + 16 * j);
#pragma GCC unroll 16
    for (int i = 0; i < kPer; ++i) {
      // a query outside its window (or past i1) adds a zero weight: acc + 0 * v is acc exactly
      const bool live = i0 + i < i1 && p >= first[i0 + i] && p < n_pos[i0 + i];
      const __m512 w = live ? _mm512_set1_ps(weights[i0 + i][p]) : _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(w, vr[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kPer; ++i)
    if (i0 + i < i1)
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out[i0 + i] + 16 * j, acc[i][j]);
}

}  // namespace

template <class T>
bool attend_group_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq, const T* k_cache,
                         const T* v_cache, int64_t kv_dim, int64_t kv_off, int head_dim, const AttentionScores& how,
                         float* scores, int64_t scores_stride) {
  constexpr int kMaxVectors = 16;  // head_dim up to 256
  // head_dim 16 .. 128 in steps of 16, or 256
  if (head_dim % 16 != 0 || (head_dim > 128 && head_dim != 256) || nq < 1 || nq > kMaxAttentionQueries) return false;
  const int nv = head_dim / 16;
  int32_t first[kMaxAttentionQueries];
  for (int i = 0; i < nq; ++i) first[i] = how.first(n_pos[i]);
  const int32_t longest = *std::max_element(n_pos, n_pos + nq);
  // The rows are kv_dim apart, a stride the hardware prefetcher follows late: fetch ahead.
  constexpr int32_t kAhead = 8;
  for (int32_t p = *std::min_element(first, first + nq); p < longest; ++p) {
    const T* k = k_cache + p * kv_dim + kv_off;
    for (int j = 0; j < nv; j += 64 / (16 * static_cast<int>(sizeof(T))))  // a line per 64 bytes
      _mm_prefetch(reinterpret_cast<const char*>(k + kAhead * kv_dim + 16 * j), _MM_HINT_T0);
    __m512 kr[kMaxVectors];
    for (int j = 0; j < nv; ++j) kr[j] = load16(k + 16 * j);
    for (int i = 0; i < nq; ++i) {
      if (p < first[i] || p >= n_pos[i]) continue;
      __m512 s = _mm512_mul_ps(_mm512_loadu_ps(q[i]), kr[0]);
      for (int j = 1; j < nv; ++j) s = _mm512_fmadd_ps(_mm512_loadu_ps(q[i] + 16 * j), kr[j], s);
      scores[i * scores_stride + p] = _mm512_reduce_add_ps(s) * how.scale;
    }
  }
  const float* weights[kMaxAttentionQueries];
  for (int i = 0; i < nq; ++i) {
    float* row = scores + i * scores_stride;
    if (how.softcap > 0.0f) softcap(row + first[i], n_pos[i] - first[i], how.softcap);
    softmax_avx512(row + first[i], n_pos[i] - first[i]);
    weights[i] = row;
  }
  const int per_pass = std::max(1, kMaxVectors / nv);
  for (int i0 = 0; i0 < nq; i0 += per_pass) {
    const int i1 = std::min(nq, i0 + per_pass);
    switch (nv) {
      case 1: accumulate_v<1>(weights, out, first, n_pos, i0, i1, v_cache, kv_dim, kv_off, kAhead); break;
      case 2: accumulate_v<2>(weights, out, first, n_pos, i0, i1, v_cache, kv_dim, kv_off, kAhead); break;
      case 4: accumulate_v<4>(weights, out, first, n_pos, i0, i1, v_cache, kv_dim, kv_off, kAhead); break;
      case 8: accumulate_v<8>(weights, out, first, n_pos, i0, i1, v_cache, kv_dim, kv_off, kAhead); break;
      default:  // head_dim 48, 80, 96, ...: one query at a time
        for (int i = i0; i < i1; ++i)
          switch (nv) {
            case 3: accumulate_v<3>(weights, out, first, n_pos, i, i + 1, v_cache, kv_dim, kv_off, kAhead); break;
            case 5: accumulate_v<5>(weights, out, first, n_pos, i, i + 1, v_cache, kv_dim, kv_off, kAhead); break;
            case 6: accumulate_v<6>(weights, out, first, n_pos, i, i + 1, v_cache, kv_dim, kv_off, kAhead); break;
            case 7: accumulate_v<7>(weights, out, first, n_pos, i, i + 1, v_cache, kv_dim, kv_off, kAhead); break;
            default: accumulate_v<16>(weights, out, first, n_pos, i, i + 1, v_cache, kv_dim, kv_off, kAhead); break;
          }
    }
  }
  return true;
}

bool attend_group_f32_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off, int head_dim,
                             const AttentionScores& how, float* scores, int64_t scores_stride) {
  return attend_group_avx512(q, out, n_pos, nq, k_cache, v_cache, kv_dim, kv_off, head_dim, how, scores, scores_stride);
}

bool attend_group_f16_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim, int64_t kv_off,
                             int head_dim, const AttentionScores& how, float* scores, int64_t scores_stride) {
  return attend_group_avx512(q, out, n_pos, nq, k_cache, v_cache, kv_dim, kv_off, head_dim, how, scores, scores_stride);
}

}  // namespace p64::cpu
