// Reference quantizers: quantize -> dequantize error on random data stays within each type's
// bound. Bounds (|e| is one element's error, per block or sub-block as named):
//   F32 exact; F16 |e| <= |x| 2^-11; BF16 |e| <= |x| 2^-8 (round to nearest);
//   Q8_0 |e| <= 0.57 amax/127  (half a step + the fp16 rounding of d over 127 codes);
//   Q4_0 |e| <= 1.01 amax/8, Q5_0 <= 1.01 amax/32*2  (the extreme opposite the scale's sign
//        clamps to code 15/31, one full step; everything else is within half a step);
//   Q4_1 / Q5_1 |e| <= 0.55 range/15 (/31) + 2^-10 |min|  (half a step + fp16 rounding of d, m);
//   Q4_K / Q5_K |e| <= 1.5 range/15 (/31) of the 32-element sub-block (range including 0), and
//        relative RMS error (rms(e) / rms(x)) on zero-mean Gaussian data <= 0.085 (Q4_K) / 0.045
//        (Q5_K) (measured here: 0.072 / 0.036);
//   Q6_K |e| <= 1.5 amax/32 of the 16-element sub-block, relative RMS <= 0.022 (measured 0.017).
// The K-quant max bounds allow more than half a step because the scale search minimises the
// squared error, which may let a sub-block's extremes clamp, and the stored 6-/8-bit scales are
// rounded on top; a packing or scale bug shows up as errors of many steps, far over these.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/quant.h"

namespace p64 {
namespace {

std::vector<float> gaussian(size_t n, float std, uint32_t seed, float mean = 0.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, std);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

std::vector<float> roundtrip(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(t, x.size()));
  quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

double relative_rms(const std::vector<float>& x, const std::vector<float>& y) {
  double e = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    e += (x[i] - y[i]) * double(x[i] - y[i]);
    s += x[i] * double(x[i]);
  }
  return std::sqrt(e / s);
}

// Checks |x - y| <= bound(group) for each group of `g` elements; bound gets the group's amax,
// min and max.
template <typename Bound>
void expect_group_bound(const std::vector<float>& x, const std::vector<float>& y, size_t g, Bound bound,
                        const char* what) {
  for (size_t b = 0; b < x.size(); b += g) {
    float lo = x[b], hi = x[b], amax = 0;
    for (size_t i = b; i < b + g; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
      amax = std::max(amax, std::fabs(x[i]));
    }
    const float lim = bound(amax, lo, hi);
    for (size_t i = b; i < b + g; ++i)
      ASSERT_LE(std::fabs(x[i] - y[i]), lim) << what << " element " << i << " x=" << x[i] << " y=" << y[i];
  }
}

class QuantRoundTrip : public ::testing::TestWithParam<float> {};  // param: mean offset of the data

TEST_P(QuantRoundTrip, LegacyTypesWithinBounds) {
  const auto x = gaussian(256 * 64, 0.02f, 7, GetParam());
  expect_group_bound(x, roundtrip(DType::Q8_0, x), 32, [](float a, float, float) { return 0.57f * a / 127; }, "Q8_0");
  expect_group_bound(x, roundtrip(DType::Q4_0, x), 32, [](float a, float, float) { return 1.01f * a / 8; }, "Q4_0");
  expect_group_bound(x, roundtrip(DType::Q5_0, x), 32, [](float a, float, float) { return 1.01f * a / 16; }, "Q5_0");
  expect_group_bound(x, roundtrip(DType::Q4_1, x), 32,
                     [](float, float lo, float hi) { return 0.55f * (hi - lo) / 15 + std::fabs(lo) / 1024; }, "Q4_1");
  expect_group_bound(x, roundtrip(DType::Q5_1, x), 32,
                     [](float, float lo, float hi) { return 0.55f * (hi - lo) / 31 + std::fabs(lo) / 1024; }, "Q5_1");
}

TEST_P(QuantRoundTrip, KQuantsWithinBounds) {
  const auto x = gaussian(256 * 64, 0.02f, 11, GetParam());
  // Q4_K/Q5_K keep the zero point at or below 0, so a sub-block's range always includes 0.
  auto k_range = [](int nmax) {
    return [nmax](float, float lo, float hi) { return 1.5f * (std::max(hi, 0.0f) - std::min(lo, 0.0f)) / nmax; };
  };
  const auto y4 = roundtrip(DType::Q4_K, x), y5 = roundtrip(DType::Q5_K, x), y6 = roundtrip(DType::Q6_K, x);
  expect_group_bound(x, y4, 32, k_range(15), "Q4_K");
  expect_group_bound(x, y5, 32, k_range(31), "Q5_K");
  expect_group_bound(x, y6, 16, [](float a, float, float) { return 1.5f * a / 32; }, "Q6_K");
  if (GetParam() == 0.0f) {
    EXPECT_LE(relative_rms(x, y4), 0.085);
    EXPECT_LE(relative_rms(x, y5), 0.045);
    EXPECT_LE(relative_rms(x, y6), 0.022);
  }
  RecordProperty("q4k_rel_rms", std::to_string(relative_rms(x, y4)));
  RecordProperty("q5k_rel_rms", std::to_string(relative_rms(x, y5)));
  RecordProperty("q6k_rel_rms", std::to_string(relative_rms(x, y6)));
}

INSTANTIATE_TEST_SUITE_P(Offsets, QuantRoundTrip, ::testing::Values(0.0f, 0.03f, -0.05f));

TEST(QuantRoundTripPlain, FloatTypes) {
  const auto x = gaussian(4096, 3.0f, 5);
  EXPECT_EQ(roundtrip(DType::F32, x), x);
  const auto h = roundtrip(DType::F16, x), b = roundtrip(DType::BF16, x);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_LE(std::fabs(h[i] - x[i]), std::fabs(x[i]) * std::ldexp(1.0f, -11) + std::ldexp(1.0f, -25));
    ASSERT_LE(std::fabs(b[i] - x[i]), std::fabs(x[i]) * std::ldexp(1.0f, -8));
  }
}

TEST(QuantRoundTripPlain, ZeroAndConstantBlocks) {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    std::vector<float> zeros(256, 0.0f);
    EXPECT_EQ(roundtrip(t, zeros), zeros) << dtype_name(t);
    std::vector<float> c(256, 0.5f);
    const auto y = roundtrip(t, c);
    for (float v : y) ASSERT_NEAR(v, 0.5f, 0.5f / 64) << dtype_name(t);
  }
}

TEST(QuantRoundTripPlain, RequantizingIsStableForQ8_0) {
  // Values already on a Q8_0 grid survive another quantization exactly.
  const auto x = gaussian(1024, 0.02f, 3);
  const auto y = roundtrip(DType::Q8_0, x);
  EXPECT_EQ(roundtrip(DType::Q8_0, y), y);
}

}  // namespace
}  // namespace p64
