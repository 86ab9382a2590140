// The prefill GEMM (tensor cores, weights dequantized to f16 in the tile loader) against a
// double-precision host product of quant.h's dequantized weights and the same f16
// activations, for every weight format, all three token tiles, both epilogues, split-K
// (forced, uneven splits), several matrices in one launch, and row counts / lengths that
// leave partial tiles.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/prefill_kernels.h"
#include "cuda/cuda_test_support.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

using test::DeviceVec;

// A weight matrix in `dtype`'s device layout and the floats it holds.
struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> deq;
  int64_t rows = 0, n = 0, nb = 0;
};

Weights random_weights(DType dtype, int64_t rows, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 0.1f);
  const DType aos = dtype_is_soa(dtype) ? dtype_aos_of(dtype) : dtype;
  const uint64_t rb = dtype_row_bytes(aos, uint64_t(n));
  Weights w;
  w.rows = rows;
  w.n = n;
  w.nb = rows * n / dtype_info(aos)->block_elems;
  std::vector<uint8_t> a(static_cast<size_t>(rb * rows));
  w.deq.resize(size_t(rows * n));
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = nd(rng);
    uint8_t* dst = a.data() + r * rb;
    if (aos == DType::F32) std::memcpy(dst, row.data(), size_t(n) * 4);
    else if (aos == DType::F16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_fp16(row[size_t(i)]);
    else if (aos == DType::BF16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_bf16(row[size_t(i)]);
    else quantize_row(aos, row.data(), dst, n);
    dequantize_row(aos, dst, w.deq.data() + r * n, n);
  }
  if (dtype_is_soa(dtype)) {
    w.bytes.resize(a.size());
    soa_pack(aos, a.data(), w.bytes.data(), w.nb);
  } else {
    w.bytes = std::move(a);
  }
  return w;
}

// T rows of f16 activations with a padded stride (pad columns zero) and their float values.
struct Acts {
  std::vector<uint16_t> half;
  std::vector<float> f;
  int64_t ld = 0;
};
Acts random_acts(int64_t T, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  Acts a;
  a.ld = (n + 63) / 64 * 64;
  a.half.assign(size_t(T * a.ld), 0);
  a.f.assign(size_t(T * n), 0.f);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t h = fp32_to_fp16(nd(rng));
      a.half[size_t(t * a.ld + i)] = h;
      a.f[size_t(t * n + i)] = fp16_to_fp32(h);
    }
  return a;
}

// RMS(got - ref) / RMS(ref) over the [T][rows] block of `got` at column `col` of stride `ld`.
double rel_err(const std::vector<float>& got, int64_t ld, int64_t col, const std::vector<double>& ref, int64_t T,
               int64_t rows) {
  double e = 0, r = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < rows; ++i) {
      const float g = got[size_t(t * ld + col + i)];
      if (!std::isfinite(g)) return INFINITY;
      const double d = double(g) - ref[size_t(t * rows + i)];
      e += d * d;
      r += ref[size_t(t * rows + i)] * ref[size_t(t * rows + i)];
    }
  return std::sqrt(e / std::max(r, 1e-30));
}

std::vector<double> host_product(const Acts& x, const Weights& w, int64_t T) {
  std::vector<double> y(size_t(T * w.rows));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < w.rows; ++r) {
      double s = 0;
      for (int64_t i = 0; i < w.n; ++i) s += double(x.f[size_t(t * w.n + i)]) * w.deq[size_t(r * w.n + i)];
      y[size_t(t * w.rows + r)] = s;
    }
  return y;
}

