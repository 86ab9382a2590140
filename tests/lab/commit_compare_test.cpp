// p64 runs compare: decode speed between two builds from the store's decode-proxy runs, grouped by
// model, backend, device, configuration and tokens; a real slowdown flagged, noise not; groups
// only one build measured listed; unknown and ambiguous revisions named; the CLI's table, JSON
// and --check exit code.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/decode_test_models.h"
#include "engine/lab/commit_compare.h"
#include "engine/lab/store.h"
#include "support/store_checks.h"

namespace p64 {
namespace {

constexpr const char* kOld = "aaaa1111bbbb";
constexpr const char* kNew = "cccc2222dddd";


ModelRecord model(const char* path) {
  ModelRecord m;
  m.path = path;
  m.sha256 = std::string(64, path[1]);
  m.name = path + 1;
  return m;
}

// One decode-proxy run of `revision` with one sample per value of `tok_s`.
void run(Store& s, const char* revision, const char* path, std::vector<double> tok_s, const char* config = "backend=cpu",
         int prompt = 32, bool busy = false) {
  RunBundle b;
  b.run.summary_json = nlohmann::json{{"busy", busy}}.dump();
  b.run.kind = RunKind::DecodeProxy;
  b.run.backend = "cpu";
  b.run.device = "test cpu";
  b.run.config = config;
  b.run.git_revision = revision;
  b.model = model(path);
  for (size_t i = 0; i < tok_s.size(); ++i) {
    SampleRecord r;
    r.rep = static_cast<int32_t>(i);
    r.decode_tok_s = tok_s[i];
    r.prompt_tokens = prompt;
    r.decode_tokens = 64;
    b.samples.push_back(r);
  }
  s.write_run(std::move(b));
}

const CommitCompareRow& row_of(const CommitCompare& c, const std::string& model_part, const std::string& config = "backend=cpu") {
  for (const auto& r : c.rows)
    if (r.model.find(model_part) != std::string::npos && r.config == config) return r;
  static const CommitCompareRow none;
  ADD_FAILURE() << "no row for " << model_part << " " << config;
  return none;
}

struct Fixture {
  test::TempDir dir;
  std::string db = (dir / "lab.db").string();
  Fixture() {
    auto s = Store::open(db, test::without_plan_history());
    // /fast: the new build is 10% slower, clearly (two runs of 5 samples each side)
    run(*s, kOld, "/fast.p64", {100, 101, 99, 100, 102});
    run(*s, kOld, "/fast.p64", {100, 99, 101, 100, 100});
    run(*s, kNew, "/fast.p64", {90, 91, 89, 90, 90});
    run(*s, kNew, "/fast.p64", {91, 90, 89, 90, 92});
    // /noisy: the same speed within noise
    run(*s, kOld, "/noisy.p64", {100, 80, 120, 95, 110});
    run(*s, kNew, "/noisy.p64", {105, 85, 115, 90, 100});
    // /fast with threads=2: faster in the new build
    run(*s, kOld, "/fast.p64", {50, 51, 50, 49, 50}, "backend=cpu,threads=2");
    run(*s, kNew, "/fast.p64", {60, 61, 60, 59, 60}, "backend=cpu,threads=2", 32, /*busy=*/true);
    // measured by one build only, and at another depth
    run(*s, kOld, "/gone.p64", {10, 11, 10});
    run(*s, kNew, "/fast.p64", {80, 80, 81}, "backend=cpu", 4096);
  }
};

TEST(CommitCompare, ASlowdownIsFlaggedNoiseIsNotAndOneSidedGroupsAreListed) {
  Fixture f;
  auto s = Store::open(f.db, test::without_plan_history());
  const auto revs = stored_revisions(*s);
  ASSERT_EQ(revs.size(), 2u);
  EXPECT_EQ(revs[0].revision, kOld);
  EXPECT_EQ(revs[0].runs, 5);
  EXPECT_EQ(revs[1].runs, 5);

  const CommitCompare c = compare_commits(*s, "aaaa", "cccc");
  EXPECT_EQ(c.baseline, kOld);
  EXPECT_EQ(c.against, kNew);
  ASSERT_EQ(c.rows.size(), 3u);
  const CommitCompareRow& slow = row_of(c, "fast");
  EXPECT_EQ(slow.flag, "regression");
  EXPECT_EQ(slow.a_runs, 2);
  EXPECT_EQ(slow.a_samples, 10);
  EXPECT_NEAR(slow.ratio, 0.90, 0.005);
  EXPECT_LT(slow.p_value, 0.05);
  EXPECT_EQ(row_of(c, "noisy").flag != "regression" && row_of(c, "noisy").flag != "faster", true) << row_of(c, "noisy").flag;
  EXPECT_EQ(row_of(c, "fast", "backend=cpu,threads=2").flag, "faster");
  EXPECT_EQ(row_of(c, "fast", "backend=cpu,threads=2").b_busy, 1);
  EXPECT_EQ(slow.a_busy + slow.b_busy, 0);
  EXPECT_EQ(c.regressions(), 1);
  ASSERT_EQ(c.only_baseline.size(), 1u);
  EXPECT_NE(c.only_baseline[0].find("gone"), std::string::npos);
  ASSERT_EQ(c.only_against.size(), 1u);
  EXPECT_NE(c.only_against[0].find("4096+64"), std::string::npos) << c.only_against[0];

  // the slowed group over the builds: one point per revision, in the order they ran
  const std::vector<RevisionPoint> history = group_history(*s, slow.group);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].revision, kOld);
  EXPECT_EQ(history[0].runs, 2);
  EXPECT_DOUBLE_EQ(history[0].median, 100);
  EXPECT_DOUBLE_EQ(history[0].min, 99);
  EXPECT_DOUBLE_EQ(history[1].median, 90);
  MeasurementGroup deep = slow.group;
  deep.prompt_tokens = 4096;
  EXPECT_EQ(group_history(*s, deep).size(), 1u);

