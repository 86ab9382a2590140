// The tiled weight forms keep every bit of the source blocks (host only: runs without a GPU).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/cuda/tiled_weights.h"
#include "cuda/gemv_test_support.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

std::vector<uint8_t> round_trip(DType aos, const std::vector<uint8_t>& blocks, int64_t rows, int64_t n) {
  std::vector<uint8_t> tiles(blocks.size()), back(blocks.size(), 0xA5);
  cuda::pack_tiled(aos, blocks.data(), tiles.data(), rows, n);
  EXPECT_NE(tiles, blocks) << "the tiled form is a different arrangement of the same bytes";
  cuda::unpack_tiled(aos, tiles.data(), back.data(), rows, n);
  return back;
}

TEST(TiledWeights, RandomBitPatternsComeBackByteForByte) {
  std::mt19937 rng(7);
  for (DType t : {DType::Q4_K, DType::Q6_K}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t rows = 5, n = 768;
    std::vector<uint8_t> blocks(dtype_row_bytes(t, n) * rows);
    for (auto& b : blocks) b = uint8_t(rng());
    EXPECT_EQ(round_trip(t, blocks, rows, n), blocks);
  }
}

TEST(TiledWeights, QuantizedMatricesDequantizeToTheSameValues) {
  std::mt19937 rng(11);
  for (DType t : {DType::Q4_K, DType::Q6_K}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t rows = 3, n = 512;
    const test::HostMatrix m = test::make_matrix(t, rows, n, rng);
    const std::vector<uint8_t> back = round_trip(t, m.bytes, rows, n);
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(t, back.data() + r * dtype_row_bytes(t, n), row.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(row[size_t(i)], m.deq[size_t(r * n + i)]) << "row " << r << " element " << i;
    }
  }
}

TEST(TiledWeights, OnlyWholeSuperBlocksOfQ4KAndQ6KHaveATiledForm) {
  EXPECT_EQ(cuda::tiled_dtype_for(DType::Q4_K, 3072), cuda::kTiledQ4_K);
  EXPECT_EQ(cuda::tiled_dtype_for(DType::Q6_K, 8192), cuda::kTiledQ6_K);
  EXPECT_EQ(cuda::tiled_dtype_for(DType::Q4_K, 320), 0u);
  EXPECT_EQ(cuda::tiled_dtype_for(DType::Q8_0, 3072), 0u);
  std::vector<uint8_t> buf(1024);
  EXPECT_THROW(cuda::pack_tiled(DType::Q8_0, buf.data(), buf.data(), 1, 256), Error);
}

}  // namespace
}  // namespace p64
