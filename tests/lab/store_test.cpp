#include "engine/lab/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/decode_test_models.h"
#include "engine/lab/plan_history.h"
#include "engine/lab/schema.h"
#include "engine/runtime/backend.h"
#include "lab/toy_backend.h"
#include "support/exit_status.h"
#include "support/scoped_env.h"
#include "support/shared_files.h"
#include "support/store_checks.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;


RunBundle sample_run(int n_samples, const std::string& label) {
  RunBundle b;
  b.run.kind = RunKind::DecodeProxy;
  b.run.backend = "toy";
  b.run.config = "backend=toy";
  b.run.label = label;
  b.passport = Passport{};
  b.passport->device.name = "toy device";
  b.passport->device.backend = "toy";
  for (int i = 0; i < n_samples; ++i) {
    SampleRecord s;
    s.rep = i;
    s.decode_tok_s = 100.0 + i;
    s.decode_tokens = 32;
    b.samples.push_back(s);
  }
  return b;
}

int64_t count(sqlite3* db, const char* table) {
  sqlite3_stmt* st = nullptr;
  const std::string q = std::string("SELECT count(*) FROM ") + table;
  EXPECT_EQ(sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

TEST(Store, FreshStoreIsWalWithForeignKeysAndLatestSchema) {
  test::TempDir dir;
  fs::create_directory(dir / "sub");  // a store goes into a folder that exists (StoreFolder tests)
  auto store = Store::open((dir / "sub" / "lab.db").string(), test::without_plan_history());
  EXPECT_EQ(store->schema_version(), latest_schema_version());
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(store->handle(), "PRAGMA journal_mode", -1, &st, nullptr);
  sqlite3_step(st);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_prepare_v2(store->handle(), "PRAGMA foreign_keys", -1, &st, nullptr);
  sqlite3_step(st);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
}

TEST(Store, RunRoundTripWithSamplesOpsAndModel) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  auto model = test::make_toy_model();
  RunBundle b = sample_run(3, "first");
  b.model = store->describe_model(*model, "toy-in-memory");
  OpSpan op;
  op.name = "qkv";
  op.group = OpGroup::Attn;
  op.layer = 1;
  op.dur_us = 12.5;
  b.ops = {op, op};
  b.ops[1].bytes = 3u << 30;  // past 32 bits: the column holds a 64-bit count
  b.ops[1].flops = 6.5e9;
  const int64_t id = store->write_run(b);
  auto run = store->run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->kind, RunKind::DecodeProxy);
  EXPECT_EQ(run->status, RunStatus::Ok);
  EXPECT_EQ(run->device, "toy device");
  EXPECT_NE(run->model_id, 0);
  EXPECT_NE(run->passport_id, 0);
  EXPECT_FALSE(run->finished_at.empty());
  auto samples = store->samples(id);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_DOUBLE_EQ(samples[2].decode_tok_s, 102.0);
  auto ops = store->timeline_ops(id);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].group, "ATTN");
  EXPECT_EQ(ops[0].layer, 1);
  EXPECT_EQ(ops[0].bytes, 0u);
  EXPECT_EQ(ops[1].bytes, 3ull << 30);
  EXPECT_DOUBLE_EQ(ops[0].flops, 0);
  EXPECT_DOUBLE_EQ(ops[1].flops, 6.5e9);
  auto m = store->model(run->model_id);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->n_layer, 2u);
  EXPECT_EQ(m->weight_bytes, model->weight_bytes());
  EXPECT_EQ(m->sha256.size(), 64u);

  // The same model and passport again reuse their rows.
  RunBundle b2 = sample_run(1, "second");
  b2.model = store->describe_model(*model, "toy-in-memory");
  const int64_t id2 = store->write_run(b2);
  EXPECT_EQ(store->run(id2)->model_id, run->model_id);
  EXPECT_EQ(store->run(id2)->passport_id, run->passport_id);
  RunFilter f;
  f.kind = RunKind::DecodeProxy;
  EXPECT_EQ(store->runs(f).size(), 2u);
  f.kind = RunKind::Timeline;
  EXPECT_TRUE(store->runs(f).empty());
  EXPECT_EQ(store->latest_run_id(RunKind::DecodeProxy).value(), id2);
}

