#include "engine/lab/report.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/peer_import.h"
#include "engine/lab/report_scope.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

// The text of one "## " section of a Markdown report, up to the next.
std::string section(const std::string& md, const std::string& heading) {
  const auto at = md.find("## " + heading);
  if (at == std::string::npos) return {};
  const auto next = md.find("\n## ", at + 3);
  return md.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

// A decode-proxy run of the user's, on `model_path` (the file name names the model) and `device`.
int64_t add_run(Store& store, const std::string& model_path, const std::string& device, std::vector<double> tok_s) {
  RunBundle b;
  b.run.kind = RunKind::DecodeProxy;
  b.run.backend = "cpu";
  b.run.device = device;
  b.run.config = "backend=cpu";
  ModelRecord m;
  m.path = model_path;
  m.sha256 = "sha-of-" + model_path;
  m.name = std::filesystem::path(model_path).stem().string();
  b.model = m;
  for (size_t i = 0; i < tok_s.size(); ++i) {
    SampleRecord x;
    x.rep = static_cast<int32_t>(i);
    x.decode_tok_s = tok_s[i];
    b.samples.push_back(x);
  }
  return store.write_run(std::move(b));
}

TEST(Report, AFreshStoreShowsOnlyYourRunsAndNamesThePlanHistoryApart) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string());  // a fresh store imports the plan history
  const nlohmann::json rep = nlohmann::json::parse(build_report(*store, {}).dump());  // JSON round trip
  EXPECT_TRUE(rep["scoreboard"].empty()) << rep["scoreboard"].dump(2);
  EXPECT_TRUE(rep["peer_diagnostics"].empty());
  EXPECT_TRUE(rep["rejected_optimisations"].empty());
  EXPECT_TRUE(rep["bars_evaluated_on_run"].is_null());
  EXPECT_FALSE(rep["bars_apply"].get<bool>());
  for (const auto& b : rep["bars"]) EXPECT_FALSE(b["pass"].get<bool>()) << b.dump();

  const auto& h = rep["plan_history"];
  EXPECT_EQ(h["label"], "Plan history (imported from the seed plan, another machine)");
  EXPECT_TRUE(h["imported"].get<bool>());
  ASSERT_EQ(h["scoreboard"].size(), 6u);
  EXPECT_DOUBLE_EQ(h["scoreboard"][5]["tok_s"].get<double>(), 9.8);
  EXPECT_NEAR(h["scoreboard"][5]["delta_vs_first"].get<double>(), 9.8 / 6.7 - 1, 1e-9);  // the plan's ~+45%
  EXPECT_EQ(h["rejected_optimisations"].size(), 6u);
  ASSERT_EQ(h["peer_diagnostics"].size(), 1u);  // the plan's Ollama row, beside the plan's runs
  EXPECT_NEAR(h["peer_diagnostics"][0]["ratio_peer_over_ours"].get<double>(), 70 / 9.8, 1e-9);

  const std::string md = render_markdown(rep);
  const std::string yours = section(md, "Scoreboard (your runs)");
  EXPECT_NE(yours.find("No decode-proxy run of yours in this store yet."), std::string::npos) << md;
  for (const char* plan : {"A2000", "ollama", "wgpu", "Session start"})
    EXPECT_EQ(yours.find(plan), std::string::npos) << plan << " in\n" << yours;
  EXPECT_EQ(section(md, "Rejected optimisations").find("dual_mr"), std::string::npos);
  EXPECT_NE(section(md, "Bars").find("Not judged: no run of yours stored yet"), std::string::npos) << md;
  const std::string plan = section(md, "Plan history (imported from the seed plan, another machine)");
  EXPECT_NE(plan.find("| Session start (2026-07-10 AM) | llama-3.2-3b-instruct-q4_k_m.soa | 6.70 | 6.70-6.70 | "
                      "± 0.00 (0.0%) | — | wgpu | NVIDIA RTX A2000 12GB |"),
            std::string::npos)
      << md;
  EXPECT_NE(plan.find("| Barrier-free global-act Q4_SOA (current) | llama-3.2-3b-instruct-q4_k_m.soa | 9.80 | "
                      "9.70-9.90 | ± 0.14 (1.4%) | +46% |"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("7.1x the last stage"), std::string::npos) << plan;
  EXPECT_NE(plan.find("| dual_mr | wgpu |"), std::string::npos) << plan;

  const std::string html = render_html(rep);
  EXPECT_NE(html.find("<h2>Plan history (imported from the seed plan, another machine)</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(render_csv(rep), "kind,stage,tok_s,min,max,delta_vs_first,backend,device,stddev,cv\n");

  // Without the import the section says so.
  test::TempDir bare_dir;
  Store::Options no_import;
  no_import.import_plan_history = false;
  auto bare = Store::open((bare_dir / "lab.db").string(), no_import);
  EXPECT_NE(render_markdown(build_report(*bare, {})).find("Not imported into this store."), std::string::npos);
}

TEST(Report, TheYourRunsScoreboardHasStddevAndDeltasPerModelAndDevice) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string());
  add_run(*store, "/m/small.p64", "AMD EPYC 7B13", {100, 102, 98});
  add_run(*store, "/m/other.p64", "AMD EPYC 7B13", {50, 50, 50});
  add_run(*store, "/m/small.p64", "AMD EPYC 7B13", {110, 112, 108});
  const nlohmann::json rep = build_report(*store, {});
  ASSERT_EQ(rep["scoreboard"].size(), 3u);
  EXPECT_TRUE(rep["scoreboard"][1]["first_on_model_device"].get<bool>());  // another model: its own start
  EXPECT_DOUBLE_EQ(rep["scoreboard"][1]["delta_vs_first"].get<double>(), 0);
  EXPECT_NEAR(rep["scoreboard"][2]["delta_vs_first"].get<double>(), 0.10, 1e-12);
  EXPECT_DOUBLE_EQ(rep["scoreboard"][0]["stddev"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(rep["scoreboard"][0]["cv"].get<double>(), 0.02);
  const std::string md = render_markdown(rep);
  EXPECT_NE(md.find("| small | 100.00 | 98.00-102.00 | ± 2.00 (2.0%) | — | cpu | AMD EPYC 7B13 |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| other | 50.00 | 50.00-50.00 | ± 0.00 (0.0%) | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("| small | 110.00 | 108.00-112.00 | ± 2.00 (1.8%) | +10% |"), std::string::npos) << md;
}

// The case: a CPU run of a small model at 120 tok/s "passed G4" (70 tok/s, a bar set for
// the plan's 3B on an A2000).
TEST(Report, TheBarsApplyToThePlansModelOrToBarsTheUserSets) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string());
  const int64_t small = add_run(*store, "/m/SmolLM2-135M-Q8_0.p64", "AMD EPYC 7B13", {118, 120, 121});
  nlohmann::json rep = build_report(*store, {});
  EXPECT_EQ(rep["bars_evaluated_on_run"], small);
  EXPECT_FALSE(rep["bars_apply"].get<bool>());
  ASSERT_EQ(rep["bars"].size(), 6u);
  for (const auto& b : rep["bars"]) {
    EXPECT_FALSE(b["pass"].get<bool>()) << b.dump();
    EXPECT_FALSE(b["applies"].get<bool>()) << b.dump();
  }
  std::string md = render_markdown(rep);
  EXPECT_NE(md.find("| G4 | decode tok/s | 120.000 | 70.00 | n/a |"), std::string::npos) << md;
  EXPECT_NE(md.find("Not judged: the plan's bars are set for llama-3.2-3b-instruct-q4_k_m, and run " +
                    std::to_string(small) + " is on SmolLM2-135M-Q8_0"),
            std::string::npos)
      << md;
  EXPECT_EQ(section(md, "Bars").find("✅"), std::string::npos) << md;

  // Bars the user gives apply to the model reported.
  ReportOptions mine;
  mine.bars_from_user = true;
  mine.bars.g4_tok_s = 100;
  rep = build_report(*store, mine);
  EXPECT_TRUE(rep["bars_apply"].get<bool>());
  EXPECT_TRUE(rep["bars"][4]["pass"].get<bool>());
  EXPECT_NE(render_markdown(rep).find("| G4 | decode tok/s | 120.000 | 100.00 | ✅ |"), std::string::npos);

  // The plan's model (by its file name): the plan's bars apply.
  add_run(*store, "/models/Llama-3.2-3B-Instruct-Q4_K_M.p64", "NVIDIA H200", {14, 14.5, 13.8});
  rep = build_report(*store, {});
  EXPECT_TRUE(rep["bars_apply"].get<bool>());
  EXPECT_TRUE(rep["bars"][1]["pass"].get<bool>());   // G1: 14 >= 13
  EXPECT_FALSE(rep["bars"][2]["pass"].get<bool>());  // G2: 14 < 25
  md = render_markdown(rep);
  EXPECT_NE(md.find("| G1 | decode tok/s | 14.000 | 13.00 | ✅ |"), std::string::npos) << md;
  EXPECT_NE(md.find("(the plan's bars for llama-3.2-3b-instruct-q4_k_m;"), std::string::npos) << md;
}

TEST(Report, PeerRatiosOnlyToARunOnThePeersModelAndDevice) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string());
  const int64_t stories = add_run(*store, "/m/stories260K.p64", "AMD EPYC 7B13", {1000, 1010, 990});
  add_run(*store, "/m/stories260K.p64", "NVIDIA H200", {3000, 3000, 3000});  // the latest: another device
  store->insert_peer_results(
      read_llama_bench((test::shared_dir() / "peers" / "llama-bench-cpu-stories260K.json").string()));
  store->insert_peer_results(
      read_llama_bench((test::shared_dir() / "peers" / "llama-bench-cuda-h200-llama32-3b-q4km.json").string()));
  const nlohmann::json rep = build_report(*store, {});
  int with_ratio = 0, without = 0;
  for (const auto& p : rep["peer_diagnostics"]) {
    if (p["model"] == "stories260K.gguf") {
      ASSERT_TRUE(p.contains("ratio_peer_over_ours")) << p.dump();
      EXPECT_EQ(p["ratio_vs_run"], stories);  // the CPU run, not the latest (H200) one
      EXPECT_NEAR(p["ratio_peer_over_ours"].get<double>(), p["tok_s"].get<double>() / 1000, 1e-9);
      ++with_ratio;
    } else {
      EXPECT_FALSE(p.contains("ratio_peer_over_ours")) << p.dump();  // no run of ours on the 3B
      ++without;
    }
  }
  EXPECT_EQ(with_ratio, 1);  // tg16
  EXPECT_GE(without, 1);
  EXPECT_NE(render_markdown(rep).find("no run on this model and device"), std::string::npos);
}

