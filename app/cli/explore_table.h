#pragma once
// How `p64 explore` shows a matrix: rows models, columns switch sets, each cell B/A with its
// verdict and significance mark, then one line per measured cell (its A/B run, for
// `p64 runs show` and `p64 runs diff`); or the same as JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/lab/explore.h"

namespace p64::cli {

void print_explore_matrix(const ExploreMatrix& m, const std::string& store_path);
nlohmann::json explore_matrix_json(const ExploreMatrix& m);
// "rejected" -> "rej": the short verdict a cell shows.
std::string short_verdict(Verdict v);

}  // namespace p64::cli
