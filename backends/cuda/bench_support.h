#pragma once
// What the CUDA microbenchmarks share (bench-gemv, bench-stream): random weight blocks and an
// owned device buffer.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "engine/quant/dtype.h"

namespace p64::cuda {

// Random quants with a finite f16 scale in every block of rows x n `aos` weights: the speed of a
// GEMV does not depend on the values, but NaNs would make the outputs useless to compare.
std::vector<uint8_t> random_blocks(DType aos, int64_t rows, int64_t n, uint64_t seed);

// `repeats` timings (sorted, microseconds per call) of `iters` back-to-back calls of `launch` on
// `stream`, between two events.
std::vector<double> time_per_call_us(cudaStream_t stream, int repeats, int iters, const std::function<void()>& launch);

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : p_(device_alloc(bytes, "benchmark buffer")) {}
  ~DeviceBuffer() { device_free(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T = uint8_t>
  T* get() const { return static_cast<T*>(p_); }

 private:
  void* p_;
};

}  // namespace p64::cuda
