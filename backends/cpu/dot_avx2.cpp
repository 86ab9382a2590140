// AVX2 + FMA kernels (maddubs/madd for the int8 dot products).
#define P64_DOT_VNNI 0
#define P64_DOT_NS avx2
#include "backends/cpu/dot_x86.h"

namespace p64::dot {
void matmul_avx2(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                 bool int8, bool accumulate) {
  avx2::matmul(w, x, r0, r1, out, ldo, int8, accumulate);
}
void quantize_acts_avx2(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16) {
  avx2::quantize_acts(x, n, q8, d8, xs16);
}
}  // namespace p64::dot
