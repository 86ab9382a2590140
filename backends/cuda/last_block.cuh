#pragma once
// "The last block finishes the job": the blocks of a grid (or of one group of it) count
// themselves done on a device counter after fencing their writes; the block that counts last
// sees every other block's output and runs the follow-up work that would otherwise be a kernel
// launch of its own. It resets the counter, so the next launch (or graph replay) starts at 0.
// Every thread of the block must call it. Data the other blocks wrote is then read with
// __ldcg (through L2, never a stale L1 line).
#include <cuda_runtime.h>

namespace p64::cuda {

__device__ __forceinline__ bool finished_last(unsigned* counter, unsigned blocks) {
  __shared__ int s_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    s_last = atomicAdd(counter, 1u) == blocks - 1;
    if (s_last) *counter = 0;
  }
  __syncthreads();
  if (s_last) __threadfence();
  return s_last;
}

}  // namespace p64::cuda
