// Argmax over the logits on the device: only the winning id crosses to the host. One block
// (the vocabulary is at most a few hundred thousand floats, about one wave of loads); ties go
// to the lowest id, as the CPU reference's first-max scan does.
#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {

constexpr int kThreads = 1024;

__device__ __forceinline__ void better(float& bv, int& bi, float v, int i) {
  if (v > bv || (v == bv && i < bi)) { bv = v; bi = i; }
}

__global__ void __launch_bounds__(kThreads) argmax_kernel(const float* __restrict__ logits, int64_t n, StepState* state) {
  __shared__ float sv[kThreads / 32];
  __shared__ int si[kThreads / 32];
  dependency_wait();
  float bv = -FLT_MAX;
  int bi = 0x7fffffff;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = logits[i];
    // NaN never wins (a NaN row returns id 0 after the host sees it in logits when asked)
    if (v == v) better(bv, bi, v, int(i));
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    better(bv, bi, ov, oi);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) { sv[warp] = bv; si[warp] = bi; }
  __syncthreads();
  if (warp == 0) {
    bv = sv[lane];
    bi = si[lane];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      better(bv, bi, ov, oi);
    }
    if (lane == 0) state->argmax = bi == 0x7fffffff ? 0 : bi;
  }
}

}  // namespace

void launch_argmax(const float* logits, int64_t n, StepState* state, cudaStream_t stream) {
  launch_kernel("argmax_kernel", argmax_kernel, dim3(1), dim3(kThreads), 0, stream, logits, n, state);
}

}  // namespace p64::cuda
