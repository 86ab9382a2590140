// Hand-built blocks of every type: the bytes are set by hand and the expected values are worked
// out by hand from the GGML block definitions (comments show the arithmetic).
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {
using namespace blocks;

std::vector<float> dequant(DType t, const void* block, int n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, block, y.data(), n);
  return y;
}

TEST(QuantBlocks, PlainFloats) {
  const float f32[2] = {1.5f, -0.25f};
  EXPECT_EQ(dequant(DType::F32, f32, 2), (std::vector<float>{1.5f, -0.25f}));
  const uint16_t f16[3] = {0x3e00, 0xb800, 0x0000};  // 1.5, -0.5, 0
  EXPECT_EQ(dequant(DType::F16, f16, 3), (std::vector<float>{1.5f, -0.5f, 0.0f}));
  const uint16_t bf16[2] = {0x4049, 0xbf00};  // 3.140625, -0.5
  EXPECT_EQ(dequant(DType::BF16, bf16, 2), (std::vector<float>{3.140625f, -0.5f}));
}

TEST(QuantBlocks, Q4_0) {
  BlockQ4_0 b{};
  b.d = 0x3800;  // 0.5
  std::memset(b.qs, 0x88, sizeof b.qs);  // code 8 -> 0
  b.qs[0] = 0x1F;  // elem 0: (15-8)*0.5 = 3.5; elem 16: (1-8)*0.5 = -3.5
  b.qs[9] = 0x80;  // elem 9: (0-8)*0.5 = -4; elem 25: 0
  std::vector<float> want(32, 0.0f);
  want[0] = 3.5f;
  want[16] = -3.5f;
  want[9] = -4.0f;
  EXPECT_EQ(dequant(DType::Q4_0, &b, 32), want);
}

TEST(QuantBlocks, Q4_1) {
  BlockQ4_1 b{};
  b.d = 0x3800;  // 0.5
  b.m = 0xbc00;  // -1
  b.qs[3] = 0xA2;  // elem 3: 2*0.5-1 = 0; elem 19: 10*0.5-1 = 4
  std::vector<float> want(32, -1.0f);
  want[3] = 0.0f;
  want[19] = 4.0f;
  EXPECT_EQ(dequant(DType::Q4_1, &b, 32), want);
}

TEST(QuantBlocks, Q5_0) {
  BlockQ5_0 b{};
  b.d = 0x3400;  // 0.25
  const uint32_t qh = (1u << 0) | (1u << 21);  // 5th bit of elem 0 and of elem 21 (= 16 + 5)
  std::memcpy(b.qh, &qh, 4);
  b.qs[0] = 0x03;  // elem 0: (3|16)-16 = 3 -> 0.75; elem 16: 0-16 -> -4
  b.qs[5] = 0xF0;  // elem 5: 0-16 -> -4; elem 21: (15|16)-16 = 15 -> 3.75
  std::vector<float> want(32, -4.0f);
  want[0] = 0.75f;
  want[21] = 3.75f;
  EXPECT_EQ(dequant(DType::Q5_0, &b, 32), want);
}

TEST(QuantBlocks, Q5_1) {
  BlockQ5_1 b{};
  b.d = 0x3c00;  // 1
  b.m = 0x3800;  // 0.5
  const uint32_t qh = 0x80000001u;  // 5th bit of elem 0 and elem 31
  std::memcpy(b.qh, &qh, 4);
  b.qs[0] = 0x21;   // elem 0: 1|16 = 17 -> 17.5; elem 16: 2 -> 2.5
  b.qs[15] = 0x70;  // elem 15: 0 -> 0.5; elem 31: 7|16 = 23 -> 23.5
  std::vector<float> want(32, 0.5f);
  want[0] = 17.5f;
  want[16] = 2.5f;
  want[31] = 23.5f;
  EXPECT_EQ(dequant(DType::Q5_1, &b, 32), want);
}

TEST(QuantBlocks, Q8_0) {
  BlockQ8_0 b{};
  b.d = 0x4000;  // 2
  b.qs[0] = -128;
  b.qs[7] = -3;
  b.qs[31] = 127;
  std::vector<float> want(32, 0.0f);
  want[0] = -256.0f;
  want[7] = -6.0f;
  want[31] = 254.0f;
  EXPECT_EQ(dequant(DType::Q8_0, &b, 32), want);
}

