// p64 report --format sql: the store's decode-proxy runs as llama-bench's SQL, valid SQL that
// SQLite executes into llama-bench's `test` table, read back by the same importer that reads
// llama-bench's own output; tg rows only for decode from an empty context, pp rows for prefills.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <fstream>

#include "engine/decode_test_models.h"
#include "engine/lab/llama_bench_sql.h"
#include "engine/lab/peer_import.h"
#include "engine/lab/store.h"
#include "support/store_checks.h"

namespace p64 {
namespace {


void run(Store& s, const std::string& path, const std::string& backend, int prompt, int gen,
         std::vector<double> decode, std::vector<double> prefill = {}) {
  RunBundle b;
  b.run.kind = RunKind::DecodeProxy;
  b.run.backend = backend;
  b.run.device = backend == "cpu" ? "cpu" : "NVIDIA H100 80GB HBM3";
  b.run.config = "backend=" + backend;
  b.run.git_revision = "abcdef123456";
  b.run.options_json = R"({"threads": 4, "switches": {"kv_f16": "1"}})";
  ModelRecord m;
  m.path = path;
  m.sha256 = std::string(64, 'c');
  m.arch = "llama";
  m.dtypes = "Q8_0 x7";
  m.file_bytes = 12345;
  b.model = m;
  for (size_t i = 0; i < decode.size(); ++i) {
    SampleRecord r;
    r.rep = static_cast<int32_t>(i);
    r.decode_tok_s = decode[i];
    r.prefill_tok_s = i < prefill.size() ? prefill[i] : 0;
    r.prompt_tokens = prompt;
    r.decode_tokens = gen;
    b.samples.push_back(r);
  }
  s.write_run(std::move(b));
}

TEST(LlamaBenchSql, RunsBecomeLlamaBenchRowsThatSqliteAndOurImporterRead) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  run(*store, "/m/it's.p64", "cpu", 1, 128, {100, 110, 120});                   // tg128
  run(*store, "/m/gpu.p64", "cuda", 512, 8, {600, 610}, {18000, 18200});        // pp512
  run(*store, "/m/deep.p64", "cpu", 32, 64, {90, 91});                          // neither
  const LlamaBenchSql out = llama_bench_sql(*store);
  EXPECT_EQ(out.rows, 2);
  EXPECT_EQ(out.runs_skipped, 1);

  // valid SQL: SQLite builds llama-bench's table from it
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, out.text.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT model_filename, n_prompt, n_gen, avg_ts, build_commit, backends, type_k "
                                   "FROM test ORDER BY n_gen DESC",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "it's.p64");
  EXPECT_EQ(sqlite3_column_int(st, 1), 0);
  EXPECT_EQ(sqlite3_column_int(st, 2), 128);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(st, 3), 110);  // the mean, as llama-bench's avg_ts
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 4)), "abcdef123456");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 5)), "CPU");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 6)), "f16");
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 1), 512);
  EXPECT_EQ(sqlite3_column_int(st, 2), 0);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(st, 3), 18100);
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);

  // and the importer that reads llama-bench's own -o sql reads ours
  const std::string file = (dir / "ours.sql").string();
  std::ofstream(file) << out.text;
  const std::vector<PeerResult> back = read_llama_bench(file);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].test, "tg128");
  EXPECT_NEAR(back[0].avg_ts, 110, 1e-6);
  EXPECT_NEAR(back[0].stddev_ts, 10, 1e-6);
  EXPECT_EQ(back[0].n_threads, 4);
  EXPECT_EQ(back[1].test, "pp512");
  EXPECT_EQ(back[1].backends, "CUDA");
  EXPECT_EQ(back[1].device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back[1].n_gpu_layers, 99);
}

TEST(LlamaBenchSql, TheReportCommandWritesItAndSaysWhatItLeftOut) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  {
    auto store = Store::open(db, test::without_plan_history());
    run(*store, "/m/a.p64", "cpu", 1, 64, {100, 101});
    run(*store, "/m/b.p64", "cpu", 32, 64, {90, 91});
  }
  const std::string out = (dir / "out.sql").string();
  const test::CliRun r = test::run_p64("report --format sql -o " + out + " --db " + db);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1 llama-bench row(s); 1 decode-proxy run(s) left out"), std::string::npos) << r.err;
  EXPECT_EQ(read_llama_bench(out).size(), 1u);
  const test::CliRun only_b = test::run_p64("report --format sql --model b.p64 --db " + db);
  EXPECT_EQ(only_b.out.find("INSERT"), std::string::npos) << only_b.out;
}

}  // namespace
}  // namespace p64
