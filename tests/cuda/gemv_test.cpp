// The decode GEMV against a host reference built from quant.h's dequantize_row, for every
// weight format (AoS and SoA), both activation paths, every rows-per-warp and epilogue.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "cuda/cuda_test_support.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

using test::DeviceVec;

struct HostMatrix {
  DType dtype;
  int64_t rows, n;
  std::vector<uint8_t> bytes;  // in `dtype`'s layout (SoA when dtype is an SoA id)
  std::vector<float> deq;      // what the reference multiplies by
  int64_t nb;
};

HostMatrix make_matrix(DType dtype, int64_t rows, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  HostMatrix m{dtype, rows, n, {}, std::vector<float>(size_t(rows * n)), 0};
  const DType aos = dtype_is_soa(dtype) ? dtype_aos_of(dtype) : dtype;
  const auto info = *dtype_info(aos);
  const uint64_t row_bytes = dtype_row_bytes(aos, uint64_t(n));
  std::vector<uint8_t> aos_bytes(static_cast<size_t>(row_bytes * rows));
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng) * 0.1f;
    uint8_t* dst = aos_bytes.data() + r * row_bytes;
    if (aos == DType::F32) std::memcpy(dst, row.data(), size_t(n) * 4);
    else if (aos == DType::F16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_fp16(row[size_t(i)]);
    else if (aos == DType::BF16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_bf16(row[size_t(i)]);
    else quantize_row(aos, row.data(), dst, n);
    dequantize_row(aos, dst, m.deq.data() + r * n, n);
  }
  m.nb = rows * n / info.block_elems;
  if (dtype_is_soa(dtype)) {
    m.bytes.resize(aos_bytes.size());
    soa_pack(aos, aos_bytes.data(), m.bytes.data(), m.nb);
  } else {
    m.bytes = std::move(aos_bytes);
  }
  return m;
}

// RMS(err) / RMS(ref) over all outputs.
double rel_rms(const std::vector<float>& got, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = double(got[i]) - ref[i];
    if (!std::isfinite(got[i])) return INFINITY;
    e += d * d;
    r += ref[i] * ref[i];
  }
  return std::sqrt(e / std::max(r, 1e-30));
}

struct ActOnDevice {
  DeviceVec<float> xf, xd, xs, x_in;
  DeviceVec<int16_t> xq;  // int8 or int16 values, as `bits` says
  ActOnDevice(const std::vector<float>& x, int bits)
      : xf(x.size()), xd(x.size() / 16 + 2), xs(x.size() / 16 + 2), x_in(x), xq(x.size() + 16) {
    // quantize exactly as the decode step does (norm.cu with no weight: no scaling)
    cuda::launch_rmsnorm_quant(x_in.get(), nullptr, 0.f, int64_t(x.size()),
                               cuda::ActBuffers{xf.get(), xq.get(), xd.get(), xs.get(), bits}, nullptr);
  }
};

struct Case {
  DType dtype;
  int64_t n;
};
void PrintTo(const Case& c, std::ostream* os) { *os << dtype_name(c.dtype) << "_" << c.n; }

class GemvTest : public ::testing::TestWithParam<Case> {};

