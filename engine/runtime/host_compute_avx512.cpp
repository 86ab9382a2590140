// The AVX-512 loops of the host compute ceiling (compiled with AVX-512 flags, run only where
// the CPU has them).
#include <immintrin.h>

#include "engine/runtime/host_compute.h"

namespace p64::host_compute {

float fp32_rounds_avx512(uint64_t rounds) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i));
  const __m512 scale = _mm512_set1_ps(0.999f), bias = _mm512_set1_ps(0.001f);
  for (uint64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 12  // unrolled, the chains live in registers; looped, GCC kept them in memory
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], scale, bias);
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

int32_t int8_rounds_avx512(uint64_t rounds) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i u = _mm512_set1_epi8(3), s = _mm512_set1_epi8(-2);
  for (uint64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 12  // unrolled, the chains live in registers; looped, GCC kept them in memory
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], u, s);
  __m512i sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_epi32(sum, acc[i]);
  return _mm512_reduce_add_epi32(sum);
}

}  // namespace p64::host_compute
