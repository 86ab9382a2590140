#pragma once
// How `p64 decode-proxy --depth` shows a sweep: a table of decode tok/s, effective GB/s and the
// read roofline per depth, or the same as JSON.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/lab/experiment.h"

namespace p64::cli {

void print_depth_sweep(const ExperimentRequest& request, const ExperimentOutcome& outcome);
nlohmann::json depth_sweep_json(const ExperimentRequest& request, const ExperimentOutcome& outcome);

}  // namespace p64::cli
