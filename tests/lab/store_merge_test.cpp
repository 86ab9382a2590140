// p64 store merge: runs of several stores into one, once each, with the machine they ran on;
// sources read from copies only; a bad source leaves the destination as it was.
#include "engine/lab/store_merge.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/decode_test_models.h"
#include "engine/lab/schema.h"
#include "engine/lab/store.h"
#include "support/shared_files.h"
#include "support/store_checks.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

constexpr const char* kTables[] = {"models", "passports", "runs", "samples", "timeline_ops", "comparisons",
                                   "optimisations", "optimisation_history", "peer_results", "chat_sessions",
                                   "chat_messages", "explores", "explore_cells"};

int64_t count(sqlite3* db, const std::string& query) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr), SQLITE_OK) << query;
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << query;
  const int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

std::map<std::string, int64_t> table_counts(const std::string& path) {
  std::map<std::string, int64_t> out;
  auto store = Store::open(path);
  for (const char* t : kTables) out[t] = count(store->handle(), std::string("SELECT count(*) FROM ") + t);
  return out;
}

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool has_sqlite_side_files(const std::string& path) {
  return fs::exists(path + "-wal") || fs::exists(path + "-shm") || fs::exists(path + "-journal");
}

// A measured A/B run on `device`: samples of both sides, two timeline ops, a verdict.
RunBundle ab_run(const std::string& device, const std::string& label, double tok_s) {
  RunBundle b;
  b.run.kind = RunKind::Ab;
  b.run.backend = "cuda";
  b.run.config = "backend=cuda";
  b.run.label = label;
  b.run.summary_json = "{\"label\": \"" + label + "\"}";
  b.passport = Passport{};
  b.passport->device.name = device;
  b.passport->device.backend = "cuda";
  ModelRecord m;
  m.path = "/models/tiny.p64";
  m.sha256 = "abc123";
  m.name = "tiny";
  b.model = m;
  for (int i = 0; i < 4; ++i) {
    SampleRecord s;
    s.rep = i;
    s.side = i % 2 ? "b" : "a";
    s.decode_tok_s = tok_s + i;
    b.samples.push_back(s);
  }
  for (int i = 0; i < 2; ++i) {
    OpSpan op;
    op.name = i ? "down" : "gate_up";
    op.group = OpGroup::Ffn;
    op.dur_us = 10 + i;
    b.ops.push_back(op);
  }
  ComparisonRecord c;
  c.switch_name = "gemv_rows";
  c.backend = "cuda";
  c.config_a = "gemv_rows=1";
  c.config_b = "gemv_rows=2";
  c.a_median = tok_s;
  c.b_median = tok_s * 1.1;
  c.ratio_median = c.ratio_min = c.ratio_max = 1.1;
  c.quality_pass = true;
  c.verdict = Verdict::Win;
  b.comparison = c;
  return b;
}

// Each store imports the plan history on its first open (its runs, switches and history are in
// every store), then holds its own measured runs.
void add_verdict(Store& store, int64_t run_id, const std::string& at) {
  OptimisationRecord o;
  o.name = "test_switch";
  o.backend = "cuda";
  o.status = OptStatus::OptIn;
  const int64_t id = store.upsert_optimisation(o);
  store.record_status(id, OptStatus::Default, "promoted by two wins", run_id, "1.1x", false, at);
}

