#include "engine/lab/schema.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/lab/run_uid.h"
#include "engine/lab/sqlite_util.h"

namespace p64 {
namespace {

// Version 1: models, passports, runs and what a measured run produces.
constexpr const char* kV1 = R"sql(
CREATE TABLE IF NOT EXISTS models (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  file_bytes INTEGER NOT NULL DEFAULT 0,
  file_mtime INTEGER NOT NULL DEFAULT 0,
  name TEXT NOT NULL DEFAULT '',
  arch TEXT NOT NULL DEFAULT '',
  weight_bytes INTEGER NOT NULL DEFAULT 0,
  n_layer INTEGER, n_embd INTEGER, n_head INTEGER, n_head_kv INTEGER, n_ff INTEGER,
  n_vocab INTEGER, n_ctx_train INTEGER,
  dtypes TEXT NOT NULL DEFAULT '',
  header_json TEXT NOT NULL DEFAULT '{}',
  added_at TEXT NOT NULL,
  UNIQUE (path, sha256)
);
CREATE TABLE IF NOT EXISTS passports (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  backend TEXT NOT NULL DEFAULT '',
  device_name TEXT NOT NULL DEFAULT '',
  host_cpu TEXT NOT NULL DEFAULT '',
  json TEXT NOT NULL,
  imported INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('decode-proxy', 'timeline', 'ab', 'chat')),
  status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'cancelled')),
  model_id INTEGER REFERENCES models(id),
  passport_id INTEGER REFERENCES passports(id),
  backend TEXT NOT NULL DEFAULT '',
  config TEXT NOT NULL DEFAULT '',
  options_json TEXT NOT NULL DEFAULT '{}',
  params_json TEXT NOT NULL DEFAULT '{}',
  summary_json TEXT NOT NULL DEFAULT '{}',
  git_revision TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '',
  imported INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_model ON runs(model_id, kind);
