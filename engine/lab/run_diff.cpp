#include "engine/lab/run_diff.h"

#include <algorithm>
#include <map>

#include "engine/common/error.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/lab/timeline_run.h"

namespace p64 {
namespace {

RunRecord stored_run(const Store& store, int64_t id) {
  auto r = store.run(id);
  if (!r) throw Error(store.path() + ": no run " + std::to_string(id) + " (p64 runs lists them)");
  return *r;
}

std::string run_label(const RunRecord& r) {
  return "run " + std::to_string(r.id) + " (" + std::string(to_string(r.kind)) + ", " + r.backend + ")";
}

double median_of(const std::vector<SampleRecord>& samples, double SampleRecord::*field) {
  std::vector<double> v;
  for (const auto& s : samples)
    if (s.*field > 0) v.push_back(s.*field);
  return v.empty() ? 0 : min_median_max(v).median;
}

std::vector<FigureDelta> figures(const std::vector<SampleRecord>& a, const std::vector<SampleRecord>& b) {
  std::vector<FigureDelta> out;
  for (const auto& [name, field] : {std::pair{"decode tok/s", &SampleRecord::decode_tok_s},
                                    std::pair{"prefill tok/s", &SampleRecord::prefill_tok_s},
                                    std::pair{"TTFT ms", &SampleRecord::ttft_ms},
                                    std::pair{"effective GB/s", &SampleRecord::effective_gbs}}) {
    FigureDelta f{name, median_of(a, field), median_of(b, field)};
    if (f.a > 0 || f.b > 0) out.push_back(f);
  }
  return out;
}

TimelineSummary op_summary(const Store& store, const RunRecord& r) {
  const std::vector<TimelineOpRecord> ops = store.timeline_ops(r.id);
  if (ops.empty()) {
    const std::string why = r.kind == RunKind::Ab
                                ? "an A/B run records no per-op data (`p64 runs diff " + std::to_string(r.id) +
                                      "` alone compares its two sides)"
                                : "only timeline runs record per-op data (p64 timeline MODEL --db " + store.path() + ")";
    throw Error(store.path() + ": run " + std::to_string(r.id) + " (" + std::string(to_string(r.kind)) +
                ") has no op data: " + why);
  }
  const TimelineSummary s = summarize_timeline(spans_from_records(ops));
  if (s.steps == 0)
    throw Error(store.path() + ": run " + std::to_string(r.id) + " has op data of its prefill only: no decode step to compare");
  return s;
}

}  // namespace

RunDiff diff_runs(const Store& store, int64_t run_a, int64_t run_b) {
  RunDiff d;
  d.a = stored_run(store, run_a);
  d.b = stored_run(store, run_b);
  d.a_label = run_label(d.a);
  d.b_label = run_label(d.b);
  const TimelineSummary sa = op_summary(store, d.a), sb = op_summary(store, d.b);
  d.a_steps = sa.steps;
  d.b_steps = sb.steps;
  d.figures = figures(store.samples(d.a.id), store.samples(d.b.id));

  std::map<std::pair<std::string, std::string>, OpDelta> ops;  // by group and name
  for (const auto* s : {&sa, &sb})
    for (const OpTotal& o : s->top_ops) {
      OpDelta& row = ops[{o.group, o.name}];
      row.name = o.name;
      row.group = o.group;
      (s == &sa ? row.a_ms : row.b_ms) = o.ms;
      (s == &sa ? row.in_a : row.in_b) = true;
    }
  for (auto& [key, row] : ops) d.ops.push_back(row);
  std::stable_sort(d.ops.begin(), d.ops.end(), [](const OpDelta& x, const OpDelta& y) {
    return std::max(x.a_ms, x.b_ms) > std::max(y.a_ms, y.b_ms);
  });
  for (size_t i = 0; i < sa.groups.size() && i < sb.groups.size(); ++i) {
    OpDelta g;
    g.name = sa.groups[i].group;
    g.a_ms = sa.groups[i].ms;
    g.b_ms = sb.groups[i].ms;
    g.in_a = g.a_ms > 0;
    g.in_b = g.b_ms > 0;
    if (g.in_a || g.in_b) d.groups.push_back(g);
  }
  OpDelta total;
  total.name = "all ops";
  total.a_ms = sa.span_ms_per_step;
  total.b_ms = sb.span_ms_per_step;
  total.in_a = total.in_b = true;
  d.total = total;
  return d;
}

RunDiff diff_ab_sides(const Store& store, int64_t ab_run) {
  RunDiff d;
  d.a = d.b = stored_run(store, ab_run);
  if (d.a.kind != RunKind::Ab)
    throw Error(store.path() + ": run " + std::to_string(ab_run) + " is a " + std::string(to_string(d.a.kind)) +
                " run, not an A/B: give two runs to diff (p64 runs diff RUN_A RUN_B)");
  std::vector<SampleRecord> a, b;
  for (const auto& s : store.samples(ab_run)) (s.side == "b" ? b : a).push_back(s);
  d.verdict = store.comparison_for_run(ab_run);
  const std::string side_of = "side of A/B run " + std::to_string(ab_run);
  d.a_label = d.verdict ? d.verdict->config_a + " (A " + side_of + ")" : "A " + side_of;
  d.b_label = d.verdict ? d.verdict->config_b + " (B " + side_of + ")" : "B " + side_of;
  d.figures = figures(a, b);
  d.note = "an A/B run records no per-op data: time each side with p64 timeline --db, then p64 runs diff RUN_A RUN_B";
  return d;
}

}  // namespace p64
