// Every SIMD kernel against the scalar reference, for every weight dtype, AoS and SoA, with
// int8 and float activations and token tiles of every remainder.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/dot.h"
#include "engine/common/error.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

// Random but well-formed blocks: random quant bytes, fp16 scales in a sane range.
std::vector<uint8_t> random_tensor(DType t, int64_t rows, int64_t n, std::mt19937& rng) {
  const auto info = *dtype_info(t);
  const int64_t nb = rows * n / info.block_elems;
  std::vector<uint8_t> buf(static_cast<size_t>(nb * info.block_bytes));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f), val(-1.0f, 1.0f);
  auto put16 = [&](size_t off, float f) {
    const uint16_t h = fp32_to_fp16(f);
    std::memcpy(&buf[off], &h, 2);
  };
  if (t == DType::F32) {
    for (int64_t i = 0; i < rows * n; ++i) {
      float f = val(rng);
      std::memcpy(&buf[static_cast<size_t>(4 * i)], &f, 4);
    }
    return buf;
  }
  if (t == DType::F16 || t == DType::BF16) {
    for (int64_t i = 0; i < rows * n; ++i) {
      const uint16_t h = t == DType::F16 ? fp32_to_fp16(val(rng)) : fp32_to_bf16(val(rng));
      std::memcpy(&buf[static_cast<size_t>(2 * i)], &h, 2);
    }
    return buf;
  }
  for (auto& b : buf) b = static_cast<uint8_t>(byte(rng));
  for (int64_t b = 0; b < nb; ++b) {
    const size_t o = static_cast<size_t>(b * info.block_bytes);
    switch (t) {
      case DType::Q8_0: case DType::Q4_0: case DType::Q5_0: put16(o, scale(rng)); break;
      case DType::Q4_K: put16(o, scale(rng)); put16(o + 2, scale(rng)); break;
      case DType::Q6_K: put16(o + 208, scale(rng)); break;
      default: break;
    }
  }
  return buf;
}

// SoA form written from the layout comment in quant.h, independently of the kernels' indexing.
std::vector<uint8_t> to_soa(DType aos, const std::vector<uint8_t>& src) {
  struct Field { size_t off, bytes; };
  std::vector<Field> fields;
  size_t block = 0;
  if (aos == DType::Q8_0) block = 34, fields = {{2, 32}, {0, 2}};
  if (aos == DType::Q4_K) block = 144, fields = {{16, 128}, {4, 12}, {0, 2}, {2, 2}};
  if (aos == DType::Q6_K) block = 210, fields = {{0, 128}, {128, 64}, {192, 16}, {208, 2}};
  const size_t nb = src.size() / block;
  std::vector<uint8_t> dst(src.size());
  size_t start = 0;
  for (const Field& f : fields) {
    for (size_t b = 0; b < nb; ++b) std::memcpy(&dst[start + b * f.bytes], &src[b * block + f.off], f.bytes);
    start += nb * f.bytes;
  }
  return dst;
}

struct Batch {
  std::vector<float> f32;
  std::vector<int8_t> q8;
  std::vector<float> d8, xs16;
  dot::ActBatch view;
};

Batch make_batch(int64_t n, int ntok, std::mt19937& rng, Isa quant_isa) {
  Batch b;
  std::normal_distribution<float> g(0.0f, 1.0f);
  b.f32.resize(static_cast<size_t>(n * ntok));
  for (auto& v : b.f32) v = g(rng);
  b.q8.resize(b.f32.size());
  b.d8.resize(static_cast<size_t>(n / 32 * ntok));
  b.xs16.resize(static_cast<size_t>(n / 16 * ntok));
  for (int t = 0; t < ntok; ++t)
    dot::quantize_acts(quant_isa, b.f32.data() + t * n, n, b.q8.data() + t * n, b.d8.data() + t * (n / 32),
                       b.xs16.data() + t * (n / 16));
  b.view = {n, ntok, b.f32.data(), n, b.q8.data(), b.d8.data(), b.xs16.data()};
  return b;
}

