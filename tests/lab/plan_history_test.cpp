#include "engine/lab/plan_history.h"

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/lab/store.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

TEST(PlanHistory, EmbeddedCopyMatchesTheResourceFile) {
  std::ifstream f(std::string(P64_SOURCE_DIR) + "/resources/plan_history.json", std::ios::binary);
  ASSERT_TRUE(f) << "resources/plan_history.json missing";
  const std::string file(std::istreambuf_iterator<char>(f), {});
  EXPECT_EQ(std::string(embedded_plan_history_json()), file)
      << "regenerate engine/lab/plan_history_data.cpp (its header comment says how)";
}

TEST(PlanHistory, FreshStoreImportsTheHistoryOnce) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  {
    auto store = Store::open(path);
    EXPECT_TRUE(store->meta("plan_history_imported").has_value());
  }
  auto store = Store::open(path);  // a second open must not import again
  EXPECT_FALSE(import_plan_history_once(*store));

  // §4.4 and §11: the rejected-as-default experiments with their A2000 numbers.
  OptimisationFilter rejected;
  rejected.status = OptStatus::Rejected;
  auto opts = store->optimisations(rejected);
  std::vector<std::string> names;
  for (const auto& o : opts) {
    names.push_back(o.name);
    EXPECT_TRUE(o.imported);
  }
  for (const char* want : {"multirow", "dual_mr", "triple_qkv", "full_act_lds", "warp_gemv", "cuda_decode"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  auto dual = store->find_optimisations("dual_mr");
  ASSERT_EQ(dual.size(), 1u);
  auto hist = store->optimisation_history(dual[0].id);
  ASSERT_EQ(hist.size(), 1u);
  EXPECT_EQ(hist[0].old_status, OptStatus::Candidate);
  EXPECT_EQ(hist[0].new_status, OptStatus::Rejected);
  EXPECT_EQ(hist[0].at, "2026-07-10");
  EXPECT_NE(hist[0].evidence.find("8.75"), std::string::npos) << hist[0].evidence;

  // §3.1 scoreboard: six stages, imported, on the A2000 passport, in the plan's order.
  auto runs = store->runs();
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_TRUE(runs[0].imported);
  EXPECT_EQ(runs[0].label, "Session start (2026-07-10 AM)");
  EXPECT_EQ(runs[0].device, "NVIDIA RTX A2000 12GB");
  auto p = store->passport(runs[0].passport_id);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->imported);
  auto pj = nlohmann::json::parse(p->json);
  EXPECT_EQ(pj["host"]["os"], "Windows");
  EXPECT_EQ(pj["device"]["backend"], "wgpu");
  auto last = store->samples(runs[5].id);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_DOUBLE_EQ(last[0].decode_tok_s, 9.7);
  EXPECT_DOUBLE_EQ(last[1].decode_tok_s, 9.9);
  auto peers = store->peer_results();
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_DOUBLE_EQ(peers[0].avg_ts, 70.0);
}

}  // namespace
}  // namespace p64
