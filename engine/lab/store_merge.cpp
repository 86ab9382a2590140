#include "engine/lab/store_merge.h"

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/common/platform.h"
#include "engine/lab/run_uid.h"
#include "engine/lab/schema.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

// A folder of this process's own under the system's temporary folder, removed with what is in it.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec) throw Error("p64 store merge: no temporary folder for the copies of the sources: " + ec.message());
    for (int attempt = 0; attempt < 100; ++attempt) {
      const fs::path p = base / ("p64-merge-" + std::to_string(platform::process_id()) + "-" + random_run_uid().substr(2, 8));
      if (fs::create_directory(p, ec)) {
        path_ = p;
        return;
      }
      if (ec) break;
    }
    throw Error(base.string() + ": cannot make a folder for the copies of the sources" + (ec ? ": " + ec.message() : ""));
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A checked copy of one source, at this build's schema.
struct SourceCopy {
  std::string path;  // as the user named it: every message names this, never the copy
  sqlite3* db = nullptr;
  SourceCopy() = default;
  SourceCopy(const SourceCopy&) = delete;
  SourceCopy& operator=(const SourceCopy&) = delete;
  ~SourceCopy() { sqlite3_close(db); }
};

bool has_table(sqlite3* db, const char* table) {
  sql::Statement s(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, table);
  return s.step();
}