std::vector<float> run(Isa isa, const dot::WeightMatrix& w, const dot::ActBatch& x, bool int8) {
  std::vector<float> out(static_cast<size_t>(w.rows * x.ntok), 0.0f);
  dot::matmul(isa, w, x, 0, w.rows, out.data(), w.rows, int8, false);
  return out;
}

// Token `tok` of a batch as a batch of its own.
dot::ActBatch token_of(const dot::ActBatch& x, int tok) {
  dot::ActBatch one = x;
  one.ntok = 1;
  one.f32 += tok * x.ld_f32;
  one.q8 += tok * x.n;
  one.d8 += tok * (x.n / 32);
  one.xs16 += tok * (x.n / 16);
  return one;
}

std::vector<Isa> simd_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::Avx2, Isa::Avx512})
    if (isa_supported(i)) v.push_back(i);
  return v;
}

TEST(CpuKernels, QuantizeActsSimdEqualsScalar) {
  std::mt19937 rng(7);
  for (Isa isa : simd_isas()) {
    Batch a = make_batch(512, 1, rng, Isa::Scalar);
    std::vector<int8_t> q(512);
    std::vector<float> d(16), xs(32);
    dot::quantize_acts(isa, a.f32.data(), 512, q.data(), d.data(), xs.data());
    EXPECT_EQ(0, std::memcmp(q.data(), a.q8.data(), 512)) << isa_name(isa);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(d[i], a.d8[i]);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(xs[i], a.xs16[i]);
  }
}

TEST(CpuKernels, EverySimdKernelMatchesScalar) {
  ASSERT_FALSE(simd_isas().empty()) << "this test machine should run AVX2 at least";
  const int64_t rows = 7, n = 512;
  std::mt19937 rng(42);
  const DType types[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q5_0,
                         DType::Q4_K, DType::Q6_K, DType::Q8_0_SOA, DType::Q4_K_SOA, DType::Q6_K_SOA};
  for (DType t : types) {
    const bool soa = dtype_is_soa(t);
    std::vector<uint8_t> aos = random_tensor(soa ? dtype_aos_of(t) : t, rows, n, rng);
    std::vector<uint8_t> data = soa ? to_soa(dtype_aos_of(t), aos) : aos;
    const dot::WeightMatrix w{t, data.data(), n, rows};
    for (int ntok : {1, 2, 3, 4, 5, 7}) {
      Batch x = make_batch(n, ntok, rng, Isa::Scalar);
      for (bool int8 : {false, true}) {
        if (int8 && !dot::has_int8_kernel(t)) continue;
        const std::vector<float> ref = run(Isa::Scalar, w, x.view, int8);
        double ref_scale = 0;
        for (float v : ref) ref_scale = std::max(ref_scale, std::fabs(static_cast<double>(v)));
        ASSERT_GT(ref_scale, 0.0);
        for (Isa isa : simd_isas()) {
          const std::vector<float> got = run(isa, w, x.view, int8);
          double worst = 0;
          for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - ref[i]) / ref_scale);
          EXPECT_LT(worst, 2e-5) << dtype_name(t) << " " << isa_name(isa) << " ntok=" << ntok
                                 << " int8=" << int8;
        }
      }
      // int8 activations stay close to the float path (one int8 rounding per element).
      if (dot::has_int8_kernel(t)) {
        const std::vector<float> f = run(Isa::Scalar, w, x.view, false), q = run(Isa::Scalar, w, x.view, true);
        double num = 0, den = 0;
        for (size_t i = 0; i < f.size(); ++i) num += (f[i] - q[i]) * (f[i] - q[i]), den += f[i] * f[i];
        EXPECT_LT(std::sqrt(num / den), 0.02) << dtype_name(t) << " int8 vs float, ntok=" << ntok;
      }
    }
    if (soa) {  // the SoA form gives the same numbers as its AoS blocks
      const dot::WeightMatrix wa{dtype_aos_of(t), aos.data(), n, rows};
      Batch x = make_batch(n, 3, rng, Isa::Scalar);
      for (Isa isa : simd_isas()) EXPECT_EQ(run(isa, w, x.view, true), run(isa, wa, x.view, true)) << dtype_name(t);
      std::vector<float> r1(n), r2(n);
      dot::dequantize_row(w, 5, r1.data());
      dot::dequantize_row(wa, 5, r2.data());
      EXPECT_EQ(r1, r2) << dtype_name(t);
    }
  }
}

