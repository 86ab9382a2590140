#pragma once
// The integer form of an activation, written by the kernels that produce GEMV inputs (norm.cu,
// attention.cu): one scale per 32 elements (a warp's values; `amax` is their absolute max),
// symmetric, round to nearest. 16 bits keep the logits within the quality gate on deep models
// where 8-bit rounding noise compounds layer over layer; 8 bits halve the activation reads.
#include <cuda_runtime.h>

#include "backends/cuda/kernels.h"

namespace p64::cuda {

__device__ __forceinline__ void store_quantized(const ActBuffers& act, int64_t e, int64_t n, float v, float amax) {
  const float qmax = act.bits == 16 ? 32767.f : 127.f;
  const float d = amax / qmax;
  const float id = d > 0.f ? 1.f / d : 0.f;
  if (e >= n) return;
  const int q = __float2int_rn(v * id);
  if (act.bits == 16) static_cast<int16_t*>(act.xq)[e] = static_cast<int16_t>(q);
  else static_cast<int8_t*>(act.xq)[e] = static_cast<int8_t>(q);
  if ((threadIdx.x & 31) == 0) act.xd[e >> 5] = d;
}

// One warp's 32 consecutive values starting at a multiple of 32: their absolute max and the
// sums of each 16 (Q4_K's min term) by shuffles, then the integer form, scale and sums stored.
__device__ __forceinline__ void store_quantized_warp(const ActBuffers& act, int64_t e, int64_t n, float v) {
  float amax = fabsf(v);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  float s16 = v;
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) s16 += __shfl_xor_sync(0xffffffffu, s16, o);
  store_quantized(act, e, n, v, amax);
  if ((threadIdx.x & 15) == 0 && e < n) act.xs[e >> 4] = s16;
}

}  // namespace p64::cuda
