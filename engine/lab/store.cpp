#include "engine/lab/store.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/lab/plan_history.h"
#include "engine/lab/schema.h"
#include "engine/lab/sha256.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"

namespace p64 {

std::string default_store_path() {
  namespace fs = std::filesystem;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return (fs::path(x) / "p64lab" / "lab.db").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".local" / "share" / "p64lab" / "lab.db").string();
  return "p64lab.db";
}

void protect_store_files(OutputPolicy& policy, const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    policy.reads(path + suffix, "the lab store of this command");
}


std::unique_ptr<Store> Store::open(const std::string& path) { return open(path, Options{}); }

std::unique_ptr<Store> Store::open(const std::string& path, const Options& options) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  // Only the default store makes its own folder (the app-data folder of a fresh install); a
  // store named elsewhere goes into a folder that exists, so a typo in --db is an error, not a
  // new tree of folders with an empty store at its end.
  const fs::file_type parent_type = parent.empty() ? fs::file_type::directory : fs::status(parent, ec).type();
  if (parent_type != fs::file_type::directory) {
    if (parent_type != fs::file_type::not_found)
      throw Error(path + ": " + parent.string() + " is " + file_type_text(parent_type) + ", not a folder");
    if (fs::path(path) != fs::path(default_store_path()))
      throw Error(path + ": the folder " + parent.string() + " does not exist; create it first or give another path");
    fs::create_directories(parent, ec);
    if (ec) throw Error(path + ": cannot create the folder " + parent.string() + ": " + ec.message());
  }
  // SQLite would open a device node or a FIFO and fail later with a misleading I/O error.
  const fs::file_type type = fs::status(path, ec).type();
  if (type != fs::file_type::not_found && type != fs::file_type::regular)
    throw Error(path + " is " + file_type_text(type) + ", not a lab store file");
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(path + ": cannot open the lab store: " + msg);
  }
  std::unique_ptr<Store> store(new Store(path, db));
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  // Version check before anything writes: a newer store must stay exactly as it is (even
  // switching it to WAL would be a write).
  int version = 0;
  try {
    version = p64::schema_version(db);
  } catch (const Error& e) {
    throw Error(path + ": not a lab store (" + e.what() + ")");
  }
  if (version > latest_schema_version()) migrate_schema(db, latest_schema_version());  // throws, touches nothing
  // A damaged store is refused now, before a command measures anything it could not store.
  check_store_integrity(db, path);
  sql::exec(db, "PRAGMA journal_mode = WAL");
  sql::exec(db, "PRAGMA foreign_keys = ON");
  sql::exec(db, "PRAGMA synchronous = NORMAL");
  migrate_schema(db, options.migrate_to > 0 ? options.migrate_to : latest_schema_version());
  check_schema(db, path);
  if (options.import_plan_history && store->schema_version() >= 3) import_plan_history_once(*store);
  return store;
}

Store::~Store() { sqlite3_close(db_); }

int Store::schema_version() const { return p64::schema_version(db_); }

// ---------------------------------------------------------------------------------------
// models and passports