TEST(Store, AFailedWriteLeavesNoHalfRun) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  RunBundle b = sample_run(2, "bad");
  b.comparison = ComparisonRecord{};
  b.comparison->config_a = "a";
  b.comparison->config_b = "b";
  b.comparison->model_id = 999;  // no such model: the foreign key fails at the end
  EXPECT_THROW(store->write_run(b), Error);
  EXPECT_EQ(count(store->handle(), "runs"), 0);
  EXPECT_EQ(count(store->handle(), "samples"), 0);
}

TEST(Store, MigratesAnOlderStoreKeepingItsRows) {
  test::TempDir dir;
  const std::string path = (dir / "old.db").string();
  int64_t id = 0;
  {
    Store::Options o = test::without_plan_history();
    o.migrate_to = 1;  // a store as the first schema version wrote it
    auto old = Store::open(path, o);
    ASSERT_EQ(old->schema_version(), 1);
    // Version 1 has no device/error columns and no comparisons table; write a run by hand.
    sqlite3_exec(old->handle(),
                 "INSERT INTO passports (fingerprint, device_name, json, created_at) VALUES ('fp', 'old gpu', '{}', 'x');"
                 "INSERT INTO runs (kind, status, passport_id, backend, started_at) VALUES ('decode-proxy', 'ok', 1, "
                 "'cpu', '2026-01-01T00:00:00Z');"
                 "INSERT INTO samples (run_id, rep, decode_tok_s) VALUES (1, 0, 42.5);",
                 nullptr, nullptr, nullptr);
    id = sqlite3_last_insert_rowid(old->handle());
    EXPECT_EQ(id, 1);
    sqlite3_stmt* st = nullptr;
    EXPECT_NE(sqlite3_prepare_v2(old->handle(), "SELECT * FROM comparisons", -1, &st, nullptr), SQLITE_OK);
    sqlite3_finalize(st);
  }
  auto store = Store::open(path, test::without_plan_history());
  EXPECT_EQ(store->schema_version(), latest_schema_version());
  auto run = store->run(1);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->device, "old gpu");  // version 4 fills the new column from the passport
  ASSERT_EQ(store->samples(1).size(), 1u);
  EXPECT_DOUBLE_EQ(store->samples(1)[0].decode_tok_s, 42.5);
  EXPECT_TRUE(store->comparisons().empty());
  EXPECT_EQ(test::integrity_check(*store), "ok");
}

