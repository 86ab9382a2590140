#pragma once
// Reports from the store: the scoreboard of the user's own runs (stage, tok/s with min-max and
// stddev, delta vs the first run on the same model and device, peer diagnostics with a ratio only
// to a run on the peer's model and device), the G0-G5 bars on the latest run (the plan's bars only
// on the plan's model, report_scope.h; bars the user gives on any), the latest timeline's per-op
// split, roofline figures and the rejected-optimisation list. The imported plan history is a
// section of its own (plan_history.h), never mixed into these.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace p64 {
class Store;

// The plan's bars (§1) as defaults; G5 is a share of the measured read bandwidth.
struct BarThresholds {
  double g1_tok_s = 13, g2_tok_s = 25, g3_tok_s = 35, g4_tok_s = 70;
  double g5_bandwidth_share = 0.40;
};

struct ReportOptions {
  std::string model;  // substring of the model path/name; empty = every model
  BarThresholds bars;
  // The bars were given by the user (p64 report --g1..--g5): they apply to the reported model,
  // whatever it is. Otherwise they are the plan's and apply to kPlanBarsModel only.
  bool bars_from_user = false;
};

// The report as JSON (the other formats render this object, so they cannot disagree).
nlohmann::json build_report(const Store& store, const ReportOptions& options);
std::string render_markdown(const nlohmann::json& report);
std::string render_csv(const nlohmann::json& report);   // the scoreboard rows
std::string render_html(const nlohmann::json& report);  // one file, inline SVG charts

}  // namespace p64
