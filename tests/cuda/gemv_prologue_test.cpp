// The gemv_prologue switch: a GEMV that normalizes and quantizes its own fp32 input gives what
// the norm kernel followed by the plain GEMV gives, and both match a host reference, for every
// weight form the decode step reads on the int16 path, every epilogue, with and without a norm.
#include <cmath>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "backends/cuda/tiled_weights.h"
#include "cuda/cuda_test_support.h"
#include "cuda/gemv_test_support.h"
#include "engine/common/error.h"
#include "engine/quant/dtype.h"

namespace p64 {
namespace {

using test::DeviceVec;
using test::HostMatrix;
using test::make_matrix;
using test::rel_rms;

struct Form {
  DType dtype;
  bool tiled;
};

TEST(CudaGemvPrologue, MatchesTheNormKernelAndTheHostReference) {
  P64_REQUIRE_CUDA_DEVICE();
  const float eps = 1e-5f;
  for (const Form f : {Form{DType::Q4_K, true}, Form{DType::Q6_K, true}, Form{DType::Q8_0, false},
                       Form{DType::Q8_0_SOA, false}, Form{DType::Q4_K_SOA, false}})
    for (const int64_t n : {int64_t(768), int64_t(3072)})
      for (const bool with_norm : {true, false}) {
        SCOPED_TRACE(std::string(dtype_name(f.dtype)) + (f.tiled ? " tiled" : "") + " n=" + std::to_string(n) +
                     (with_norm ? " norm" : " no norm"));
        std::mt19937 rng(99 + uint32_t(n) + uint32_t(f.dtype));
        const int64_t rows = 200;  // a partial last block: its idle warps still join the prologue
        HostMatrix gate = make_matrix(f.dtype, rows, n, rng);
        HostMatrix up = make_matrix(f.dtype, rows, n, rng);
        std::normal_distribution<float> nd(0.f, 1.f);
        std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
        for (auto& v : x) v = 3.f * nd(rng);
        for (auto& v : w) v = 1.f + 0.2f * nd(rng);
        // host reference input: x * rsqrt(mean(x^2) + eps) * w (or x itself)
        double ss = 0;
        for (float v : x) ss += double(v) * v;
        const double scale = with_norm ? 1.0 / std::sqrt(ss / double(n) + eps) : 1.0;
        std::vector<double> xin(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) xin[size_t(i)] = x[size_t(i)] * scale * (with_norm ? w[size_t(i)] : 1.f);
        std::vector<double> ref(static_cast<size_t>(rows)), ref_up(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t i = 0; i < n; ++i) {
            ref[size_t(r)] += double(gate.deq[size_t(r * n + i)]) * xin[size_t(i)];
            ref_up[size_t(r)] += double(up.deq[size_t(r * n + i)]) * xin[size_t(i)];
          }
        uint32_t dtype = uint32_t(f.dtype);
        if (f.tiled) {
          for (HostMatrix* m : {&gate, &up}) {
            std::vector<uint8_t> t(m->bytes.size());
            cuda::pack_tiled(f.dtype, m->bytes.data(), t.data(), rows, n);
            m->bytes = std::move(t);
          }
          dtype = cuda::tiled_dtype_for(f.dtype, n);
        }
        DeviceVec<uint8_t> dg(gate.bytes), du(up.bytes);
        DeviceVec<float> dx(x), dw(w), out(static_cast<size_t>(rows)), out2(static_cast<size_t>(rows));
        DeviceVec<float> xf(static_cast<size_t>(n)), xd(size_t(n) / 32 + 2), xs(size_t(n) / 16 + 2);
        DeviceVec<int16_t> xq(size_t(n) + 16);
        const cuda::ActBuffers act{xf.get(), xq.get(), xd.get(), xs.get(), 16};

        cuda::GemvLaunch g;
        g.dtype = dtype;
        g.n = n;
        g.act_bits = 16;
        g.rows_per_warp = 2;
        g.cap_registers = true;
        g.seg[0] = {dg.get(), out.get(), rows, gate.nb};
        g.seg[1] = {du.get(), out2.get(), rows, up.nb};
        for (const cuda::GemvMode mode : {cuda::GemvMode::Store, cuda::GemvMode::SwiGLU, cuda::GemvMode::AddTo}) {
          SCOPED_TRACE("mode " + std::to_string(int(mode)));
          g.mode = mode;
          g.nseg = mode == cuda::GemvMode::SwiGLU ? 2 : 1;
          // the two-launch form: norm.cu's kernel, then the GEMV reading its buffers
          cuda::launch_rmsnorm_quant(dx.get(), with_norm ? dw.get() : nullptr, eps, n, act, nullptr);
          g.xf = xf.get();
          g.xq = xq.get();
          g.xd = xd.get();
          g.xs = xs.get();
          g.prologue = {};
          std::vector<float> start(size_t(rows), 0.5f);
          out.upload(start);
          cuda::launch_gemv(g, nullptr);
          const std::vector<float> two_launch = out.download();
          // the prologue form, from the fp32 vector alone (the act buffers poisoned)
          xq.poison();
          xd.poison();
          xs.poison();
          g.xq = nullptr;
          g.xd = nullptr;
          g.xs = nullptr;
          g.prologue = {dx.get(), with_norm ? dw.get() : nullptr, eps};
          out.upload(start);
          cuda::launch_gemv(g, nullptr);
          const std::vector<float> own = out.download();

          std::vector<double> want(static_cast<size_t>(rows)), near(two_launch.begin(), two_launch.end());
          for (int64_t r = 0; r < rows; ++r) {
            const double a = ref[size_t(r)];
            want[size_t(r)] = mode == cuda::GemvMode::Store    ? a
                              : mode == cuda::GemvMode::AddTo ? 0.5 + a
                                                              : a / (1.0 + std::exp(-a)) * ref_up[size_t(r)];
          }
          EXPECT_LT(rel_rms(own, want), 5e-4) << "against the host reference";
          EXPECT_LT(rel_rms(own, near), 3e-5) << "against the norm kernel + GEMV";
        }
      }
}

TEST(CudaGemvPrologue, RefusesWhatItHasNoKernelFor) {
  P64_REQUIRE_CUDA_DEVICE();
  DeviceVec<float> x(size_t(512)), out(size_t(8));
  DeviceVec<uint8_t> w(size_t(8) * 512 * 4);
  cuda::GemvLaunch g;
  g.dtype = uint32_t(DType::F32);  // no integer path
  g.n = 512;
  g.rows_per_warp = 2;
  g.cap_registers = true;
  g.seg[0] = {w.get(), out.get(), 8, 8 * 512};
  g.prologue = {x.get(), nullptr, 0.f};
  EXPECT_THROW(cuda::launch_gemv(g, nullptr), Error);
  g.dtype = uint32_t(DType::Q8_0);
  g.rows_per_warp = 4;
  EXPECT_THROW(cuda::launch_gemv(g, nullptr), Error);
}

}  // namespace
}  // namespace p64
