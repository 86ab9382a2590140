#include "backends/cuda/bench_support.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/quant/quant.h"

namespace p64::cuda {

std::vector<uint8_t> random_blocks(DType aos, int64_t rows, int64_t n, uint64_t seed) {
  const auto info = *dtype_info(aos);
  std::vector<uint8_t> b(dtype_row_bytes(aos, uint64_t(n)) * uint64_t(rows));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= b.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(b.data() + i, &v, 8);
  }
  const uint16_t scale = 0x1C00;  // 2^-8
  std::vector<size_t> fields;
  if (aos == DType::Q4_K) fields = {0, 2};
  else if (aos == DType::Q6_K) fields = {208};
  else fields = {0};
  for (size_t blk = 0; blk + info.block_bytes <= b.size(); blk += info.block_bytes)
    for (size_t f : fields) std::memcpy(b.data() + blk + f, &scale, 2);
  return b;
}

std::vector<double> time_per_call_us(cudaStream_t stream, int repeats, int iters, const std::function<void()>& launch) {
  cudaEvent_t a, b;
  P64_CUDA_CHECK(cudaEventCreate(&a));
  P64_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    P64_CUDA_CHECK(cudaEventRecord(a, stream));
    for (int i = 0; i < iters; ++i) launch();
    P64_CUDA_CHECK(cudaEventRecord(b, stream));
    P64_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    P64_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    us.push_back(1e3 * ms / iters);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(us.begin(), us.end());
  return us;
}

}  // namespace p64::cuda
