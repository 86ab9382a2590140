#pragma once
// Shared bits of the CUDA tests: skip without a device, device buffers that free themselves.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"

namespace p64::test {

#define P64_REQUIRE_CUDA_DEVICE()                                   \
  do {                                                              \
    std::string why_;                                               \
    if (!::p64::cuda_device_available(&why_)) GTEST_SKIP() << why_; \
  } while (0)

template <class T>
class DeviceVec {
 public:
  explicit DeviceVec(size_t n) : n_(n) { p_ = static_cast<T*>(cuda::device_alloc(n * sizeof(T) + 16, "test buffer")); }
  explicit DeviceVec(const std::vector<T>& h) : DeviceVec(h.size()) { upload(h); }
  ~DeviceVec() { cuda::device_free(p_); }
  DeviceVec(const DeviceVec&) = delete;
  DeviceVec& operator=(const DeviceVec&) = delete;
  void upload(const std::vector<T>& h) { P64_CUDA_CHECK(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    P64_CUDA_CHECK(cudaDeviceSynchronize());
    P64_CUDA_CHECK(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  // Poison so an element no kernel wrote shows up as NaN.
  void poison() { P64_CUDA_CHECK(cudaMemset(p_, 0xFF, n_ * sizeof(T))); }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace p64::test