// Scales shared by the Q4_K and Q5_K cases: sub-block 0 scale 1 min 2; sub-block 5 scale 33
// (0b10'0001: low nibble 1 in byte 9, top bits 0b10 in byte 1's top bits) min 63 (low nibble 15
// in byte 9's high nibble, top bits 0b11 in byte 5's top bits); every other sub-block 0/0.
void set_k4_scales(uint8_t s[12]) {
  std::memset(s, 0, 12);
  s[0] = 0x01;
  s[4] = 0x02;
  s[1] = 0x80;
  s[5] = 0xC0;
  s[9] = 0xF1;
}

TEST(QuantBlocks, Q4_KScalePacking) {
  uint8_t s[12];
  set_k4_scales(s);
  uint8_t sc, m;
  unpack_scale_min_k4(0, s, sc, m);
  EXPECT_EQ(sc, 1);
  EXPECT_EQ(m, 2);
  unpack_scale_min_k4(5, s, sc, m);
  EXPECT_EQ(sc, 33);
  EXPECT_EQ(m, 63);
  const uint8_t scales[8] = {1, 0, 0, 0, 0, 33, 0, 0}, mins[8] = {2, 0, 0, 0, 0, 63, 0, 0};
  uint8_t packed[12];
  pack_scale_min_k4(scales, mins, packed);
  EXPECT_EQ(std::memcmp(packed, s, 12), 0);
}

TEST(QuantBlocks, Q4_K) {
  BlockQ4_K b{};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  set_k4_scales(b.scales);
  b.qs[0] = 0x07;   // elem 0 (sub 0): 1*1*7 - 0.5*2 = 6; elem 32 (sub 1): 0
  b.qs[64] = 0xA0;  // elem 128 (sub 4): 0; elem 160 (sub 5): 33*10 - 0.5*63 = 298.5
  std::vector<float> want(256, 0.0f);
  for (int i = 0; i < 32; ++i) want[i] = -1.0f;         // sub 0, code 0: -0.5*2
  for (int i = 160; i < 192; ++i) want[i] = -31.5f;     // sub 5, code 0: -0.5*63
  want[0] = 6.0f;
  want[160] = 298.5f;
  EXPECT_EQ(dequant(DType::Q4_K, &b, 256), want);
}

TEST(QuantBlocks, Q5_K) {
  BlockQ5_K b{};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  set_k4_scales(b.scales);
  b.qh[0] = 0x21;   // 5th bit of elem 0 (bit 0: sub 0) and of elem 160 (bit 5: sub 5)
  b.qs[0] = 0x07;   // elem 0: (7+16)*1 - 1 = 22
  b.qs[64] = 0xA0;  // elem 160: 33*(10+16) - 31.5 = 826.5
  std::vector<float> want(256, 0.0f);
  for (int i = 0; i < 32; ++i) want[i] = -1.0f;
  for (int i = 160; i < 192; ++i) want[i] = -31.5f;
  want[0] = 22.0f;
  want[160] = 826.5f;
  EXPECT_EQ(dequant(DType::Q5_K, &b, 256), want);
}

TEST(QuantBlocks, Q6_K) {
  BlockQ6_K b{};
  b.d = 0x3800;  // 0.5
  b.scales[0] = 2;   // elements 0..15
  b.scales[9] = -3;  // elements 144..159 (second half, l = 16..31, first quarter)
  b.ql[0] = 0x05;    // elem 0 low bits 5 ...
  b.qh[0] = 0x02;    // ... high bits 2: code 37 - 32 = 5 -> 0.5*2*5 = 5
  b.ql[80] = 0x01;   // elem 144 = 128 + 16: code 1 - 32 = -31 -> 0.5*(-3)*(-31) = 46.5
  std::vector<float> want(256, 0.0f);
  for (int i = 0; i < 16; ++i) want[i] = -32.0f;     // code 0 -> q -32: 0.5*2*(-32)
  for (int i = 144; i < 160; ++i) want[i] = 48.0f;   // 0.5*(-3)*(-32)
  want[0] = 5.0f;
  want[144] = 46.5f;
  EXPECT_EQ(dequant(DType::Q6_K, &b, 256), want);
}

TEST(QuantBlocks, RefusesPartialBlocksAndSoaRows) {
  std::vector<uint8_t> buf(1024);
  std::vector<float> y(300);
  EXPECT_THROW(dequantize_row(DType::Q4_K, buf.data(), y.data(), 300), Error);
  EXPECT_THROW(quantize_row(DType::Q8_0, y.data(), buf.data(), 33), Error);
  EXPECT_THROW(dequantize_row(DType::Q4_K_SOA, buf.data(), y.data(), 256), Error);
  EXPECT_THROW(dequantize_row(static_cast<DType>(99), buf.data(), y.data(), 32), Error);
}

}  // namespace
}  // namespace p64
