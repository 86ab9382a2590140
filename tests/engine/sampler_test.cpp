#include <cmath>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "engine/model/sampler.h"

using namespace p64;

namespace {

std::vector<float> random_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Logits whose softmax at temperature 1 is exactly `probs`.
std::vector<float> logits_of(std::initializer_list<float> probs) {
  std::vector<float> v;
  for (float p : probs) v.push_back(std::log(p));
  return v;
}

}  // namespace

TEST(Sampler, GreedyIsArgmax) {
  SamplerSettings s;
  s.temperature = 0.0f;
  Sampler sampler(s);
  EXPECT_TRUE(sampler.greedy());
  for (uint32_t i = 0; i < 20; ++i) {
    const auto l = random_logits(1000, i);
    const auto best = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    const std::vector<int32_t> recent = {best, best, best};  // greedy ignores the penalty
    EXPECT_EQ(sampler.sample(l, recent), best);
  }
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplerSettings s;
  s.temperature = 1.5f;
  s.top_k = 1;
  s.repeat_penalty = 1.0f;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    s.seed = seed;
    Sampler sampler(s);
    EXPECT_FALSE(sampler.greedy());
    const auto l = random_logits(500, static_cast<uint32_t>(seed) + 100);
    EXPECT_EQ(sampler.sample(l, {}), argmax(l));
  }
}

TEST(Sampler, SeedReproducesAndDifferentSeedsDiffer) {
  SamplerSettings s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.0f;
  const std::vector<float> flat(1000, 0.0f);
  auto draw = [&](uint64_t seed) {
    s.seed = seed;
    Sampler sampler(s);
    std::vector<int32_t> out;
    for (int i = 0; i < 50; ++i) out.push_back(sampler.sample(flat, out));
    return out;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
  Sampler a(s);
  a.reseed(7);
  s.seed = 7;
  Sampler b(s);
  EXPECT_EQ(a.sample(flat, {}), b.sample(flat, {}));
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  SamplerSettings s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 0.7f;  // 0.5 + 0.3 reaches it: ids 0 and 1 only
  s.min_p = 0.0f;
  s.repeat_penalty = 1.0f;
  s.seed = 1;
  Sampler sampler(s);
  const auto l = logits_of({0.5f, 0.3f, 0.15f, 0.05f});
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(sampler.sample(l, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, MinPDropsTokensBelowTheFloor) {
  SamplerSettings s;
  s.temperature = 1.0f;
  s.top_k = 0;
  s.top_p = 1.0f;
  s.min_p = 0.2f;  // floor 0.2 * 0.5 = 0.1: id 3 (0.05) goes, id 2 (0.15) stays
  s.repeat_penalty = 1.0f;
  s.seed = 2;
  Sampler sampler(s);
  const auto l = logits_of({0.5f, 0.3f, 0.15f, 0.05f});
  std::set<int32_t> seen;
  for (int i = 0; i < 3000; ++i) seen.insert(sampler.sample(l, {}));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2}));
}

TEST(Sampler, RepeatPenaltyPushesRecentTokensDown) {
  SamplerSettings s;
  s.temperature = 1.0f;
  s.top_k = 1;
  s.repeat_penalty = 1.3f;
  s.repeat_last_n = 4;
  Sampler sampler(s);
  const std::vector<float> l = {2.0f, 1.8f, -1.0f};
  EXPECT_EQ(sampler.sample(l, {}), 0);
  const std::vector<int32_t> recent0 = {0};
  EXPECT_EQ(sampler.sample(l, recent0), 1);  // 2.0 / 1.3 < 1.8
  const std::vector<int32_t> old = {0, 2, 2, 2, 2};  // id 0 is older than the last 4
  EXPECT_EQ(sampler.sample(l, old), 0);
}
