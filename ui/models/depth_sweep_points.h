#pragma once
// The points of a depth sweep (decode-proxy --depth), as the Runs panel's chart draws them: one
// per depth, from a finished session or from the stored runs a sweep left (engine/lab/experiment.h
// stores one run per depth with params_json.depth, depth_sweep and sweep_started_at).
#include <QString>

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/store_types.h"

namespace p64::ui {

struct RunRow;

struct DepthSweepPoint {
  int depth = 0;
  qint64 run_id = 0;            // 0: not stored
  double tok_s = 0;             // decode median
  double tok_s_stddev = 0;
  double effective_gbs = 0;     // median: (weights + KV at this depth) x tok/s
  double bytes_per_token = 0;
  double measured_read_gbs = 0; // the passport's read ceiling; 0 = not measured
  double roof_tok_s() const { return measured_read_gbs > 0 && bytes_per_token > 0 ? measured_read_gbs * 1e9 / bytes_per_token : 0; }
  double share() const { return measured_read_gbs > 0 ? effective_gbs / measured_read_gbs : 0; }
};

// One depth's point from what its run stores as summary (DecodeProxyResult as JSON).
DepthSweepPoint depth_sweep_point(int depth, qint64 run_id, const nlohmann::json& summary);

// The runs of the sweep `run` belongs to, by depth; empty when `run` is no sweep's.
std::vector<DepthSweepPoint> stored_sweep_points(const std::vector<RunRow>& rows, const RunRecord& run);

// "tok/s 12.3 ± 0.4 at depth 0 … 9.8 ± 0.2 at depth 512": one line for the panel's result label.
QString describe_sweep(const std::vector<DepthSweepPoint>& points);

}  // namespace p64::ui
