#pragma once
// The Mann-Whitney U test on two sets of runs (tok/s of A and of B): rank-based, so one 10x
// outlier moves it by one rank, not by its size. Exact for up to 20 runs a side without ties,
// the normal approximation (tie- and continuity-corrected) otherwise. With it, the
// Hodges-Lehmann confidence interval of the ratio B/A under a multiplicative shift.
#include <span>

namespace p64 {

struct MannWhitney {
  int m = 0, n = 0;          // runs of A and of B
  double u = 0;              // pairs (a, b) with b > a; a tie counts a half
  double p_two_sided = 1;
  bool exact = false;
};

// Throws p64::Error when a side is empty.
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b);

// The 1 - alpha confidence interval of b/a, from the pairwise ratios b_j / a_i (all positive).
struct RatioInterval {
  bool bounded = false;  // false: too few runs for this confidence at all
  double low = 0, high = 0;
};
RatioInterval ratio_interval(std::span<const double> a, std::span<const double> b, double alpha);

// The fewest runs a side for which the exact test can reach p < alpha at all (4 for 0.05).
int min_runs_for_alpha(double alpha);

// The standard normal quantile: Phi(z) = q, for 0 < q < 1.
double normal_quantile(double q);

}  // namespace p64