// The kernels' block decoding agrees bit for bit with the quant library's dequantizer (and
// so with GGML's layouts), for AoS and SoA alike, and the SoA helper agrees with soa_pack.
TEST(CpuKernels, BlockDecodingMatchesQuantLibrary) {
  const int64_t rows = 3, n = 512;
  std::mt19937 rng(11);
  for (DType t : {DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q6_K,
                  DType::Q8_0_SOA, DType::Q4_K_SOA, DType::Q6_K_SOA}) {
    const bool soa = dtype_is_soa(t);
    const DType a = soa ? dtype_aos_of(t) : t;
    std::vector<uint8_t> aos = random_tensor(a, rows, n, rng);
    std::vector<uint8_t> data = soa ? to_soa(a, aos) : aos;
    if (soa) {
      std::vector<uint8_t> packed(aos.size());
      soa_pack(a, aos.data(), packed.data(), rows * n / dtype_info(a)->block_elems);
      EXPECT_EQ(packed, data) << dtype_name(t);
    }
    const dot::WeightMatrix w{t, data.data(), n, rows};
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> mine(n), theirs(n);
      dot::dequantize_row(w, r, mine.data());
      dequantize_tensor_row(t, data.data(), rows, r, n, theirs.data());
      EXPECT_EQ(mine, theirs) << dtype_name(t) << " row " << r;
    }
  }
}

TEST(CpuKernels, AccumulateAddsToOutput) {
  std::mt19937 rng(3);
  std::vector<uint8_t> data = random_tensor(DType::Q8_0, 4, 256, rng);
  const dot::WeightMatrix w{DType::Q8_0, data.data(), 256, 4};
  Batch x = make_batch(256, 2, rng, Isa::Scalar);
  std::vector<float> plain = run(best_isa(), w, x.view, true);
  std::vector<float> acc(plain.size(), 1.5f);
  dot::matmul(best_isa(), w, x.view, 0, 4, acc.data(), 4, true, true);
  for (size_t i = 0; i < acc.size(); ++i) EXPECT_NEAR(acc[i], plain[i] + 1.5f, 1e-5f);
}

// Row lengths of real models: 960 (SmolLM2) has 30 blocks, so the AVX-512 kernels' scale
// gathers of 8 blocks end on a partial one; 2560 and 768 cover longer rows and 3 super-blocks.
TEST(CpuKernels, Int8KernelsMatchScalarAtRealRowLengths) {
  std::mt19937 rng(5);
  const struct { DType t; int64_t n; } cases[] = {
      {DType::Q8_0, 960}, {DType::Q8_0, 2560}, {DType::Q4_0, 960}, {DType::Q5_0, 960},
      {DType::Q8_0_SOA, 960}, {DType::Q4_K, 768}, {DType::Q6_K, 768}, {DType::Q6_K_SOA, 768}, {DType::Q4_K_SOA, 768}};
  for (const auto& c : cases) {
    const int64_t rows = 9;
    const bool soa = dtype_is_soa(c.t);
    std::vector<uint8_t> aos = random_tensor(soa ? dtype_aos_of(c.t) : c.t, rows, c.n, rng);
    std::vector<uint8_t> data = soa ? to_soa(dtype_aos_of(c.t), aos) : aos;
    const dot::WeightMatrix w{c.t, data.data(), c.n, rows};
    Batch x = make_batch(c.n, 6, rng, Isa::Scalar);
    const std::vector<float> ref = run(Isa::Scalar, w, x.view, true);
    double scale = 0;
    for (float v : ref) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (Isa isa : simd_isas()) {
      const std::vector<float> got = run(isa, w, x.view, true);
      double worst = 0;
      for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - ref[i]) / scale);
      EXPECT_LT(worst, 2e-5) << dtype_name(c.t) << " n=" << c.n << " " << isa_name(isa);
    }
  }
}