ModelRecord Store::describe_model(const Model& model, const std::string& path) const {
  namespace fs = std::filesystem;
  ModelRecord r;
  std::error_code ec;
  const auto canonical = fs::weakly_canonical(path, ec);
  // The file is hashed and stat'ed by `path` as given; only the text the store keeps is made UTF-8.
  r.path = store_text(ec ? path : canonical.string(), path, "the model path");
  const HParams& h = model.hparams();
  r.name = store_text(!h.name.empty() ? h.name : fs::path(path).stem().string(), path, "the model name (general.name)");
  r.arch = store_text(h.arch, path, "the architecture (general.architecture)");
  r.weight_bytes = model.weight_bytes();
  r.n_layer = h.n_layer;
  r.n_embd = h.n_embd;
  r.n_head = h.n_head;
  r.n_head_kv = h.n_head_kv;
  r.n_ff = h.n_ff;
  r.n_vocab = h.n_vocab;
  r.n_ctx_train = h.n_ctx_train;
  std::map<std::string, int> counts;
  for (const auto& t : model.tensors()) ++counts[std::string(dtype_name(t.dtype))];
  for (const auto& [name, n] : counts) r.dtypes += (r.dtypes.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  nlohmann::json header = {{"source", model.source()}, {"tensors", model.tensors().size()},
                           {"rope_base", h.rope_base}, {"head_dim", h.head_dim}, {"tied_output", h.tied_output},
                           {"file_type", h.file_type}};
  r.header_json = json_text(header);

  if (fs::is_regular_file(path, ec)) {
    r.file_bytes = fs::file_size(path, ec);
    r.file_mtime = std::chrono::duration_cast<std::chrono::seconds>(fs::last_write_time(path, ec).time_since_epoch()).count();
    sql::Statement s(db_, "SELECT sha256 FROM models WHERE path = ? AND file_bytes = ? AND file_mtime = ? LIMIT 1");
    s.bind(1, r.path).bind(2, r.file_bytes).bind(3, r.file_mtime);
    r.sha256 = s.step() ? s.text(0) : sha256_file(path);
  } else {
    // An in-memory model (tests, synthetic): identified by its label and shape.
    r.sha256 = sha256_hex(r.header_json.data(), r.header_json.size()) ;
  }
  return r;
}

int64_t Store::upsert_model(const ModelRecord& m) {
  // Insert-or-update then select: safe against another process inserting the same model.
  sql::Statement ins(db_,
                     "INSERT INTO models (path, sha256, file_bytes, file_mtime, name, arch, weight_bytes, n_layer, "
                     "n_embd, n_head, n_head_kv, n_ff, n_vocab, n_ctx_train, dtypes, header_json, added_at) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(path, sha256) DO UPDATE SET "
                     "file_bytes = excluded.file_bytes, file_mtime = excluded.file_mtime");
  ins.bind(1, m.path).bind(2, m.sha256).bind(3, m.file_bytes).bind(4, m.file_mtime).bind(5, m.name).bind(6, m.arch);
  ins.bind(7, m.weight_bytes).bind(8, m.n_layer).bind(9, m.n_embd).bind(10, m.n_head).bind(11, m.n_head_kv);
  ins.bind(12, m.n_ff).bind(13, m.n_vocab).bind(14, m.n_ctx_train).bind(15, m.dtypes);
  ins.bind(16, m.header_json.empty() ? std::string("{}") : m.header_json);
  ins.bind(17, m.added_at.empty() ? utc_now_iso() : m.added_at);
  ins.run();
  sql::Statement find(db_, "SELECT id FROM models WHERE path = ? AND sha256 = ?");
  find.bind(1, m.path).bind(2, m.sha256);
  if (!find.step()) sql::fail(db_, "model row vanished after insert");
  return find.i64(0);
}

namespace {

constexpr const char* kModelColumns =
    "id, path, sha256, file_bytes, file_mtime, name, arch, weight_bytes, n_layer, n_embd, n_head, n_head_kv, n_ff, "
    "n_vocab, n_ctx_train, dtypes, header_json, added_at";

ModelRecord read_model(const sql::Statement& s) {
  ModelRecord m;
  m.id = s.i64(0);
  m.path = s.text(1);
  m.sha256 = s.text(2);
  m.file_bytes = static_cast<uint64_t>(s.i64(3));
  m.file_mtime = s.i64(4);
  m.name = s.text(5);
  m.arch = s.text(6);
  m.weight_bytes = static_cast<uint64_t>(s.i64(7));
  uint32_t* dims[] = {&m.n_layer, &m.n_embd, &m.n_head, &m.n_head_kv, &m.n_ff, &m.n_vocab, &m.n_ctx_train};
  for (int i = 0; i < 7; ++i) *dims[i] = static_cast<uint32_t>(s.i64(8 + i));
  m.dtypes = s.text(15);
  m.header_json = s.text(16);
  m.added_at = s.text(17);
  return m;
}

}  // namespace

std::vector<ModelRecord> Store::models() const {
  sql::Statement s(db_, std::string("SELECT ") + kModelColumns + " FROM models ORDER BY id");
  std::vector<ModelRecord> out;
  while (s.step()) out.push_back(read_model(s));
  return out;
}

std::optional<ModelRecord> Store::model(int64_t id) const {
  sql::Statement s(db_, std::string("SELECT ") + kModelColumns + " FROM models WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_model(s);
}

std::optional<ModelRecord> Store::find_model(const std::string& key) const {
  // Paths are stored in the system's own spelling (describe_model): on Windows `/models/a.p64`
  // is kept as `Z:\models\a.p64`, so a path key is also looked for with native separators.
  const std::string native_key = std::filesystem::path(key).make_preferred().string();
  sql::Statement s(db_, std::string("SELECT ") + kModelColumns +
                            " FROM models WHERE path IN (?1, ?2) OR name = ?1 OR sha256 LIKE ?1 || '%' OR path LIKE '%' || ?2 "
                            "|| '%' ORDER BY (path IN (?1, ?2)) DESC, id DESC LIMIT 1");
  s.bind(1, key).bind(2, native_key);
  if (!s.step()) return std::nullopt;
  return read_model(s);
}

int64_t Store::upsert_passport(const Passport& p, bool imported) {
  const std::string json = json_text(nlohmann::json(p));
  const std::string fp = sha256_hex(json.data(), json.size());
  sql::Statement ins(db_,
                     "INSERT INTO passports (fingerprint, backend, device_name, host_cpu, json, imported, created_at) "
                     "VALUES (?,?,?,?,?,?,?) ON CONFLICT(fingerprint) DO NOTHING");
  ins.bind(1, fp).bind(2, p.device.backend).bind(3, p.device.name).bind(4, p.host.cpu_model).bind(5, json);
  ins.bind(6, imported).bind(7, utc_now_iso()).run();
  sql::Statement find(db_, "SELECT id FROM passports WHERE fingerprint = ?");
  find.bind(1, fp);
  if (!find.step()) sql::fail(db_, "passport row vanished after insert");
  return find.i64(0);
}

std::optional<PassportRecord> Store::passport(int64_t id) const {
  sql::Statement s(db_,
                   "SELECT id, fingerprint, backend, device_name, host_cpu, json, imported, created_at FROM passports "
                   "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  PassportRecord r;
  r.id = s.i64(0);
  r.fingerprint = s.text(1);
  r.backend = s.text(2);
  r.device_name = s.text(3);
  r.host_cpu = s.text(4);
  r.json = s.text(5);
  r.imported = s.i64(6) != 0;
  r.created_at = s.text(7);
  return r;
}

// ---------------------------------------------------------------------------------------
// meta

std::optional<std::string> Store::meta(const std::string& key) const {
  sql::Statement s(db_, "SELECT value FROM meta WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

void Store::set_meta(const std::string& key, const std::string& value) {
  sql::Statement s(db_, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  s.bind(1, key).bind(2, value).run();
}

}  // namespace p64