TEST(ReportScope, ModelKeysAndDevicesMatchAcrossToolsAndFileForms) {
  EXPECT_EQ(model_key("C:\\LLM_Models\\P64\\llama-3.2-3b-instruct-q4_k_m.soa.p64"), "llama323binstructq4km");
  EXPECT_EQ(model_key("/x/Llama-3.2-3B-Instruct-Q4_K_M.gguf"), "llama323binstructq4km");
  EXPECT_EQ(model_key("stories260K.bin"), "stories260k");
  ModelRecord m;
  m.path = "/x/Llama-3.2-3B-Instruct-Q4_K_S.p64";  // another quantisation is another model
  m.name = "Llama 3.2 3B Instruct";
  EXPECT_FALSE(is_plan_bars_model(m));
  m.path = "/x/llama-3.2-3b-instruct-q4_k_m.p64";
  EXPECT_TRUE(is_plan_bars_model(m));
  EXPECT_TRUE(same_device("AMD EPYC", "AMD EPYC 7B13 64-Core Processor"));
  EXPECT_TRUE(same_device("NVIDIA H200", "NVIDIA H200"));
  EXPECT_FALSE(same_device("NVIDIA H200", "NVIDIA RTX A2000 12GB"));
  EXPECT_FALSE(same_device("", "NVIDIA H200"));
}

