#pragma once
// Every CUDA runtime call goes through P64_CUDA_CHECK: a failure becomes p64::DeviceError
// naming the call, where it was made and the runtime's own message.
#include <cuda_runtime.h>

#include <string>

#include "engine/common/error.h"

namespace p64::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

// After a kernel launch: catches bad launch configurations at once (faults surface at the
// next synchronising call, which is checked too).
#define P64_CUDA_CHECK(call) ::p64::cuda::check((call), #call, __FILE__, __LINE__)
#define P64_CUDA_CHECK_LAUNCH(what) ::p64::cuda::check(cudaGetLastError(), what, __FILE__, __LINE__)

// cudaMalloc that says how much was asked for and how much was free when it fails.
void* device_alloc(size_t bytes, const std::string& what);
void device_free(void* p) noexcept;

}  // namespace p64::cuda
