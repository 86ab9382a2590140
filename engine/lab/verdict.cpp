#include "engine/lab/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "engine/common/error.h"
#include "engine/lab/mann_whitney.h"
#include "engine/lab/stats.h"

namespace p64 {
namespace {

std::string percent(double share, int precision = 1) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f%%", precision, 100 * share);
  return b;
}

// Runs a side for the test to reach p < alpha with the given power, when the true effect is
// `effect` (a log ratio) and the runs scatter with coefficient of variation `cv`: the two-sample
// normal sample size, over the test's efficiency on normal data (3 / pi), and never below the
// fewest runs the exact test can reach alpha with.
int runs_for(double effect, double cv, const VerdictRules& rules) {
  const double z = normal_quantile(1 - rules.alpha / 2) + normal_quantile(rules.power);
  double n = 2 * z * z * cv * cv / (effect * effect) / (3 / std::numbers::pi);
  n = std::min(n, 1e6);
  return std::max(static_cast<int>(std::ceil(n)), min_runs_for_alpha(rules.alpha));
}

}  // namespace

VerdictOutcome decide_verdict(const VerdictInput& in, const VerdictRules& rules) {
  const auto na = static_cast<int>(in.a_tok_s.size()), nb = static_cast<int>(in.b_tok_s.size());
  if (na < rules.min_runs || nb < rules.min_runs)
    throw Error("A/B: " + std::to_string(na) + " A and " + std::to_string(nb) + " B runs; the rule needs at least " +
                std::to_string(rules.min_runs) + " of each");
  for (auto v : {in.a_tok_s, in.b_tok_s})
    for (double x : v)
      if (!(x > 0)) throw Error("A/B: a run has no positive tok/s");
  VerdictOutcome o;
  const MinMedianMax a = min_median_max(in.a_tok_s), b = min_median_max(in.b_tok_s);
  o.a_runs = na;
  o.b_runs = nb;
  o.a_median = a.median;
  o.b_median = b.median;
  o.ratio_median = b.median / a.median;
  o.ratio_min = 1e300;
  o.ratio_max = 0;
  for (int i = 0; i < std::min(na, nb); ++i) {
    const double r = in.b_tok_s[static_cast<size_t>(i)] / in.a_tok_s[static_cast<size_t>(i)];
    o.ratio_min = std::min(o.ratio_min, r);
    o.ratio_max = std::max(o.ratio_max, r);
  }
  const MannWhitney mw = mann_whitney(in.a_tok_s, in.b_tok_s);
  o.u = mw.u;
  o.p_value = mw.p_two_sided;
  o.exact = mw.exact;
  const RatioInterval ci = ratio_interval(in.a_tok_s, in.b_tok_s, rules.alpha);
  o.ci_bounded = ci.bounded;
  o.ci_low = ci.low;
  o.ci_high = ci.high;
  o.pooled_cv = std::sqrt(((na - 1) * a.cv * a.cv + (nb - 1) * b.cv * b.cv) / (na + nb - 2));

  char buf[320];
  const std::string test = describe_test(o, rules);
  if (!in.quality_pass) {
    o.verdict = Verdict::Rejected;
    o.reason = "quality gate failed" + (in.quality_failure.empty() ? std::string() : ": " + in.quality_failure);
    return o;
  }
  const bool significant = o.p_value < rules.alpha;
  if (significant && o.ratio_median < 1.0 - rules.regression_limit) {
    o.verdict = Verdict::Rejected;
    std::snprintf(buf, sizeof buf, "regression %s > %s (B/A %.3f); %s", percent(1 - o.ratio_median).c_str(),
                  percent(rules.regression_limit, 0).c_str(), o.ratio_median, test.c_str());
    o.reason = buf;
    return o;
  }
  if (significant && o.ratio_median > 1.0 + rules.win_margin) {
    const bool confirmed = in.previous && (*in.previous == Verdict::Win || *in.previous == Verdict::Promoted);
    o.verdict = confirmed ? Verdict::Promoted : Verdict::Win;
    std::snprintf(buf, sizeof buf, "B faster by %s (B/A %.3f); %s; %s", percent(o.ratio_median - 1).c_str(),
                  o.ratio_median, test.c_str(),
                  confirmed ? "second consecutive win on this model and device" : "first win: needs a second to promote");
    o.reason = buf;
    return o;
  }
  o.verdict = Verdict::Inconclusive;
  const double low = 1.0 - rules.regression_limit, high = 1.0 + rules.win_margin;
  const bool within_band = o.ratio_median >= low && o.ratio_median <= high;
  if ((ci.bounded && ci.low >= low && ci.high <= high) || (significant && within_band)) {
    std::snprintf(buf, sizeof buf, "no difference: B/A %.3f is within %s..%s; %s", o.ratio_median,
                  percent(-rules.regression_limit, 0).c_str(), ("+" + percent(rules.win_margin, 0)).c_str(),
                  test.c_str());
    o.reason = buf;
    return o;
  }
  // The spread is wider than the effect: how many runs would settle it. An effect inside the band
  // is settled once the band itself is resolved.
  const double band = o.ratio_median < 1 ? rules.regression_limit : rules.win_margin;
  const double effect = std::max(std::abs(std::log(o.ratio_median)), std::log1p(band));
  const int target = runs_for(effect, o.pooled_cv, rules), have = std::min(na, nb);
  o.runs_needed = std::max(1, target - have);
  const bool too_few = target == min_runs_for_alpha(rules.alpha) && have < target;
  std::snprintf(buf, sizeof buf, "%s, %d more run%s a side needed: B/A %.3f, pooled CV %s; %s",
                too_few ? "too few runs for the test" : "noisy", o.runs_needed, o.runs_needed == 1 ? "" : "s",
                o.ratio_median, percent(o.pooled_cv).c_str(), test.c_str());
  o.reason = buf;
  return o;
}

std::string describe_test(const VerdictOutcome& o, const VerdictRules& rules) {
  char buf[240];
  const int n = std::snprintf(buf, sizeof buf, "Mann-Whitney U %.1f, p %.3g (%s, %d+%d runs)", o.u, o.p_value,
                              o.exact ? "exact" : "normal approximation", o.a_runs, o.b_runs);
  std::string s(buf, static_cast<size_t>(std::max(0, n)));
  if (o.ci_bounded)
    std::snprintf(buf, sizeof buf, ", B/A %.0f%% interval %.3f-%.3f", 100 * (1 - rules.alpha), o.ci_low, o.ci_high);
  else
    std::snprintf(buf, sizeof buf, ", too few runs for a %.0f%% interval of B/A", 100 * (1 - rules.alpha));
  return s + buf;
}

std::optional<OptStatus> status_after(Verdict v) {
  switch (v) {
    case Verdict::Rejected: return OptStatus::Rejected;
    case Verdict::Promoted: return OptStatus::Default;
    case Verdict::Win: return OptStatus::Candidate;
    case Verdict::Inconclusive: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace p64
