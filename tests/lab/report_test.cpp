#include "engine/lab/report.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/peer_import.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

TEST(Report, ScoreboardBarsAndRejectedListFromTheImportedPlan) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string());
  ReportOptions o;
  o.model = "llama-3.2-3b";
  const nlohmann::json rep = nlohmann::json::parse(build_report(*store, o).dump());  // JSON round trip
  ASSERT_EQ(rep["scoreboard"].size(), 6u);
  EXPECT_DOUBLE_EQ(rep["scoreboard"][5]["tok_s"].get<double>(), 9.8);
  EXPECT_NEAR(rep["scoreboard"][5]["delta_vs_first"].get<double>(), 9.8 / 6.7 - 1, 1e-9);  // the plan's ~+45%
  ASSERT_EQ(rep["bars"].size(), 6u);
  EXPECT_EQ(rep["bars"][1]["bar"], "G1");
  EXPECT_FALSE(rep["bars"][1]["pass"].get<bool>());  // 9.8 < 13, as the plan says
  EXPECT_TRUE(rep["bars"][0]["pass"].get<bool>());
  EXPECT_EQ(rep["rejected_optimisations"].size(), 6u);
  ASSERT_EQ(rep["peer_diagnostics"].size(), 1u);
  EXPECT_NEAR(rep["peer_diagnostics"][0]["ratio_peer_over_ours"].get<double>(), 70 / 9.8, 1e-9);

  const std::string md = render_markdown(rep);
  EXPECT_NE(md.find("| Session start (2026-07-10 AM) | 6.70 | 6.70-6.70 | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Barrier-free global-act Q4_SOA (current) | 9.80 | 9.70-9.90 | +46% |"), std::string::npos);
  EXPECT_NE(md.find("| G1 | decode tok/s | 9.800 | 13.00 | ❌ |"), std::string::npos);
  // the bars say which run, model and device they were judged on
  EXPECT_EQ(rep["bars_evaluated_on"]["device"], "NVIDIA RTX A2000 12GB");
  EXPECT_NE(md.find("Judged on run " + std::to_string(rep["bars_evaluated_on_run"].get<int64_t>()) + ": "),
            std::string::npos) << md;
  EXPECT_NE(md.find("| dual_mr | wgpu |"), std::string::npos);
  const std::string html = render_html(rep);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  std::istringstream csv(render_csv(rep));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 1 + 6 + 1);
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
