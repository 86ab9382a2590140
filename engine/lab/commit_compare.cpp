#include "engine/lab/commit_compare.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/lab/verdict.h"

namespace p64 {
namespace {

bool counts(const RunRecord& r) {
  return r.kind == RunKind::DecodeProxy && r.status == RunStatus::Ok && !r.imported && !r.git_revision.empty();
}

std::string resolve(const Store& store, const std::vector<StoredRevision>& revs, const std::string& prefix) {
  std::vector<std::string> hits;
  for (const auto& r : revs)
    if (r.revision.compare(0, prefix.size(), prefix) == 0) hits.push_back(r.revision);
  if (hits.size() == 1) return hits[0];
  auto listed = [](const std::vector<std::string>& v) {
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : ", ") + x;
    return t.empty() ? std::string("none") : t;
  };
  if (!hits.empty()) throw Error(store.path() + ": revision '" + prefix + "' is ambiguous: " + listed(hits));
  std::vector<std::string> all;
  for (const auto& r : revs) all.push_back(r.revision);
  throw Error(store.path() + ": revision '" + prefix + "' has no decode-proxy run here (stored: " + listed(all) + ")");
}

struct Side {
  int runs = 0;
  int busy = 0;
  std::vector<double> tok_s;
};

std::string group_text(const MeasurementGroup& g, const std::string& model) {
  return model + " / " + g.backend + " / " + g.device + " / " + g.config + " / " + std::to_string(g.prompt_tokens) + "+" +
         std::to_string(g.decode_tokens);
}

// The group a stored run belongs to, from its first sample's token counts; nullopt without samples.
std::optional<MeasurementGroup> group_of(const RunRecord& r, const std::vector<SampleRecord>& samples) {
  if (samples.empty()) return std::nullopt;
  return MeasurementGroup{r.model_id, r.backend, r.device, r.config, samples.front().prompt_tokens,
                          samples.front().decode_tokens};
}

RunFilter own_decode_proxy_runs(const std::string& model = "") {
  RunFilter f;
  f.kind = RunKind::DecodeProxy;
  f.include_imported = false;
  f.model = model;
  return f;
}

std::string flag_of(const VerdictOutcome& o, const VerdictRules& rules) {
  const bool significant = o.p_value < rules.alpha;
  if (significant && o.ratio_median < 1 - rules.regression_limit) return "regression";
  if (significant && o.ratio_median > 1 + rules.win_margin) return "faster";
  return o.runs_needed > 0 ? "noisy" : "no change";
}

}  // namespace

int CommitCompare::regressions() const {
  int n = 0;
  for (const auto& r : rows) n += r.flag == "regression";
  return n;
}

std::vector<StoredRevision> stored_revisions(const Store& store) {
  std::map<std::string, StoredRevision> by_rev;
  std::vector<std::string> order;
  std::vector<RunRecord> runs = store.runs(own_decode_proxy_runs());
  // by when they ran (a merged store's runs keep their times, not their ids)
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return std::tie(a.started_at, a.id) < std::tie(b.started_at, b.id);
  });
  for (const RunRecord& r : runs) {
    if (!counts(r)) continue;
    auto [it, fresh] = by_rev.try_emplace(r.git_revision);
    if (fresh) {
      order.push_back(r.git_revision);
      it->second.revision = r.git_revision;
      it->second.first_run_at = r.started_at;
    }
    ++it->second.runs;
    it->second.last_run_at = r.started_at;
  }
  std::vector<StoredRevision> out;
  for (const auto& rev : order) out.push_back(by_rev[rev]);
  return out;
}