TEST(StoreMerge, OverlappingStoresMergeEachRunOnceAndASecondMergeAddsNothing) {
  test::TempDir dir;
  const std::string h100 = (dir / "h100.lab.db").string(), h200 = (dir / "h200.lab.db").string();
  const std::string dest = (dir / "all.lab.db").string();
  {
    auto a = Store::open(h100);
    const int64_t shared = a->write_run(ab_run("NVIDIA H100 80GB HBM3", "shared", 100));
    add_verdict(*a, shared, "2026-12-06T10:00:00Z");
  }
  fs::copy_file(h100, h200);  // the H200 store began as a copy: the shared run is in both
  {
    auto b = Store::open(h200);
    b->write_run(ab_run("NVIDIA H200", "h200 only", 200));
  }
  {
    auto a = Store::open(h100);
    a->write_run(ab_run("NVIDIA H100 80GB HBM3", "h100 only", 90));
  }
  const std::string h100_bytes = bytes_of(h100), h200_bytes = bytes_of(h200);
  const auto src_a = table_counts(h100), src_b = table_counts(h200);
  const int64_t plan_runs = src_a.at("runs") - 2;  // the imported plan history's
  ASSERT_GT(plan_runs, 0);

  const auto counts = merge_stores(dest, {h100, h200});
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].runs, plan_runs + 2);
  EXPECT_EQ(counts[0].runs_added, 2);  // the plan's runs were there: the fresh destination imported them
  EXPECT_EQ(counts[1].runs_added, 1);  // only "h200 only"
  EXPECT_EQ(counts[1].samples_added, 4);
  EXPECT_EQ(counts[1].timeline_ops_added, 2);
  EXPECT_EQ(counts[1].comparisons_added, 1);

  const auto merged = table_counts(dest);
  EXPECT_EQ(merged.at("runs"), plan_runs + 3);
  EXPECT_EQ(merged.at("samples"), src_a.at("samples") + 4);
  EXPECT_EQ(merged.at("timeline_ops"), 6);
  EXPECT_EQ(merged.at("comparisons"), 3);
  EXPECT_EQ(merged.at("passports"), src_a.at("passports") + 1);  // the H200 passport is new
  EXPECT_EQ(merged.at("optimisation_history"), src_a.at("optimisation_history"));
  EXPECT_EQ(merged.at("peer_results"), src_a.at("peer_results"));
  {
    auto store = Store::open(dest);
    EXPECT_EQ(test::integrity_check(*store), "ok");
    EXPECT_EQ(count(store->handle(), "SELECT count(DISTINCT uid) FROM runs"), plan_runs + 3);
    // Each run keeps its machine: the run's device and its passport's.
    for (const auto& [label, device] : std::map<std::string, std::string>{
             {"shared", "NVIDIA H100 80GB HBM3"}, {"h100 only", "NVIDIA H100 80GB HBM3"}, {"h200 only", "NVIDIA H200"}}) {
      bool found = false;
      for (const auto& r : store->runs())
        if (r.label == label) {
          found = true;
          EXPECT_EQ(r.device, device) << label;
          ASSERT_TRUE(store->passport(r.passport_id)) << label;
          EXPECT_EQ(store->passport(r.passport_id)->device_name, device) << label;
          EXPECT_EQ(store->samples(r.id).size(), 4u) << label;
          ASSERT_TRUE(store->comparison_for_run(r.id)) << label;
          EXPECT_EQ(store->comparison_for_run(r.id)->model_id, r.model_id) << label;
        }
      EXPECT_TRUE(found) << label;
    }
    // The verdict's history entry points at the merged run, and its status came along.
    const auto opts = store->find_optimisations("test_switch");
    ASSERT_EQ(opts.size(), 1u);
    EXPECT_EQ(opts[0].status, OptStatus::Default);
    const auto history = store->optimisation_history(opts[0].id);
    ASSERT_EQ(history.size(), 1u);
    ASSERT_TRUE(store->run(history[0].evidence_run_id));
    EXPECT_EQ(store->run(history[0].evidence_run_id)->label, "shared");
  }

  const auto again = merge_stores(dest, {h100, h200});
  for (const auto& c : again) {
    EXPECT_EQ(c.runs_added + c.samples_added + c.timeline_ops_added + c.comparisons_added + c.models_added +
                  c.passports_added + c.optimisations_added + c.history_added + c.peer_results_added +
                  c.chat_sessions_added + c.chat_messages_added,
              0);
  }
  EXPECT_EQ(table_counts(dest), merged);
  EXPECT_EQ(bytes_of(h100), h100_bytes) << "a source was written";
  EXPECT_EQ(bytes_of(h200), h200_bytes) << "a source was written";
  EXPECT_FALSE(has_sqlite_side_files(h100) || has_sqlite_side_files(h200)) << "files were made beside a source";
}