int sm_count() {
  int dev = 0, sms = 0;
  P64_CUDA_CHECK(cudaGetDevice(&dev));
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

struct Case {
  DType dtype;
  int64_t n;
};
void PrintTo(const Case& c, std::ostream* os) { *os << dtype_name(c.dtype) << "_" << c.n; }

class PrefillGemmTest : public ::testing::TestWithParam<Case> {};

// f16 weights: each dequantized weight is rounded once (relative 2^-11); the activations
// are exactly the reference's. Sums of n such products err by ~3e-4 of their RMS.
constexpr double kTol = 2e-3;

TEST_P(PrefillGemmTest, StoreAndAddMatchHostProduct) {
  P64_REQUIRE_CUDA_DEVICE();
  const Case c = GetParam();
  std::mt19937 rng(77 + uint32_t(c.dtype) + uint32_t(c.n));
  const int64_t rows = 200;  // one full and one partial 128-row tile
  Weights w = random_weights(c.dtype, rows, c.n, rng);
  DeviceVec<uint8_t> dw(w.bytes);
  for (int64_t T : {1, 7, 33, 100})  // token tiles of 32, 64 (partial ones included)
  for (int splits : {1, 3}) {        // 3: k-tiles split unevenly (or clamped to the k-tiles there are)
    SCOPED_TRACE("T=" + std::to_string(T) + " splits=" + std::to_string(splits));
    Acts x = random_acts(T, c.n, rng);
    DeviceVec<uint16_t> dx(x.half);
    const std::vector<double> ref = host_product(x, w, T);
    const int64_t ldy = rows + 3;
    DeviceVec<float> y(size_t(T * ldy)), ws(size_t(splits * T * rows));
    cuda::PrefillGemm g;
    g.splits = splits;
    g.ws = ws.get();
    g.ws_floats = int64_t(ws.size());
    g.seg[0] = {dw.get(), w.nb, rows, y.get()};
    g.dtype = uint32_t(c.dtype);
    g.n = c.n;
    g.x = dx.get();
    g.ldx = x.ld;
    g.T = T;
    g.ldy = ldy;
    y.poison();
    cuda::launch_prefill_gemm(g, sm_count(), nullptr);
    const std::vector<float> got = y.download();
    EXPECT_LT(rel_err(got, ldy, 0, ref, T, rows), kTol) << "store";
    // Columns past the matrix are not written (still the poison NaN).
    EXPECT_TRUE(std::isnan(got[size_t(rows)])) << "store wrote past the matrix's rows";

    std::vector<float> base(size_t(T * ldy));
    std::normal_distribution<float> nd(0.f, 1.f);
    for (float& v : base) v = nd(rng);
    y.upload(base);
    g.epilogue = cuda::PrefillEpilogue::AddTo;
    cuda::launch_prefill_gemm(g, sm_count(), nullptr);
    std::vector<double> ref_add(ref.size());
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < rows; ++r)
        ref_add[size_t(t * rows + r)] = base[size_t(t * ldy + r)] + ref[size_t(t * rows + r)];
    EXPECT_LT(rel_err(y.download(), ldy, 0, ref_add, T, rows), kTol) << "add";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, PrefillGemmTest,
    ::testing::Values(Case{DType::Q4_K, 512}, Case{DType::Q4_K_SOA, 512}, Case{DType::Q6_K, 512},
                      Case{DType::Q6_K_SOA, 768}, Case{DType::Q8_0, 512}, Case{DType::Q8_0_SOA, 512},
                      Case{DType::Q8_0, 96},  // 3 blocks: the last k-tile is half zeros
                      Case{DType::Q5_0, 256}, Case{DType::F16, 256}, Case{DType::BF16, 256},
                      Case{DType::F32, 172},  // stories260K's FFN width: partial unit and k-tile
                      Case{DType::F32, 64}));

// q, k, v in one launch, written side by side into one output row (through split-K).
TEST(PrefillGemm, ThreeSegmentsLandInTheirColumns) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(5);
  const int64_t n = 256, T = 19;
  Weights q = random_weights(DType::Q4_K_SOA, 256, n, rng), k = random_weights(DType::Q4_K_SOA, 64, n, rng),
          v = random_weights(DType::Q4_K_SOA, 64, n, rng);
  DeviceVec<uint8_t> dq(q.bytes), dk(k.bytes), dv(v.bytes);
  Acts x = random_acts(T, n, rng);
  DeviceVec<uint16_t> dx(x.half);
  const int64_t ldy = 256 + 64 + 64;
  DeviceVec<float> y(size_t(T * ldy)), ws(size_t(3 * T * ldy));
  y.poison();
  cuda::PrefillGemm g;
  g.splits = 3;  // 4 k-tiles in splits of 1, 1, 2
  g.ws = ws.get();
  g.ws_floats = int64_t(ws.size());
  g.nseg = 3;
  g.seg[0] = {dq.get(), q.nb, q.rows, y.get()};
  g.seg[1] = {dk.get(), k.nb, k.rows, y.get() + 256};
  g.seg[2] = {dv.get(), v.nb, v.rows, y.get() + 320};
  g.dtype = uint32_t(DType::Q4_K_SOA);
  g.n = n;
  g.x = dx.get();
  g.ldx = x.ld;
  g.T = T;
  g.ldy = ldy;
  cuda::launch_prefill_gemm(g, sm_count(), nullptr);
  const std::vector<float> got = y.download();
  EXPECT_LT(rel_err(got, ldy, 0, host_product(x, q, T), T, q.rows), kTol) << "q";
  EXPECT_LT(rel_err(got, ldy, 256, host_product(x, k, T), T, k.rows), kTol) << "k";
  EXPECT_LT(rel_err(got, ldy, 320, host_product(x, v, T), T, v.rows), kTol) << "v";
}