TEST_P(GemvTest, MatchesHostReferenceOnEveryPathAndEpilogue) {
  P64_REQUIRE_CUDA_DEVICE();
  const Case c = GetParam();
  std::mt19937 rng(1234 + uint32_t(c.dtype) + uint32_t(c.n));
  const int64_t rows = 200;  // not a multiple of any rows-per-block: exercises the tail guard
  HostMatrix gate = make_matrix(c.dtype, rows, c.n, rng);
  HostMatrix up = make_matrix(c.dtype, rows, c.n, rng);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(c.n));
  for (auto& v : x) v = nd(rng);
  std::vector<double> ref_g(static_cast<size_t>(rows)), ref_u(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double g = 0, u = 0;
    for (int64_t i = 0; i < c.n; ++i) {
      g += double(gate.deq[size_t(r * c.n + i)]) * x[size_t(i)];
      u += double(up.deq[size_t(r * c.n + i)]) * x[size_t(i)];
    }
    ref_g[size_t(r)] = g;
    ref_u[size_t(r)] = u;
  }
  DeviceVec<uint8_t> dg(gate.bytes), du(up.bytes);
  DeviceVec<float> out(static_cast<size_t>(rows)), out2(static_cast<size_t>(rows));
  std::vector<float> base(static_cast<size_t>(rows));
  for (auto& v : base) v = nd(rng);

  for (int bits : {0, 8, 16}) {
    const bool int_path = bits && cuda::gemv_has_int_path(uint32_t(c.dtype), c.n);
    if (bits && !int_path) continue;
    ActOnDevice act(x, bits ? bits : 8);
    // integer activations cost about 1/(2^(bits-1)) of each activation's block maximum
    const double tol = !int_path ? 1e-5 : bits == 8 ? 3e-2 : 2e-4;
    for (int rpw : {1, 2, 4}) {
      SCOPED_TRACE("act_bits=" + std::to_string(bits) + " rows_per_warp=" + std::to_string(rpw));
      cuda::GemvLaunch g;
      g.nseg = 1;
      g.dtype = uint32_t(c.dtype);
      g.n = c.n;
      g.xf = act.xf.get();
      g.xq = act.xq.get();
      g.xd = act.xd.get();
      g.xs = act.xs.get();
      g.act_bits = bits;
      g.rows_per_warp = rpw;
      g.seg[0] = {dg.get(), out.get(), rows, gate.nb};

      out.poison();
      g.mode = cuda::GemvMode::Store;
      cuda::launch_gemv(g, nullptr);
      EXPECT_LT(rel_rms(out.download(), ref_g), tol) << "store";

      out.upload(base);
      g.mode = cuda::GemvMode::AddTo;
      cuda::launch_gemv(g, nullptr);
      std::vector<double> ref_add(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) ref_add[size_t(r)] = base[size_t(r)] + ref_g[size_t(r)];
      EXPECT_LT(rel_rms(out.download(), ref_add), tol) << "residual add";

      out.poison();
      g.mode = cuda::GemvMode::SwiGLU;
      g.nseg = 2;
      g.seg[1] = {du.get(), out2.get(), rows, up.nb};
      cuda::launch_gemv(g, nullptr);
      std::vector<double> ref_sw(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        const double a = ref_g[size_t(r)];
        ref_sw[size_t(r)] = a / (1.0 + std::exp(-a)) * ref_u[size_t(r)];
      }
      EXPECT_LT(rel_rms(out.download(), ref_sw), 2 * tol) << "swiglu";

      // two segments in one launch (the qkv form): gate rows then up rows
      out.poison();
      out2.poison();
      g.mode = cuda::GemvMode::Store;
      cuda::launch_gemv(g, nullptr);
      EXPECT_LT(rel_rms(out.download(), ref_g), tol) << "segment 0";
      EXPECT_LT(rel_rms(out2.download(), ref_u), tol) << "segment 1";
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(dtype_name(i.param.dtype)) + "_" + std::to_string(i.param.n);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GemvTest,
                         ::testing::Values(Case{DType::F32, 172}, Case{DType::F32, 256}, Case{DType::F16, 200},
                                           Case{DType::F16, 512}, Case{DType::BF16, 512}, Case{DType::Q5_0, 512},
                                           Case{DType::Q8_0, 544}, Case{DType::Q8_0_SOA, 544},
                                           Case{DType::Q4_K, 768}, Case{DType::Q4_K_SOA, 768},
                                           Case{DType::Q4_K_SOA, 3072}, Case{DType::Q6_K, 768},
                                           Case{DType::Q6_K_SOA, 768}, Case{DType::Q6_K_SOA, 2816}),
                         case_name);

TEST(CudaEmbed, DequantizesTheRowTheStepStateNames) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(7);
  for (DType t : {DType::F32, DType::F16, DType::Q8_0_SOA, DType::Q4_K, DType::Q4_K_SOA, DType::Q6_K_SOA, DType::Q5_0}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t rows = 9, n = 512;
    HostMatrix m = make_matrix(t, rows, n, rng);
    DeviceVec<uint8_t> dm(m.bytes);
    DeviceVec<cuda::StepState> st(1);
    std::vector<cuda::StepState> s(1);
    s[0].token = 5;
    st.upload(s);
    DeviceVec<float> out(static_cast<size_t>(n));
    out.poison();
    cuda::launch_embed(uint32_t(t), dm.get(), rows, n, m.nb, st.get(), out.get(), nullptr);
    const auto got = out.download();
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(got[size_t(i)], m.deq[size_t(5 * n + i)], 1e-6) << i;
  }
}

}  // namespace
}  // namespace p64
