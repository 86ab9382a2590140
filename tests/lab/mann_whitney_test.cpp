// The Mann-Whitney U test the verdicts rest on, against tables enumerated by hand (every
// ordering of the pooled runs) and the textbook normal approximation with ties.
#include "engine/lab/mann_whitney.h"

#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"

namespace p64 {
namespace {

TEST(MannWhitney, ExactPValuesMatchTheEnumeratedDistribution) {
  const std::vector<double> odd{1, 3, 5, 7, 9}, even{2, 4, 6, 8, 10};
  MannWhitney r = mann_whitney(odd, even);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 15);
  EXPECT_NEAR(r.p_two_sided, 174.0 / 252, 1e-12);  // P(U >= 15) = 87/252, both tails
  // Every B above every A: the one most extreme ordering of 252, in either tail.
  r = mann_whitney(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(r.u, 25);
  EXPECT_NEAR(r.p_two_sided, 2.0 / 252, 1e-12);
  EXPECT_NEAR(mann_whitney(std::vector<double>{6, 7, 8, 9, 10}, std::vector<double>{1, 2, 3, 4, 5}).p_two_sided,
              2.0 / 252, 1e-12);
  // Unequal sides (7 and 6 runs): 2 x 300 / 17160 orderings.
  r = mann_whitney(std::vector<double>{1, 2, 3, 4, 5, 6, 7}, std::vector<double>{3.5, 5.5, 7.5, 8, 9, 10});
  EXPECT_DOUBLE_EQ(r.u, 36);
  EXPECT_NEAR(r.p_two_sided, 0.03496503496503497, 1e-12);
  // Three a side can never reach 0.05: the best is 2 / 20.
  EXPECT_NEAR(mann_whitney(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}).p_two_sided, 0.1, 1e-12);
}

TEST(MannWhitney, TiesUseTheCorrectedNormalApproximation) {
  const MannWhitney r = mann_whitney(std::vector<double>{1, 1, 2, 2}, std::vector<double>{2, 3, 3, 4});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 15);  // 14 pairs above, two ties at 2 counted a half
  EXPECT_NEAR(r.p_two_sided, 0.05150833604880689, 1e-9);
  // Both sides the same value throughout: no evidence either way.
  EXPECT_DOUBLE_EQ(mann_whitney(std::vector<double>{5, 5}, std::vector<double>{5, 5}).p_two_sided, 1.0);
  EXPECT_THROW(mann_whitney(std::vector<double>{}, std::vector<double>{1}), Error);
}

TEST(MannWhitney, RatioIntervalNeedsFourRunsASide) {
  const std::vector<double> a3{100, 101, 102}, b3{110, 111, 112};
  EXPECT_FALSE(ratio_interval(a3, b3, 0.05).bounded);
  const std::vector<double> a4{100, 101, 102, 103}, b4{110, 111, 112, 113};
  const RatioInterval ci = ratio_interval(a4, b4, 0.05);
  ASSERT_TRUE(ci.bounded);
  EXPECT_DOUBLE_EQ(ci.low, 110.0 / 103);  // with 4 a side only the extreme pairwise ratios bound it
  EXPECT_DOUBLE_EQ(ci.high, 113.0 / 100);
  EXPECT_EQ(min_runs_for_alpha(0.05), 4);
  EXPECT_EQ(min_runs_for_alpha(0.01), 5);
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
}

}  // namespace
}  // namespace p64
