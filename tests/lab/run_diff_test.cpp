// p64 runs diff: two stored timeline runs op by op (ms per decode step, delta, ratio) with each
// run's headline tok/s; an A/B run's two sides; clear errors for what cannot be diffed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/decode_test_models.h"
#include "engine/lab/run_diff.h"
#include "engine/lab/store.h"
#include "support/op_spans.h"
#include "support/store_checks.h"

namespace p64 {
namespace {


SampleRecord sample(double tok_s, const char* side = "") {
  SampleRecord s;
  s.decode_tok_s = tok_s;
  s.side = side;
  return s;
}

// Two decode steps over two layers: qkv `qkv_us` a span, sdpa 10 us, logits 20 us once a step;
// with `extra`, a swiglu the other run lacks.
int64_t timeline_run(Store& store, double qkv_us, double tok_s, bool extra = false) {
  RunBundle b;
  b.run.kind = RunKind::Timeline;
  b.run.backend = "cpu";
  for (int step = 0; step < 2; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      b.ops.push_back(test::op_span("qkv", OpGroup::Attn, layer, step, 0, qkv_us));
      b.ops.push_back(test::op_span("sdpa", OpGroup::Attn, layer, step, 0, 10));
      if (extra) b.ops.push_back(test::op_span("swiglu", OpGroup::Ffn, layer, step, 0, 5));
    }
    b.ops.push_back(test::op_span("logits", OpGroup::Logits, -1, step, 0, 20));
  }
  b.ops.push_back(test::op_span("qkv", OpGroup::Attn, 0, 0, 0, 999, 0, /*prefill=*/true));  // not a decode step
  b.samples.push_back(sample(tok_s));
  return store.write_run(std::move(b));
}

const OpDelta& row(const RunDiff& d, const std::string& name) {
  for (const auto& o : d.ops)
    if (o.name == name) return o;
  static const OpDelta none;
  ADD_FAILURE() << "no row " << name;
  return none;
}

TEST(RunDiff, TwoTimelineRunsOpByOp) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  int64_t a = 0, b = 0;
  {
    auto store = Store::open(db, test::without_plan_history());
    a = timeline_run(*store, 100, 50);
    b = timeline_run(*store, 50, 80, /*extra=*/true);
  }
  auto store = Store::open(db, test::without_plan_history());
  const RunDiff d = diff_runs(*store, a, b);
  EXPECT_EQ(d.a_steps, 2);
  EXPECT_EQ(d.b_steps, 2);
  // qkv: 2 layers x 100 us = 0.2 ms a step in A, 0.1 in B; the prefill span counts in neither.
  const OpDelta& qkv = row(d, "qkv");
  EXPECT_EQ(qkv.group, "ATTN");
  EXPECT_DOUBLE_EQ(qkv.a_ms, 0.2);
  EXPECT_DOUBLE_EQ(qkv.b_ms, 0.1);
  EXPECT_DOUBLE_EQ(qkv.delta_ms(), -0.1);
  EXPECT_DOUBLE_EQ(qkv.ratio(), 0.5);
  EXPECT_DOUBLE_EQ(row(d, "logits").ratio(), 1.0);
  const OpDelta& swiglu = row(d, "swiglu");
  EXPECT_FALSE(swiglu.in_a);
  EXPECT_TRUE(swiglu.in_b);
  EXPECT_DOUBLE_EQ(swiglu.b_ms, 0.01);
  EXPECT_EQ(d.ops.front().name, "qkv");  // most time first
  ASSERT_TRUE(d.total);
  EXPECT_DOUBLE_EQ(d.total->a_ms, 0.2 + 0.02 + 0.02);
  EXPECT_DOUBLE_EQ(d.total->b_ms, 0.1 + 0.02 + 0.01 + 0.02);
  ASSERT_FALSE(d.groups.empty());
  EXPECT_EQ(d.groups[0].name, "ATTN");  // RMS has no span in either: left out
  ASSERT_FALSE(d.figures.empty());
  EXPECT_EQ(d.figures[0].name, "decode tok/s");
  EXPECT_DOUBLE_EQ(d.figures[0].a, 50);
  EXPECT_DOUBLE_EQ(d.figures[0].b, 80);

  const test::CliRun cli = test::run_p64("runs diff " + std::to_string(a) + " " + std::to_string(b) + " --db " + db);
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_NE(cli.out.find("decode tok/s          50.00      80.00   1.600"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("qkv              ATTN        0.2000     0.1000    -0.1000   0.500"), std::string::npos)
      << cli.out;
  EXPECT_NE(cli.out.find("(only in B)"), std::string::npos) << cli.out;
  const test::CliRun json =
      test::run_p64("runs diff " + std::to_string(a) + " " + std::to_string(b) + " --json --db " + db);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["ops"].size(), 4u);
}

TEST(RunDiff, AbRunDiffsItsSidesAndWhatCannotBeDiffedIsNamed) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  int64_t timeline = 0, proxy = 0, ab = 0;
  {
    auto store = Store::open(db, test::without_plan_history());
    timeline = timeline_run(*store, 100, 50);
    RunBundle p;
    p.run.kind = RunKind::DecodeProxy;
    p.samples = {sample(40), sample(42)};
    proxy = store->write_run(std::move(p));
    RunBundle b;
    b.run.kind = RunKind::Ab;
    b.samples = {sample(40, "a"), sample(44, "a"), sample(60, "b"), sample(62, "b")};
    ComparisonRecord c;
    c.config_a = "backend=cpu";
    c.config_b = "backend=cpu,opt.kv_f16=1";
    c.ratio_median = 1.5;
    c.verdict = Verdict::Inconclusive;
    b.comparison = c;
    ab = store->write_run(std::move(b));
  }
  auto store = Store::open(db, test::without_plan_history());
  const RunDiff sides = diff_ab_sides(*store, ab);
  EXPECT_EQ(sides.b_label, "backend=cpu,opt.kv_f16=1 (B side of A/B run " + std::to_string(ab) + ")");
  ASSERT_FALSE(sides.figures.empty());
  EXPECT_DOUBLE_EQ(sides.figures[0].a, 42);
  EXPECT_DOUBLE_EQ(sides.figures[0].b, 61);
  EXPECT_TRUE(sides.ops.empty());
  ASSERT_TRUE(sides.verdict);
  EXPECT_EQ(sides.verdict->verdict, Verdict::Inconclusive);

  const std::string id = std::to_string(timeline), p = std::to_string(proxy), a = std::to_string(ab);
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {id + " 999", db + ": no run 999"},
      {id + " " + p, "run " + p + " (decode-proxy) has no op data: only timeline runs record per-op data"},
      {a + " " + id, "run " + a + " (ab) has no op data: an A/B run records no per-op data (`p64 runs diff " + a +
                         "` alone compares its two sides)"},
      {id, "run " + id + " is a timeline run, not an A/B: give two runs"},
  };
  for (const Case& c : cases) {
    const test::CliRun r = test::run_p64("runs diff " + c.args + " --db " + db);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_NE(r.err.find("p64: error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  const test::CliRun ok = test::run_p64("runs diff " + a + " --db " + db);
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("verdict: inconclusive, B/A 1.500"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace p64
