#pragma once
// Thin RAII helpers over sqlite3's C API, private to engine/lab's .cpp files (the public
// store header does not include sqlite3.h). Every failure becomes a p64::Error that names
// the database file and SQLite's own message.
#include <cstdint>
#include <string>
#include <string_view>

#include <sqlite3.h>

namespace p64::sql {

[[noreturn]] void fail(sqlite3* db, const std::string& what);

void exec(sqlite3* db, const char* sql);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Bind by 1-based index; each returns *this so binds chain.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, uint32_t v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, uint64_t v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i);
  Statement& bind_id(int i, int64_t id);  // 0 binds NULL (an absent foreign key)
  // Binds column `col` of `row`'s current row as it is stored (type and bytes), for copies
  // between stores.
  Statement& bind_column(int i, const Statement& row, int col);

  bool step();      // true while a row is available
  void run();       // steps a statement that returns no rows
  void reset();

  int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;
  bool is_null(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so two writers queue on busy_timeout
// instead of both reading and then one failing to upgrade (SQLITE_BUSY mid-transaction).
// Inside an open transaction it becomes a savepoint, so store methods compose.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();  // rolls back unless committed
  void commit();

 private:
  sqlite3* db_;
  bool nested_;
  bool done_ = false;
};

}  // namespace p64::sql
