#include "engine/lab/verdict.h"

#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"
#include "engine/lab/ab.h"
#include "engine/lab/store.h"
#include "lab/toy_backend.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

VerdictOutcome judge(std::vector<double> a, std::vector<double> b, bool quality = true,
                     std::optional<Verdict> previous = std::nullopt) {
  VerdictInput in;
  in.a_tok_s = a;
  in.b_tok_s = b;
  in.quality_pass = quality;
  in.quality_failure = quality ? "" : "top1_agreement 0.9 < 0.99";
  in.previous = previous;
  return decide_verdict(in);
}

TEST(Verdict, RegressionBeyondTwoPercentIsRejected) {
  // B 3% slower with tight spreads: rejected even though it is "only" 3%.
  auto o = judge({100, 101, 100.5}, {97, 98, 97.5});
  EXPECT_EQ(o.verdict, Verdict::Rejected) << o.reason;
  EXPECT_NEAR(o.ratio_median, 97.5 / 100.5, 1e-12);
  EXPECT_NE(o.reason.find("regression"), std::string::npos);
  // The plan's own dual_mr capture: ~9.05 -> ~8.75 (-3.3%).
  EXPECT_EQ(judge({9.0, 9.1}, {8.74, 8.76}).verdict, Verdict::Rejected);
}

TEST(Verdict, QualityFailureRejectsEvenAFasterVariant) {
  auto o = judge({100, 101}, {150, 151}, /*quality=*/false);
  EXPECT_EQ(o.verdict, Verdict::Rejected);
  EXPECT_NE(o.reason.find("quality"), std::string::npos);
}

TEST(Verdict, OverlappingSpreadsAreInconclusive) {
  auto o = judge({100, 104, 102}, {103, 101, 105});  // +1% but within the spread
  EXPECT_EQ(o.verdict, Verdict::Inconclusive) << o.reason;
  // A 1.5% regression within the 2% limit is inconclusive, not rejected.
  EXPECT_EQ(judge({100, 100.2}, {98.5, 98.6}).verdict, Verdict::Inconclusive);
}

TEST(Verdict, FirstClearWinWaitsSecondConsecutiveWinPromotes) {
  auto first = judge({100, 101, 100}, {110, 111, 109});
  EXPECT_EQ(first.verdict, Verdict::Win) << first.reason;
  EXPECT_NEAR(first.ratio_min, 109.0 / 100, 1e-12);
  EXPECT_NEAR(first.ratio_max, 111.0 / 101 > 110.0 / 100 ? 111.0 / 101 : 110.0 / 100, 1e-12);
  EXPECT_EQ(judge({100, 101}, {110, 111}, true, Verdict::Win).verdict, Verdict::Promoted);
  EXPECT_EQ(judge({100, 101}, {110, 111}, true, Verdict::Promoted).verdict, Verdict::Promoted);
  // Not consecutive: the last verdict was inconclusive or a rejection.
  EXPECT_EQ(judge({100, 101}, {110, 111}, true, Verdict::Inconclusive).verdict, Verdict::Win);
  EXPECT_EQ(judge({100, 101}, {110, 111}, true, Verdict::Rejected).verdict, Verdict::Win);
}

TEST(Verdict, FewerThanTwoRunsIsAnError) {
  EXPECT_THROW(judge({100}, {110, 111}), Error);
  EXPECT_THROW(judge({100, 0}, {110, 111}), Error);
}

AbResult constructed(std::vector<double> a, std::vector<double> b) {
  AbResult r;
  r.switch_name = "fast";
  r.a.config = LabConfig::parse("backend=toy");
  r.b.config = LabConfig::parse("backend=toy,opt.fast=1");
  r.a.backend = r.b.backend = "toy";
  r.b.passport.device.name = r.a.passport.device.name = "toy device";
  for (size_t i = 0; i < a.size(); ++i) {
    SampleRecord s;
    s.rep = static_cast<int>(i);
    s.side = "a";
    s.decode_tok_s = a[i];
    r.a.samples.push_back(s);
    s.side = "b";
    s.decode_tok_s = b[i];
    r.b.samples.push_back(s);
  }
  r.b_vs_a.pass = true;
  r.b_vs_a.positions = 8;
  return r;
}

TEST(Verdict, StoredHistoryPromotesAfterTwoConsecutiveWinsAndRecordsEvidence) {
  test::TempDir dir;
  Store::Options o;
  o.import_plan_history = false;
  auto store = Store::open((dir / "lab.db").string(), o);
  auto model = test::make_toy_model();
  test::ToyBackend toy;
  store->sync_switches("toy", toy.switches());

  auto s1 = judge_and_store_ab(*store, constructed({100, 101}, {120, 121}), *model, "toy");
  EXPECT_EQ(s1.outcome.verdict, Verdict::Win);
  EXPECT_FALSE(s1.previous);
  auto s2 = judge_and_store_ab(*store, constructed({100, 102}, {99, 103}), *model, "toy");
  EXPECT_EQ(s2.outcome.verdict, Verdict::Inconclusive);
  auto s3 = judge_and_store_ab(*store, constructed({100, 101}, {120, 121}), *model, "toy");
  EXPECT_EQ(s3.outcome.verdict, Verdict::Win) << "an inconclusive run breaks the streak";
  auto s4 = judge_and_store_ab(*store, constructed({100, 101}, {125, 126}), *model, "toy");
  EXPECT_EQ(s4.previous, Verdict::Win);
  EXPECT_EQ(s4.outcome.verdict, Verdict::Promoted);

  auto opt = store->find_optimisations("fast").at(0);
  EXPECT_EQ(opt.status, OptStatus::Default);
  auto hist = store->optimisation_history(opt.id);
  ASSERT_EQ(hist.size(), 5u);  // registered + four verdicts
  EXPECT_EQ(hist.back().evidence_run_id, s4.run_id);
  EXPECT_EQ(hist.back().new_status, OptStatus::Default);
  EXPECT_NE(hist.back().evidence.find("A/B run"), std::string::npos);
  auto cmp = store->comparison_for_run(s4.run_id);
  ASSERT_TRUE(cmp);
  EXPECT_EQ(cmp->verdict, Verdict::Promoted);
  EXPECT_EQ(store->samples(s4.run_id).size(), 4u);

  auto s5 = judge_and_store_ab(*store, constructed({100, 101}, {90, 91}), *model, "toy");
  EXPECT_EQ(s5.outcome.verdict, Verdict::Rejected);
  EXPECT_EQ(store->find_optimisations("fast").at(0).status, OptStatus::Rejected);
}

}  // namespace
}  // namespace p64
