// One query head's attention over an fp32 KV cache with AVX-512 (this file is compiled with
// the AVX-512 flags; cpu_backend calls it only where the CPU runs them). The scalar form in
// cpu_ops.cpp vectorizes only to SSE under the project's baseline flags.
#include <immintrin.h>

#include <cmath>

#include "engine/runtime/cpu_ops.h"

// GCC 12's _mm512_reduce_add_ps starts from _mm256_undefined_pd(), which its own
// -Wmaybe-uninitialized then reports.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace p64::cpu {

bool attend_head_f32_avx512(const float* q, const float* k_cache, const float* v_cache, int64_t kv_dim,
                            int64_t kv_off, int head_dim, int32_t n_pos, float* scores, float* out) {
  constexpr int kMaxVectors = 16;  // head_dim up to 256
  if (head_dim % 16 != 0 || head_dim / 16 > kMaxVectors) return false;
  const int nv = head_dim / 16;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  __m512 qv[kMaxVectors];
  for (int j = 0; j < nv; ++j) qv[j] = _mm512_loadu_ps(q + 16 * j);
  for (int32_t p = 0; p < n_pos; ++p) {
    const float* k = k_cache + p * kv_dim + kv_off;
    __m512 s = _mm512_mul_ps(qv[0], _mm512_loadu_ps(k));
    for (int j = 1; j < nv; ++j) s = _mm512_fmadd_ps(qv[j], _mm512_loadu_ps(k + 16 * j), s);
    scores[p] = _mm512_reduce_add_ps(s) * scale;
  }
  softmax(scores, n_pos);
  __m512 acc[kMaxVectors];
  for (int j = 0; j < nv; ++j) acc[j] = _mm512_setzero_ps();
  for (int32_t p = 0; p < n_pos; ++p) {
    const float* v = v_cache + p * kv_dim + kv_off;
    const __m512 a = _mm512_set1_ps(scores[p]);
    for (int j = 0; j < nv; ++j) acc[j] = _mm512_fmadd_ps(a, _mm512_loadu_ps(v + 16 * j), acc[j]);
  }
  for (int j = 0; j < nv; ++j) _mm512_storeu_ps(out + 16 * j, acc[j]);
  return true;
}

}  // namespace p64::cpu
