// RMSNorm fused with the activation quantization the int8 GEMV path reads: one launch turns
// the residual stream into the next matrix's input in both forms (fp32 and int8 + scales).
// Each block recomputes the sum of squares over the whole (small) vector, so no second
// launch or grid-wide sync is needed, then normalizes and quantizes its own 256 elements.
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"

namespace p64::cuda {
namespace {

constexpr int kThreads = 256;

// Each thread's elements of the sum of squares: BATCHED loads all of them (up to kBatch) before
// any arithmetic, so the pass costs one memory latency; otherwise a plain strided loop. With
// BATCHED the norm weight of the block's element is read before waiting for the producer.
constexpr int kBatch = 16;  // n <= kBatch * kThreads (4096) takes the batched form

template <bool NORM, bool BATCHED>
__global__ void __launch_bounds__(kThreads) rmsnorm_quant_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                 float eps, int64_t n, ActBuffers act) {
  __shared__ float red[kThreads / 32];
  const int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  float we = 1.f;
  if constexpr (NORM && BATCHED) we = e < n ? w[e] : 0.f;
  dependency_wait();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float scale = 1.f;
  if constexpr (NORM) {
    float ss = 0.f;
    if constexpr (BATCHED) {
      float v[kBatch];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        const int64_t i = threadIdx.x + int64_t(k) * kThreads;
        v[k] = i < n ? x[i] : 0.f;
      }
#pragma unroll
      for (int k = 0; k < kBatch; ++k) ss = fmaf(v[k], v[k], ss);
    } else {
      for (int64_t i = threadIdx.x; i < n; i += kThreads) ss = fmaf(x[i], x[i], ss);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    float tot = 0.f;
#pragma unroll
    for (int i = 0; i < kThreads / 32; ++i) tot += red[i];
    scale = rsqrtf(tot / float(n) + eps);
  }
  float v = 0.f;
  if (e < n) {
    v = x[e] * scale;
    if constexpr (NORM) v *= BATCHED ? we : w[e];
    act.xf[e] = v;
  }
  // One warp = one 32-element quantization block (n % 32 == 0 whenever the int8 path is used;
  // a partial last block is still written consistently, padded with zeros).
  store_quantized_warp(act, e, n, v);
}

__global__ void swiglu_kernel(const float* __restrict__ g, const float* __restrict__ u, float* __restrict__ out, int64_t n) {
  dependency_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float a = g[i];
    out[i] = a / (1.f + __expf(-a)) * u[i];
  }
}

}  // namespace

void launch_rmsnorm_quant(const float* x, const float* weight, float eps, int64_t n, const ActBuffers& act,
                          cudaStream_t stream, bool batched_loads) {
  const unsigned blocks = unsigned((n + kThreads - 1) / kThreads);
  const bool batched = batched_loads && n <= int64_t(kBatch) * kThreads;
  auto* kernel = !weight ? rmsnorm_quant_kernel<false, false>
                 : batched ? rmsnorm_quant_kernel<true, true>
                           : rmsnorm_quant_kernel<true, false>;
  launch_kernel("rmsnorm_quant_kernel", kernel, dim3(blocks), dim3(kThreads), 0, stream, x, weight, eps, n, act);
}

void launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  launch_kernel("swiglu_kernel", swiglu_kernel, dim3(unsigned((n + 255) / 256)), dim3(256), 0, stream, gate, up, out, n);
}

}  // namespace p64::cuda
