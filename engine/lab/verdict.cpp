#include "engine/lab/verdict.h"

#include <algorithm>
#include <cstdio>

#include "engine/common/error.h"
#include "engine/lab/stats.h"

namespace p64 {

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
  char buf[256];
  if (!in.quality_pass) {
    o.verdict = Verdict::Rejected;
    o.reason = "quality gate failed" + (in.quality_failure.empty() ? std::string() : ": " + in.quality_failure);
    return o;
  }
  if (o.ratio_median < 1.0 - rules.regression_limit) {
    o.verdict = Verdict::Rejected;
    std::snprintf(buf, sizeof buf, "regression %.1f%% > %.0f%% (B/A %.3f)", 100 * (1 - o.ratio_median),
                  100 * rules.regression_limit, o.ratio_median);
    o.reason = buf;
    return o;
  }
  if (b.min > a.max) {
    const bool confirmed = in.previous && (*in.previous == Verdict::Win || *in.previous == Verdict::Promoted);
    o.verdict = confirmed ? Verdict::Promoted : Verdict::Win;
    std::snprintf(buf, sizeof buf, "B's slowest run %.2f > A's fastest %.2f tok/s (B/A %.3f); %s", b.min, a.max,
                  o.ratio_median,
                  confirmed ? "second consecutive win on this model and device" : "first win: needs a second to promote");
    o.reason = buf;
    return o;
  }
  o.verdict = Verdict::Inconclusive;
  std::snprintf(buf, sizeof buf, "difference within the runs' spread (A %.2f-%.2f, B %.2f-%.2f tok/s)", a.min, a.max,
                b.min, b.max);
  o.reason = buf;
  return o;
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
