// A depth sweep (decode-proxy --depth, as llama-bench -d): decode measured after a prefill of each
// depth, the KV bytes read at that depth counted in the effective GB/s, one stored run per depth
// with the depth recorded, and the list checked before anything loads.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/common/register_backends.h"
#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/decode_test_models.h"
#include "engine/lab/depth_sweep.h"
#include "engine/lab/experiment.h"
#include "engine/lab/report.h"
#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "lab/toy_backend.h"
#include "support/store_checks.h"

namespace p64 {
namespace {


ExperimentRequest sweep_request(std::vector<int> depths) {
  register_all_backends();
  test::register_toy_backend("toy-depth");
  ExperimentRequest r;
  r.model_path = test::stories260k_p64();
  r.config = LabConfig::parse("backend=toy-depth");
  r.decode_tokens = 4;
  r.runs = 2;
  r.warmup = 0;
  r.machine_probe = {};
  r.depths = std::move(depths);
  return r;
}

TEST(DepthSweep, ParsesAListInTheOrderGiven) {
  EXPECT_EQ(parse_depths("0,512,4096"), (std::vector<int>{0, 512, 4096}));
  EXPECT_EQ(parse_depths(" 64 , 0 "), (std::vector<int>{64, 0}));
  EXPECT_EQ(parse_depths("7"), (std::vector<int>{7}));
}

TEST(DepthSweep, RefusesEmptyNegativeDuplicateAndWordsNamingTheItem) {
  EXPECT_EQ(test::error_of([] { parse_depths(""); }), "no depth given (a list such as 0,512,4096)");
  EXPECT_EQ(test::error_of([] { parse_depths(" "); }), "no depth given (a list such as 0,512,4096)");
  EXPECT_EQ(test::error_of([] { parse_depths("0,,512"); }), "item 2 of '0,,512' is empty");
  EXPECT_EQ(test::error_of([] { parse_depths("0,512,"); }), "item 3 of '0,512,' is empty");
  EXPECT_EQ(test::error_of([] { parse_depths("0,-8"); }),
            "item 2 of '0,-8' (-8) is negative: a depth is the tokens prefilled before decode, 0 or more");
  EXPECT_EQ(test::error_of([] { parse_depths("512,0,512"); }), "item 3 of '512,0,512': depth 512 is given twice");
  EXPECT_EQ(test::error_of([] { parse_depths("0,1k"); }), "item 2 of '0,1k' ('1k') is not a whole number of tokens");
  EXPECT_EQ(test::error_of([] { parse_depths("99999999999"); }),
            "item 1 of '99999999999' ('99999999999') is not a whole number of tokens");
}

// Depth 0 prefills nothing: N decode steps at positions 0..N-1, over a mean of (N+1)/2 positions.
TEST(DepthSweep, DepthZeroDecodesFromPositionZeroWithoutAPrefill) {
  auto model = test::make_toy_model();
  test::ToyBackend toy;
  toy.load(model, {});
  DecodeProxyParams p;
  p.decode_tokens = 6;
  p.prompt_tokens = 0;
  p.runs = 2;
  p.warmup = 0;
  p.machine_probe = {};
  const DecodeProxyResult r = run_decode_proxy(toy, *model, toy.passport(), p);
  EXPECT_EQ(toy.steps_run(), 2 * 6);  // decode steps only: a prefill would add its tokens
  EXPECT_EQ(r.generated.size(), 6u);
  EXPECT_DOUBLE_EQ(r.bytes_per_token, model->weight_bytes() + r.kv_bytes_per_position * 3.5);
  for (const SampleRecord& s : r.samples) {
    EXPECT_EQ(s.prompt_tokens, 0);
    EXPECT_EQ(s.ttft_ms, 0);
    EXPECT_GT(s.decode_tok_s, 0);
  }
  EXPECT_NE(r.prompt.rule.find("no prefill (depth 0)"), std::string::npos) << r.prompt.rule;
}

TEST(DepthSweep, EachDepthIsItsOwnStoredRunWithItsDepthAndKvBytes) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::open(db, test::without_plan_history());
  ExperimentRequest req = sweep_request({16, 0, 64});
  req.store_path = db;
  req.label = "sweep";
  std::vector<std::string> lines;
  ExperimentProgress progress;
  progress.measure = [&](double f, std::string_view what) {
    lines.emplace_back(what);
    EXPECT_LE(f, 1.0);
    return true;
  };
  const ExperimentOutcome out = run_experiment(req, progress);
  EXPECT_EQ(out.run_id, 0);  // a sweep's runs are its points'
  EXPECT_EQ(out.store_path, db);
  ASSERT_EQ(out.depth_sweep.size(), 3u);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().rfind("depth 16: ", 0), 0u) << lines.front();
  EXPECT_EQ(lines.back().rfind("depth 64: ", 0), 0u) << lines.back();