  // without --against: the newest other revision; a model filter keeps its groups only
  EXPECT_EQ(compare_commits(*s, kOld).against, kNew);
  EXPECT_EQ(compare_commits(*s, kOld, "", "noisy").rows.size(), 1u);
}

TEST(CommitCompare, UnknownSameAndAmbiguousRevisionsAreNamed) {
  Fixture f;
  {
    auto s = Store::open(f.db, test::without_plan_history());
    run(*s, "aaaa9999eeee", "/fast.p64", {100, 100});
  }
  auto s = Store::open(f.db, test::without_plan_history());
  const std::string unknown = test::error_of([&] { compare_commits(*s, "ffff"); });
  EXPECT_NE(unknown.find("revision 'ffff' has no decode-proxy run here"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find(kOld), std::string::npos) << unknown;
  const std::string ambiguous = test::error_of([&] { compare_commits(*s, "aaaa", "cccc"); });
  EXPECT_NE(ambiguous.find("is ambiguous: aaaa1111bbbb, aaaa9999eeee"), std::string::npos) << ambiguous;
  const std::string same = test::error_of([&] { compare_commits(*s, "cccc", "cccc2"); });
  EXPECT_NE(same.find("both sides are revision cccc2222dddd"), std::string::npos) << same;
}

TEST(CommitCompareCli, TableJsonAndCheckExitCode) {
  Fixture f;
  const test::CliRun table = test::run_p64("runs compare --baseline aaaa --against cccc --db " + f.db);
  EXPECT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("regression  <-- past the 2% rule"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("only in aaaa1111bbbb"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1 regression(s)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("faster  (machine busy in 0 A / 1 B runs)"), std::string::npos) << table.out;
  const test::CliRun check = test::run_p64("runs compare --baseline aaaa --check --db " + f.db);
  EXPECT_EQ(check.status, 1) << check.out;
  const test::CliRun json = test::run_p64("runs compare --baseline aaaa --json --db " + f.db);
  ASSERT_EQ(json.status, 0) << json.out;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["regressions"], 1);
  EXPECT_EQ(j["rows"].size(), 3u);
  const test::CliRun revs = test::run_p64("runs revisions --db " + f.db);
  EXPECT_NE(revs.out.find("cccc2222dddd"), std::string::npos) << revs.out;
  const test::CliRun bad = test::run_p64("runs compare --baseline ffff --db " + f.db);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("has no decode-proxy run here"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace p64
