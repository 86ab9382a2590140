// Text that is not UTF-8 (a llama-bench CSV cell, a GGUF general.name, a model path) enters the
// store as UTF-8 with U+FFFD and a warning naming the file and field; whole-store exports
// (report --format json, runs show --json) then work, on stores older builds filled too.
#include "engine/lab/store_text.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/decode_test_models.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/peer_import.h"
#include "engine/lab/report.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"
#include "support/store_checks.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

const std::string kReplacement = "\xEF\xBF\xBD";


// Collects store_text's warnings for one test and puts the previous sink back.
class CapturedWarnings {
 public:
  CapturedWarnings() {
    previous_ = set_text_warning_sink([this](const std::string& w) { lines.push_back(w); });
  }
  ~CapturedWarnings() { set_text_warning_sink(previous_); }
  std::vector<std::string> lines;

 private:
  TextWarningSink previous_;
};

bool has_line_with(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  for (const auto& l : lines)
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

TEST(StoreText, BadBytesBecomeReplacementCharactersWithOneWarningPerFileAndField) {
  CapturedWarnings w;
  EXPECT_EQ(store_text("plain ascii, and \xC3\xA9", "a.csv", "column model"), "plain ascii, and \xC3\xA9");
  EXPECT_EQ(store_text("ll\xFFma", "a.csv", "column model"), "ll" + kReplacement + "ma");
  EXPECT_EQ(store_text("\xC3", "a.csv", "column model"), kReplacement);  // a character cut short
  EXPECT_EQ(store_text("x\xFF", "b.csv", "column model"), "x" + kReplacement);
  ASSERT_EQ(w.lines.size(), 2u);  // a.csv once, b.csv once
  EXPECT_TRUE(has_line_with(w.lines, "a.csv", "column model is not valid UTF-8")) << w.lines[0];
  EXPECT_TRUE(has_line_with(w.lines, "b.csv", "column model"));
}

TEST(StoreText, AJsonDumpWithBadBytesDoesNotThrow) {
  const nlohmann::json j = {{"model", "ll\xFFma"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what every export did
  EXPECT_EQ(json_text(j), "{\"model\":\"ll" + kReplacement + "ma\"}");
}

// The probe's case: a llama-bench CSV with a 0xFF byte imported with rc 0, then
// `report --format json` failed with type_error 316.
TEST(StoreText, ACsvCellWithAnFFByteIsImportedAndTheJsonReportWorks) {
  CapturedWarnings w;
  test::TempDir dir;
  const std::string csv = (dir / "bench.csv").string();
  std::ofstream(csv, std::ios::binary) << "model_filename,model_type,n_prompt,n_gen,cpu_info,avg_ts\n"
                                       << "stories\xFF.gguf,llama 7B F16,0,16,AMD \xFF" "EPYC,123.5\n";
  const auto rows = read_llama_bench(csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].model, "stories" + kReplacement + ".gguf");
  EXPECT_TRUE(has_line_with(w.lines, csv, "column model_filename is not valid UTF-8"));
  EXPECT_TRUE(has_line_with(w.lines, csv, "column cpu_info"));

  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  ASSERT_EQ(store->insert_peer_results(rows), 1);
  const nlohmann::json rep = build_report(*store, {});
  std::string text;
  ASSERT_NO_THROW(text = rep.dump(2));  // the plain dump: the report holds only UTF-8
  EXPECT_NE(text.find("stories" + kReplacement + ".gguf"), std::string::npos) << text;
}

// A store an older build wrote bytes into that are not UTF-8 still reads back as UTF-8, so its
// report and run details print.
TEST(StoreText, AStoreOlderBuildsFilledWithBadBytesReadsBackAsUtf8) {
  test::TempDir dir;
  const std::string path = (dir / "old.db").string();
  {
    auto store = Store::open(path, test::without_plan_history());
    // Written around the store's own functions, as an older build did: raw bytes cast to TEXT.
    ASSERT_EQ(sqlite3_exec(store->handle(),
                           "INSERT INTO models (path, sha256, name, added_at) VALUES (CAST(X'2F6DFF2E703634' AS TEXT), "
                           "'00', CAST(X'6C6CFF6D61' AS TEXT), 'x');"
                           "INSERT INTO runs (kind, status, model_id, backend, device, label, started_at) VALUES "
                           "('decode-proxy', 'ok', 1, 'cpu', CAST(X'475055FF' AS TEXT), CAST(X'FE6C6162656C' AS TEXT), 'x');"
                           "INSERT INTO samples (run_id, rep, decode_tok_s) VALUES (1, 0, 10.0);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  auto store = Store::open(path, test::without_plan_history());
  const auto run = store->run(1);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->device, "GPU" + kReplacement);
  EXPECT_EQ(store->model(1)->name, "ll" + kReplacement + "ma");
  const nlohmann::json rep = build_report(*store, {});
  std::string text;
  ASSERT_NO_THROW(text = rep.dump(2));
  EXPECT_NE(text.find(kReplacement + "label"), std::string::npos) << text;
}

// The probe's other two cases, through the CLI: a GGUF whose general.name holds 0xFF, at a path
// that holds 0xFF. decode-proxy measured, then failed and stored nothing; runs show and the
// JSON report then threw.
TEST(StoreText, AModelWithAnFFByteInItsNameAndPathIsStoredAndExported) {
  test::TempDir dir;
  std::string gguf = test::read_text_file(test::shared_model("stories260K.gguf").string());
  const size_t name_at = gguf.find("general.name");
  ASSERT_NE(name_at, std::string::npos);
  const size_t value_at = gguf.find("llama", name_at);  // the value, right after the key and its type and length
  ASSERT_EQ(value_at, name_at + 12 + 4 + 8);
  gguf[value_at + 2] = '\xFF';
  const std::string gguf_path = (dir / "named.gguf").string();
  std::ofstream(gguf_path, std::ios::binary) << gguf;
  const std::string model = (dir / "stories\xFF.p64").string();
  convert_to_p64(gguf_path, model, {});
  ASSERT_EQ(open_p64(model)->hparams().name, "ll\xFFma");

  const std::string db = (dir / "lab.db").string();
  const test::CliRun run =
      test::run_p64("decode-proxy '" + model + "' --backend cpu --tokens 2 --prompt-tokens 2 --runs 1 --warmup 0 --db " + db);
  ASSERT_EQ(run.status, 0) << run.err;
  const size_t stored_at = run.out.find("stored as run ");
  ASSERT_NE(stored_at, std::string::npos) << run.out;
  const std::string run_id = run.out.substr(stored_at + 14, run.out.find(' ', stored_at + 14) - stored_at - 14);
  EXPECT_NE(run.err.find("p64: warning: " + model.substr(0, model.size() - 5)), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("the model path is not valid UTF-8"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("the model name (general.name) is not valid UTF-8"), std::string::npos) << run.err;

  const test::CliRun show = test::run_p64("runs --db " + db + " show " + run_id + " --json");
  ASSERT_EQ(show.status, 0) << show.err;
  const nlohmann::json j = nlohmann::json::parse(show.out);
  EXPECT_EQ(j["model"]["name"], "ll" + kReplacement + "ma");
  EXPECT_NE(j["model"]["path"].get<std::string>().find("stories" + kReplacement + ".p64"), std::string::npos);
  const test::CliRun report = test::run_p64("report --format json --db " + db);
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("ll" + kReplacement + "ma"), std::string::npos);
}

}  // namespace
}  // namespace p64
