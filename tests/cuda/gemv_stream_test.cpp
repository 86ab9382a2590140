// The streaming decode GEMV (gemv_stream.cu) against a host reference: every format it takes,
// both pipeline depths, every epilogue, the qkv-style segments, warps that walk several rows
// (row counts above one resident wave) and lanes idle past a row's end (Q8_0 at 544), with the
// input given in integer form or built by the prologue (plain, and RMSNorm with weights).
#include <cmath>
#include <random>
#include <vector>

#include "backends/cuda/gemv_stream.h"
#include "cuda/cuda_test_support.h"
#include "cuda/gemv_test_support.h"

namespace p64 {
namespace {

using test::ActOnDevice;
using test::DeviceVec;
using test::HostMatrix;
using test::make_matrix;
using test::rel_rms;

struct StreamCase {
  DType dtype;
  int64_t n;
  int64_t rows;
};

class GemvStreamTest : public ::testing::TestWithParam<StreamCase> {};

std::vector<double> host_product(const HostMatrix& m, const std::vector<float>& x) {
  std::vector<double> y(static_cast<size_t>(m.rows));
  for (int64_t r = 0; r < m.rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < m.n; ++i) s += double(m.deq[size_t(r * m.n + i)]) * x[size_t(i)];
    y[size_t(r)] = s;
  }
  return y;
}

TEST_P(GemvStreamTest, MatchesHostReference) {
  P64_REQUIRE_CUDA_DEVICE();
  const StreamCase c = GetParam();
  std::mt19937 rng(99 + uint32_t(c.dtype) + uint32_t(c.rows));
  const HostMatrix gate = make_matrix(c.dtype, c.rows, c.n, rng), up = make_matrix(c.dtype, c.rows, c.n, rng);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(c.n)), norm_w(static_cast<size_t>(c.n)), base(static_cast<size_t>(c.rows));
  for (auto& v : x) v = 3.f * nd(rng);
  for (auto& v : norm_w) v = 1.f + 0.2f * nd(rng);
  for (auto& v : base) v = nd(rng);
  const float eps = 1e-5f;
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double inv_rms = 1.0 / std::sqrt(ss / double(c.n) + eps);
  std::vector<float> normed(x.size());
  for (size_t i = 0; i < x.size(); ++i) normed[i] = float(x[i] * inv_rms * norm_w[i]);

  ActOnDevice act(x, 16);
  DeviceVec<float> dx(x), dnorm(norm_w);
  DeviceVec<uint8_t> dg(gate.bytes), du(up.bytes);
  DeviceVec<float> out(static_cast<size_t>(c.rows)), out2(static_cast<size_t>(c.rows));

  enum class Input { Integer, Prologue, PrologueNorm };
  for (Input in : {Input::Integer, Input::Prologue, Input::PrologueNorm}) {
    const std::vector<float>& xin = in == Input::PrologueNorm ? normed : x;
    const std::vector<double> ref_g = host_product(gate, xin), ref_u = host_product(up, xin);
    for (int stages : {4, 8}) {
      SCOPED_TRACE("input " + std::to_string(int(in)) + " stages " + std::to_string(stages));
      cuda::GemvLaunch g;
      g.nseg = 1;
      g.dtype = uint32_t(c.dtype);
      g.n = c.n;
      g.xf = act.xf.get();
      g.xq = act.xq.get();
      g.xd = act.xd.get();
      g.xs = act.xs.get();
      g.act_bits = 16;
      g.seg[0] = {dg.get(), out.get(), c.rows, gate.nb};
      if (in != Input::Integer) g.prologue = {dx.get(), in == Input::PrologueNorm ? dnorm.get() : nullptr, eps};
      g.stream_rows = stages == 8 ? 3 : 0;  // explicit rows per warp, and the one-wave default
      ASSERT_TRUE(cuda::gemv_stream_supports(g));
      const double tol = 2e-4;

      out.poison();
      g.mode = cuda::GemvMode::Store;
      cuda::launch_gemv_stream(g, stages, nullptr);
      EXPECT_LT(rel_rms(out.download(), ref_g), tol) << "store";

      out.upload(base);
      g.mode = cuda::GemvMode::AddTo;
      cuda::launch_gemv_stream(g, stages, nullptr);
      std::vector<double> ref_add(ref_g);
      for (size_t r = 0; r < ref_add.size(); ++r) ref_add[r] += base[r];
      EXPECT_LT(rel_rms(out.download(), ref_add), tol) << "residual add";

      out.poison();
      g.mode = cuda::GemvMode::SwiGLU;
      g.nseg = 2;
      g.seg[1] = {du.get(), out2.get(), c.rows, up.nb};
      cuda::launch_gemv_stream(g, stages, nullptr);
      std::vector<double> ref_sw(ref_g.size());
      for (size_t r = 0; r < ref_sw.size(); ++r) ref_sw[r] = ref_g[r] / (1.0 + std::exp(-ref_g[r])) * ref_u[r];
      EXPECT_LT(rel_rms(out.download(), ref_sw), 2 * tol) << "swiglu";

      out.poison();
      out2.poison();
      g.mode = cuda::GemvMode::Store;
      cuda::launch_gemv_stream(g, stages, nullptr);
      EXPECT_LT(rel_rms(out.download(), ref_g), tol) << "segment 0";
      EXPECT_LT(rel_rms(out2.download(), ref_u), tol) << "segment 1";
    }
  }
}

TEST(GemvStream, RefusesWhatItDoesNotTake) {
  cuda::GemvLaunch g;
  g.dtype = uint32_t(DType::Q6_K);  // AoS Q6_K blocks are only 2-byte aligned
  g.n = 768;
  g.act_bits = 16;
  EXPECT_FALSE(cuda::gemv_stream_supports(g));
  g.dtype = uint32_t(DType::Q4_K_SOA);
  EXPECT_TRUE(cuda::gemv_stream_supports(g));
  g.act_bits = 8;
  EXPECT_FALSE(cuda::gemv_stream_supports(g));
  g.act_bits = 16;
  g.n = 800;  // not a whole number of Q4_K blocks
  EXPECT_FALSE(cuda::gemv_stream_supports(g));
}

std::string case_name(const ::testing::TestParamInfo<StreamCase>& i) {
  return std::string(dtype_name(i.param.dtype)) + "_" + std::to_string(i.param.n) + "x" + std::to_string(i.param.rows);
}

INSTANTIATE_TEST_SUITE_P(Formats, GemvStreamTest,
                         ::testing::Values(StreamCase{DType::Q4_K, 768, 200}, StreamCase{DType::Q4_K_SOA, 768, 200},
                                           StreamCase{DType::Q4_K_SOA, 3072, 9001},
                                           StreamCase{DType::Q6_K_SOA, 2816, 203},
                                           StreamCase{DType::Q6_K_SOA, 768, 9001},
                                           StreamCase{DType::Q8_0_SOA, 544, 9001},
                                           StreamCase{DType::Q8_0_SOA, 960, 77}),
                         case_name);

}  // namespace
}  // namespace p64