// A token's products do not depend on the batch it is in (a prefill of many tokens and a
// decode of one give the same bits), whatever tile of rows and tokens the kernel uses.
TEST(CpuKernels, ATokenGetsTheSameBitsInABatchAsAlone) {
  std::mt19937 rng(9);
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q6_K}) {
    const int64_t rows = 11, n = 512;
    std::vector<uint8_t> data = random_tensor(t, rows, n, rng);
    const dot::WeightMatrix w{t, data.data(), n, rows};
    Batch x = make_batch(n, 7, rng, Isa::Scalar);
    for (Isa isa : simd_isas()) {
      const std::vector<float> batch = run(isa, w, x.view, true);
      for (int tok = 0; tok < 7; ++tok) {
        const std::vector<float> alone = run(isa, w, token_of(x.view, tok), true);
        for (int64_t r = 0; r < rows; ++r)
          EXPECT_EQ(alone[static_cast<size_t>(r)], batch[static_cast<size_t>(tok * rows + r)])
              << dtype_name(t) << " " << isa_name(isa) << " token " << tok << " row " << r;
      }
    }
  }
}

// The row-interleaved forms written from the layout comment in quant.h, independently of
// interleave_rows: Q8_0_R16 (units of 1088 bytes), Q5_0_R16 (704), Q4_K_R16 (2304), Q6_K_R16 (3360).
std::vector<uint8_t> to_r16(DType aos_type, const std::vector<uint8_t>& aos, int64_t rows, int64_t n) {
  std::vector<uint8_t> dst(aos.size());
  // Quant 4k + j (of a run of 32) of row `lane` at 64 (k % 4) + 4 lane + j: low nibble for k < 4.
  auto put_nibble = [](uint8_t* run, size_t i, size_t lane, int q) {
    run[64 * (i / 4 % 4) + 4 * lane + i % 4] |= static_cast<uint8_t>(i / 4 < 4 ? q : q << 4);
  };
  if (aos_type == DType::Q4_K || aos_type == DType::Q6_K) {  // one unit per super-block
    const bool q4 = aos_type == DType::Q4_K;
    const size_t block_bytes = q4 ? 144 : 210, unit_bytes = q4 ? 2304 : 3360;
    const int64_t nsb = n / 256;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t sb = 0; sb < nsb; ++sb) {
        const uint8_t* block = &aos[static_cast<size_t>(r * nsb + sb) * block_bytes];
        uint8_t* unit = &dst[static_cast<size_t>((r / 16) * nsb + sb) * unit_bytes];
        const size_t lane = static_cast<size_t>(r % 16);
        if (q4) {
          std::memcpy(unit + 2 * lane, block, 2);
          std::memcpy(unit + 32 + 2 * lane, block + 2, 2);
          for (size_t k = 0; k < 12; ++k) unit[64 + 16 * k + lane] = block[4 + k];
        } else {
          std::memcpy(unit + 2 * lane, block + 208, 2);
          for (size_t g = 0; g < 16; ++g) unit[32 + 16 * g + lane] = block[192 + g];
        }
        for (size_t e = 0; e < 256; ++e) {
          const size_t i = e % 32;
          if (q4) {
            const uint8_t q = block[16 + 32 * (e / 64) + i];
            put_nibble(unit + 256 + 256 * (e / 32), i, lane, (e / 32) % 2 == 0 ? (q & 0xF) : (q >> 4));
            continue;
          }
          const size_t h = e / 128, k = e % 128 / 32;  // GGML's Q6_K element order
          const int q = ((block[64 * h + i + 32 * (k & 1)] >> (4 * (k / 2))) & 0xF) | (((block[128 + 32 * h + i] >> (2 * k)) & 3) << 4);
          put_nibble(unit + 288 + 256 * (e / 32), i, lane, q & 0xF);
          unit[2336 + 128 * (e / 32) + 64 * (i / 16) + 4 * lane + i % 4] |= static_cast<uint8_t>((q >> 4) << (2 * (i / 4 % 4)));
        }
      }
    return dst;
  }
  const int64_t nb = n / 32;
  const bool q8 = aos_type == DType::Q8_0;
  const size_t block_bytes = q8 ? 34 : 22, unit_bytes = q8 ? 1088 : 704, half_bytes = (unit_bytes - 64) / 2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* block = &aos[static_cast<size_t>(r * nb + b) * block_bytes];
      const size_t unit = static_cast<size_t>((r / 16) * (nb / 2) + b / 2) * unit_bytes;
      const size_t lane = static_cast<size_t>(r % 16), half = unit + 64 + half_bytes * static_cast<size_t>(b % 2);
      std::memcpy(&dst[unit + 32 * static_cast<size_t>(b % 2) + 2 * lane], block, 2);
      uint32_t qh = 0;
      if (!q8) std::memcpy(&qh, block + 2, 4);
      for (size_t i = 0; i < 32; ++i) {
        if (q8) {
          dst[half + 64 * (i / 4) + 4 * lane + i % 4] = static_cast<uint8_t>(block[2 + i] + 128);
          continue;
        }
        const size_t bit = 4 * lane + i % 4;
        if ((qh >> i) & 1u) dst[half + 8 * (i / 4) + bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
        put_nibble(&dst[half + 64], i, lane, i < 16 ? (block[6 + i] & 0xF) : (block[6 + i - 16] >> 4));
      }
    }
  return dst;
}