// Versions 5 and 8 give timeline ops their bytes and FLOPs: a timeline stored before keeps its
// spans, each with bytes and FLOPs 0 (unknown), and runs written after keep theirs.
TEST(Store, TimelineOpsOfAVersion4StoreReadBackWithUnknownBytesAndFlops) {
  test::TempDir dir;
  const std::string path = (dir / "v4.db").string();
  {
    Store::Options o = test::without_plan_history();
    o.migrate_to = 4;
    auto old = Store::open(path, o);
    ASSERT_EQ(old->schema_version(), 4);
    ASSERT_EQ(sqlite3_exec(old->handle(),
                           "INSERT INTO runs (kind, status, backend, started_at) VALUES ('timeline', 'ok', 'cpu', "
                           "'2026-01-01T00:00:00Z');"
                           "INSERT INTO timeline_ops (run_id, name, op_group, layer, prefill, step, start_us, dur_us) "
                           "VALUES (1, 'gate_up', 'FFN', 0, 0, 32, 10.0, 4.5);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  auto store = Store::open(path, test::without_plan_history());
  EXPECT_EQ(store->schema_version(), latest_schema_version());
  auto ops = store->timeline_ops(1);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "gate_up");
  EXPECT_DOUBLE_EQ(ops[0].dur_us, 4.5);
  EXPECT_EQ(ops[0].bytes, 0u);
  EXPECT_DOUBLE_EQ(ops[0].flops, 0);
  RunBundle b = sample_run(1, "after");
  OpSpan op;
  op.name = "down";
  op.bytes = 4096;
  op.flops = 8192;
  b.ops = {op};
  const int64_t id = store->write_run(b);
  ASSERT_EQ(store->timeline_ops(id).size(), 1u);
  EXPECT_EQ(store->timeline_ops(id)[0].bytes, 4096u);
  EXPECT_DOUBLE_EQ(store->timeline_ops(id)[0].flops, 8192);
  EXPECT_EQ(test::integrity_check(*store), "ok");
}

TEST(Store, EveryOlderSchemaVersionMigratesToTheLatest) {
  test::TempDir dir;
  for (int v = 1; v < latest_schema_version(); ++v) {
    const std::string path = (dir / ("v" + std::to_string(v) + ".db")).string();
    Store::Options o = test::without_plan_history();
    o.migrate_to = v;
    ASSERT_EQ(Store::open(path, o)->schema_version(), v);
    auto store = Store::open(path, test::without_plan_history());
    EXPECT_EQ(store->schema_version(), latest_schema_version()) << "from " << v;
    EXPECT_NO_THROW(store->write_run(sample_run(1, "after"))) << "from " << v;
  }
}

// The probe's case: a store whose user_version was set back below the tables it has was refused
// with "table comparisons already exists". It moves forward, rows and columns kept.
TEST(Store, AStoreWhoseUserVersionWasSetBackMigratesForward) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  {
    auto store = Store::open(path, test::without_plan_history());
    store->write_run(sample_run(2, "kept"));
    // A device that is not the passport's: version 4's back-fill must not run over it again.
    sqlite3_exec(store->handle(), "UPDATE runs SET device = 'renamed gpu'", nullptr, nullptr, nullptr);
  }
  for (int older : {0, 1, 2, 3, 4}) {
    {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(older)).c_str(), nullptr, nullptr, nullptr),
                SQLITE_OK);
      sqlite3_close(db);
    }
    std::unique_ptr<Store> store;
    ASSERT_NO_THROW(store = Store::open(path, test::without_plan_history())) << "user_version " << older;
    EXPECT_EQ(store->schema_version(), latest_schema_version());
    ASSERT_EQ(store->runs().size(), 1u);
    EXPECT_EQ(store->runs()[0].label, "kept");
    EXPECT_EQ(store->runs()[0].device, "renamed gpu");
    EXPECT_EQ(store->samples(store->runs()[0].id).size(), 2u);
    EXPECT_EQ(test::integrity_check(*store), "ok");
  }
}

// A table dropped by hand or by a tool made the store fail only when a run was written, after
// the measurement; it is refused when the store is opened, naming the file and the table.
TEST(Store, ADroppedTableOrColumnIsRefusedWhenTheStoreIsOpened) {
  test::TempDir dir;
  for (const char* damage : {"DROP TABLE samples", "ALTER TABLE runs DROP COLUMN label"}) {
    const std::string path = (dir / "lab.db").string();
    fs::remove(path);
    Store::open(path, test::without_plan_history());
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, damage, nullptr, nullptr, nullptr), SQLITE_OK) << damage;
    sqlite3_close(db);
    const std::string e = test::error_of([&] { Store::open(path, test::without_plan_history()); });
    EXPECT_NE(e.find(path + ": the lab store is damaged: "), std::string::npos) << e;
    EXPECT_NE(e.find(std::string(damage).find("samples") != std::string::npos ? "table 'samples' is missing"
                                                                                : "table 'runs' has no column 'label'"),
              std::string::npos)
        << e;
  }
}

TEST(Store, CorruptPagesAreRefusedWhenTheStoreIsOpened) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  {
    auto store = Store::open(path, test::without_plan_history());
    sqlite3_exec(store->handle(), "BEGIN", nullptr, nullptr, nullptr);
    for (int i = 0; i < 200; ++i) store->write_run(sample_run(5, "run " + std::to_string(i)));
    sqlite3_exec(store->handle(), "COMMIT", nullptr, nullptr, nullptr);
  }
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 8 * 4096u);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));  // one whole page in the middle
    const std::string junk(4096, '\x5A');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string e = test::error_of([&] { Store::open(path, test::without_plan_history()); });
  EXPECT_NE(e.find(path + ": the lab store is damaged ("), std::string::npos) << e;
  EXPECT_NE(e.find("refusing to use it"), std::string::npos) << e;
}

