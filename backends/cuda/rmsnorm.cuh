#pragma once
// The RMSNorm + activation quantization steps, shared by norm.cu's kernel (a block per 256
// elements) and the GEMV's last-block tails (one block over the whole vector). Values other
// blocks wrote are read through L2 (__ldcg); loads are batched so several are in flight.
#include <cuda_runtime.h>

#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {

constexpr int kNormBatch = 8;  // loads per thread in flight

// rsqrt(mean(x^2) + eps) over x[0, n), computed by all THREADS threads of the block.
template <int THREADS>
__device__ __forceinline__ float block_inv_rms(const float* x, int64_t n, float eps) {
  __shared__ float red[THREADS / 32];
  float ss = 0.f;
  for (int64_t base = 0; base < n; base += int64_t(THREADS) * kNormBatch) {
    float v[kNormBatch];
#pragma unroll
    for (int k = 0; k < kNormBatch; ++k) {
      const int64_t e = base + int64_t(k) * THREADS + threadIdx.x;
      v[k] = e < n ? __ldcg(x + e) : 0.f;
    }
#pragma unroll
    for (int k = 0; k < kNormBatch; ++k) ss = fmaf(v[k], v[k], ss);
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  float tot = 0.f;
#pragma unroll
  for (int i = 0; i < THREADS / 32; ++i) tot += red[i];
  __syncthreads();  // red is reused by the block's next call
  return rsqrtf(tot / float(n) + eps);
}

// act (both forms) for elements [begin, end) of x[0, n): x * scale * w (w null: no weights).
// begin is a multiple of 32; a warp whose 32 elements start at or past `end` skips as a whole,
// so each warp quantizes whole 32-element blocks (a partial last one padded with zeros).
template <int THREADS>
__device__ __forceinline__ void normalize_quantize_span(const float* x, const float* w, float scale, int64_t begin,
                                                        int64_t end, int64_t n, const ActBuffers& act) {
  for (int64_t base = begin; base < end; base += int64_t(THREADS) * kNormBatch) {
    float v[kNormBatch];
#pragma unroll
    for (int k = 0; k < kNormBatch; ++k) {
      const int64_t e = base + int64_t(k) * THREADS + threadIdx.x;
      v[k] = e < n && e < end ? __ldcg(x + e) * scale * (w ? w[e] : 1.f) : 0.f;
    }
#pragma unroll
    for (int k = 0; k < kNormBatch; ++k) {
      const int64_t e = base + int64_t(k) * THREADS + threadIdx.x;
      if (e - (threadIdx.x & 31) >= end) break;  // warp-uniform: the warp's block starts past the span
      if (e < n) act.xf[e] = v[k];
      store_quantized_warp(act, e, n, v[k]);
    }
  }
}

}  // namespace p64::cuda
