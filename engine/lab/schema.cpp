#include "engine/lab/schema.h"

#include <string>

#include "engine/common/error.h"
#include "engine/lab/sqlite_util.h"

namespace p64 {
namespace {

// Version 1: models, passports, runs and what a measured run produces.
constexpr const char* kV1 = R"sql(
CREATE TABLE models (
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
CREATE TABLE passports (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  backend TEXT NOT NULL DEFAULT '',
  device_name TEXT NOT NULL DEFAULT '',
  host_cpu TEXT NOT NULL DEFAULT '',
  json TEXT NOT NULL,
  imported INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE runs (
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
CREATE INDEX runs_by_model ON runs(model_id, kind);
CREATE TABLE samples (
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
CREATE INDEX samples_by_run ON samples(run_id);
CREATE TABLE timeline_ops (
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
CREATE INDEX timeline_ops_by_run ON timeline_ops(run_id);
)sql";

// Version 2: A/B comparisons with their verdicts, and the optimisation registry + history.
constexpr const char* kV2 = R"sql(
CREATE TABLE comparisons (
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
CREATE INDEX comparisons_by_switch ON comparisons(switch_name, model_id, device);
CREATE TABLE optimisations (
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
CREATE TABLE optimisation_history (
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
CREATE INDEX history_by_optimisation ON optimisation_history(optimisation_id);
)sql";

// Version 3: peer diagnostics (llama-bench), chat sessions, and a key/value table for
// one-time facts such as "the plan history was imported".
constexpr const char* kV3 = R"sql(
CREATE TABLE peer_results (
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
CREATE TABLE chat_sessions (
  id INTEGER PRIMARY KEY,
  model_id INTEGER REFERENCES models(id),
  backend TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL DEFAULT '',
  template_name TEXT NOT NULL DEFAULT '',
  sampler_json TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE TABLE chat_messages (
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
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

// Version 4: runs record why a failed run failed and the device name verdicts key on.
constexpr const char* kV4 = R"sql(
ALTER TABLE runs ADD COLUMN error TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN device TEXT NOT NULL DEFAULT '';
UPDATE runs SET device = COALESCE((SELECT device_name FROM passports WHERE passports.id = runs.passport_id), '');
)sql";

constexpr const char* kMigrations[] = {kV1, kV2, kV3, kV4};

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
    sql::exec(db, kMigrations[v]);
    sql::exec(db, ("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
    tx.commit();
    ++v;
  }
}

}  // namespace p64
