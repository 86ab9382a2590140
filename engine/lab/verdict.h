#pragma once
// The plan's A/B verdict rules (docs/measurement.md, "Verdict rules") with a significance test
// on the interleaved runs (Mann-Whitney U, mann_whitney.h):
//   - at least two runs of each side, interleaved ABAB...;
//   - REJECTED on any quality-gate failure, or on a regression median(B)/median(A) < 1 - 2% that
//     the test finds significant (p < 0.05);
//   - a WIN when B is faster by more than 2% and the test finds it significant; PROMOTED when the
//     previous verdict on the same switch, model and device was a win too (two consecutive wins);
//   - otherwise INCONCLUSIVE, and the reason says which: "no difference" (the ratio's 95%
//     interval lies within ±2%, or a significant difference is smaller than 2%), or "noisy, N
//     more runs a side needed" (the spread is wider than the effect; N from the pooled CV).
#include <optional>
#include <span>
#include <string>

#include "engine/lab/store_types.h"

namespace p64 {

struct VerdictRules {
  double regression_limit = 0.02;  // reject when B is slower than A by more than this share
  // A win must beat A by more than this share: smaller gains are within the ordering and layout
  // effects interleaving does not cancel (the same band the regression limit tolerates).
  double win_margin = 0.02;
  double alpha = 0.05;  // two-sided significance level of the test
  double power = 0.8;   // for "N more runs": the chance that N runs reach p < alpha
  int min_runs = 2;     // per side
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
  double ratio_median = 0;              // median(B) / median(A)
  double ratio_min = 0, ratio_max = 0;  // over interleaved pairs B_i / A_i
  // The test: Mann-Whitney U of B over A, its two-sided p, and the ratio's 1 - alpha interval
  // (unbounded when the runs are too few for that confidence).
  int a_runs = 0, b_runs = 0;
  double u = 0;
  double p_value = 1;
  bool exact = false;
  bool ci_bounded = false;
  double ci_low = 0, ci_high = 0;
  double pooled_cv = 0;  // of the two sides' tok/s
  int runs_needed = 0;   // more runs a side for the test to settle it; 0 unless "noisy"
  std::string reason;
};

// Throws p64::Error when a side has fewer than rules.min_runs runs or a non-positive value.
VerdictOutcome decide_verdict(const VerdictInput& in, const VerdictRules& rules = {});

// "Mann-Whitney U 0, p 0.008 (exact, 5+5 runs); B/A 95% interval 0.950-0.970" for output lines.
std::string describe_test(const VerdictOutcome& o, const VerdictRules& rules = {});

// The optimisation status a verdict moves a switch to (nullopt: inconclusive keeps it).
std::optional<OptStatus> status_after(Verdict v);

}  // namespace p64
