// A/B with A and B on two model files: each side decodes its own model, the store names both,
// and the harness refuses what would make the verdict meaningless (two vocabularies, or a
// switch changed together with the model).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/ab.h"
#include "engine/lab/store.h"
#include "engine/runtime/backend_registry.h"
#include "lab/toy_backend.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

void register_toy() { test::register_toy_backend("toy-ab"); }

AbParams quick() {
  AbParams p = test::quick_ab_params(6);
  p.compare_reference = false;
  return p;
}

TEST(AbTwoModels, EachSideDecodesItsOwnModelAndTheStoreNamesBoth) {
  register_toy();
  test::ToyShape small, wide;
  wide.n_ff = 256;  // same vocabulary, more bytes per token
  wide.seed = 2;
  auto ma = test::make_toy_model(small), mb = test::make_toy_model(wide);
  const LabConfig c = LabConfig::parse("backend=toy-ab");
  const AbResult r = run_ab(c, ma, c, mb, quick());
  EXPECT_FALSE(r.same_model());
  EXPECT_EQ(r.a.model, ma->source());
  EXPECT_EQ(r.b.model, mb->source());
  EXPECT_TRUE(r.switch_name.empty());  // the verdict is about the model
  ASSERT_EQ(r.b.samples.size(), 2u);
  // Effective GB/s ÷ tok/s is the bytes a step reads: B's must be its wider model's.
  const double a_bytes = r.a.samples[0].effective_gbs * 1e9 / r.a.samples[0].decode_tok_s;
  const double b_bytes = r.b.samples[0].effective_gbs * 1e9 / r.b.samples[0].decode_tok_s;
  EXPECT_NEAR(a_bytes, ma->weight_bytes() + 128.0 * 6.5, 1.0);
  EXPECT_NEAR(b_bytes, mb->weight_bytes() + 128.0 * 6.5, 1.0);
  EXPECT_FALSE(r.b_vs_a.pass);  // random weights of another seed: B's logits are not A's

  test::TempDir dir;
  {
    auto store = Store::open((dir / "lab.db").string());
    const StoredAb s = judge_and_store_ab(*store, r, *ma, "/models/a.p64", mb.get(), "/models/b.p64");
    EXPECT_EQ(s.outcome.verdict, Verdict::Rejected);  // the quality gate failed
    const auto run = store->run(s.run_id);
    ASSERT_TRUE(run);
    EXPECT_NE(run->config.find("A on a.p64, B on b.p64"), std::string::npos) << run->config;
    const auto summary = nlohmann::json::parse(run->summary_json);
    EXPECT_EQ(summary["b"]["model"], mb->source());
    EXPECT_FALSE(summary["same_model"].get<bool>());
    EXPECT_TRUE(store->find_model("/models/b.p64").has_value());
    EXPECT_TRUE(store->find_optimisations("").empty());  // no switch: no history entry
  }
}

TEST(AbTwoModels, RefusesTwoVocabulariesAndASwitchChangedWithTheModel) {
  register_toy();
  test::ToyShape other_vocab;
  other_vocab.n_vocab = 128;
  auto ma = test::make_toy_model(), mb = test::make_toy_model(other_vocab);
  const LabConfig c = LabConfig::parse("backend=toy-ab");
  const std::string vocab = test::error_of([&] { run_ab(c, ma, c, mb, quick()); });
  EXPECT_NE(vocab.find("96 tokens"), std::string::npos) << vocab;
  EXPECT_NE(vocab.find("one vocabulary"), std::string::npos) << vocab;

  test::ToyShape seed2;
  seed2.seed = 2;
  auto mc = test::make_toy_model(seed2);
  const std::string both = test::error_of([&] { run_ab(c, ma, LabConfig::parse("backend=toy-ab,opt.fast=1"), mc, quick()); });
  EXPECT_NE(both.find("one change at a time"), std::string::npos) << both;
  const std::string named = test::error_of([&] { run_ab(c, ma, c, mc, quick(), "fast"); });
  EXPECT_NE(named.find("switch 'fast'"), std::string::npos) << named;

  // One model on both sides is the ordinary A/B: the differing switch is the one judged.
  const AbResult same = run_ab(c, ma, LabConfig::parse("backend=toy-ab,opt.fast=1"), ma, quick());
  EXPECT_TRUE(same.same_model());
  EXPECT_EQ(same.switch_name, "fast");
}

}  // namespace
}  // namespace p64