// A grid big enough for the 128-token tile (enough row tiles to fill the device).
TEST(PrefillGemm, LargeTokenTileMatchesHostProduct) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(9);
  const int64_t n = 256, T = 200;
  const int64_t rows = 128 * ((sm_count() + 1) / 2) + 40;  // x 2 token tiles >= one block per SM
  for (DType dt : {DType::Q4_K_SOA, DType::Q6_K, DType::Q8_0_SOA}) {
    SCOPED_TRACE(dtype_name(dt));
    Weights w = random_weights(dt, rows, n, rng);
    DeviceVec<uint8_t> dw(w.bytes);
    Acts x = random_acts(T, n, rng);
    DeviceVec<uint16_t> dx(x.half);
    DeviceVec<float> y(size_t(T * rows));
    y.poison();
    cuda::PrefillGemm g;
    g.seg[0] = {dw.get(), w.nb, rows, y.get()};
    g.dtype = uint32_t(dt);
    g.n = n;
    g.x = dx.get();
    g.ldx = x.ld;
    g.T = T;
    g.ldy = rows;
    cuda::launch_prefill_gemm(g, sm_count(), nullptr);
    EXPECT_LT(rel_err(y.download(), rows, 0, host_product(x, w, T), T, rows), kTol);
  }
}

// The automatic split (a small grid, long rows) against the unsplit product, AddTo included.
TEST(PrefillGemm, AutomaticSplitKMatchesHostProduct) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(11);
  const int64_t n = 2048, T = 130, rows = 300;  // 2 x 3 blocks of 128: split 8 ways (4 k-tiles each)
  Weights w = random_weights(DType::Q6_K_SOA, rows, n, rng);
  DeviceVec<uint8_t> dw(w.bytes);
  Acts x = random_acts(T, n, rng);
  DeviceVec<uint16_t> dx(x.half);
  DeviceVec<float> y(size_t(T * rows)), ws(size_t(64 * T * rows));
  std::vector<float> base(size_t(T * rows));
  std::normal_distribution<float> nd(0.f, 1.f);
  for (float& v : base) v = nd(rng);
  y.upload(base);
  cuda::PrefillGemm g;
  g.seg[0] = {dw.get(), w.nb, rows, y.get()};
  g.dtype = uint32_t(DType::Q6_K_SOA);
  g.n = n;
  g.x = dx.get();
  g.ldx = x.ld;
  g.T = T;
  g.ldy = rows;
  g.ws = ws.get();
  g.ws_floats = int64_t(ws.size());
  g.epilogue = cuda::PrefillEpilogue::AddTo;
  cuda::launch_prefill_gemm(g, sm_count(), nullptr);
  std::vector<double> ref = host_product(x, w, T);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += base[i];
  EXPECT_LT(rel_err(y.download(), rows, 0, ref, T, rows), kTol);
}

TEST(PrefillGemm, RejectsAnUnpaddedActivationStride) {
  cuda::PrefillGemm g;
  g.dtype = uint32_t(DType::Q8_0);
  g.n = 96;
  g.ldx = 96;  // must be a multiple of 64 covering n
  g.T = 1;
  g.seg[0].rows = 1;
  EXPECT_THROW(cuda::launch_prefill_gemm(g, 1, nullptr), Error);
}

}  // namespace
}  // namespace p64
