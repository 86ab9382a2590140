#pragma once
// The lab store: one SQLite file holding every measurement with the passport that produced
// it (schema in schema.cpp, documented in docs/measurement.md). WAL journal, foreign keys on,
// a busy timeout so concurrent writers queue, and every run written in one transaction, so
// a reader (the GUI) sees a run completely or not at all.
//
// Thread use: one Store per thread (SQLite connections are not shared here); several
// processes may open the same file at once.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/atomic_output.h"
#include "engine/lab/store_types.h"
#include "engine/runtime/passport.h"
#include "engine/runtime/timeline.h"

struct sqlite3;

namespace p64 {
class Model;
struct SwitchInfo;

// $XDG_DATA_HOME/p64lab/lab.db, or ~/.local/share/p64lab/lab.db.
std::string default_store_path();

// Adds the store file at `path` and SQLite's files beside it (-wal, -shm, -journal) to the
// files an output may never replace.
void protect_store_files(OutputPolicy& policy, const std::string& path);

// Everything one run writes, stored together or not at all.
struct RunBundle {
  RunRecord run;
  std::optional<ModelRecord> model;   // looked up / inserted; run.model_id is set from it
  std::optional<Passport> passport;   // deduplicated by fingerprint; run.passport_id set from it
  std::vector<SampleRecord> samples;
  std::vector<OpSpan> ops;
  std::optional<ComparisonRecord> comparison;
};

struct RunFilter {
  std::string model;  // substring of the model's path or name, or a sha256 prefix
  std::optional<RunKind> kind;
  std::string backend;
  bool include_imported = true;
  int limit = 0;       // 0 = all
};

struct OptimisationFilter {
  std::optional<OptStatus> status;
  std::string backend;
};

struct PeerFilter {
  std::string model;  // substring of model or model_type
  std::string device;
};

class Store {
 public:
  struct Options {
    bool import_plan_history = true;  // seed a fresh store from resources/plan_history.json
    int busy_timeout_ms = 15000;
    int migrate_to = 0;               // 0 = latest; tests use lower values to build old stores
  };

  // Creates the file when missing (in a folder that must exist; only default_store_path()
  // creates its folder), migrates it to the latest schema, and on a fresh store imports the
  // plan history. Throws p64::Error on a newer schema, a file that is not a database, a
  // missing folder, or a damaged store (PRAGMA quick_check fails, a table or column is missing):
  // commands that measure open the store first, so they stop before measuring.
  static std::unique_ptr<Store> open(const std::string& path);
  static std::unique_ptr<Store> open(const std::string& path, const Options& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;
  sqlite3* handle() { return db_; }  // for tests and integrity checks

  // --- runs ----------------------------------------------------------------------------
  int64_t write_run(RunBundle bundle);  // one transaction; returns the run id
  std::vector<RunRecord> runs(const RunFilter& filter = {}) const;
  std::optional<RunRecord> run(int64_t id) const;
  std::vector<SampleRecord> samples(int64_t run_id) const;
  std::vector<TimelineOpRecord> timeline_ops(int64_t run_id) const;
  std::optional<int64_t> latest_run_id(RunKind kind, int64_t model_id = 0) const;

  // --- models and passports ------------------------------------------------------------
  // Facts from a loaded model; sha256 is computed from the file unless the store already
  // has this path with the same size and mtime.
  ModelRecord describe_model(const Model& model, const std::string& path) const;
  int64_t upsert_model(const ModelRecord& m);
  std::vector<ModelRecord> models() const;
  std::optional<ModelRecord> model(int64_t id) const;
  std::optional<ModelRecord> find_model(const std::string& path_or_name) const;
  int64_t upsert_passport(const Passport& p, bool imported = false);
  std::optional<PassportRecord> passport(int64_t id) const;

  // --- comparisons ---------------------------------------------------------------------
  std::vector<ComparisonRecord> comparisons(const std::string& switch_name = "", int64_t model_id = 0) const;
  std::optional<ComparisonRecord> comparison_for_run(int64_t run_id) const;
  // The most recent verdict about this switch on this model and device (the promotion rule).
  std::optional<ComparisonRecord> previous_comparison(const std::string& switch_name, int64_t model_id,
                                                      const std::string& device) const;

  // --- explore matrices (explore.h) ----------------------------------------------------
  std::optional<ExploreRecord> explore(const std::string& name) const;
  std::vector<ExploreRecord> explores() const;  // oldest first
  int64_t insert_explore(const std::string& name, const std::string& plan_json);
  std::vector<ExploreCellRecord> explore_cells(int64_t explore_id) const;
  // Inside the A/B's own transaction (AbExperimentRequest::also_store), so a cell is stored with
  // its run or not at all.
  void add_explore_cell(const ExploreCellRecord& cell);

  // --- optimisation registry -----------------------------------------------------------
  // Registers the switches a backend offers; a new one gets its backend-declared status and a
  // first history entry; an existing one keeps its (possibly verdict-changed) status.
  void sync_switches(const std::string& backend, const std::vector<SwitchInfo>& switches);
  int64_t upsert_optimisation(const OptimisationRecord& o);
  std::vector<OptimisationRecord> optimisations(const OptimisationFilter& filter = {}) const;
  std::vector<OptimisationRecord> find_optimisations(const std::string& name) const;  // any backend
  std::vector<OptimisationHistoryEntry> optimisation_history(int64_t optimisation_id) const;
  // Appends a history entry and sets the status, in one transaction. `at` defaults to now
  // (imported entries carry the plan's own date).
  void record_status(int64_t optimisation_id, OptStatus new_status, const std::string& reason,
                     int64_t evidence_run_id, const std::string& evidence, bool imported = false,
                     const std::string& at = {});

  // --- peers ---------------------------------------------------------------------------
  int insert_peer_results(const std::vector<PeerResult>& results);  // returns rows added (dups skipped)
  std::vector<PeerResult> peer_results(const PeerFilter& filter = {}) const;

  // --- chat ----------------------------------------------------------------------------
  int64_t create_chat_session(const ChatSessionRecord& s);
  int64_t append_chat_message(const ChatMessageRecord& m);  // seq is assigned when 0
  std::vector<ChatSessionRecord> chat_sessions() const;
  std::vector<ChatMessageRecord> chat_messages(int64_t session_id) const;

  // --- meta ----------------------------------------------------------------------------
  std::optional<std::string> meta(const std::string& key) const;
  void set_meta(const std::string& key, const std::string& value);

 private:
  Store(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  int64_t insert_run_rows(const RunBundle& b);
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace p64
