// The AVX2 loops of the host compute ceiling. The int8 loop issues what the AVX2 int8 kernels
// issue (maddubs, madd against ones, add).
#include <immintrin.h>

#include "engine/runtime/host_compute.h"

namespace p64::host_compute {

float fp32_rounds_avx2(uint64_t rounds) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 scale = _mm256_set1_ps(0.999f), bias = _mm256_set1_ps(0.001f);
  for (uint64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 12  // unrolled, the chains live in registers; looped, GCC kept them in memory
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, bias);
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// One chain: what the AVX2 int8 kernels issue per 32 multiply-adds.
[[gnu::always_inline]] inline void int8_step(__m256i& acc, __m256i u, __m256i s, __m256i ones) {
  acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), ones));
}

int32_t int8_rounds_avx2(uint64_t rounds) {
  // Named variables, not an array: GCC kept an array of chains in memory.
  __m256i a0 = _mm256_set1_epi32(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  const __m256i u0 = _mm256_set1_epi8(1), u1 = _mm256_set1_epi8(2), u2 = _mm256_set1_epi8(3),
                u3 = _mm256_set1_epi8(4), u4 = _mm256_set1_epi8(5), u5 = _mm256_set1_epi8(6);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i s = _mm256_set1_epi8(-2);
  for (uint64_t r = 0; r < rounds; ++r) {
    // Without this the compiler sees loop-invariant maddubs and hoists them out of the loop.
    asm volatile("" : "+x"(s));
    int8_step(a0, u0, s, ones);
    int8_step(a1, u1, s, ones);
    int8_step(a2, u2, s, ones);
    int8_step(a3, u3, s, ones);
    int8_step(a4, u4, s, ones);
    int8_step(a5, u5, s, ones);
  }
  const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
                                       _mm256_add_epi32(a4, a5));
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  uint32_t total = 0;  // wraps; only its dependence on every lane matters
  for (int32_t v : lanes) total += uint32_t(v);
  return int32_t(total);
}

}  // namespace p64::host_compute
