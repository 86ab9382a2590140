#pragma once
// The lab reports every measured figure over its repetitions, never as a single best run: the
// median with the min-max range (the plan's A/B rule: report the spread) and the sample standard
// deviation with the coefficient of variation (what llama-bench users read as "± stddev").
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

struct MinMedianMax {
  double min = 0, median = 0, max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two values
  double cv = 0;      // stddev / mean; 0 when undefined
  int n = 0;
  double spread() const { return median > 0 ? (max - min) / median : 0.0; }  // relative
};

MinMedianMax min_median_max(std::span<const double> values);  // all zero when empty

void to_json(nlohmann::json& j, const MinMedianMax& m);
// Summaries stored before stddev and cv were recorded read them as 0.
void from_json(const nlohmann::json& j, MinMedianMax& m);

}  // namespace p64