TEST(Store, RefusesANewerSchemaAndLeavesTheFileUntouched) {
  test::TempDir dir;
  const std::string path = (dir / "future.db").string();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE future (x); PRAGMA user_version = 99;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  auto read_all = [&] {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string before = read_all();
  try {
    Store::open(path);
    FAIL() << "a newer store was opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("future.db"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Store, RefusesAFileThatIsNotADatabase) {
  test::TempDir dir;
  const std::string path = (dir / "junk.db").string();
  std::ofstream(path) << std::string(4096, 'x');
  EXPECT_THROW(Store::open(path), Error);
}

#ifndef _WIN32  // the writers are forked children; Windows has no fork
TEST(Store, TwoProcessesWritingAtOnceLoseNothing) {
  test::TempDir dir;
  const std::string path = (dir / "lab.db").string();
  Store::open(path, test::without_plan_history());  // create and migrate before the writers start
  constexpr int kRunsEach = 40;
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) {
      int rc = 0;
      try {
        auto store = Store::open(path, test::without_plan_history());  // a connection of the child's own
        for (int i = 0; i < kRunsEach; ++i) store->write_run(sample_run(5, "proc" + std::to_string(k)));
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_EQ(test::exit_code(status), 0);
  }
  auto store = Store::open(path, test::without_plan_history());
  EXPECT_EQ(count(store->handle(), "runs"), 2 * kRunsEach);
  EXPECT_EQ(count(store->handle(), "samples"), 2 * kRunsEach * 5);
  EXPECT_EQ(count(store->handle(), "passports"), 1);
  EXPECT_EQ(test::integrity_check(*store), "ok");
  for (const auto& r : store->runs()) EXPECT_EQ(store->samples(r.id).size(), 5u) << "run " << r.id;
}
#endif

TEST(Store, ChatSessionsAndMessages) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  ChatSessionRecord s;
  s.backend = "cpu";
  s.title = "hello";
  const int64_t sid = store->create_chat_session(s);
  ChatMessageRecord m;
  m.session_id = sid;
  m.role = "user";
  m.content = "Once upon a time";
  store->append_chat_message(m);
  m.role = "assistant";
  m.content = "there was a lab.";
  m.tokens = 5;
  store->append_chat_message(m);
  auto msgs = store->chat_messages(sid);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].seq, 1);
  EXPECT_EQ(msgs[1].seq, 2);
  EXPECT_EQ(msgs[1].role, "assistant");
  m.role = "robot";  // not a chat role
  EXPECT_THROW(store->append_chat_message(m), Error);
}

TEST(Store, SwitchSyncKeepsAVerdictChangedStatus) {
  test::TempDir dir;
  auto store = Store::open((dir / "lab.db").string(), test::without_plan_history());
  test::ToyBackend toy;
  store->sync_switches("toy", toy.switches());
  auto opts = store->find_optimisations("fast");
  ASSERT_EQ(opts.size(), 1u);
  EXPECT_EQ(opts[0].status, OptStatus::Candidate);
  store->record_status(opts[0].id, OptStatus::Rejected, "lost an A/B", 0, "0.9x");
  store->sync_switches("toy", toy.switches());  // a later start registers the same switches
  opts = store->find_optimisations("fast");
  EXPECT_EQ(opts[0].status, OptStatus::Rejected);
  auto hist = store->optimisation_history(opts[0].id);
  ASSERT_EQ(hist.size(), 2u);
  EXPECT_FALSE(hist[0].old_status.has_value());
  EXPECT_EQ(hist[1].old_status, OptStatus::Candidate);
  EXPECT_EQ(hist[1].new_status, OptStatus::Rejected);
  OptimisationFilter f;
  f.status = OptStatus::OptIn;
  EXPECT_EQ(store->optimisations(f).size(), 2u);
}

