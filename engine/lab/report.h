#pragma once
// Reports from the store: the plan's §3 scoreboard (stage, tok/s with min-max, delta vs the
// first run, peer diagnostic and ratio), the G0-G5 bars evaluated on stored data, the latest
// timeline's per-op split, roofline figures and the rejected-optimisation list.
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
};

// The report as JSON (the other formats render this object, so they cannot disagree).
nlohmann::json build_report(const Store& store, const ReportOptions& options);
std::string render_markdown(const nlohmann::json& report);
std::string render_csv(const nlohmann::json& report);   // the scoreboard rows
std::string render_html(const nlohmann::json& report);  // one file, inline SVG charts

}  // namespace p64