  auto store = Store::open(db, test::without_plan_history());
  const DecodeProxyResult& first = out.depth_sweep[0].decode_proxy;
  for (const DepthPoint& p : out.depth_sweep) {
    const DecodeProxyResult& r = p.decode_proxy;
    SCOPED_TRACE("depth " + std::to_string(p.depth));
    // Weights once, plus the KV of the depth and the decode steps' own positions.
    EXPECT_DOUBLE_EQ(r.bytes_per_token,
                     static_cast<double>(r.weight_bytes) + r.kv_bytes_per_position * (p.depth + 2.5));
    EXPECT_EQ(r.kv_bytes_per_position, first.kv_bytes_per_position);
    EXPECT_DOUBLE_EQ(r.measured_read_gbs, 10.0);  // the toy passport's ceiling
    for (const SampleRecord& s : r.samples) EXPECT_NEAR(s.bandwidth_share, s.effective_gbs / 10.0, 1e-12);

    ASSERT_GT(p.run_id, 0);
    const auto run = store->run(p.run_id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->label, "sweep");
    const auto params = nlohmann::json::parse(run->params_json);
    EXPECT_EQ(params["depth"], p.depth);
    EXPECT_EQ(params["prompt_tokens"], p.depth);
    EXPECT_EQ(params["depth_sweep"], nlohmann::json({16, 0, 64}));
    EXPECT_EQ(params["sweep_started_at"],
              nlohmann::json::parse(store->run(out.depth_sweep[0].run_id)->params_json)["sweep_started_at"]);
    const auto samples = store->samples(p.run_id);
    ASSERT_EQ(samples.size(), 2u);
    for (const SampleRecord& s : samples) EXPECT_EQ(s.prompt_tokens, p.depth);
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(run->summary_json)["bytes_per_token"].get<double>(), r.bytes_per_token);
  }
  EXPECT_NE(out.depth_sweep[0].run_id, out.depth_sweep[2].run_id);
  EXPECT_LT(out.depth_sweep[1].decode_proxy.bytes_per_token, out.depth_sweep[0].decode_proxy.bytes_per_token);
  EXPECT_LT(out.depth_sweep[0].decode_proxy.bytes_per_token, out.depth_sweep[2].decode_proxy.bytes_per_token);

  // The report tells the sweep's rows apart by their depth.
  const nlohmann::json rep = build_report(*store, {});
  ASSERT_EQ(rep["scoreboard"].size(), 3u);
  EXPECT_EQ(rep["scoreboard"][1]["depth"], 0);
  EXPECT_EQ(rep["scoreboard"][2]["stage"], "sweep (depth 64)");
  // Each depth is its own baseline: a deeper context is slower by design, not a regression.
  for (const auto& row : rep["scoreboard"]) EXPECT_TRUE(row["first_on_model_device"].get<bool>()) << row.dump();
}

TEST(DepthSweep, PastTheModelsContextIsRefusedBeforeLoadingAndNothingIsStored) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::open(db, test::without_plan_history());
  ExperimentRequest req = sweep_request({0, 510});
  req.store_path = db;
  EXPECT_EQ(test::error_of([&] { run_experiment(req); }),
            "decode-proxy: --depth 510 + --tokens 4 = 514 positions exceed the context of " + test::stories260k_p64() +
                " (n_ctx_train 512); the deepest depth can be at most 508");
  EXPECT_TRUE(Store::open(db, test::without_plan_history())->runs().empty());
  req.depths = {508};
  req.store_path.clear();
  EXPECT_EQ(run_experiment(req).depth_sweep.at(0).decode_proxy.samples.at(0).prompt_tokens, 508);
}

TEST(DepthSweep, ATimelineTakesNoDepths) {
  ExperimentRequest req = sweep_request({0, 8});
  req.measurement = Measurement::Timeline;
  EXPECT_EQ(test::error_of([&] { run_experiment(req); }), "timeline: a depth sweep is a decode-proxy measurement");
}