CREATE TABLE IF NOT EXISTS samples (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  side TEXT NOT NULL DEFAULT '',
  warm INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  decode_tokens INTEGER NOT NULL DEFAULT 0,
  decode_tok_s REAL NOT NULL DEFAULT 0,
  prefill_tok_s REAL NOT NULL DEFAULT 0,
  ttft_ms REAL NOT NULL DEFAULT 0,
  effective_gbs REAL NOT NULL DEFAULT 0,
  bandwidth_share REAL NOT NULL DEFAULT 0,
  peak_device_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS samples_by_run ON samples(run_id);
CREATE TABLE IF NOT EXISTS timeline_ops (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  op_group TEXT NOT NULL,
  layer INTEGER NOT NULL,
  prefill INTEGER NOT NULL,
  step INTEGER NOT NULL,
  start_us REAL NOT NULL,
  dur_us REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS timeline_ops_by_run ON timeline_ops(run_id);
)sql";

// Version 2: A/B comparisons with their verdicts, and the optimisation registry + history.
constexpr const char* kV2 = R"sql(
CREATE TABLE IF NOT EXISTS comparisons (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  switch_name TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  model_id INTEGER REFERENCES models(id),
  device TEXT NOT NULL DEFAULT '',
  config_a TEXT NOT NULL, config_b TEXT NOT NULL,
  a_median REAL NOT NULL, b_median REAL NOT NULL,
  ratio_median REAL NOT NULL, ratio_min REAL NOT NULL, ratio_max REAL NOT NULL,
  quality_pass INTEGER NOT NULL,
  quality_json TEXT NOT NULL DEFAULT '{}',
  verdict TEXT NOT NULL CHECK (verdict IN ('rejected', 'inconclusive', 'win', 'promoted')),
  reason TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS comparisons_by_switch ON comparisons(switch_name, model_id, device);
CREATE TABLE IF NOT EXISTS optimisations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  backend TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('default', 'opt-in', 'rejected', 'candidate')),
  default_value TEXT NOT NULL DEFAULT '',
  allowed_values TEXT NOT NULL DEFAULT '',
  imported INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  UNIQUE (name, backend)
);
CREATE TABLE IF NOT EXISTS optimisation_history (
  id INTEGER PRIMARY KEY,
  optimisation_id INTEGER NOT NULL REFERENCES optimisations(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  old_status TEXT,
  new_status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  evidence_run_id INTEGER REFERENCES runs(id),
  evidence TEXT NOT NULL DEFAULT '',
  imported INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS history_by_optimisation ON optimisation_history(optimisation_id);
)sql";

// Version 3: peer diagnostics (llama-bench), chat sessions, and a key/value table for
// one-time facts such as "the plan history was imported".
constexpr const char* kV3 = R"sql(
CREATE TABLE IF NOT EXISTS peer_results (
  id INTEGER PRIMARY KEY,
  tool TEXT NOT NULL,
  source_file TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL,
  model_type TEXT NOT NULL DEFAULT '',
  quant TEXT NOT NULL DEFAULT '',
  test TEXT NOT NULL,
  n_prompt INTEGER NOT NULL, n_gen INTEGER NOT NULL,
  device TEXT NOT NULL DEFAULT '',
  backends TEXT NOT NULL DEFAULT '',
  n_threads INTEGER NOT NULL DEFAULT 0, n_gpu_layers INTEGER NOT NULL DEFAULT 0,
  flash_attn INTEGER NOT NULL DEFAULT 0,
  avg_ts REAL NOT NULL, stddev_ts REAL NOT NULL DEFAULT 0,
  samples_ts TEXT NOT NULL DEFAULT '[]',
  model_size INTEGER NOT NULL DEFAULT 0,
  build_commit TEXT NOT NULL DEFAULT '',
  test_time TEXT NOT NULL DEFAULT '',
  raw_json TEXT NOT NULL DEFAULT '{}',
  imported_at TEXT NOT NULL,
  UNIQUE (tool, model, test, device, n_threads, n_gpu_layers, flash_attn, test_time, avg_ts)
);
CREATE TABLE IF NOT EXISTS chat_sessions (
  id INTEGER PRIMARY KEY,
  model_id INTEGER REFERENCES models(id),
  backend TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL DEFAULT '',
  template_name TEXT NOT NULL DEFAULT '',
  sampler_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_messages (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL,
  tokens INTEGER NOT NULL DEFAULT 0,
  decode_tok_s REAL NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, seq)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

bool has_column(sqlite3* db, const std::string& table, const std::string& column) {
  sql::Statement s(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  s.bind(1, table).bind(2, column);
  return s.step();
}

// Version 4: runs record why a failed run failed and the device name verdicts key on.
void migrate_v4(sqlite3* db) {
  if (!has_column(db, "runs", "error")) sql::exec(db, "ALTER TABLE runs ADD COLUMN error TEXT NOT NULL DEFAULT ''");
  if (has_column(db, "runs", "device")) return;  // filled by the runs that wrote it
  sql::exec(db, "ALTER TABLE runs ADD COLUMN device TEXT NOT NULL DEFAULT ''");
  sql::exec(db, "UPDATE runs SET device = COALESCE((SELECT device_name FROM passports WHERE passports.id = "
                "runs.passport_id), '')");
}

// Version 5: each timeline op keeps the bytes it moved (0 where unknown, as in every older run),
// so a stored trace shows GB/s per op without the model file at hand.
void migrate_v5(sqlite3* db) {
  if (!has_column(db, "timeline_ops", "bytes"))
    sql::exec(db, "ALTER TABLE timeline_ops ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0");
}

// Version 6: each run carries a uid that stays the same in every store holding it (run_uid.h),
// the key `p64 store merge` matches runs on. Runs written before get their content key.
void migrate_v6(sqlite3* db) {
  if (!has_column(db, "runs", "uid")) sql::exec(db, "ALTER TABLE runs ADD COLUMN uid TEXT");
  assign_missing_run_uids(db);
  sql::exec(db, "CREATE UNIQUE INDEX IF NOT EXISTS runs_by_uid ON runs(uid)");
}

// Version 7: the explore matrix (explore.h): a plan of models x switch sets, named, and the A/B
// run that measured each of its cells, so an interrupted explore resumes where it stopped.
constexpr const char* kV7 = R"sql(
CREATE TABLE IF NOT EXISTS explores (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plan_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS explore_cells (
  id INTEGER PRIMARY KEY,
  explore_id INTEGER NOT NULL REFERENCES explores(id) ON DELETE CASCADE,
  model_index INTEGER NOT NULL,
  set_index INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  UNIQUE (explore_id, model_index, set_index)
);
)sql";

// Version 8: each timeline op keeps the FLOPs it performed (0 where unknown, as in every older
// run), for the per-op compute roofline.
void migrate_v8(sqlite3* db) {
  if (!has_column(db, "timeline_ops", "flops"))
    sql::exec(db, "ALTER TABLE timeline_ops ADD COLUMN flops REAL NOT NULL DEFAULT 0");
}

// Each migration completes what its version adds and skips what is already there, so a store
// whose user_version was set back (by hand, by a tool, by a copy of the tables into an older
// file) moves forward instead of failing on "table ... already exists".
using Migration = void (*)(sqlite3*);
constexpr Migration kMigrations[] = {
    [](sqlite3* db) { sql::exec(db, kV1); },
    [](sqlite3* db) { sql::exec(db, kV2); },
    [](sqlite3* db) { sql::exec(db, kV3); },
    migrate_v4,
    migrate_v5,
    migrate_v6,
    [](sqlite3* db) { sql::exec(db, kV7); },
    migrate_v8,
};

// A schema version as a fresh store has it, built in memory: what check_schema compares with.
struct ReferenceSchema {
  sqlite3* db = nullptr;
  explicit ReferenceSchema(int version) {
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) sql::fail(db, "cannot open an in-memory database");
    for (int v = 0; v < version; ++v) kMigrations[v](db);
  }
  ~ReferenceSchema() { sqlite3_close(db); }
};

}  // namespace

int latest_schema_version() { return static_cast<int>(std::size(kMigrations)); }

int schema_version(sqlite3* db) {
  sql::Statement s(db, "PRAGMA user_version");
  s.step();
  return static_cast<int>(s.i64(0));
}

void migrate_schema(sqlite3* db, int target) {
  const int latest = latest_schema_version();
  if (target > latest) target = latest;
  int v = schema_version(db);
  if (v > latest) {
    const char* file = sqlite3_db_filename(db, "main");
    throw Error(std::string(file ? file : "lab store") + ": schema version " + std::to_string(v) +
                " is newer than this build understands (" + std::to_string(latest) +
                "); refusing to touch it — use a newer p64 or another --db");
  }
  while (v < target) {
    sql::Transaction tx(db);
    // Re-read inside the write lock: another process may have migrated meanwhile.
    const int now = schema_version(db);
    if (now > v) {
      v = now;
      continue;  // the destructor rolls back the empty transaction
    }
    kMigrations[v](db);
    sql::exec(db, ("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
    tx.commit();
    ++v;
  }
}

void check_store_integrity(sqlite3* db, const std::string& path) {
  std::string problems;
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(3)", -1, &st, nullptr);
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const auto* row = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      if (row && std::string_view(row) != "ok") problems += (problems.empty() ? "" : "; ") + std::string(row);
    }
  if (rc != SQLITE_DONE) problems += (problems.empty() ? "" : "; ") + std::string(sqlite3_errmsg(db));
  sqlite3_finalize(st);
  if (!problems.empty())
    throw Error(path + ": the lab store is damaged (" + problems +
                "); refusing to use it (restore it from a copy, or give another --db)");
}

void check_schema(sqlite3* db, const std::string& store_path) {
  const ReferenceSchema reference(std::min(schema_version(db), latest_schema_version()));
  sql::Statement tables(reference.db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  const std::string damaged = store_path + ": the lab store is damaged: ";
  const std::string advice = "; refusing to use it (restore it from a copy, or give another --db)";
  while (tables.step()) {
    const std::string table = tables.text(0);
    sql::Statement exists(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    exists.bind(1, table);
    if (!exists.step()) throw Error(damaged + "table '" + table + "' is missing" + advice);
    sql::Statement columns(reference.db, "SELECT name FROM pragma_table_info(?)");
    columns.bind(1, table);
    while (columns.step())
      if (!has_column(db, table, columns.text(0)))
        throw Error(damaged + "table '" + table + "' has no column '" + columns.text(0) + "'" + advice);
  }
}

}  // namespace p64
