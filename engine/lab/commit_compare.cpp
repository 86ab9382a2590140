#include "engine/lab/commit_compare.h"

#include <algorithm>
#include <map>
#include <tuple>

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

using GroupKey = std::tuple<int64_t, std::string, std::string, std::string, int, int>;

struct Side {
  int runs = 0;
  std::vector<double> tok_s;
};

std::string group_text(const GroupKey& k, const std::string& model) {
  return model + " / " + std::get<1>(k) + " / " + std::get<2>(k) + " / " + std::get<3>(k) + " / " +
         std::to_string(std::get<4>(k)) + "+" + std::to_string(std::get<5>(k));
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
  RunFilter f;
  f.kind = RunKind::DecodeProxy;
  f.include_imported = false;
  std::map<std::string, StoredRevision> by_rev;
  std::vector<std::string> order;
  std::vector<RunRecord> runs = store.runs(f);
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.id < b.id; });
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

  RunFilter f;
  f.kind = RunKind::DecodeProxy;
  f.include_imported = false;
  f.model = model;
  std::map<GroupKey, std::pair<Side, Side>> groups;
  std::map<int64_t, std::string> model_names;
  for (const RunRecord& r : store.runs(f)) {
    if (!counts(r) || (r.git_revision != out.baseline && r.git_revision != out.against)) continue;
    const std::vector<SampleRecord> samples = store.samples(r.id);
    if (samples.empty()) continue;
    const GroupKey key{r.model_id, r.backend, r.device, r.config, samples.front().prompt_tokens,
                       samples.front().decode_tokens};
    Side& side = r.git_revision == out.baseline ? groups[key].first : groups[key].second;
    ++side.runs;
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
    const std::string& name = model_names[std::get<0>(key)];
    if (a.runs == 0 || b.runs == 0) {
      (a.runs ? out.only_baseline : out.only_against).push_back(group_text(key, name));
      continue;
    }
    CommitCompareRow row;
    row.model = name;
    std::tie(std::ignore, row.backend, row.device, row.config, row.prompt_tokens, row.decode_tokens) = key;
    row.a_runs = a.runs;
    row.b_runs = b.runs;
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

}  // namespace p64