// The CPU backend states its cache's bytes per position (fp32 K and V, fp16 with kv_f16), so the
// effective GB/s at depth counts what it reads rather than assuming fp16.
TEST(DepthSweep, TheCpuBackendStatesItsKvBytesPerPosition) {
  auto model = open_p64(test::stories260k_p64());
  const HParams& h = model->hparams();
  const uint64_t per_position_f32 = 2ull * h.n_layer * h.kv_dim() * 4;
  for (const char* kv_f16 : {"0", "1"}) {
    auto cpu = make_cpu_backend();
    BackendOptions o;
    o.threads = 1;
    o.max_context = 64;
    o.switches["kv_f16"] = kv_f16;
    cpu->load(model, o);
    EXPECT_EQ(cpu->kv_bytes_per_position(), std::string(kv_f16) == "1" ? per_position_f32 / 2 : per_position_f32);
    DecodeProxyParams p;
    p.decode_tokens = 2;
    p.prompt_tokens = 8;
    p.runs = 1;
    p.warmup = 0;
    p.machine_probe = {};
    const DecodeProxyResult r = run_decode_proxy(*cpu, *model, Passport{}, p);
    EXPECT_FALSE(r.kv_bytes_assumed);
    EXPECT_EQ(r.kv_bytes_per_position, cpu->kv_bytes_per_position());
  }
}

std::string cli_sweep() {
  return "decode-proxy " + test::stories260k_p64() + " --backend cpu --threads 1 --depth 0,32 --tokens 4 --runs 2 --warmup 0 ";
}

TEST(DepthSweepCli, PrintsATableWithOneStoredRunPerDepth) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  const test::CliRun table = test::run_p64(cli_sweep() + "--db " + db);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("depth sweep 0, 32"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("KV bytes per position (the backend's cache)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("decode tok/s ± stddev (CV)"), std::string::npos) << table.out;
  std::vector<std::string> stored;  // the store's own runs with a depth: the plan history has none
  for (const RunRecord& run : Store::open(db)->runs())
    if (const auto depth = stored_depth(run.params_json)) stored.push_back(std::to_string(run.id) + "@" + std::to_string(*depth));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[1].substr(stored[1].find('@')), "@32");
  const std::string ids = stored[0].substr(0, stored[0].find('@')) + ", " + stored[1].substr(0, stored[1].find('@'));
  EXPECT_NE(table.out.find("stored as runs " + ids + " (one per depth)"), std::string::npos) << table.out;
}

TEST(DepthSweepCli, JsonHasASummaryPerDepthWithStddevAndCv) {
  const test::CliRun json = test::run_p64(cli_sweep() + "--json --no-store");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["depths"], nlohmann::json({0, 32}));
  ASSERT_EQ(j["depth_sweep"].size(), 2u);
  for (const auto& point : j["depth_sweep"]) {
    EXPECT_EQ(point["run_id"], 0);
    EXPECT_EQ(point["decode_tok_s"]["n"], 2);
    EXPECT_TRUE(point["decode_tok_s"].contains("stddev"));
    EXPECT_TRUE(point["decode_tok_s"].contains("cv"));
    EXPECT_FALSE(point["kv_bytes_assumed_fp16"].get<bool>());
  }
  EXPECT_EQ(j["depth_sweep"][1]["depth"], 32);
  EXPECT_GT(j["depth_sweep"][1]["bytes_per_token"].get<double>(), j["depth_sweep"][0]["bytes_per_token"].get<double>());
}

TEST(DepthSweepCli, ABadListIsAP64ErrorBeforeAnythingRuns) {
  const std::string model = test::stories260k_p64();
  const std::pair<std::string, std::string> cases[] = {
      {"--depth 0,,32", "p64: --depth: item 2 of '0,,32' is empty"},
      {"--depth 32,0,32", "p64: --depth: item 3 of '32,0,32': depth 32 is given twice"},
      {"--depth=0,-5", "p64: --depth: item 2 of '0,-5' (-5) is negative"},
      {"--depth 0,600",
       "p64: error: decode-proxy: --depth 600 + --tokens 4 = 604 positions exceed the context of " + model +
           " (n_ctx_train 512); the deepest depth can be at most 508"},
      {"--depth 8 --prompt-tokens 4", "p64: --prompt-tokens excludes --depth"},
  };
  for (const auto& [args, expected] : cases) {
    const test::CliRun r = test::run_p64("decode-proxy " + model + " --backend cpu --tokens 4 --no-store " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(r.err.rfind(expected, 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(r.out.find("depth sweep"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace p64
