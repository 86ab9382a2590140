#include "engine/lab/sqlite_util.h"

#include <cstring>

#include "engine/common/error.h"
#include "engine/model/utf8.h"

namespace p64::sql {

namespace {

// What a failed write means for the user: SQLite's "disk I/O error" alone does not say that
// the disk filled up (EFBIG, EDQUOT) or that nothing of the transaction was kept.
std::string disk_hint(sqlite3* db) {
  const int code = sqlite3_extended_errcode(db);
  if (code != SQLITE_FULL && (code & 0xFF) != SQLITE_IOERR) return "";
  std::string hint = " (";
  if (const int e = sqlite3_system_errno(db); e != 0) hint += std::string(std::strerror(e)) + "; ";
  return hint + "nothing of this write was stored; earlier runs are intact — free disk space and retry)";
}

}  // namespace

void fail(sqlite3* db, const std::string& what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  throw Error(std::string(file && *file ? file : "lab store") + ": " + what + ": " +
              (db ? sqlite3_errmsg(db) + disk_hint(db) : "out of memory"));
}

void exec(sqlite3* db, const char* text) {
  char* err = nullptr;
  if (sqlite3_exec(db, text, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    const char* file = sqlite3_db_filename(db, "main");
    throw Error(std::string(file && *file ? file : "lab store") + ": " + msg + disk_hint(db));
  }
}

Statement::Statement(sqlite3* db, std::string_view text) : db_(db) {
  if (sqlite3_prepare_v2(db, text.data(), static_cast<int>(text.size()), &stmt_, nullptr) != SQLITE_OK)
    fail(db, "cannot prepare \"" + std::string(text.substr(0, 60)) + "\"");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
// Text in and out of the store is valid UTF-8 (store_text.h says why); both directions, so a
// store an older build filled with other bytes still reads back as UTF-8.
Statement& Statement::bind(int i, std::string_view v) {
  const std::string valid = utf8::sanitize(v);
  if (sqlite3_bind_text(stmt_, i, valid.data(), static_cast<int>(valid.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail(db_, "bind");
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
Statement& Statement::bind_id(int i, int64_t id) { return id ? bind(i, id) : bind_null(i); }
Statement& Statement::bind_column(int i, const Statement& row, int col) {
  if (sqlite3_bind_value(stmt_, i, sqlite3_column_value(row.stmt_, col)) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "statement failed");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::i64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::f64(int col) const { return sqlite3_column_double(stmt_, col); }
bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return utf8::sanitize(std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))));
}

Transaction::Transaction(sqlite3* db) : db_(db), nested_(sqlite3_get_autocommit(db) == 0) {
  exec(db, nested_ ? "SAVEPOINT p64_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  if (nested_) {
    sqlite3_exec(db_, "ROLLBACK TO p64_nested", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "RELEASE p64_nested", nullptr, nullptr, nullptr);
  } else {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  exec(db_, nested_ ? "RELEASE p64_nested" : "COMMIT");
  done_ = true;
}

}  // namespace p64::sql
