#include "app/cli/commit_compare_table.h"

#include <cstdio>

namespace p64::cli {

void print_commit_compare(const CommitCompare& c) {
  std::printf("decode tok/s of revision %s (B) against %s (A): stored decode-proxy runs, all samples of a group pooled\n\n",
              c.against.c_str(), c.baseline.c_str());
  if (c.rows.empty()) std::printf("no group (model, backend, device, config, tokens) was measured by both builds\n");
  else
    std::printf("%-32s %-8s %-20s %-26s %9s %12s %12s %7s %8s  %s\n", "model", "backend", "device", "config",
                "prompt+n", "A (runs)", "B (runs)", "B/A", "p", "flag");
  for (const CommitCompareRow& r : c.rows) {
    char a[32], b[32], ratio[16], p[16];
    std::snprintf(a, sizeof a, "%.2f (%d)", r.a_median, r.a_runs);
    std::snprintf(b, sizeof b, "%.2f (%d)", r.b_median, r.b_runs);
    std::snprintf(ratio, sizeof ratio, r.ratio > 0 ? "%.3f" : "-", r.ratio);
    std::snprintf(p, sizeof p, r.flag == "too few runs" ? "-" : "%.3g", r.p_value);
    std::printf("%-32.32s %-8s %-20.20s %-26.26s %4d+%-4d %12s %12s %7s %8s  %s%s%s\n", r.model.c_str(), r.backend.c_str(),
                r.device.c_str(), r.config.c_str(), r.prompt_tokens, r.decode_tokens, a, b, ratio, p, r.flag.c_str(),
                r.flag == "regression" ? "  <-- past the 2% rule" : "",
                r.a_busy + r.b_busy ? ("  (machine busy in " + std::to_string(r.a_busy) + " A / " + std::to_string(r.b_busy) +
                                       " B runs)").c_str()
                                    : "");
  }
  for (const auto& g : c.only_baseline) std::printf("only in %s: %s\n", c.baseline.c_str(), g.c_str());
  for (const auto& g : c.only_against) std::printf("only in %s: %s\n", c.against.c_str(), g.c_str());
  std::printf("\nflag: regression / faster = Mann-Whitney p < 0.05 and B/A past 0.98 / 1.02 (the A/B rule's band); "
              "noisy = the spread hides the difference; %d regression(s)\n",
              c.regressions());
}

nlohmann::json commit_compare_json(const CommitCompare& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CommitCompareRow& r : c.rows)
    rows.push_back({{"model", r.model}, {"backend", r.backend}, {"device", r.device}, {"config", r.config},
                    {"prompt_tokens", r.prompt_tokens}, {"decode_tokens", r.decode_tokens}, {"a_runs", r.a_runs},
                    {"b_runs", r.b_runs}, {"a_samples", r.a_samples}, {"b_samples", r.b_samples}, {"a_busy", r.a_busy}, {"b_busy", r.b_busy},
                    {"a_median", r.a_median}, {"b_median", r.b_median}, {"ratio", r.ratio}, {"p_value", r.p_value},
                    {"flag", r.flag}, {"reason", r.reason}});
  return {{"baseline", c.baseline}, {"against", c.against},   {"rows", rows},
          {"only_baseline", c.only_baseline}, {"only_against", c.only_against}, {"regressions", c.regressions()}};
}

void print_revisions(const std::vector<StoredRevision>& revs, const std::string& store_path) {
  if (revs.empty()) {
    std::printf("%s holds no decode-proxy run of its own\n", store_path.c_str());
    return;
  }
  std::printf("%-14s %6s  %-20s %s\n", "revision", "runs", "first run", "last run");
  for (const StoredRevision& r : revs)
    std::printf("%-14s %6d  %-20s %s\n", r.revision.c_str(), r.runs, r.first_run_at.c_str(), r.last_run_at.c_str());
}

}  // namespace p64::cli
