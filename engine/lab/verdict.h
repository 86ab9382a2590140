#pragma once
// The plan's A/B verdict rules (docs/measurement.md, "Verdict rules"):
//   - at least two runs of each side, interleaved ABAB...;
//   - REJECTED on any quality-gate failure, or when median(B)/median(A) < 1 - 2%;
//   - a WIN when B's slowest run beats A's fastest (the difference is outside both spreads);
//     PROMOTED when the previous verdict on the same switch, model and device was a win too
//     (two consecutive wins); a first win stays WIN until confirmed;
//   - otherwise INCONCLUSIVE (the difference is within the runs' spread).
#include <optional>
#include <span>
#include <string>

#include "engine/lab/store_types.h"

namespace p64 {

struct VerdictRules {
  double regression_limit = 0.02;  // reject when B is slower than A by more than this share
  int min_runs = 2;                // per side
};

struct VerdictInput {
  std::span<const double> a_tok_s;  // decode tok/s in run order (A_i ran just before B_i)
  std::span<const double> b_tok_s;
  bool quality_pass = true;
  std::string quality_failure;
  std::optional<Verdict> previous;  // the last verdict on this switch + model + device
};

struct VerdictOutcome {
  Verdict verdict = Verdict::Inconclusive;
  double a_median = 0, b_median = 0;
  double ratio_median = 0;            // median(B) / median(A)
  double ratio_min = 0, ratio_max = 0;  // over interleaved pairs B_i / A_i
  std::string reason;
};

// Throws p64::Error when a side has fewer than rules.min_runs runs or a non-positive value.
VerdictOutcome decide_verdict(const VerdictInput& in, const VerdictRules& rules = {});

// The optimisation status a verdict moves a switch to (nullopt: inconclusive keeps it).
std::optional<OptStatus> status_after(Verdict v);

}  // namespace p64
