// The decode GEMV against a host reference built from quant.h's dequantize_row, for every
// weight format (AoS and SoA), both activation paths, every rows-per-warp and epilogue.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "backends/cuda/tiled_weights.h"
#include "cuda/cuda_test_support.h"
#include "cuda/gemv_test_support.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

using test::ActOnDevice;
using test::DeviceVec;
using test::HostMatrix;
using test::make_matrix;
using test::rel_rms;

struct Case {
  DType dtype;
  int64_t n;
  bool tiled = false;  // the matrix repacked into its tiled form (gemv_layout=tiles)
};
void PrintTo(const Case& c, std::ostream* os) { *os << dtype_name(c.dtype) << "_" << c.n << (c.tiled ? "_tiled" : ""); }

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
  uint32_t dtype = uint32_t(c.dtype);
  if (c.tiled) {
    for (HostMatrix* m : {&gate, &up}) {
      std::vector<uint8_t> t(m->bytes.size());
      cuda::pack_tiled(c.dtype, m->bytes.data(), t.data(), rows, c.n);
      m->bytes = std::move(t);
    }
    dtype = cuda::tiled_dtype_for(c.dtype, c.n);
  }
  DeviceVec<uint8_t> dg(gate.bytes), du(up.bytes);
  DeviceVec<float> out(static_cast<size_t>(rows)), out2(static_cast<size_t>(rows));
  std::vector<float> base(static_cast<size_t>(rows));
  for (auto& v : base) v = nd(rng);

  for (int bits : {0, 8, 16}) {
    const bool int_path = bits && cuda::gemv_has_int_path(dtype, c.n, bits);
    if (bits && !int_path) continue;
    if (c.tiled && bits != 16) continue;  // the tiled forms are read on the int16 path only
    ActOnDevice act(x, bits ? bits : 8);
    // integer activations cost about 1/(2^(bits-1)) of each activation's block maximum
    const double tol = !int_path ? 1e-5 : bits == 8 ? 3e-2 : 2e-4;
    for (int rpw : {1, 2, 4})
    for (int in_flight : {1, 2, 3})  // 3: two in flight with ring refills (gemv_ring)
    for (int split : {0, 2, 4}) {
      if (split && (rpw != 2 || in_flight != 1)) continue;  // the block-split kernel has neither knob
      SCOPED_TRACE("act_bits=" + std::to_string(bits) + " rows_per_warp=" + std::to_string(rpw) +
                   " in_flight=" + std::to_string(in_flight) + " split=" + std::to_string(split));
      cuda::GemvLaunch g;
      g.nseg = 1;
      g.dtype = dtype;
      g.units_in_flight = in_flight == 3 ? 2 : in_flight;
      g.ring_refill = in_flight == 3;
      g.split_rows = split;
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
  return std::string(dtype_name(i.param.dtype)) + "_" + std::to_string(i.param.n) + (i.param.tiled ? "_tiled" : "");
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GemvTest,
                         ::testing::Values(Case{DType::F32, 172}, Case{DType::F32, 256}, Case{DType::F16, 200},
                                           Case{DType::F16, 512}, Case{DType::BF16, 512}, Case{DType::Q5_0, 512},
                                           Case{DType::Q8_0, 544}, Case{DType::Q8_0_SOA, 544},
                                           Case{DType::Q4_K, 768}, Case{DType::Q4_K_SOA, 768},
                                           Case{DType::Q4_K_SOA, 3072}, Case{DType::Q6_K, 768},
                                           Case{DType::Q6_K_SOA, 768}, Case{DType::Q6_K_SOA, 2816},
                                           Case{DType::Q4_K, 768, true}, Case{DType::Q4_K, 3072, true},
                                           Case{DType::Q6_K, 768, true}, Case{DType::Q6_K, 2816, true}),
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

namespace p64 {
namespace {

// The qkv_rope epilogue gives what the q/k/v GEMV followed by rope.cu's kernel gives: the
// rotated q and k in the qkv vector and k, v in the cache, for both activation paths, 2 and 4
// rows per warp, f16 and f32 caches, a partial rotary dimension, and the projections in one
// launch or split over two.
TEST(CudaGemvRope, EpilogueMatchesTheRopeKernel) {
  P64_REQUIRE_CUDA_DEVICE();
  const int n_head = 4, n_kv = 2, D = 64, rope_dim = 32, max_ctx = 8, pos = 5;
  const int64_t n = 256, Q = n_head * D, KV = n_kv * D;
  std::vector<float> inv(rope_dim / 2);
  for (int i = 0; i < rope_dim / 2; ++i) inv[size_t(i)] = float(std::pow(10000.0, -2.0 * i / rope_dim));
  DeviceVec<float> dinv(inv);
  std::vector<cuda::StepState> st(1);
  st[0].pos = pos;
  DeviceVec<cuda::StepState> dst(st);
  for (DType dtype : {DType::F32, DType::Q4_K_SOA}) {
    std::mt19937 rng(77 + uint32_t(dtype));
    const HostMatrix wq = make_matrix(dtype, Q, n, rng), wk = make_matrix(dtype, KV, n, rng),
                     wv = make_matrix(dtype, KV, n, rng);
    DeviceVec<uint8_t> dq(wq.bytes), dk(wk.bytes), dv(wv.bytes);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = nd(rng);
    const int bits = dtype == DType::F32 ? 0 : 16;
    ActOnDevice act(x, 16);
    for (int rpw : {2, 4})
      for (int f16 = 0; f16 < 2; ++f16)
        for (int split : {0, 1})
        for (int block : {0, 1}) {  // block: the block-split kernel (gemv_split = rpw rows per block)
          if (block && dtype == DType::F32) continue;
          SCOPED_TRACE(std::string(dtype_name(dtype)) + " rows_per_warp " + std::to_string(rpw) + " f16 " +
                       std::to_string(f16) + " split " + std::to_string(split) + " block " + std::to_string(block));
          const size_t cache_bytes = size_t(n_kv) * max_ctx * D * 4;
          DeviceVec<float> qkv_ref(size_t(Q + 2 * KV)), qkv(size_t(Q + 2 * KV));
          DeviceVec<uint8_t> kc_ref(cache_bytes), vc_ref(cache_bytes), kc(cache_bytes), vc(cache_bytes);
          for (auto* c : {&kc_ref, &vc_ref, &kc, &vc}) c->poison();
          auto launch = [&](float* out, const cuda::GemvRope& rope) {
            cuda::GemvLaunch g;
            g.dtype = uint32_t(dtype);
            g.n = n;
            g.xf = act.xf.get();
            g.xq = act.xq.get();
            g.xd = act.xd.get();
            g.xs = act.xs.get();
            g.act_bits = bits;
            g.rows_per_warp = rpw;
            g.split_rows = block ? rpw : 0;
            g.rope = rope;
            const cuda::GemvSegment q{dq.get(), out, Q, wq.nb}, k{dk.get(), out + Q, KV, wk.nb},
                v{dv.get(), out + Q + KV, KV, wv.nb};
            if (split) {  // q alone, then k and v
              g.nseg = 1;
              g.seg[0] = q;
              cuda::launch_gemv(g, nullptr);
              g.nseg = 2;
              g.seg[0] = k;
              g.seg[1] = v;
            } else {
              g.nseg = 3;
              g.seg[0] = q;
              g.seg[1] = k;
              g.seg[2] = v;
            }
            cuda::launch_gemv(g, nullptr);
          };
          launch(qkv_ref.get(), {});
          cuda::launch_rope_kv_write(qkv_ref.get(), dinv.get(), n_head, n_kv, D, rope_dim, kc_ref.get(), vc_ref.get(),
                                     f16, max_ctx, dst.get(), nullptr);
          launch(qkv.get(), cuda::GemvRope{dinv.get(), qkv.get(), int(Q), int(KV), D, rope_dim, max_ctx, bool(f16),
                                           kc.get(), vc.get(), dst.get()});
          const auto a = qkv_ref.download(), b = qkv.download();
          for (size_t i = 0; i < size_t(Q + KV); ++i) ASSERT_NEAR(b[i], a[i], 1e-5 * (1 + std::fabs(a[i]))) << i;
          // the written cache rows (position pos of every kv head) agree byte for byte
          const size_t elem = f16 ? 2 : 4;
          const auto k0 = kc_ref.download(), k1 = kc.download(), v0 = vc_ref.download(), v1 = vc.download();
          for (int h = 0; h < n_kv; ++h) {
            const size_t off = (size_t(h) * max_ctx + pos) * D * elem;
            for (size_t i = 0; i < D * elem; ++i) {
              ASSERT_EQ(k0[off + i], k1[off + i]) << "k cache, head " << h << " byte " << i;
              ASSERT_EQ(v0[off + i], v1[off + i]) << "v cache, head " << h << " byte " << i;
            }
          }
        }
  }
}

}  // namespace
}  // namespace p64
