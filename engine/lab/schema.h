#pragma once
// The lab store's schema: PRAGMA user_version holds the version, and each migration moves a
// database from version N-1 to N inside one transaction. Migrations are forward-only and
// never change what they make once shipped: a change is a new migration appended to the list.
// Each skips what the store already has, so a store whose user_version says less than its
// tables do is completed, not refused.
#include <string>

struct sqlite3;

namespace p64 {

int latest_schema_version();

// Applies migrations user_version+1 .. target (each in its own transaction). A database at a
// version above latest_schema_version() is refused with p64::Error and left untouched.
// `target` below latest exists so tests can build an older database and migrate it.
void migrate_schema(sqlite3* db, int target);
int schema_version(sqlite3* db);

// Throws p64::Error naming `store_path` when a table or column that the store's schema version
// has is missing (dropped by hand or by a tool): such a store would fail only when a run is
// written, after the measurement.
void check_schema(sqlite3* db, const std::string& store_path);

// PRAGMA quick_check: every page and record readable (O(size), without index cross-checks).
// Throws p64::Error naming `store_path` with what SQLite found.
void check_store_integrity(sqlite3* db, const std::string& store_path);

}  // namespace p64
