#pragma once
// Warp-wide sum by butterfly shuffles: every lane ends with the total.
#include <cuda_runtime.h>

namespace p64::cuda {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace p64::cuda
