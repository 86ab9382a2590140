// AVX-512 (VL + VNNI) kernels: vpdpbusd does the u8 x s8 dot of a block in one instruction.
// GCC 12's AVX-512 intrinsics (reductions, permutes, inserts) start from _mm*_undefined_*()
// values, which its own -Wmaybe-uninitialized then reports once per template instance.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define P64_DOT_VNNI 1
#define P64_DOT_NS avx512
#include "backends/cpu/dot_x86.h"
#include "backends/cpu/dot_avx512_blocked.h"
#include "backends/cpu/dot_avx512_interleaved.h"

namespace p64::dot {
void matmul_avx512(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                   bool int8, bool accumulate) {
  if (int8 && avx512::interleaved::run(w, x, r0, r1, out, ldo, accumulate)) return;
  if (int8 && avx512::matmul_blocked(w, x, r0, r1, out, ldo, accumulate)) return;
  avx512::matmul(w, x, r0, r1, out, ldo, int8, accumulate);
}
void quantize_acts_avx512(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16) {
  avx512::quantize_acts(x, n, q8, d8, xs16);
}
}  // namespace p64::dot

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
