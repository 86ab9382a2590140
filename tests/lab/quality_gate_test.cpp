#include "engine/lab/quality_gate.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "lab/toy_backend.h"

namespace p64 {
namespace {

std::vector<float> random_rows(int rows, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 3.0f);
  std::vector<float> v(static_cast<size_t>(rows) * vocab);
  for (float& x : v) x = n(rng);
  return v;
}

TEST(QualityGate, IdenticalRowsPass) {
  auto ref = random_rows(8, 50, 1);
  QualityReport r = compare_logits(ref, ref, 50);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.positions, 8);
  EXPECT_EQ(r.compared_positions, 8);
  EXPECT_DOUBLE_EQ(r.top1_agreement, 1.0);
  EXPECT_EQ(r.rms_rel_error, 0.0);
  EXPECT_EQ(r.max_kl, 0.0);
}

TEST(QualityGate, SmallDiffuseErrorPassesLargeFails) {
  auto ref = random_rows(16, 200, 2);
  auto noise = random_rows(16, 200, 3);
  std::vector<float> small(ref), big(ref);
  for (size_t i = 0; i < ref.size(); ++i) {
    small[i] += 1e-4f * noise[i];  // rms rel ~1e-4
    big[i] += 0.2f * noise[i];     // rms rel ~0.2
  }
  QualityReport ok = compare_logits(ref, small, 200);
  EXPECT_TRUE(ok.pass) << ok.summary();
  EXPECT_NEAR(ok.rms_rel_error, 1e-4, 5e-5);
  QualityReport bad = compare_logits(ref, big, 200);
  EXPECT_FALSE(bad.pass);
  EXPECT_NEAR(bad.rms_rel_error, 0.2, 0.05);
  EXPECT_NE(bad.failure.find("rms_rel_error"), std::string::npos) << bad.failure;
  EXPECT_GT(bad.mean_kl, ok.mean_kl);
}

TEST(QualityGate, NearTiesAreNotCountedAsDisagreement) {
  // Row 0: a near-tie between ids 3 and 4 (margin 1e-5 of a range of 10); the candidate
  // picks the other one. Row 1: a clear winner the candidate keeps.
  std::vector<float> ref(20, 0.0f), cand(20, 0.0f);
  ref[3] = 10.0f;
  ref[4] = 10.0f - 1e-4f;
  cand[3] = 10.0f - 1e-4f;
  cand[4] = 10.0f;
  ref[10 + 7] = 5.0f;
  cand[10 + 7] = 5.0f;
  QualityReport r = compare_logits(ref, cand, 10);
  EXPECT_EQ(r.positions, 2);
  EXPECT_EQ(r.compared_positions, 1);
  EXPECT_DOUBLE_EQ(r.top1_agreement, 1.0);
  EXPECT_TRUE(r.pass) << r.summary();
}

TEST(QualityGate, ArgmaxFlipOnClearPositionFails) {
  std::vector<float> ref(10, 0.0f), cand(10, 0.0f);
  ref[2] = 4.0f;
  cand[5] = 4.0f;
  QualityReport r = compare_logits(ref, cand, 10);
  EXPECT_EQ(r.compared_positions, 1);
  EXPECT_DOUBLE_EQ(r.top1_agreement, 0.0);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.failure.find("top1_agreement"), std::string::npos);
}

TEST(QualityGate, KnownKlValue) {
  // Two logits: p = softmax(0, 0) = (1/2, 1/2), q = softmax(0, ln 3) = (1/4, 3/4).
  // KL(p||q) = 1/2 ln 2 + 1/2 ln(2/3).
  std::vector<float> ref{0.0f, 0.0f}, cand{0.0f, static_cast<float>(std::log(3.0))};
  QualityReport r = compare_logits(ref, cand, 2);
  EXPECT_NEAR(r.mean_kl, 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-6);
}

TEST(QualityGate, NanFailsAndShapeMismatchThrows) {
  std::vector<float> ref{1.0f, 2.0f, 3.0f}, cand{1.0f, NAN, 3.0f};
  QualityReport r = compare_logits(ref, cand, 3);
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(r.finite);
  std::vector<float> short_row{1.0f, 2.0f};
  EXPECT_THROW(compare_logits(ref, short_row, 3), Error);
  EXPECT_THROW(compare_logits(ref, ref, 2), Error);
}

TEST(QualityGate, TeacherForcedOnToyBackends) {
  auto model = test::make_toy_model();
  test::ToyBackend a, b, noisy;
  BackendOptions opts;
  a.load(model, opts);
  b.load(model, opts);
  BackendOptions noise_opts;
  noise_opts.switches["logit_noise"] = "0.5";
  noisy.load(model, noise_opts);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 24; ++i) tokens.push_back((i * 37 + 5) % 96);
  QualityReport same = teacher_forced_compare(a, b, tokens);
  EXPECT_TRUE(same.pass) << same.summary();
  EXPECT_EQ(same.positions, 24);
  EXPECT_EQ(same.rms_rel_error, 0.0);
  QualityReport diff = teacher_forced_compare(a, noisy, tokens);
  EXPECT_FALSE(diff.pass) << diff.summary();
  EXPECT_GT(diff.rms_rel_error, 1e-2);
}

// greedy_forced_compare feeds the reference's own argmax: the same report as teacher forcing on
// that greedy stream made by hand, and not the report of another stream.
TEST(QualityGate, GreedyForcedIsTeacherForcedOnTheReferenceGreedyStream) {
  auto model = test::make_toy_model();
  test::ToyBackend a, noisy;
  BackendOptions opts;
  a.load(model, opts);
  BackendOptions noise_opts;
  noise_opts.switches["logit_noise"] = "0.05";
  noisy.load(model, noise_opts);
  std::vector<int32_t> stream{3};
  while (stream.size() < 20) {
    std::span<const float> row = a.decode_logits(stream.back(), static_cast<int32_t>(stream.size() - 1));
    stream.push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  const QualityReport by_hand = teacher_forced_compare(a, noisy, stream);
  const QualityReport greedy = greedy_forced_compare(a, noisy, 3, stream.size());
  EXPECT_EQ(greedy.positions, 20);
  EXPECT_EQ(greedy.rms_rel_error, by_hand.rms_rel_error);
  EXPECT_EQ(greedy.mean_kl, by_hand.mean_kl);
  EXPECT_EQ(greedy.top1_agreement, by_hand.top1_agreement);
  std::vector<int32_t> other = stream;
  other[5] = (other[5] + 1) % 96;
  EXPECT_NE(teacher_forced_compare(a, noisy, other).rms_rel_error, greedy.rms_rel_error);
}

}  // namespace
}  // namespace p64