TEST(StoreFolder, AStoreInAMissingFolderIsRefusedAndNothingIsCreated) {
  test::TempDir dir;
  const std::string path = (dir / "typo" / "deeper" / "lab.db").string();
  const std::string e = test::error_of([&] { Store::open(path, test::without_plan_history()); });
  EXPECT_NE(e.find(path + ": the folder " + (dir / "typo" / "deeper").string() + " does not exist"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_empty(dir.path()));

  std::ofstream(dir / "file") << "not a folder";
  const std::string under_file = (dir / "file" / "lab.db").string();
  const std::string f = test::error_of([&] { Store::open(under_file, test::without_plan_history()); });
  EXPECT_NE(f.find(under_file + ": " + (dir / "file").string() + " is a regular file, not a folder"), std::string::npos)
      << f;

  // A new store file in a folder that exists is still made.
  EXPECT_EQ(Store::open((dir / "new.db").string(), test::without_plan_history())->schema_version(), latest_schema_version());
}

#ifndef _WIN32  // device nodes and FIFOs as POSIX has them
TEST(StoreFolder, ADeviceAFolderOrAFifoIsRefusedAsTheStoreAndLeftAsItWas) {
  test::TempDir dir;
  const std::string null_dev = test::error_of([] { Store::open("/dev/null", test::without_plan_history()); });
  EXPECT_NE(null_dev.find("/dev/null is a character device, not a lab store file"), std::string::npos) << null_dev;
  EXPECT_EQ(fs::status("/dev/null").type(), fs::file_type::character);
  const std::string folder = test::error_of([&] { Store::open(dir.path().string(), test::without_plan_history()); });
  EXPECT_NE(folder.find(dir.path().string() + " is a folder, not a lab store file"), std::string::npos) << folder;
  const std::string fifo = (dir / "lab.fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string f = test::error_of([&] { Store::open(fifo, test::without_plan_history()); });  // would block in SQLite's open
  EXPECT_NE(f.find(fifo + " is a FIFO, not a lab store file"), std::string::npos) << f;
  const test::CliRun r = test::run_p64("runs --db /dev/null");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/dev/null is a character device"), std::string::npos) << r.err;
}
#endif

TEST(StoreFolder, TheDefaultStoreMakesItsOwnFolder) {
  test::TempDir dir;
  const test::ScopedEnv xdg("XDG_DATA_HOME", (dir / "data").string());
  ASSERT_EQ(default_store_path(), (dir / "data" / "p64lab" / "lab.db").string());
  EXPECT_NO_THROW(Store::open(default_store_path(), test::without_plan_history()));
  EXPECT_TRUE(fs::is_regular_file(default_store_path()));
}

TEST(StoreFolder, DbInAMissingFolderIsRefusedByTheCli) {
  test::TempDir dir;
  const std::string db = (dir / "typo" / "lab.db").string();
  const std::string model = test::stories260k_p64();
  for (const std::string& cmd : {"runs --db " + db, "report --db " + db, "opt list --db " + db,
                                 "decode-proxy " + model + " --backend cpu --tokens 2 --runs 1 --warmup 0 --db " + db}) {
    const test::CliRun r = test::run_p64(cmd);
    EXPECT_NE(r.status, 0) << cmd;
    EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(db + ": the folder " + (dir / "typo").string() + " does not exist"), std::string::npos)
        << cmd << "\n" << r.err;
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// decode-proxy opens and checks the store before it measures: a damaged store stops it at once,
// with no measurement run and thrown away.
TEST(StoreFolder, ADamagedStoreStopsAMeasurementBeforeItStarts) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  Store::open(db, test::without_plan_history());
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "DROP TABLE samples", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(handle);
  const test::CliRun r = test::run_p64("decode-proxy " + test::stories260k_p64() +
                                       " --backend cpu --tokens 2 --runs 1 --warmup 0 --db " + db);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(db + ": the lab store is damaged: table 'samples' is missing"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("decode-proxy ["), std::string::npos) << "it measured first:\n" << r.err;
}

}  // namespace
}  // namespace p64
