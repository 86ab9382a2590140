// RMSNorm+quantize, RoPE+KV write, split attention and argmax against host references.
#include <cuda_fp16.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "cuda/cuda_test_support.h"
#include "engine/common/error.h"

namespace p64 {
namespace {

using test::DeviceVec;

TEST(CudaNorm, RmsNormAndInt8QuantizationMatchTheHost) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 2.f);
  const int64_t n = 3072;
  std::vector<float> x(n), w(n);
  for (auto& v : x) v = nd(rng);
  for (auto& v : w) v = 1.f + 0.1f * nd(rng);
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
  DeviceVec<float> dx(x), dw(w), xf(n), xd(n / 32), xs(n / 16);
  DeviceVec<int8_t> xq(n);
  for (bool batched : {false, true}) {  // the rms_batched switch
  SCOPED_TRACE(batched ? "batched loads" : "strided loop");
  xf.poison();
  cuda::launch_rmsnorm_quant(dx.get(), dw.get(), 1e-5f, n, {xf.get(), xq.get(), xd.get(), xs.get()}, nullptr, batched);
  const auto f = xf.download();
  const auto q = xq.download();
  const auto d = xd.download();
  const auto s = xs.download();
  for (int64_t i = 0; i < n; ++i) {
    const double ref = x[i] * scale * w[i];
    ASSERT_NEAR(f[i], ref, 1e-5 * std::max(1.0, std::fabs(ref))) << i;
    // dequantized int8 within half a step of the fp32 value
    ASSERT_LE(std::fabs(q[i] * d[i / 32] - f[i]), 0.5001 * d[i / 32] + 1e-7) << i;
  }
  for (int64_t b = 0; b < n / 16; ++b) {
    double sum = 0;
    for (int i = 0; i < 16; ++i) sum += f[b * 16 + i];
    ASSERT_NEAR(s[b], sum, 1e-4) << b;
  }
  }
}

TEST(CudaRope, RotatesAdjacentPairsAndWritesTheCache) {
  P64_REQUIRE_CUDA_DEVICE();
  const int n_head = 4, n_kv = 2, D = 64, rope_dim = 64, max_ctx = 16, pos = 11;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> qkv((n_head + 2 * n_kv) * D), inv(rope_dim / 2);
  for (auto& v : qkv) v = nd(rng);
  for (int i = 0; i < rope_dim / 2; ++i) inv[i] = float(std::pow(500000.0, -2.0 * i / rope_dim));
  for (int f16 = 0; f16 < 2; ++f16) {
    SCOPED_TRACE(f16 ? "f16 cache" : "f32 cache");
    DeviceVec<float> dq(qkv), dinv(inv);
    DeviceVec<uint8_t> kc(size_t(n_kv) * max_ctx * D * 4), vc(size_t(n_kv) * max_ctx * D * 4);
    std::vector<cuda::StepState> st(1);
    st[0].pos = pos;
    DeviceVec<cuda::StepState> dst(st);
    cuda::launch_rope_kv_write(dq.get(), dinv.get(), n_head, n_kv, D, rope_dim, kc.get(), vc.get(), f16, max_ctx,
                               dst.get(), nullptr);
    const auto got = dq.download();
    const auto kbytes = kc.download();
    const auto vbytes = vc.download();
    auto cache_at = [&](const std::vector<uint8_t>& c, size_t i) {
      if (f16) return __half2float(reinterpret_cast<const __half*>(c.data())[i]);
      return reinterpret_cast<const float*>(c.data())[i];
    };
    const double tol = f16 ? 2e-3 : 1e-5;
    for (int h = 0; h < n_head + n_kv; ++h) {
      for (int i = 0; i < D / 2; ++i) {
        const double th = double(pos) * inv[i];
        const double a = qkv[h * D + 2 * i], b = qkv[h * D + 2 * i + 1];
        const double ra = a * std::cos(th) - b * std::sin(th), rb = a * std::sin(th) + b * std::cos(th);
        ASSERT_NEAR(got[h * D + 2 * i], ra, 1e-4);
        ASSERT_NEAR(got[h * D + 2 * i + 1], rb, 1e-4);
        if (h >= n_head) {
          const size_t off = (size_t(h - n_head) * max_ctx + pos) * D + 2 * i;
          ASSERT_NEAR(cache_at(kbytes, off), ra, tol * 4);
          ASSERT_NEAR(cache_at(kbytes, off + 1), rb, tol * 4);
        }
      }
    }
    for (int h = 0; h < n_kv; ++h)
      for (int i = 0; i < D; ++i)
        ASSERT_NEAR(cache_at(vbytes, (size_t(h) * max_ctx + pos) * D + i), qkv[(n_head + n_kv + h) * D + i], tol * 4);
  }
}

