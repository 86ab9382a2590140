#include "support/store_checks.h"

#include <sqlite3.h>

namespace p64::test {

std::string integrity_check(Store& store) {
  sqlite3_stmt* st = nullptr;
  std::string verdict = "PRAGMA integrity_check could not run";
  if (sqlite3_prepare_v2(store.handle(), "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    verdict = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return verdict;
}

}  // namespace p64::test
