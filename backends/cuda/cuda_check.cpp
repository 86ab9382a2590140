#include "backends/cuda/cuda_check.h"

#include <cstdio>

namespace p64::cuda {

namespace {
std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}
}  // namespace

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  throw DeviceError(std::string("CUDA: ") + call + " failed: " + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ") at " + base + ":" + std::to_string(line));
}

void* device_alloc(size_t bytes, const std::string& what) {
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes == 0 ? 16 : bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free allocation error before asking for the numbers
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw DeviceError("CUDA: out of device memory allocating " + what + ": asked for " + mib(bytes) +
                      ", " + mib(free_b) + " free of " + mib(total_b));
  }
  check(err, ("cudaMalloc(" + what + ")").c_str(), __FILE__, __LINE__);
  return p;
}

void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}

}  // namespace p64::cuda