struct AttnCase {
  int n_head, n_kv, D, len, chunk;
  bool f16;
};
// Named by its fields (gtest would print the struct's bytes, padding included, into test names).
void PrintTo(const AttnCase& c, std::ostream* os) {
  *os << c.n_head << "q" << c.n_kv << "kv_d" << c.D << "_len" << c.len << "_chunk" << c.chunk << (c.f16 ? "_f16" : "_f32");
}

class CudaAttention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(CudaAttention, SplitAndCombineMatchSoftmaxAttention) {
  P64_REQUIRE_CUDA_DEVICE();
  const AttnCase c = GetParam();
  const int max_ctx = 512, G = c.n_head / c.n_kv;
  std::mt19937 rng(11 + c.len + c.D);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> q(size_t(c.n_head) * c.D), k(size_t(c.n_kv) * max_ctx * c.D), v(k.size());
  for (auto& x : q) x = nd(rng);
  for (auto& x : k) x = nd(rng);
  for (auto& x : v) x = nd(rng);
  if (c.f16) {  // the reference sees the values the cache holds
    for (auto& x : k) x = __half2float(__float2half_rn(x));
    for (auto& x : v) x = __half2float(__float2half_rn(x));
  }
  std::vector<uint8_t> kb(k.size() * 4), vb(v.size() * 4);
  for (size_t i = 0; i < k.size(); ++i) {
    if (c.f16) {
      reinterpret_cast<__half*>(kb.data())[i] = __float2half_rn(k[i]);
      reinterpret_cast<__half*>(vb.data())[i] = __float2half_rn(v[i]);
    } else {
      reinterpret_cast<float*>(kb.data())[i] = k[i];
      reinterpret_cast<float*>(vb.data())[i] = v[i];
    }
  }
  DeviceVec<float> dq(q);
  DeviceVec<uint8_t> dk(kb), dv(vb);
  const int splits = cuda::attention_max_splits(max_ctx, c.chunk);
  DeviceVec<float> pm(size_t(c.n_head) * splits), pl(pm.size()), pa(pm.size() * c.D);
  DeviceVec<float> xf(q.size()), xd(q.size() / 16 + 1), xs(q.size() / 16 + 1);
  DeviceVec<int8_t> xq(q.size());
  std::vector<cuda::StepState> st(1);
  st[0].pos = c.len - 1;
  DeviceVec<cuda::StepState> dst(st);
  cuda::AttnLaunch a{};
  a.q = dq.get();
  a.k_cache = dk.get();
  a.v_cache = dv.get();
  a.kv_f16 = c.f16;
  a.n_head = c.n_head;
  a.n_head_kv = c.n_kv;
  a.head_dim = c.D;
  a.max_ctx = max_ctx;
  a.chunk = c.chunk;
  a.part_m = pm.get();
  a.part_l = pl.get();
  a.part_acc = pa.get();
  a.out = {xf.get(), xq.get(), xd.get(), xs.get()};
  a.quantize_out = c.D % 32 == 0;
  a.state = dst.get();
  // every split its own block, and 3 blocks per kv head walking the splits (attn_grid); at most 3
  // splits in use (attn_splits); the
  // combine split by split and in batches of 8 (combine_batch; 500 positions of 16: 32 splits);
  // the first round of rows loaded before the wait or after it (attn_early)
  // and merged by a separate combine or by each kv head's last split block (attn_tail_combine)
  DeviceVec<unsigned> arrivals(std::vector<unsigned>(size_t(c.n_kv), 0u));
  for (int grid : {0, 3})
  for (int most : {0, 3})  // attn_splits: at most 3 splits in use, each a longer run of positions
  for (bool lanes : {false, true})  // attn_lanes: a lane per position (f16 caches; others fall back)
  for (bool stream : {false, true})  // attn_stream: tiles through shared memory (its own grid: one block per split)
  for (int batch : {1, 8})
  for (bool early : {false, true})
  for (bool tail : {false, true}) {
  if (tail && c.D % 32 != 0) continue;
  if (lanes && (batch != 8 || early)) continue;  // the lane kernel has no early round; one combine suffices
  const bool stream_runs = c.f16 && (c.D == 32 || c.D == 64 || c.D == 128);
  if (stream && (!stream_runs || grid != 0 || lanes)) continue;
  // attn_stream needs a split count: 1 puts the whole context in one block (a warp refills its ring)
  const int splits_in_use = stream && most == 0 ? 1 : most;
  SCOPED_TRACE("grid_splits " + std::to_string(grid) + " max_splits " + std::to_string(splits_in_use) + " lanes " + std::to_string(lanes) +
               " stream " + std::to_string(stream) + " combine_batch " + std::to_string(batch) + " early " +
               std::to_string(early) + " tail " + std::to_string(tail));
  a.grid_splits = grid;
  a.max_splits = splits_in_use;
  a.lanes = lanes;
  a.stream_kv = stream;
  ASSERT_EQ(cuda::attention_stream_supported(a), stream_runs);
  a.combine_batch = batch;
  a.early = early;
  a.tail_counter = tail ? arrivals.get() : nullptr;
  xf.poison();
  cuda::launch_attention_decode(a, nullptr);
  if (!tail) cuda::launch_attention_combine(a, nullptr);
  if (tail) {
    const std::vector<unsigned> left = arrivals.download();
    for (unsigned n : left) EXPECT_EQ(n, 0u) << "the last block resets its kv head's count";
  }
  const auto got = xf.download();
  for (int h = 0; h < c.n_head; ++h) {
    const int kvh = h / G;
    std::vector<double> sc(c.len);
    double mx = -1e300;
    for (int t = 0; t < c.len; ++t) {
      double s = 0;
      for (int d = 0; d < c.D; ++d) s += double(q[h * c.D + d]) * k[(size_t(kvh) * max_ctx + t) * c.D + d];
      sc[t] = s / std::sqrt(double(c.D));
      mx = std::max(mx, sc[t]);
    }
    double den = 0;
    for (auto& s : sc) den += (s = std::exp(s - mx));
    for (int d = 0; d < c.D; ++d) {
      double o = 0;
      for (int t = 0; t < c.len; ++t) o += sc[t] * v[(size_t(kvh) * max_ctx + t) * c.D + d];
      ASSERT_NEAR(got[h * c.D + d], o / den, 2e-4) << "head " << h << " dim " << d;
    }
  }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaAttention,
                         ::testing::Values(AttnCase{8, 4, 8, 1, 32, false},      // stories260K's shape, first token
                                           AttnCase{8, 4, 8, 200, 32, false},
                                           AttnCase{24, 8, 128, 77, 32, true},   // llama-3.2-3b
                                           AttnCase{24, 8, 128, 500, 16, true},  // many splits
                                           AttnCase{15, 5, 64, 130, 64, true},   // smollm2-360m
                                           AttnCase{32, 8, 64, 33, 128, false}, AttnCase{8, 1, 256, 40, 32, true},
                                           AttnCase{4, 2, 32, 300, 16, true}));

TEST(CudaArgmax, PicksTheLowestIdOfTheMaximum) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> l(128256);
  for (auto& v : l) v = nd(rng);
  l[70001] = 9.f;
  l[99999] = 9.f;
  l[5] = NAN;
  DeviceVec<float> dl(l);
  DeviceVec<cuda::StepState> st(1);
  for (int batch : {1, 16}) {  // argmax_batch; 128256 is not a multiple of 1024 x 16: the last round is partial
    cuda::launch_argmax(dl.get(), int64_t(l.size()), st.get(), nullptr, batch);
    EXPECT_EQ(st.download()[0].argmax, 70001) << "batch " << batch;
  }
  l[128255] = 10.f;  // the very last id, in the partial round
  DeviceVec<float> dl2(l);
  cuda::launch_argmax(dl2.get(), int64_t(l.size()), st.get(), nullptr, 16);
  EXPECT_EQ(st.download()[0].argmax, 128255);
}

TEST(CudaErrors, OutOfMemorySaysHowMuchWasAskedAndFree) {
  P64_REQUIRE_CUDA_DEVICE();
  try {
    cuda::device_alloc(size_t(1) << 50, "a test of a petabyte");
    FAIL() << "a petabyte allocation succeeded";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
    EXPECT_NE(m.find("asked for"), std::string::npos) << m;
    EXPECT_NE(m.find("free of"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace p64