TEST(CpuKernels, RowInterleavedBlocks) {
  std::mt19937 rng(21);
  const struct { DType aos_type; int64_t n; } cases[] = {
      {DType::Q8_0, 128}, {DType::Q8_0, 960}, {DType::Q5_0, 128}, {DType::Q5_0, 960}, {DType::Q4_K, 256}, {DType::Q4_K, 768},
      {DType::Q6_K, 256}, {DType::Q6_K, 768}};
  for (const auto& [aos_type, n] : cases) {
    const DType packed_type = dtype_interleaved_of(aos_type);
    const std::string what = std::string(dtype_name(packed_type)) + " n=" + std::to_string(n);
    const int64_t rows = 48;
    const std::vector<uint8_t> aos = random_tensor(aos_type, rows, n, rng);
    const std::vector<uint8_t> r16 = to_r16(aos_type, aos, rows, n);
    std::vector<uint8_t> packed(aos.size()), back(aos.size());
    interleave_rows(aos_type, aos.data(), packed.data(), rows, n);
    ASSERT_EQ(packed, r16) << what;
    deinterleave_rows(aos_type, packed.data(), back.data(), rows, n);
    EXPECT_EQ(back, aos) << what;
    const dot::WeightMatrix w{packed_type, r16.data(), n, rows}, wa{aos_type, aos.data(), n, rows};
    for (int64_t r : {0, 17, 47}) {
      std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      dot::dequantize_row(w, r, a.data());
      dot::dequantize_row(wa, r, b.data());
      EXPECT_EQ(a, b) << what << " row " << r;
    }
    for (int ntok : {1, 2, 3, 4, 5, 7}) {
      Batch x = make_batch(n, ntok, rng, Isa::Scalar);
      for (bool int8 : {false, true}) {
        const std::vector<float> ref = run(Isa::Scalar, wa, x.view, int8);
        double scale = 0;
        for (float v : ref) scale = std::max(scale, std::fabs(static_cast<double>(v)));
        for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
          if (!isa_supported(isa)) continue;
          const std::vector<float> got = run(isa, w, x.view, int8);
          if (isa == Isa::Avx512 && int8) {  // its own kernel: the sums in another order
            double worst = 0;
            for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - ref[i]) / scale);
            EXPECT_LT(worst, 2e-5) << what << " ntok=" << ntok;
          } else {  // the rows gathered back to AoS: that type's kernel, exactly
            EXPECT_EQ(got, run(isa, wa, x.view, int8)) << what << " " << isa_name(isa) << " int8=" << int8;
          }
        }
      }
    }
    if (!isa_supported(Isa::Avx512)) continue;
    // A token alone gets the bits it gets in a batch; a row range off the groups' edges, with
    // accumulation, touches only its rows.
    Batch x = make_batch(n, 6, rng, Isa::Scalar);
    const std::vector<float> batch = run(Isa::Avx512, w, x.view, true);
    for (int tok = 0; tok < 6; ++tok) {
      const std::vector<float> alone = run(Isa::Avx512, w, token_of(x.view, tok), true);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_EQ(alone[static_cast<size_t>(r)], batch[static_cast<size_t>(tok * rows + r)]) << what << " token " << tok << " row " << r;
    }
    std::vector<float> acc(batch.size(), 1.5f);
    dot::matmul(Isa::Avx512, w, x.view, 5, 37, acc.data(), rows, true, true);
    for (int tok = 0; tok < 6; ++tok)
      for (int64_t r = 0; r < rows; ++r) {
        const size_t i = static_cast<size_t>(tok * rows + r);
        if (r >= 5 && r < 37) EXPECT_FLOAT_EQ(acc[i], batch[i] + 1.5f) << what << " row " << r;
        else EXPECT_EQ(acc[i], 1.5f) << what << " row " << r << " is outside the range";
      }
  }
}

