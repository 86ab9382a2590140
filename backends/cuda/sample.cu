// Argmax over the logits on the device: only the winning id crosses to the host. One block
// (the vocabulary is at most a few hundred thousand floats, about one wave of loads); ties go
// to the lowest id, as the CPU reference's first-max scan does.
#include <cfloat>
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {

constexpr int kThreads = 1024;

__device__ __forceinline__ void better(float& bv, int& bi, float v, int i) {
  if (v > bv || (v == bv && i < bi)) { bv = v; bi = i; }
}

// BATCH logits per thread are loaded before any is compared (the argmax_batch switch), so the
// scan costs n / (kThreads * BATCH) memory latencies instead of n / kThreads.
template <int BATCH>
__global__ void __launch_bounds__(kThreads) argmax_kernel(const float* __restrict__ logits, int64_t n, StepState* state) {
  __shared__ float sv[kThreads / 32];
  __shared__ int si[kThreads / 32];
  dependency_wait();
  float bv = -FLT_MAX;
  int bi = 0x7fffffff;
  for (int64_t i0 = threadIdx.x; i0 < n; i0 += int64_t(kThreads) * BATCH) {
    float v[BATCH];
#pragma unroll
    for (int k = 0; k < BATCH; ++k) {
      const int64_t i = i0 + int64_t(k) * kThreads;
      v[k] = i < n ? logits[i] : NAN;
    }
#pragma unroll
    for (int k = 0; k < BATCH; ++k)  // NaN never wins (a NaN row returns id 0 after the host sees it in logits when asked)
      if (v[k] == v[k]) better(bv, bi, v[k], int(i0 + int64_t(k) * kThreads));
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

void launch_argmax(const float* logits, int64_t n, StepState* state, cudaStream_t stream, int batch) {
  launch_kernel("argmax_kernel", batch > 1 ? argmax_kernel<16> : argmax_kernel<1>, dim3(1), dim3(kThreads), 0, stream,
                logits, n, state);
}

}  // namespace p64::cuda
