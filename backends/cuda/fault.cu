// A kernel that traps: the sticky, context-wide failure a device lost or a kernel fault leaves
// behind (every later call of the process fails). Only the fault-path tests launch it.
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {

__global__ void trap_kernel() { __trap(); }

}  // namespace

void launch_trap(cudaStream_t stream) { launch_kernel("trap_kernel", trap_kernel, dim3(1), dim3(1), 0, stream); }

}  // namespace p64::cuda
