#pragma once
// Kernel launches of the decode step go through launch_kernel so that programmatic dependent
// launch (PDL, Hopper) can be switched on for all of them at once: with it, a kernel may be
// scheduled while its predecessor finishes, and only its griddepcontrol.wait blocks until the
// predecessor's writes are visible. Every kernel launched this way must call dependency_wait()
// before it touches memory an earlier kernel writes or reads (weights, read-only, may come
// first), so that the chain of completions stays transitive.
#include <cuda_runtime.h>

#include <utility>

#include "backends/cuda/cuda_check.h"

namespace p64::cuda {

// Set by the backend before it enqueues (or captures) a step; read by launch_kernel.
void set_dependent_launch(bool on);
bool dependent_launch();
// The shared-memory carveout every launched kernel asks for, in percent of the unified L1/shared
// storage (cudaFuncAttributePreferredSharedMemoryCarveout); -1 leaves it to the driver.
void set_smem_carveout(int percent);
int smem_carveout();

template <class... KernelArgs, class... Args>
void launch_kernel(const char* name, void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = shared_bytes;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = dependent_launch() ? 1 : 0;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  if (smem_carveout() >= 0)
    check(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributePreferredSharedMemoryCarveout,
                               smem_carveout()),
          name, __FILE__, __LINE__);
  check(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...), name, __FILE__, __LINE__);
}

#ifdef __CUDACC__
// Waits for the preceding kernel's completion (a no-op when launched without PDL), then lets
// the next kernel in the stream be scheduled.
__device__ __forceinline__ void dependency_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Spreads bulk L2 prefetches of `bytes` at `p` (16-byte aligned: tensors start on 256) over the
// grid's threads, 16 KiB per instruction; a hint, so nothing waits for it.
__device__ __forceinline__ void prefetch_l2_span(const void* p, uint64_t bytes) {
  constexpr uint64_t kChunk = 16384;
  const uint64_t chunks = (bytes + kChunk - 1) / kChunk;
  const uint64_t threads = uint64_t(gridDim.x) * gridDim.y * blockDim.x;
  const uint64_t t = (uint64_t(blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  for (uint64_t c = t; c < chunks; c += threads) {
    const uint64_t off = c * kChunk;
    const uint32_t size = uint32_t(((bytes - off < kChunk ? bytes - off : kChunk) + 15) & ~uint64_t(15));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(static_cast<const char*>(p) + off), "r"(size)
                 : "memory");
  }
}
#endif

}  // namespace p64::cuda
