// The A/B quality gate judges each side against the reference, not B against A (A may be an
// approximation), and an A/B whose B turns a switch off never lowers that switch's status.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "engine/decode_test_models.h"
#include "engine/lab/ab.h"
#include "engine/lab/store.h"
#include "lab/toy_backend.h"
#include "support/store_checks.h"

namespace p64 {
namespace {

// The toy backend as its own reference: logit_noise is a deliberately worse path.
AbParams toy_params() {
  test::register_toy_backend("toy-gate");
  AbParams p = test::quick_ab_params(12);
  p.reference = LabConfig::parse("backend=toy-gate");
  return p;
}


TEST(AbReferenceGate, AnExactBIsNotBlamedForAnApproximateA) {
  auto model = test::make_toy_model();
  // B's logit_noise=0 is the toy's default, so B would be the reference itself: a reference with
  // a delay (the same logits) keeps both sides judged against a reference run apart.
  AbParams p = toy_params();
  p.reference = LabConfig::parse("backend=toy-gate,opt.delay_us=1");
  const AbResult r = run_ab(LabConfig::parse("backend=toy-gate,opt.logit_noise=0.5"),
                            LabConfig::parse("backend=toy-gate,opt.logit_noise=0"), model, p);
  EXPECT_FALSE(r.b_vs_a.pass) << "the noisy A and the exact B should differ: " << r.b_vs_a.summary();
  ASSERT_TRUE(r.a_vs_reference && r.b_vs_reference);
  EXPECT_FALSE(r.a_vs_reference->pass) << r.a_vs_reference->summary();
  EXPECT_TRUE(r.b_vs_reference->pass) << r.b_vs_reference->summary();
  EXPECT_TRUE(r.quality_pass()) << r.quality_failure();
  const VerdictOutcome o = judge_ab(r, std::nullopt);
  EXPECT_EQ(o.reason.find("quality"), std::string::npos) << o.reason;
}

TEST(AbReferenceGate, AWorseBIsRejectedOnQualityAgainstTheReference) {
  auto model = test::make_toy_model();
  const AbResult r = run_ab(LabConfig::parse("backend=toy-gate,opt.logit_noise=0"),
                            LabConfig::parse("backend=toy-gate,opt.logit_noise=0.5"), model, toy_params());
  ASSERT_TRUE(r.b_vs_reference);
  EXPECT_FALSE(r.b_vs_reference->pass);
  EXPECT_FALSE(r.quality_pass());
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  test::ToyBackend toy("toy-gate");
  store->sync_switches("toy-gate", toy.switches());
  const StoredAb s = judge_and_store_ab(*store, r, *model, "toy");
  EXPECT_EQ(s.outcome.verdict, Verdict::Rejected);
  EXPECT_NE(s.outcome.reason.find("quality gate failed: B vs reference"), std::string::npos) << s.outcome.reason;
  EXPECT_EQ(s.outcome.reason.find("A fails it too"), std::string::npos) << s.outcome.reason;
  EXPECT_EQ(store->find_optimisations("logit_noise").at(0).status, OptStatus::Rejected);
}

TEST(AbReferenceGate, ABThatFailsLikeItsBaselineSaysSo) {
  auto model = test::make_toy_model();
  const AbResult r = run_ab(LabConfig::parse("backend=toy-gate,opt.logit_noise=0.5"),
                            LabConfig::parse("backend=toy-gate,opt.logit_noise=0.6"), model, toy_params());
  EXPECT_FALSE(r.quality_pass());
  EXPECT_NE(r.quality_failure().find("A fails it too"), std::string::npos) << r.quality_failure();
}

// The README's example, through the CLI: B is the exact float path, so it passes the gate
// whatever A's int8 kernels make of a random-weight model, and int8_activations stays default.
TEST(AbReferenceGate, ReadmeExampleKeepsInt8ActivationsDefault) {
  test::TempDir dir;
  const std::string gguf = (dir / "model.gguf").string(), p64 = (dir / "model.p64").string(),
                    db = (dir / "lab.db").string();
  ASSERT_EQ(test::run_p64("synth --preset tiny-k --quant Q8_0 -q -o " + gguf).status, 0);
  ASSERT_EQ(test::run_p64("convert -q " + gguf + " " + p64).status, 0);
  const test::CliRun r = test::run_p64("ab " + p64 +
                                       " --a backend=cpu --b backend=cpu,opt.int8_activations=0 --runs 2 --warmup 0"
                                       " --tokens 8 --prompt-tokens 8 --quality-tokens 24 --json --db " + db);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string reason = j["reason"];
  EXPECT_TRUE(j["quality"]["pass"].get<bool>()) << j["quality"].dump(2);
  EXPECT_EQ(j["quality"]["reference"], "B (backend=cpu,opt.int8_activations=0)");  // B is the exact path itself
  EXPECT_TRUE(j["quality"].contains("a_vs_reference")) << j["quality"].dump(2);
  EXPECT_EQ(reason.find("quality"), std::string::npos) << reason;
  EXPECT_TRUE(j["b_turns_switch_off"].get<bool>());
  EXPECT_NE(reason.find("B (int8_activations=0)"), std::string::npos) << reason;
  std::cout << "[ readme a/b ] " << j["verdict"].get<std::string>() << " - " << reason << "\n"
            << "               B vs A: " << j["quality"]["b_vs_a"]["summary"].get<std::string>() << "\n";

  auto store = Store::open(db);
  for (const auto& o : store->find_optimisations("int8_activations"))
    if (o.backend == "cpu") {
      EXPECT_EQ(o.status, OptStatus::Default);
      EXPECT_EQ(store->optimisation_history(o.id).back().new_status, OptStatus::Default);
    }
  const test::CliRun show = test::run_p64("opt show int8_activations --db " + db);
  EXPECT_NE(show.out.find("int8_activations [cpu] status default"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("-> rejected"), std::string::npos) << show.out;
}

// Judged without timing noise: whatever B's speed, turning a switch off leaves its status.
TEST(AbReferenceGate, TurningASwitchOffNeverChangesItsStatus) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  auto model = test::make_toy_model();
  const std::vector<SwitchInfo> switches = {bool_switch("fast", "test", true, "default")};
  store->sync_switches("toy", switches);
  auto side = [](const char* s, std::vector<double> v) {
    AbSide a;
    for (size_t i = 0; i < v.size(); ++i) {
      SampleRecord x;
      x.rep = static_cast<int>(i);
      x.side = s;
      x.decode_tok_s = v[i];
      a.samples.push_back(x);
    }
    a.backend = "toy";
    a.passport.device.name = "toy device";
    return a;
  };
  for (const auto& [b_speed, verdict] : {std::pair{std::vector<double>{80, 81, 80.5, 79.5, 80.2}, Verdict::Rejected},
                                         std::pair{std::vector<double>{120, 121, 120.5, 119.5, 120.2}, Verdict::Win},
                                         std::pair{std::vector<double>{130, 131, 130.5, 129.5, 130.2}, Verdict::Win}}) {
    AbResult r;
    r.switch_name = "fast";
    r.switch_a_value = "1";
    r.switch_b_value = "0";
    r.a = side("a", {100, 101, 100.5, 99.5, 100.2});
    r.b = side("b", b_speed);
    r.a.config = LabConfig::parse("backend=toy");
    r.b.config = LabConfig::parse("backend=toy,opt.fast=0");
    r.b_vs_a.pass = true;
    ASSERT_TRUE(r.b_turns_switch_off());
    const StoredAb s = judge_and_store_ab(*store, r, *model, "toy");
    EXPECT_EQ(s.outcome.verdict, verdict) << s.outcome.reason;  // two wins in a row are not promoted
    EXPECT_NE(s.outcome.reason.find("B (fast=0)"), std::string::npos) << s.outcome.reason;
    if (verdict == Verdict::Rejected)
      EXPECT_NE(s.outcome.reason.find("is not faster: fast stays on"), std::string::npos) << s.outcome.reason;
    EXPECT_EQ(store->find_optimisations("fast").at(0).status, OptStatus::Default) << s.outcome.reason;
  }
}

}  // namespace
}  // namespace p64
