// RMSNorm fused with the activation quantization the int8 GEMV path reads: one launch turns
// the residual stream into the next matrix's input in both forms (fp32 and int8 + scales).
// Each block recomputes the sum of squares over the whole (small) vector, so no second
// launch or grid-wide sync is needed, then normalizes and quantizes its own 256 elements
// (rmsnorm.cuh; the GEMV's norm_tail runs the same steps in one block).
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rmsnorm.cuh"

namespace p64::cuda {
namespace {

constexpr int kThreads = 256;

template <bool NORM>
__global__ void __launch_bounds__(kThreads) rmsnorm_quant_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                                                 float eps, int64_t n, ActBuffers act) {
  dependency_wait();
  const float scale = NORM ? block_inv_rms<kThreads>(x, n, eps) : 1.f;
  const int64_t begin = int64_t(blockIdx.x) * kThreads;
  normalize_quantize_span<kThreads>(x, NORM ? w : nullptr, scale, begin, min(begin + kThreads, n), n, act);
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
                          cudaStream_t stream) {
  const unsigned blocks = unsigned((n + kThreads - 1) / kThreads);
  launch_kernel("rmsnorm_quant_kernel", weight ? rmsnorm_quant_kernel<true> : rmsnorm_quant_kernel<false>,
                dim3(blocks), dim3(kThreads), 0, stream, x, weight, eps, n, act);
}

void launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  launch_kernel("swiglu_kernel", swiglu_kernel, dim3(unsigned((n + 255) / 256)), dim3(256), 0, stream, gate, up, out, n);
}

}  // namespace p64::cuda
