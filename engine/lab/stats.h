#pragma once
// The lab reports every measured figure as min-median-max over its repetitions (the plan's
// A/B rule: two runs minimum, report the spread), never as a single best run.
#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

struct MinMedianMax {
  double min = 0, median = 0, max = 0;
  int n = 0;
  double spread() const { return median > 0 ? (max - min) / median : 0.0; }  // relative
};

MinMedianMax min_median_max(std::span<const double> values);  // all zero when empty

void to_json(nlohmann::json& j, const MinMedianMax& m);
void from_json(const nlohmann::json& j, MinMedianMax& m);

}  // namespace p64