TEST(StoreMerge, ABadSourceStopsTheMergeAndLeavesTheDestinationByteIdentical) {
  test::TempDir dir;
  const std::string good = (dir / "good.lab.db").string(), dest = (dir / "dest.lab.db").string();
  Store::open(good)->write_run(ab_run("NVIDIA H200", "good", 200));
  Store::open(dest)->write_run(ab_run("NVIDIA H100 80GB HBM3", "mine", 100));
  const std::string before = bytes_of(dest);
  ASSERT_FALSE(has_sqlite_side_files(dest));

  const std::string text = (dir / "notes.lab.db").string();
  std::ofstream(text) << "this is not a database, only text that is long enough to fill a header.........\n";
  const std::string damaged = (dir / "damaged.lab.db").string();
  {
    auto s = Store::open(damaged);
    for (int i = 0; i < 60; ++i) s->write_run(ab_run("NVIDIA H200", "run " + std::to_string(i), i));
  }
  {
    const auto size = fs::file_size(damaged);
    ASSERT_GT(size, 8 * 4096u);
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    const std::string junk(4096, '\x5A');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string future = (dir / "future.lab.db").string();
  Store::open(future);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(future.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string missing = (dir / "missing.lab.db").string();

  for (const auto& [bad_path, says] : std::map<std::string, std::string>{
           {text, ": not a lab store ("},
           {damaged, ": the lab store is damaged ("},
           {future, ": schema version 99 is newer than this build understands"},
           {missing, ": no such file"}}) {
    const std::string bad = bad_path;  // clang 14 cannot capture a structured binding in the lambda
    const std::string bad_bytes = fs::exists(bad) ? bytes_of(bad) : "";
    // The good source comes first: it was already read when the bad one stopped the merge.
    const std::string e = test::error_of([&] { merge_stores(dest, {good, bad}); });
    EXPECT_NE(e.find(bad + says), std::string::npos) << e;
    EXPECT_EQ(bytes_of(dest), before) << bad;
    EXPECT_FALSE(has_sqlite_side_files(dest)) << bad;
    if (fs::exists(bad)) EXPECT_EQ(bytes_of(bad), bad_bytes) << bad;
  }
  auto store = Store::open(dest);
  ASSERT_EQ(store->runs(RunFilter{.include_imported = false}).size(), 1u);
}

TEST(StoreMerge, TheDestinationIsRefusedAsASourceWhateverPathNamesIt) {
  test::TempDir dir;
  const std::string dest = (dir / "lab.db").string();
  Store::open(dest)->write_run(ab_run("NVIDIA H200", "mine", 200));
  const std::string before = bytes_of(dest);
  std::vector<std::string> spellings = {dest, (dir.path() / "." / "lab.db").string()};
  std::error_code ec;
  fs::create_symlink(dest, dir / "link.db", ec);
#ifdef _WIN32
  // mingw-w64's libstdc++ 12 has no create_symlink (ENOSYS); the other spellings still count.
  if (!ec) spellings.push_back((dir / "link.db").string());
#else
  ASSERT_FALSE(ec) << ec.message();
  spellings.push_back((dir / "link.db").string());
#endif
  for (const std::string& same : spellings) {
    const std::string e = test::error_of([&] { merge_stores(dest, {same}); });
    EXPECT_NE(e.find(same + ": is the destination store"), std::string::npos) << e;
    EXPECT_EQ(bytes_of(dest), before);
  }
}

// A store written before run uids (schema 4) is read through a migrated copy: the source keeps
// its version and bytes, and its runs get the content key that any other migration of the same
// store gives them, so merging it and a migrated copy of it adds each run once.
TEST(StoreMerge, AnOlderSchemaSourceIsMigratedOnACopyOnly) {
  test::TempDir dir;
  const std::string old = (dir / "v4.lab.db").string(), dest = (dir / "dest.lab.db").string();
  {
    Store::Options o;
    o.import_plan_history = false;
    o.migrate_to = 4;
    auto s = Store::open(old, o);
    ASSERT_EQ(sqlite3_exec(s->handle(),
                           "INSERT INTO passports (fingerprint, device_name, json, created_at) VALUES ('fp', "
                           "'NVIDIA H200', '{}', 'x');"
                           "INSERT INTO runs (kind, status, passport_id, backend, device, started_at) VALUES "
                           "('decode-proxy', 'ok', 1, 'cuda', 'NVIDIA H200', '2026-12-02T16:42:36Z');"
                           "INSERT INTO samples (run_id, rep, decode_tok_s) VALUES (1, 0, 42.5);"
                           "INSERT INTO timeline_ops (run_id, name, op_group, layer, prefill, step, start_us, dur_us) "
                           "VALUES (1, 'gate_up', 'FFN', 0, 0, 1, 0, 4.5);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  const std::string before = bytes_of(old);
  const auto counts = merge_stores(dest, {old});
  EXPECT_EQ(counts[0].runs_added, 1);
  EXPECT_EQ(bytes_of(old), before);
  EXPECT_FALSE(has_sqlite_side_files(old));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(old.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    EXPECT_EQ(schema_version(db), 4);
    sqlite3_close(db);
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(old + suffix);  // the check's own
  }
  std::string uid;
  {
    auto store = Store::open(dest);
    const auto runs = store->runs(RunFilter{.include_imported = false});
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].device, "NVIDIA H200");
    EXPECT_EQ(runs[0].uid.rfind("c-", 0), 0u) << runs[0].uid;
    uid = runs[0].uid;
    ASSERT_EQ(store->samples(runs[0].id).size(), 1u);
    EXPECT_DOUBLE_EQ(store->samples(runs[0].id)[0].decode_tok_s, 42.5);
    ASSERT_EQ(store->timeline_ops(runs[0].id).size(), 1u);
  }
  const std::string migrated = (dir / "migrated.lab.db").string();
  fs::copy_file(old, migrated);
  {
    Store::Options o;
    o.import_plan_history = false;
    auto m = Store::open(migrated, o);
    ASSERT_EQ(m->runs().size(), 1u);
    EXPECT_EQ(m->runs()[0].uid, uid);
  }
  EXPECT_EQ(merge_stores(dest, {migrated})[0].runs_added, 0);
}

// Every build imports the plan history into a fresh store, but the plan's passport JSON grows
// with the build's passport fields, so its fingerprint differs between stores of different
// builds: the runs' content key must not depend on it, or each build's copy of the plan's runs
// is merged as runs of its own.
TEST(StoreMerge, ThePlanHistoryOfStoresFromDifferentBuildsIsMergedOnce) {
  test::TempDir dir;
  const std::string now = (dir / "now.lab.db").string(), older = (dir / "older.lab.db").string();
  const std::string dest = (dir / "all.lab.db").string();
  Store::open(now);
  {
    auto s = Store::open(older);
    // As a build before run uids with fewer passport fields left it.
    ASSERT_EQ(sqlite3_exec(s->handle(),
                           "UPDATE runs SET uid = NULL; UPDATE passports SET fingerprint = 'older build', json = "
                           "'{\"device\": {}}' WHERE imported = 1; PRAGMA user_version = 5;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  const auto counts = merge_stores(dest, {now, older});
  EXPECT_EQ(counts[0].runs_added, 0);
  EXPECT_EQ(counts[1].runs_added, 0);
  EXPECT_GT(counts[1].runs, 0);
}

// Each store registers a switch when its backend first runs there: the merged history keeps one
// registration, the earliest, and the decisions of every store.
TEST(StoreMerge, ASwitchKeepsItsEarliestRegistrationAndEveryDecision) {
  test::TempDir dir;
  auto make = [&](const std::string& name, const std::string& registered, const std::string& decided) {
    const std::string path = (dir / name).string();
    auto s = Store::open(path);
    OptimisationRecord o;
    o.name = "test_switch";
    o.backend = "cuda";
    const int64_t id = s->upsert_optimisation(o);
    const std::string sql = "INSERT INTO optimisation_history (optimisation_id, at, old_status, new_status, reason) "
                            "VALUES (" + std::to_string(id) + ", '" + registered + "', NULL, 'opt-in', 'registered by the cuda backend')";
    EXPECT_EQ(sqlite3_exec(s->handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    s->record_status(id, OptStatus::Candidate, "win on " + name, 0, "", false, decided);
    return path;
  };
  const std::string late = make("late.lab.db", "2026-12-06T10:00:00Z", "2026-12-06T11:00:00Z");
  const std::string early = make("early.lab.db", "2026-12-02T10:00:00Z", "2026-12-02T11:00:00Z");
  const std::string dest = (dir / "all.lab.db").string();
  merge_stores(dest, {late, early});
  const auto twice = table_counts(dest);
  merge_stores(dest, {early, late});
  EXPECT_EQ(table_counts(dest), twice);
  auto store = Store::open(dest);
  const auto opts = store->find_optimisations("test_switch");
  ASSERT_EQ(opts.size(), 1u);
  const auto history = store->optimisation_history(opts[0].id);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_FALSE(history[0].old_status);
  EXPECT_EQ(history[0].at, "2026-12-02T10:00:00Z");
  EXPECT_EQ(history[1].reason, "win on early.lab.db");
  EXPECT_EQ(history[2].reason, "win on late.lab.db");
  EXPECT_EQ(opts[0].status, OptStatus::Candidate);
}

TEST(StoreMerge, NewRunsGetDistinctRandomUids) {
  test::TempDir dir;
  Store::Options o;
  o.import_plan_history = false;
  auto s = Store::open((dir / "lab.db").string(), o);
  const int64_t a = s->write_run(ab_run("NVIDIA H200", "same", 1));
  const int64_t b = s->write_run(ab_run("NVIDIA H200", "same", 1));
  EXPECT_EQ(s->run(a)->uid.rfind("r-", 0), 0u) << s->run(a)->uid;
  EXPECT_EQ(s->run(a)->uid.size(), 34u);
  EXPECT_NE(s->run(a)->uid, s->run(b)->uid);
}

TEST(StoreMerge, TheCommandSaysWhatItMergedAndNamesABadSource) {
  test::TempDir dir;
  const std::string a = (dir / "a.lab.db").string(), dest = (dir / "all.lab.db").string();
  Store::open(a)->write_run(ab_run("NVIDIA H200", "a", 1));
  test::CliRun r = test::run_p64("store merge " + a + " --db " + dest);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("merged 1 store(s) into " + dest + ": 1 of "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("p64: merged  1/1 " + a), std::string::npos) << r.err;
  // The run keeps its uid in the destination, and `p64 runs show` names it.
  std::string uid;
  int64_t merged_id = 0;
  for (const auto& run : Store::open(a)->runs(RunFilter{.include_imported = false})) uid = run.uid;
  for (const auto& run : Store::open(dest)->runs(RunFilter{.include_imported = false})) merged_id = run.id;
  ASSERT_FALSE(uid.empty());
  r = test::run_p64("runs --db " + dest + " show " + std::to_string(merged_id) + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["uid"], uid);
  r = test::run_p64("store merge " + a + " " + dest + " --db " + dest);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("p64: error: " + dest + ": is the destination store", 0), 0u) << r.err;
}

// An explore comes with its cells (their runs renumbered as the destination numbers them), once;
// another store's explore of the same name and another plan keeps its cells apart as NAME@FILE.
TEST(StoreMerge, ExploresComeWithTheirCellsOnceAndANameClashStaysApart) {
  test::TempDir dir;
  const std::string src = (dir / "night.lab.db").string(), dest = (dir / "all.lab.db").string();
  int64_t src_run = 0;
  {
    auto s = Store::open(src);
    src_run = s->write_run(ab_run("NVIDIA H100 80GB HBM3", "cell", 100));
    const int64_t e = s->insert_explore("night", R"({"sets": ["opt.a=1"]})");
    s->add_explore_cell({e, 0, 0, src_run});
  }
  {
    auto d = Store::open(dest);
    d->write_run(ab_run("NVIDIA H200", "first in dest", 90));  // dest numbers the merged run otherwise
    d->insert_explore("night", R"({"sets": ["opt.b=1"]})");  // the same name, another plan
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto counts = merge_stores(dest, {src});
    EXPECT_EQ(counts[0].explores_added, pass ? 0 : 1) << "pass " << pass;
    EXPECT_EQ(counts[0].explore_cells_added, pass ? 0 : 1) << "pass " << pass;
  }
  auto d = Store::open(dest);
  EXPECT_TRUE(d->explore("night")->plan_json.find("opt.b=1") != std::string::npos);
  EXPECT_TRUE(d->explore_cells(d->explore("night")->id).empty());
  const auto merged = d->explore("night@night.lab.db");
  ASSERT_TRUE(merged);
  const auto cells = d->explore_cells(merged->id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_NE(cells[0].run_id, src_run);
  EXPECT_EQ(d->run(cells[0].run_id)->label, "cell");
  EXPECT_EQ(test::integrity_check(*d), "ok");
}

}  // namespace
}  // namespace p64
