// Dequantization of the real tensors in ../shared/models:
//  - llama-2-tiny-random.gguf (written by llama.cpp's tools) holds F16 matrices and F32 norms.
//    Every F16 value is checked against the compiler's own binary16 type (_Float16), an
//    independent decoder; re-encoding our floats gives back the file's bytes; row addressing
//    through dequantize_tensor_row matches a whole-tensor decode.
//  - stories260K.gguf holds a trained model in F32: its weights (outliers and all, unlike our
//    Gaussian tests) are quantized to every block type and must stay within the same relative
//    error the synthetic tests allow.
#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "engine/format/gguf_reader.h"
#include "engine/quant/quant.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

// The compiler's own half type is the reference conversion. clang 14 has no _Float16 on x86
// (and its __fp16 needs a compiler-rt helper libgcc lacks), so there an exact decoder of the
// IEEE binary16 layout stands in.
#if defined(__clang__) && __clang_major__ < 15
float reference_half_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const float mantissa = static_cast<float>(h & 0x3FF);
  float v;
  if (exponent == 0) v = std::ldexp(mantissa, -24);  // subnormal
  else if (exponent == 31) v = (h & 0x3FF) ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(mantissa + 1024.0f, exponent - 25);
  return (h & 0x8000) ? -v : v;
}
#else
float reference_half_to_float(uint16_t h) {
  _Float16 r;
  std::memcpy(&r, &h, 2);
  return static_cast<float>(r);
}
#endif

TEST(QuantRealTensors, Llama2TinyRandomF16MatchesIndependentDecoder) {
  const auto path = test::shared_model("llama-2-tiny-random.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  const GgufFile f = GgufFile::open(path.string());
  int f16_tensors = 0, f32_tensors = 0;
  for (const GgufTensorInfo& t : f.tensors()) {
    const int64_t n = t.ne[0], rows = t.elements() / t.ne[0];
    std::vector<float> whole(static_cast<size_t>(t.elements()));
    dequantize_row(t.dtype, t.data, whole.data(), t.elements());
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; r += std::max<int64_t>(1, rows / 97)) {
      dequantize_tensor_row(t.dtype, t.data, r, n, row.data());
      ASSERT_EQ(std::memcmp(row.data(), whole.data() + r * n, n * sizeof(float)), 0) << t.name << " row " << r;
    }
    double sum = 0, sq = 0;
    for (float v : whole) {
      ASSERT_TRUE(std::isfinite(v)) << t.name;
      sum += v;
      sq += double(v) * v;
    }
    const double mean = sum / whole.size(), var = sq / whole.size() - mean * mean;
    if (t.dtype == DType::F16) {
      ++f16_tensors;
      const auto* h = reinterpret_cast<const uint16_t*>(t.data);
      for (int64_t i = 0; i < t.elements(); ++i) {
        ASSERT_EQ(whole[i], reference_half_to_float(h[i])) << t.name << " element " << i;
        ASSERT_EQ(fp32_to_fp16(whole[i]), h[i]) << t.name << " element " << i;
      }
      EXPECT_GT(var, 0.0) << t.name << ": a random matrix should not be constant";
    } else {
      ASSERT_EQ(t.dtype, DType::F32) << t.name;
      ++f32_tensors;
      EXPECT_EQ(std::memcmp(whole.data(), t.data, t.bytes), 0) << t.name;
    }
  }
  EXPECT_EQ(f16_tensors, 9);  // token_embd, 7 layer matrices, output
  EXPECT_EQ(f32_tensors, 3);  // attn_norm, ffn_norm, output_norm
}

double relative_rms_after(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_row_bytes(type, x.size()));
  quantize_row(type, x.data(), q.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(type, q.data(), y.data(), static_cast<int64_t>(x.size()));
  double e = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(std::isfinite(y[i]));
    e += double(x[i] - y[i]) * (x[i] - y[i]);
    s += double(x[i]) * x[i];
  }
  return std::sqrt(e / s);
}

TEST(QuantRealTensors, TrainedStories260KWeightsQuantizeWithinBounds) {
  const auto path = test::shared_model("stories260K.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  const GgufFile f = GgufFile::open(path.string());
  struct Limit {
    DType type;
    double rel_rms;
  };
  // Trained weights have heavier tails than a Gaussian, so the limits sit a little above the
  // synthetic ones (a wrong packing gives errors of order 1).
  // Worst tensor measured here: Q8_0 0.0062, Q6_K 0.019, Q5_K 0.040, Q5_0 0.050, Q5_1 0.042,
  // Q4_K 0.079, Q4_0 0.096, Q4_1 0.088, F16 0.0002, BF16 0.0020.
  const Limit limits[] = {{DType::Q8_0, 0.008}, {DType::Q6_K, 0.025}, {DType::Q5_K, 0.05},  {DType::Q5_0, 0.06},
                          {DType::Q5_1, 0.05},  {DType::Q4_K, 0.095}, {DType::Q4_0, 0.115}, {DType::Q4_1, 0.105},
                          {DType::F16, 0.0005}, {DType::BF16, 0.003}};
  int checked = 0;
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.dtype != DType::F32 || t.elements() % 256 != 0 || t.n_dims < 2) continue;
    std::vector<float> x(static_cast<size_t>(t.elements()));
    dequantize_row(DType::F32, t.data, x.data(), t.elements());
    for (const Limit& l : limits) EXPECT_LE(relative_rms_after(l.type, x), l.rel_rms) << t.name << " " << dtype_name(l.type);
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace p64
