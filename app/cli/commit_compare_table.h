#pragma once
// How `p64 runs compare` and `p64 runs revisions` print: a table, or JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/lab/commit_compare.h"

namespace p64::cli {

void print_commit_compare(const CommitCompare& c);
nlohmann::json commit_compare_json(const CommitCompare& c);
void print_revisions(const std::vector<StoredRevision>& revs, const std::string& store_path);

}  // namespace p64::cli
