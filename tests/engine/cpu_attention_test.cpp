// The AVX-512 attention of one head against the portable one, on a GQA-shaped KV cache.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "engine/quant/dot.h"
#include "engine/runtime/cpu_ops.h"

namespace p64 {
namespace {

TEST(CpuAttention, Avx512HeadMatchesPortableHead) {
  if (!dot::isa_supported(dot::Isa::Avx512)) GTEST_SKIP() << "this CPU has no AVX-512";
  std::mt19937 rng(4);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int head_dim : {16, 64, 128}) {
    const int64_t kv_dim = 3 * head_dim, kv_off = head_dim;  // the second of three KV heads
    for (int32_t n_pos : {1, 7, 90}) {
      std::vector<float> q(head_dim), k(n_pos * kv_dim), v(n_pos * kv_dim);
      for (auto* vec : {&q, &k, &v})
        for (float& x : *vec) x = g(rng);
      std::vector<float> s1(n_pos), s2(n_pos), o1(head_dim), o2(head_dim, -1.0f);
      cpu::attend_head_f32(q.data(), k.data(), v.data(), kv_dim, kv_off, head_dim, n_pos, s1.data(), o1.data());
      ASSERT_TRUE(cpu::attend_head_f32_avx512(q.data(), k.data(), v.data(), kv_dim, kv_off, head_dim, n_pos, s2.data(),
                                              o2.data()));
      for (int i = 0; i < head_dim; ++i)
        EXPECT_NEAR(o2[i], o1[i], 1e-5f * (1.0f + std::fabs(o1[i]))) << "head_dim " << head_dim << " n_pos " << n_pos;
    }
  }
  std::vector<float> q(24), kv(48), s(2), o(24);
  EXPECT_FALSE(cpu::attend_head_f32_avx512(q.data(), kv.data(), kv.data(), 24, 0, 24, 2, s.data(), o.data()));
}

}  // namespace
}  // namespace p64
