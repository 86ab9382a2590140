#pragma once
// The lab store's schema: PRAGMA user_version holds the version, and each migration moves a
// database from version N-1 to N inside one transaction. Migrations are forward-only and
// never edited once shipped: a change is a new migration appended to the list.
struct sqlite3;

namespace p64 {

int latest_schema_version();

// Applies migrations user_version+1 .. target (each in its own transaction). A database at a
// version above latest_schema_version() is refused with p64::Error and left untouched.
// `target` below latest exists so tests can build an older database and migrate it.
void migrate_schema(sqlite3* db, int target);
int schema_version(sqlite3* db);

}  // namespace p64
