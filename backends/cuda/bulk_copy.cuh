#pragma once
// Hopper bulk copies (the TMA's non-tensor form, sm_90): one thread asks for a whole span of
// global memory to land in shared memory and an mbarrier counts the bytes as they arrive, so
// a block can have tens of KB in flight without holding them in registers.
#include <cstdint>

#include "backends/cuda/cp_async.cuh"

namespace p64::cuda {

// Once per block, by one thread, before any copy names the barrier (then __syncthreads()).
__device__ __forceinline__ void bulk_barrier_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// The one arrival of the barrier's phase, announcing how many bytes the copies will deliver.
__device__ __forceinline__ void bulk_barrier_expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// dst, src and bytes 16-byte aligned.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
// Every thread that reads the copied bytes waits for phase `parity` to complete.
__device__ __forceinline__ void bulk_barrier_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  }
}

}  // namespace p64::cuda