std::unique_ptr<SourceCopy> copy_source(const std::string& path, const fs::path& folder, size_t index) {
  check_input_file(path);
  auto src = std::make_unique<SourceCopy>();
  src->path = path;
  const fs::path copy = folder / (std::to_string(index) + ".db");
  std::error_code ec;
  // The -wal holds committed runs not yet in the main file; a -journal, a write that the copy must undo.
  for (const char* suffix : {"", "-wal", "-journal"}) {
    const fs::path from = path + suffix, to = copy.string() + suffix;
    if (*suffix && !fs::is_regular_file(from, ec)) continue;
    if (!fs::copy_file(from, to, ec) || ec) throw Error(from.string() + ": cannot copy it to read: " + ec.message());
    fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write, ec);
  }
  if (sqlite3_open_v2(copy.string().c_str(), &src->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    throw Error(path + ": cannot open it as a lab store: " + (src->db ? sqlite3_errmsg(src->db) : "out of memory"));
  int version = 0;
  try {
    version = schema_version(src->db);
  } catch (const Error&) {
    throw Error(path + ": not a lab store (" + sqlite3_errmsg(src->db) + ")");
  }
  const int latest = latest_schema_version();
  if (version > latest)
    throw Error(path + ": schema version " + std::to_string(version) + " is newer than this build understands (" +
                std::to_string(latest) + "); merge it with a newer p64");
  if (version == 0 && !has_table(src->db, "runs")) throw Error(path + ": not a lab store (it has no runs table)");
  check_store_integrity(src->db, path);
  try {
    migrate_schema(src->db, latest);
  } catch (const Error& e) {
    throw Error(path + ": cannot bring a copy of it to schema version " + std::to_string(latest) + ": " + e.what());
  }
  check_schema(src->db, path);
  assign_missing_run_uids(src->db);  // a run without one would be added again by every merge
  return src;
}

std::vector<std::string> columns_without_id(sqlite3* db, const std::string& table) {
  sql::Statement s(db, "SELECT name FROM pragma_table_info(?) WHERE name <> 'id' ORDER BY cid");
  s.bind(1, table);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Rows of one table read from a source and inserted into the destination as they are, except
// the ids named at insert (foreign keys, which the destination numbers its own way). Source
// and destination have the same schema, this build's.
class TableCopy {
 public:
  TableCopy(sqlite3* src, sqlite3* dst, const std::string& table, const std::string& where = "",
            const std::string& on_conflict = "")
      : dst_(dst),
        cols_(columns_without_id(dst, table)),
        rows_(src, "SELECT id, " + joined(cols_) + " FROM " + table + " " + where + " ORDER BY id"),
        insert_(dst, "INSERT INTO " + table + " (" + joined(cols_) + ") VALUES (" + placeholders() + ") " + on_conflict) {}

  sql::Statement& rows() { return rows_; }
  int64_t id() const { return rows_.i64(0); }
  int column(const std::string& name) const {
    for (size_t i = 0; i < cols_.size(); ++i)
      if (cols_[i] == name) return static_cast<int>(i) + 1;
    throw Error("lab store: no column " + name);
  }
  int64_t i64(const std::string& name) const { return rows_.is_null(column(name)) ? 0 : rows_.i64(column(name)); }

  // Binds the current row's `names` to `query`'s parameters 1.. and returns its first column
  // as an id, 0 when it finds no row.
  int64_t find(sql::Statement& query, std::initializer_list<const char*> names) const {
    int i = 1;
    for (const char* n : names) query.bind_column(i++, rows_, column(n));
    const int64_t found = query.step() ? query.i64(0) : 0;
    query.reset();
    return found;
  }

  // Inserts the current row with `ids` (column, destination id; 0 = NULL) in place of its own;
  // returns the new row's id, 0 when ON CONFLICT skipped it.
  int64_t insert(std::initializer_list<std::pair<const char*, int64_t>> ids) {
    for (size_t i = 0; i < cols_.size(); ++i) {
      const int p = static_cast<int>(i) + 1;
      bool mapped = false;
      for (const auto& [name, id] : ids)
        if (cols_[i] == name) {
          insert_.bind_id(p, id);
          mapped = true;
        }
      if (!mapped) insert_.bind_column(p, rows_, p);
    }
    insert_.run();
    const bool added = sqlite3_changes(dst_) > 0;
    insert_.reset();
    return added ? sqlite3_last_insert_rowid(dst_) : 0;
  }

 private:
  std::string placeholders() const {
    std::string p;
    for (size_t i = 0; i < cols_.size(); ++i) p += i ? ",?" : "?";
    return p;
  }
  sqlite3* dst_;
  std::vector<std::string> cols_;
  sql::Statement rows_;
  sql::Statement insert_;
};

using IdMap = std::unordered_map<int64_t, int64_t>;

int64_t mapped(const IdMap& m, int64_t id) {
  const auto it = m.find(id);
  return it == m.end() ? 0 : it->second;
}

// Rows keyed by `key_columns` in the destination: found there, or inserted. Fills `ids`.
int64_t merge_keyed(TableCopy& t, sqlite3* dst, const std::string& table, std::initializer_list<const char*> key_columns,
                    IdMap& ids, std::initializer_list<std::pair<const char*, int64_t>> fk = {}) {
  std::string where;
  for (const char* c : key_columns) where += std::string(where.empty() ? "" : " AND ") + c + " = ?";
  sql::Statement find(dst, "SELECT id FROM " + table + " WHERE " + where);
  int64_t added = 0;
  while (t.rows().step()) {
    int64_t id = t.find(find, key_columns);
    if (!id) {
      id = t.insert(fk);
      ++added;
    }
    ids[t.id()] = id;
  }
  return added;
}

void merge_runs(sqlite3* src, sqlite3* dst, const IdMap& models, const IdMap& passports, IdMap& runs, MergeCounts& c) {
  TableCopy run(src, dst, "runs");
  TableCopy sample(src, dst, "samples", "WHERE run_id = ?");
  TableCopy op(src, dst, "timeline_ops", "WHERE run_id = ?");
  TableCopy cmp(src, dst, "comparisons", "WHERE run_id = ?");
  sql::Statement find(dst, "SELECT id FROM runs WHERE uid = ?");
  while (run.rows().step()) {
    ++c.runs;
    if (const int64_t id = run.find(find, {"uid"})) {
      runs[run.id()] = id;
      continue;
    }
    const int64_t id =
        run.insert({{"model_id", mapped(models, run.i64("model_id"))}, {"passport_id", mapped(passports, run.i64("passport_id"))}});
    runs[run.id()] = id;
    ++c.runs_added;
    for (TableCopy* child : {&sample, &op, &cmp}) {
      child->rows().reset();
      child->rows().bind(1, run.id());
      while (child->rows().step()) {
        if (child == &cmp)
          child->insert({{"run_id", id}, {"model_id", mapped(models, child->i64("model_id"))}});
        else
          child->insert({{"run_id", id}});
        ++(child == &sample ? c.samples_added : child == &op ? c.timeline_ops_added : c.comparisons_added);
      }
    }
  }
}

// History entries are matched by what they say, registrations by the switch alone. An
// optimisation that gained entries takes the status of its latest decision (an entry with an old
// status; registrations have none), the status record_status would have left had the decisions
// been taken in one store.
void merge_optimisations(sqlite3* src, sqlite3* dst, const IdMap& runs, MergeCounts& c) {
  IdMap opts;
  TableCopy opt(src, dst, "optimisations");
  c.optimisations_added += merge_keyed(opt, dst, "optimisations", {"name", "backend"}, opts);
  TableCopy hist(src, dst, "optimisation_history");
  sql::Statement find(dst,
                      "SELECT id FROM optimisation_history WHERE optimisation_id = ? AND at = ? AND old_status IS ? "
                      "AND new_status = ? AND reason = ? AND evidence = ?");
  sql::Statement first_registration(dst,
                                    "SELECT id, at FROM optimisation_history WHERE optimisation_id = ? AND "
                                    "old_status IS NULL ORDER BY at, id LIMIT 1");
  std::set<int64_t> changed;
  while (hist.rows().step()) {
    const int64_t opt_id = mapped(opts, hist.i64("optimisation_id"));
    find.bind(1, opt_id);
    int i = 2;
    for (const char* n : {"at", "old_status", "new_status", "reason", "evidence"})
      find.bind_column(i++, hist.rows(), hist.column(n));
    const bool known = find.step();
    find.reset();
    if (known) continue;
    // Every store registers a switch when its backend first runs: the merged history keeps one
    // registration, the earliest.
    if (hist.rows().is_null(hist.column("old_status"))) {
      first_registration.bind(1, opt_id);
      const bool registered = first_registration.step();
      const int64_t entry = registered ? first_registration.i64(0) : 0;
      const std::string at = registered ? first_registration.text(1) : std::string();
      first_registration.reset();
      if (registered) {
        if (hist.rows().text(hist.column("at")) < at) {
          sql::Statement earlier(dst, "UPDATE optimisation_history SET at = ?, new_status = ?, reason = ? WHERE id = ?");
          earlier.bind_column(1, hist.rows(), hist.column("at"))
              .bind_column(2, hist.rows(), hist.column("new_status"))
              .bind_column(3, hist.rows(), hist.column("reason"))
              .bind(4, entry)
              .run();
        }
        continue;
      }
    }
    hist.insert({{"optimisation_id", opt_id}, {"evidence_run_id", mapped(runs, hist.i64("evidence_run_id"))}});
    ++c.history_added;
    changed.insert(opt_id);
  }
  sql::Statement latest(dst,
                        "SELECT new_status FROM optimisation_history WHERE optimisation_id = ? AND old_status IS NOT NULL "
                        "ORDER BY at DESC, id DESC LIMIT 1");
  sql::Statement set(dst, "UPDATE optimisations SET status = ?, updated_at = ? WHERE id = ? AND status <> ?");
  for (const int64_t id : changed) {
    latest.bind(1, id);
    if (latest.step()) {
      const std::string status = latest.text(0);
      set.bind(1, status).bind(2, utc_now_iso()).bind(3, id).bind(4, status).run();
      set.reset();
    }
    latest.reset();
  }
}

void merge_chat(sqlite3* src, sqlite3* dst, const IdMap& models, MergeCounts& c) {
  IdMap sessions;
  TableCopy session(src, dst, "chat_sessions");
  sql::Statement find(dst,
                      "SELECT id FROM chat_sessions WHERE created_at = ? AND title = ? AND backend = ? AND "
                      "template_name = ? AND sampler_json = ?");
  while (session.rows().step()) {
    int64_t id = session.find(find, {"created_at", "title", "backend", "template_name", "sampler_json"});
    if (!id) {
      id = session.insert({{"model_id", mapped(models, session.i64("model_id"))}});
      ++c.chat_sessions_added;
    }
    sessions[session.id()] = id;
  }
  TableCopy message(src, dst, "chat_messages", "", "ON CONFLICT (session_id, seq) DO NOTHING");
  while (message.rows().step())
    if (message.insert({{"session_id", mapped(sessions, message.i64("session_id"))}})) ++c.chat_messages_added;
}

// Explores match by name and plan. One name with another plan (two machines' "nightly", whose
// model paths differ) comes in as NAME@SOURCE_FILE, so neither matrix takes the other's cells, and
// a second merge finds it under that name.
void merge_explores(sqlite3* src, sqlite3* dst, const IdMap& runs, const std::string& source_path, MergeCounts& c) {
  IdMap explores;
  TableCopy explore(src, dst, "explores");
  sql::Statement find(dst, "SELECT id, plan_json FROM explores WHERE name = ?");
  sql::Statement add(dst, "INSERT INTO explores (name, plan_json, created_at) VALUES (?,?,?)");
  const std::string suffix = "@" + fs::path(source_path).filename().string();
  while (explore.rows().step()) {
    const std::string name = explore.rows().text(explore.column("name"));
    const std::string plan = explore.rows().text(explore.column("plan_json"));
    int64_t id = 0;
    for (const std::string& candidate : {name, name + suffix}) {
      find.bind(1, candidate);
      const bool found = find.step();
      const bool same_plan = found && find.text(1) == plan;
      const int64_t found_id = found ? find.i64(0) : 0;
      find.reset();
      if (same_plan) id = found_id;
      if (same_plan || !found) {
        if (!found) {
          add.bind(1, candidate).bind(2, plan).bind_column(3, explore.rows(), explore.column("created_at")).run();
          add.reset();
          id = sqlite3_last_insert_rowid(dst);
          ++c.explores_added;
        }
        break;
      }
    }
    if (id) explores[explore.id()] = id;  // else both names hold other plans: its cells stay out
  }
  TableCopy cell(src, dst, "explore_cells", "", "ON CONFLICT (explore_id, model_index, set_index) DO NOTHING");
  while (cell.rows().step()) {
    const int64_t explore_id = mapped(explores, cell.i64("explore_id")), run_id = mapped(runs, cell.i64("run_id"));
    if (explore_id && run_id && cell.insert({{"explore_id", explore_id}, {"run_id", run_id}})) ++c.explore_cells_added;
  }
}

MergeCounts merge_one(sqlite3* src, sqlite3* dst, const std::string& source_path) {
  MergeCounts c;
  IdMap models, passports, runs;
  {
    TableCopy t(src, dst, "models");
    c.models_added = merge_keyed(t, dst, "models", {"path", "sha256"}, models);
  }
  {
    TableCopy t(src, dst, "passports");
    c.passports_added = merge_keyed(t, dst, "passports", {"fingerprint"}, passports);
  }
  merge_runs(src, dst, models, passports, runs, c);
  merge_optimisations(src, dst, runs, c);
  merge_explores(src, dst, runs, source_path, c);
  {
    TableCopy t(src, dst, "peer_results", "", "ON CONFLICT DO NOTHING");
    while (t.rows().step())
      if (t.insert({})) ++c.peer_results_added;
  }
  merge_chat(src, dst, models, c);
  return c;
}

}  // namespace

MergeCounts& MergeCounts::operator+=(const MergeCounts& o) {
  runs += o.runs;
  runs_added += o.runs_added;
  samples_added += o.samples_added;
  timeline_ops_added += o.timeline_ops_added;
  comparisons_added += o.comparisons_added;
  models_added += o.models_added;
  passports_added += o.passports_added;
  optimisations_added += o.optimisations_added;
  history_added += o.history_added;
  peer_results_added += o.peer_results_added;
  chat_sessions_added += o.chat_sessions_added;
  chat_messages_added += o.chat_messages_added;
  explores_added += o.explores_added;
  explore_cells_added += o.explore_cells_added;
  return *this;
}

std::vector<MergeCounts> merge_stores(const std::string& dest_path, const std::vector<std::string>& sources,
                                      const std::function<void(const MergeProgress&)>& progress) {
  if (sources.empty()) throw Error("p64 store merge: no source store given");
  std::error_code ec;
  for (const auto& s : sources)
    if (fs::exists(dest_path, ec) && fs::exists(s, ec) && fs::equivalent(s, dest_path, ec))
      throw Error(s + ": is the destination store (" + dest_path + "); a store cannot be merged into itself");
  const ScratchFolder scratch;
  std::vector<std::unique_ptr<SourceCopy>> copies;
  for (size_t i = 0; i < sources.size(); ++i) {
    copies.push_back(copy_source(sources[i], scratch.path(), i));
    if (progress) progress({MergeProgress::Stage::Checked, i, sources.size(), &sources[i], nullptr});
  }
  auto dest = Store::open(dest_path);
  std::vector<MergeCounts> counts;
  sql::Transaction tx(dest->handle());
  for (size_t i = 0; i < copies.size(); ++i) {
    counts.push_back(merge_one(copies[i]->db, dest->handle(), sources[i]));
    if (progress) progress({MergeProgress::Stage::Merged, i, sources.size(), &sources[i], &counts.back()});
  }
  tx.commit();
  return counts;
}

}  // namespace p64
