#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

// Random bytes are valid blocks for the repack, which must not care what the fields hold; the
// fp16 scales are then forced finite so dequantized rows compare as numbers.
std::vector<uint8_t> random_blocks(DType t, int64_t nblocks, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t bb = dtype_info(t)->block_bytes;
  std::vector<uint8_t> v(static_cast<size_t>(nblocks) * bb);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  const std::vector<int> half_offsets = t == DType::Q4_K ? std::vector<int>{0, 2} : t == DType::Q6_K ? std::vector<int>{208} : std::vector<int>{0};
  for (int64_t i = 0; i < nblocks; ++i)
    for (int off : half_offsets) v[static_cast<size_t>(i) * bb + off + 1] &= 0x3b;  // exponent < 31, small
  return v;
}

class QuantSoa : public ::testing::TestWithParam<DType> {};

TEST_P(QuantSoa, PackUnpackIsLossless) {
  const DType t = GetParam();
  const int64_t nb = 37;
  const auto aos = random_blocks(t, nb, 1);
  std::vector<uint8_t> soa(aos.size()), back(aos.size());
  soa_pack(t, aos.data(), soa.data(), nb);
  EXPECT_NE(soa, aos);
  soa_unpack(t, soa.data(), back.data(), nb);
  EXPECT_EQ(back, aos);
}

TEST_P(QuantSoa, TensorRowsMatchAos) {
  const DType t = GetParam();
  const int64_t n = 512, rows = 5;
  const int64_t per_row = n / dtype_info(t)->block_elems;
  const auto aos = random_blocks(t, rows * per_row, 2);
  std::vector<uint8_t> soa(aos.size());
  soa_pack(t, aos.data(), soa.data(), rows * per_row);
  std::vector<float> a(n), s(n);
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_tensor_row(t, aos.data(), r, n, a.data());
    dequantize_tensor_row(dtype_soa_of(t), soa.data(), rows, r, n, s.data());
    ASSERT_EQ(std::memcmp(a.data(), s.data(), n * sizeof(float)), 0) << "row " << r;
  }
  EXPECT_THROW(dequantize_tensor_row(dtype_soa_of(t), soa.data(), 0, n, s.data()), Error);
  EXPECT_THROW(dequantize_tensor_row(dtype_soa_of(t), soa.data(), rows, rows, n, s.data()), Error);
}

INSTANTIATE_TEST_SUITE_P(Types, QuantSoa, ::testing::Values(DType::Q4_K, DType::Q6_K, DType::Q8_0),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(QuantSoaLayout, FieldsLandWhereQuantHSaysQ4_K) {
  // Q4_K_SOA: qs[nb][128] | scales[nb][12] | d[nb] | dmin[nb].
  const int64_t nb = 3;
  std::vector<uint8_t> aos(nb * 144, 0), soa(nb * 144);
  for (int b = 0; b < nb; ++b) {
    aos[b * 144 + 0] = static_cast<uint8_t>(0x10 + b);    // d low byte
    aos[b * 144 + 2] = static_cast<uint8_t>(0x20 + b);    // dmin low byte
    aos[b * 144 + 4] = static_cast<uint8_t>(0x30 + b);    // scales[0]
    aos[b * 144 + 16] = static_cast<uint8_t>(0x40 + b);   // qs[0]
  }
  soa_pack(DType::Q4_K, aos.data(), soa.data(), nb);
  for (int b = 0; b < nb; ++b) {
    EXPECT_EQ(soa[b * 128], 0x40 + b);
    EXPECT_EQ(soa[nb * 128 + b * 12], 0x30 + b);
    EXPECT_EQ(soa[nb * 140 + b * 2], 0x10 + b);
    EXPECT_EQ(soa[nb * 142 + b * 2], 0x20 + b);
  }
}

TEST(QuantSoaLayout, FieldsLandWhereQuantHSaysQ6_KAndQ8_0) {
  const int64_t nb = 2;
  std::vector<uint8_t> q6(nb * 210, 0), s6(nb * 210);
  for (int b = 0; b < nb; ++b) {
    q6[b * 210 + 0] = static_cast<uint8_t>(1 + b);      // ql[0]
    q6[b * 210 + 128] = static_cast<uint8_t>(3 + b);    // qh[0]
    q6[b * 210 + 192] = static_cast<uint8_t>(5 + b);    // scales[0]
    q6[b * 210 + 208] = static_cast<uint8_t>(7 + b);    // d low byte
  }
  soa_pack(DType::Q6_K, q6.data(), s6.data(), nb);
  for (int b = 0; b < nb; ++b) {
    EXPECT_EQ(s6[b * 128], 1 + b);
    EXPECT_EQ(s6[nb * 128 + b * 64], 3 + b);
    EXPECT_EQ(s6[nb * 192 + b * 16], 5 + b);
    EXPECT_EQ(s6[nb * 208 + b * 2], 7 + b);
  }
  std::vector<uint8_t> q8(nb * 34, 0), s8(nb * 34);
  for (int b = 0; b < nb; ++b) {
    q8[b * 34 + 0] = static_cast<uint8_t>(9 + b);   // d low byte
    q8[b * 34 + 2] = static_cast<uint8_t>(11 + b);  // qs[0]
  }
  soa_pack(DType::Q8_0, q8.data(), s8.data(), nb);
  for (int b = 0; b < nb; ++b) {
    EXPECT_EQ(s8[b * 32], 11 + b);
    EXPECT_EQ(s8[nb * 32 + b * 2], 9 + b);
  }
}

TEST(QuantSoaLayout, RefusesTypesWithoutSoaForm) {
  std::vector<uint8_t> a(176), b(176);
  EXPECT_THROW(soa_pack(DType::Q5_K, a.data(), b.data(), 1), Error);
}

}  // namespace
}  // namespace p64