TEST(CpuKernels, RowInterleavedShapesAreCheckedWithClearErrors) {
  EXPECT_EQ(dtype_shape_problem(DType::Q8_0_R16, 960, 48), "");
  EXPECT_NE(dtype_shape_problem(DType::Q8_0_R16, 960, 40).find("multiple of 16 rows"), std::string::npos);
  EXPECT_NE(dtype_shape_problem(DType::Q8_0_R16, 96, 16).find("64 elements"), std::string::npos);  // 3 blocks
  EXPECT_NE(dtype_shape_problem(DType::Q8_0, 100, 1).find("block size"), std::string::npos);
  std::vector<uint8_t> a(40 * 2 * 34), b(a.size());
  EXPECT_THROW(interleave_rows(DType::Q8_0, a.data(), b.data(), 40, 64), Error);
  EXPECT_THROW(interleave_rows(DType::Q4_0, a.data(), b.data(), 16, 64), Error);
  EXPECT_EQ(dtype_aos_of(DType::Q8_0_R16), DType::Q8_0);
  EXPECT_EQ(dtype_interleaved_of(DType::Q8_0), DType::Q8_0_R16);
  EXPECT_EQ(dtype_interleaved_of(DType::Q5_0), DType::Q5_0_R16);
  EXPECT_EQ(dtype_aos_of(DType::Q5_0_R16), DType::Q5_0);
  EXPECT_EQ(dtype_interleaved_of(DType::Q4_K), DType::Q4_K_R16);
  EXPECT_NE(dtype_shape_problem(DType::Q4_K_R16, 256, 8).find("multiple of 16 rows"), std::string::npos);
  EXPECT_EQ(dtype_interleaved_of(DType::Q6_K), DType::Q6_K_R16);
  EXPECT_EQ(dtype_interleaved_of(DType::Q4_0), DType::Q4_0);
  EXPECT_TRUE(dtype_is_packed(DType::Q8_0_R16) && dtype_is_interleaved(DType::Q8_0_R16) && !dtype_is_soa(DType::Q8_0_R16));
}

TEST(CpuKernels, UnsupportedDtypeIsAClearError) {
  std::vector<uint8_t> data(24 * 8);
  const dot::WeightMatrix w{DType::Q5_1, data.data(), 32, 8};
  EXPECT_FALSE(dot::supported(DType::Q5_1));
  EXPECT_THROW(dot::row_fields(w, 0), Error);
}

}  // namespace
}  // namespace p64
