#pragma once
// A run's identity across stores (runs.uid, schema 6): what `p64 store merge` matches on, since
// row ids restart in every store. A run measured by this build gets a random id; a run that
// exists in many stores at once (the plan history each fresh store imports, every run of a store
// made before schema 6) gets a key derived from its content, so the same run copied into two
// stores, or migrated in two places, carries the same uid in both.
#include <cstdint>
#include <string>

struct sqlite3;

namespace p64 {

// "r-" and 32 random hex digits.
std::string random_run_uid();

// Sets runs.uid of `run_id` to "c-" and 32 hex digits of the SHA-256 of the run's content (its
// columns, its model's sha256 and the backend, device and host its passport names). A second run of the same content
// in this store gets the key with "-2", "-3", ... in order of row id.
void assign_content_run_uid(sqlite3* db, int64_t run_id);

// assign_content_run_uid for every run without a uid (schema 6's migration; a merge's source
// copy, where a run may have been written by hand without one), in order of row id.
void assign_missing_run_uids(sqlite3* db);

}  // namespace p64
