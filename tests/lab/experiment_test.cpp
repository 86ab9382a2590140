// An experiment is one engine call: a request in, the run in the store and a typed outcome out,
// the same for the CLI and the GUI. Switch values are checked against the backend's table, and
// an A/B's named switch against what A and B actually set differently.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/common/register_backends.h"
#include "engine/decode_test_models.h"
#include "engine/lab/experiment.h"
#include "engine/lab/store.h"
#include "lab/toy_backend.h"
#include "support/store_checks.h"

namespace p64 {
namespace {

// stories260K, measured on the toy backend (its passport needs no bandwidth measurement) or,
// where nothing is measured, on the CPU backend.
ExperimentRequest stories_request(const std::string& config) {
  register_all_backends();
  test::register_toy_backend("toy-experiment");
  ExperimentRequest r;
  r.model_path = test::stories260k_p64();
  r.config = LabConfig::parse(config);
  r.decode_tokens = 4;
  r.prompt_tokens = 4;
  r.runs = 2;
  r.warmup = 0;
  r.machine_probe = {};
  return r;
}


TEST(Experiment, ADecodeProxyRequestStoresTheRunItReturns) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::open(db, test::without_plan_history());
  ExperimentRequest req = stories_request("backend=toy-experiment,threads=1,opt.fast=1");
  req.store_path = db;
  req.label = "one engine call";
  const ExperimentOutcome out = run_experiment(req);
  ASSERT_GT(out.run_id, 0);
  EXPECT_EQ(out.store_path, db);
  EXPECT_EQ(out.backend, "toy-experiment");
  ASSERT_EQ(out.decode_proxy.samples.size(), 2u);

  auto store = Store::open(db, test::without_plan_history());
  const std::optional<RunRecord> run = store->run(out.run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->kind, RunKind::DecodeProxy);
  EXPECT_EQ(run->backend, "toy-experiment");
  EXPECT_EQ(run->config, "backend=toy-experiment,opt.fast=1,threads=1");
  EXPECT_EQ(run->label, "one engine call");
  const auto params = nlohmann::json::parse(run->params_json);
  EXPECT_EQ(params, (nlohmann::json{{"tokens", 4}, {"prompt_tokens", 4}, {"runs", 2}, {"warmup", 0}, {"warm", 0}}));
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(run->summary_json)["decode_tok_s"]["median"].get<double>(),
                   out.decode_proxy.decode_tok_s.median);
  EXPECT_EQ(store->samples(out.run_id).size(), 2u);
  // The switches the run used are registered with the backend's table.
  EXPECT_FALSE(store->find_optimisations("fast").empty());
}

TEST(Experiment, ATimelineRequestWithoutAStoreReturnsSpansAndStoresNothing) {
  ExperimentRequest req = stories_request("backend=toy-experiment");
  req.measurement = Measurement::Timeline;
  req.origin = "p64lab";
  const ExperimentOutcome out = run_experiment(req);
  EXPECT_EQ(out.run_id, 0);
  EXPECT_TRUE(out.store_path.empty());
  EXPECT_FALSE(out.timeline.spans.empty());
  EXPECT_EQ(out.summary["tokens"], 4);
  EXPECT_EQ(out.summary["prompt_tokens"], 4);
}

TEST(Experiment, ABadSwitchValueIsTheTablesErrorAndNothingIsStored) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::open(db, test::without_plan_history());
  ExperimentRequest req = stories_request("backend=cpu,opt.kv_f16=2");
  req.store_path = db;
  EXPECT_EQ(test::error_of([&] { run_experiment(req); }), "cpu backend: switch kv_f16=2 is not one of 0|1 (default 0)");
  req.config = LabConfig::parse("backend=cpu,opt.kv_f32=1");
  EXPECT_EQ(test::error_of([&] { run_experiment(req); }),
            "cpu backend: unknown switch 'kv_f32' (offered: int8_activations, kv_f16, isa)");
  for (const RunRecord& run : Store::open(db, test::without_plan_history())->runs()) EXPECT_NE(run.backend, "cpu") << run.config;
}

TEST(AbSwitch, TheNamedSwitchMustBeOneAAndBSetDifferently) {
  register_all_backends();
  const LabConfig a = LabConfig::parse("backend=cpu");
  const LabConfig kv = LabConfig::parse("backend=cpu,opt.kv_f16=1");
  const LabConfig same_as_default = LabConfig::parse("backend=cpu,opt.int8_activations=1");
  EXPECT_EQ(judged_switch(a, kv, "kv_f16"), "kv_f16");
  EXPECT_EQ(judged_switch(a, kv), "kv_f16");
  // Setting a switch to its default changes nothing: no switch to judge, and naming it is refused.
  EXPECT_EQ(judged_switch(a, same_as_default), "");
  EXPECT_EQ(test::error_of([&] { judged_switch(a, same_as_default, "int8_activations"); }),
            "A/B: --switch int8_activations is 1 on both sides, so the A/B cannot judge it (A and B differ in no "
            "switch)");
  EXPECT_EQ(test::error_of([&] { judged_switch(a, kv, "int8_activations"); }),
            "A/B: --switch int8_activations is 1 on both sides, so the A/B cannot judge it (A and B differ in "
            "kv_f16)");
  EXPECT_EQ(test::error_of([&] { judged_switch(a, kv, "graphs"); }),
            "A/B: --switch graphs is not a switch of the cpu backend (offered: int8_activations, kv_f16, isa)");
}

TEST(AbSwitch, TheCliRefusesASwitchThatDoesNotDifferBeforeMeasuring) {
  const test::CliRun r = test::run_p64("ab " + test::stories260k_p64() +
                                       " --b backend=cpu,opt.kv_f16=1 --switch int8_activations --tokens 4 --runs 2 "
                                       "--no-store");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("--switch int8_activations is 1 on both sides"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("VERDICT"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace p64