CommitCompare compare_commits(const Store& store, const std::string& baseline, const std::string& against,
                              const std::string& model) {
  const std::vector<StoredRevision> revs = stored_revisions(store);
  CommitCompare out;
  out.baseline = resolve(store, revs, baseline);
  if (against.empty()) {
    for (auto it = revs.rbegin(); it != revs.rend() && out.against.empty(); ++it)
      if (it->revision != out.baseline) out.against = it->revision;
    if (out.against.empty())
      throw Error(store.path() + ": no decode-proxy run of a revision other than " + out.baseline + " to compare with");
  } else {
    out.against = resolve(store, revs, against);
  }
  if (out.against == out.baseline) throw Error(store.path() + ": both sides are revision " + out.baseline);

  std::map<MeasurementGroup, std::pair<Side, Side>> groups;
  std::map<int64_t, std::string> model_names;
  for (const RunRecord& r : store.runs(own_decode_proxy_runs(model))) {
    if (!counts(r) || (r.git_revision != out.baseline && r.git_revision != out.against)) continue;
    const std::vector<SampleRecord> samples = store.samples(r.id);
    const std::optional<MeasurementGroup> key = group_of(r, samples);
    if (!key) continue;
    Side& side = r.git_revision == out.baseline ? groups[*key].first : groups[*key].second;
    ++side.runs;
    const auto summary = nlohmann::json::parse(r.summary_json, nullptr, false);
    side.busy += summary.is_object() && summary.value("busy", false);
    for (const SampleRecord& s : samples)
      if (s.decode_tok_s > 0) side.tok_s.push_back(s.decode_tok_s);
    if (!model_names.count(r.model_id)) {
      const auto m = store.model(r.model_id);
      model_names[r.model_id] = m ? (m->name.empty() ? m->path : m->name + " (" + m->path + ")") : "model " + std::to_string(r.model_id);
    }
  }
  const VerdictRules rules;
  for (const auto& [key, sides] : groups) {
    const auto& [a, b] = sides;
    const std::string& name = model_names[key.model_id];
    if (a.runs == 0 || b.runs == 0) {
      (a.runs ? out.only_baseline : out.only_against).push_back(group_text(key, name));
      continue;
    }
    CommitCompareRow row;
    row.group = key;
    row.model = name;
    row.backend = key.backend;
    row.device = key.device;
    row.config = key.config;
    row.prompt_tokens = key.prompt_tokens;
    row.decode_tokens = key.decode_tokens;
    row.a_runs = a.runs;
    row.b_runs = b.runs;
    row.a_busy = a.busy;
    row.b_busy = b.busy;
    row.a_samples = static_cast<int>(a.tok_s.size());
    row.b_samples = static_cast<int>(b.tok_s.size());
    if (row.a_samples < rules.min_runs || row.b_samples < rules.min_runs) {
      row.flag = "too few runs";
      row.reason = "the test needs at least " + std::to_string(rules.min_runs) + " samples a side";
      if (row.a_samples) row.a_median = min_median_max(a.tok_s).median;
      if (row.b_samples) row.b_median = min_median_max(b.tok_s).median;
      if (row.a_median > 0) row.ratio = row.b_median / row.a_median;
      out.rows.push_back(std::move(row));
      continue;
    }
    const VerdictOutcome o = decide_verdict(VerdictInput{a.tok_s, b.tok_s}, rules);
    row.a_median = o.a_median;
    row.b_median = o.b_median;
    row.ratio = o.ratio_median;
    row.p_value = o.p_value;
    row.flag = flag_of(o, rules);
    row.reason = describe_test(o, rules);
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::vector<RevisionPoint> group_history(const Store& store, const MeasurementGroup& group) {
  std::map<std::string, std::pair<int, std::vector<double>>> by_rev;
  for (const RunRecord& r : store.runs(own_decode_proxy_runs())) {
    if (!counts(r) || r.model_id != group.model_id || r.backend != group.backend || r.device != group.device ||
        r.config != group.config)
      continue;
    const std::vector<SampleRecord> samples = store.samples(r.id);
    if (group_of(r, samples) != group) continue;
    auto& [runs, tok_s] = by_rev[r.git_revision];
    ++runs;
    for (const SampleRecord& s : samples)
      if (s.decode_tok_s > 0) tok_s.push_back(s.decode_tok_s);
  }
  std::vector<RevisionPoint> out;
  for (const StoredRevision& rev : stored_revisions(store)) {
    const auto it = by_rev.find(rev.revision);
    if (it == by_rev.end() || it->second.second.empty()) continue;
    const MinMedianMax m = min_median_max(it->second.second);
    out.push_back(RevisionPoint{rev.revision, it->second.first, m.min, m.median, m.max});
  }
  return out;
}

}  // namespace p64