TEST(PeerImport, AllFourLlamaBenchFormatsAgreeOnTheTests) {
  for (const char* ext : {"json", "jsonl", "csv", "sql"}) {
    auto rows = read_llama_bench((test::shared_dir() / "peers" / (std::string("llama-bench-cpu-stories260K.") + ext)).string());
    ASSERT_EQ(rows.size(), 3u) << ext;
    EXPECT_EQ(rows[0].test, "pp16") << ext;
    EXPECT_EQ(rows[1].test, "pp64") << ext;
    EXPECT_EQ(rows[2].test, "tg16") << ext;
    EXPECT_EQ(rows[2].model, "stories260K.gguf");
    EXPECT_EQ(rows[2].quant, "F32");
    EXPECT_EQ(rows[2].device, "AMD EPYC");
    EXPECT_EQ(rows[2].n_threads, 2);
    EXPECT_GT(rows[2].avg_ts, 1000.0);
  }
  auto cuda = read_llama_bench((test::shared_dir() / "peers" / "llama-bench-cuda-h200-llama32-3b-q4km.json").string());
  ASSERT_EQ(cuda.size(), 4u);
  EXPECT_EQ(cuda[1].test, "tg128");
  EXPECT_EQ(cuda[1].quant, "Q4_K_M");
  EXPECT_EQ(cuda[1].device, "NVIDIA H200");
  EXPECT_EQ(cuda[1].samples_ts.size(), 3u);
}

TEST(PeerImport, NonBenchFilesAreRefused) {
  test::TempDir dir;
  const auto p = (dir / "x.csv").string();
  { std::ofstream(p) << "a,b\n1,2\n"; }
  EXPECT_THROW(read_llama_bench(p), Error);
  { std::ofstream(p) << "[{\"x\": 1}]"; }
  EXPECT_THROW(read_llama_bench(p), Error);
}

}  // namespace
}  // namespace p64
