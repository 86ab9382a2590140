// The AVX-512 attention of a group of queries against the portable one-head attention, on a
// GQA-shaped KV cache in fp32 and in fp16, plain and with a sliding window, a scale that is not
// 1/sqrt(head_dim) and soft-capped scores (gemma); and the portable head against the formula.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_ops.h"
#include "engine/common/cpu_isa.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

// Each query of a group (its own causal length) matches the portable head, and gets the same
// bits as when it is computed alone.
TEST(CpuAttention, Avx512GroupMatchesPortableHeads) {
  if (!isa_supported(Isa::Avx512)) GTEST_SKIP() << "this CPU has no AVX-512";
  std::mt19937 rng(4);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (const cpu::AttentionScores how : {cpu::AttentionScores{}, cpu::AttentionScores{0.3f, 2.0f, 17}})
  for (int head_dim : {16, 64, 128, 256}) {
    cpu::AttentionScores shape = how;  // the plain case scales by 1/sqrt(head_dim)
    if (how.window == 0) shape.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    const int64_t kv_dim = 3 * head_dim, kv_off = head_dim;  // the second of three KV heads
    for (int nq : {1, 3, 8}) {
      const int32_t longest = 90;
      std::vector<float> q(static_cast<size_t>(nq * head_dim)), k(longest * kv_dim), v(longest * kv_dim);
      for (auto* vec : {&q, &k, &v})
        for (float& x : *vec) x = g(rng);
      std::vector<const float*> qs(nq);
      std::vector<float*> outs(nq);
      std::vector<int32_t> n_pos(nq);
      std::vector<float> out(static_cast<size_t>(nq * head_dim), -1.0f), scores(static_cast<size_t>(nq * longest));
      for (int i = 0; i < nq; ++i) {
        qs[i] = &q[i * head_dim];
        outs[i] = &out[i * head_dim];
        n_pos[i] = longest - 11 * i;  // 90, 79, ..., 13: causal lengths of consecutive tokens differ
      }
      ASSERT_TRUE(cpu::attend_group_f32_avx512(qs.data(), outs.data(), n_pos.data(), nq, k.data(), v.data(), kv_dim,
                                               kv_off, head_dim, shape, scores.data(), longest));
      for (int i = 0; i < nq; ++i) {
        std::vector<float> s(n_pos[i]), ref(head_dim), alone(head_dim);
        cpu::attend_head_f32(qs[i], k.data(), v.data(), kv_dim, kv_off, head_dim, n_pos[i], shape, s.data(), ref.data());
        for (int d = 0; d < head_dim; ++d)
          EXPECT_NEAR(outs[i][d], ref[d], 1e-5f * (1.0f + std::fabs(ref[d]))) << "head_dim " << head_dim << " query " << i;
        float* one_out = alone.data();
        ASSERT_TRUE(cpu::attend_group_f32_avx512(&qs[i], &one_out, &n_pos[i], 1, k.data(), v.data(), kv_dim, kv_off,
                                                 head_dim, shape, s.data(), n_pos[i]));
        for (int d = 0; d < head_dim; ++d) ASSERT_EQ(alone[d], outs[i][d]) << "query " << i << " alone vs in a group";
      }
      // The fp16 cache: the same against the portable fp16 head.
      std::vector<uint16_t> k16(k.size()), v16(v.size());
      for (size_t e = 0; e < k.size(); ++e) k16[e] = fp32_to_fp16(k[e]), v16[e] = fp32_to_fp16(v[e]);
      ASSERT_TRUE(cpu::attend_group_f16_avx512(qs.data(), outs.data(), n_pos.data(), nq, k16.data(), v16.data(), kv_dim,
                                               kv_off, head_dim, shape, scores.data(), longest));
      for (int i = 0; i < nq; ++i) {
        std::vector<float> s(n_pos[i]), ref(head_dim);
        cpu::attend_head_f16(qs[i], k16.data(), v16.data(), kv_dim, kv_off, head_dim, n_pos[i], shape, s.data(), ref.data());
        for (int d = 0; d < head_dim; ++d)
          EXPECT_NEAR(outs[i][d], ref[d], 1e-5f * (1.0f + std::fabs(ref[d]))) << "fp16 head_dim " << head_dim << " query " << i;
      }
    }
  }
  std::vector<float> q(24), kv(48), s(2), o(24);
  const float* qp = q.data();
  float* op = o.data();
  const int32_t two = 2;
  EXPECT_FALSE(cpu::attend_group_f32_avx512(&qp, &op, &two, 1, kv.data(), kv.data(), 24, 0, 24, {}, s.data(), 2));
}

// The portable head against softmax(cap tanh(q.k scale / cap)) V written out in double, over
// the window's positions only: a query at causal length 30 with a window of 7 sees 23..29.
TEST(CpuAttention, PortableHeadTakesWindowScaleAndSoftcap) {
  std::mt19937 rng(9);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int head_dim = 32;
  const int32_t n_pos = 30;
  std::vector<float> q(head_dim), k(n_pos * head_dim), v(n_pos * head_dim);
  for (auto* vec : {&q, &k, &v})
    for (float& x : *vec) x = g(rng);
  for (const cpu::AttentionScores how : {cpu::AttentionScores{0.25f, 0.0f, 0}, cpu::AttentionScores{0.25f, 1.5f, 0},
                                         cpu::AttentionScores{0.25f, 1.5f, 7}, cpu::AttentionScores{0.25f, 0.0f, 40}}) {
    const int32_t first = how.window > 0 && n_pos > how.window ? n_pos - how.window : 0;
    std::vector<double> w(n_pos, 0.0), want(head_dim, 0.0);
    double mx = -1e300, sum = 0;
    for (int32_t p = first; p < n_pos; ++p) {
      double s = 0;
      for (int i = 0; i < head_dim; ++i) s += double(q[i]) * k[p * head_dim + i];
      s *= how.scale;
      if (how.softcap > 0) s = how.softcap * std::tanh(s / how.softcap);
      mx = std::max(mx, w[p] = s);
    }
    for (int32_t p = first; p < n_pos; ++p) sum += (w[p] = std::exp(w[p] - mx));
    for (int32_t p = first; p < n_pos; ++p)
      for (int i = 0; i < head_dim; ++i) want[i] += w[p] / sum * v[p * head_dim + i];
    std::vector<float> scores(n_pos), out(head_dim);
    cpu::attend_head_f32(q.data(), k.data(), v.data(), head_dim, 0, head_dim, n_pos, how, scores.data(), out.data());
    for (int i = 0; i < head_dim; ++i)
      EXPECT_NEAR(out[i], want[i], 1e-5) << "window " << how.window << " softcap " << how.softcap << " element " << i;
  }
}

}  // namespace
}  // namespace p64
