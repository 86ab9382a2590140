#pragma once
// Decode speed between two builds (the lab's history across commits, as compare-llama-bench does
// for llama-bench's SQL tables, with verdicts): the stored decode-proxy runs of each git revision,
// grouped by what makes two measurements comparable (model file, backend, device, configuration,
// prompt and decode tokens), every group measured by both builds tested with the A/B rule's
// Mann-Whitney test over all its samples, and flagged past the plan's 2% band.
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace p64 {
class Store;

// One revision the store holds decode-proxy runs of.
struct StoredRevision {
  std::string revision;  // as the build recorded it (git rev-parse --short=12)
  int runs = 0;
  std::string first_run_at, last_run_at;
};

// Revisions with at least one finished decode-proxy run of its own (not imported), in the order
// of their first run's start time.
std::vector<StoredRevision> stored_revisions(const Store& store);

// What makes two decode-proxy measurements comparable across builds.
struct MeasurementGroup {
  int64_t model_id = 0;
  std::string backend, device, config;
  int prompt_tokens = 0, decode_tokens = 0;
  auto operator<=>(const MeasurementGroup&) const = default;
};

struct CommitCompareRow {
  MeasurementGroup group;
  std::string model;    // the model's name, then its file
  std::string backend, device, config;
  int prompt_tokens = 0, decode_tokens = 0;
  int a_runs = 0, b_runs = 0;        // stored runs of the baseline / the other build
  int a_samples = 0, b_samples = 0;  // their repetitions, pooled
  int a_busy = 0, b_busy = 0;        // runs during which the machine was busy (their summary says)
  double a_median = 0, b_median = 0;  // decode tok/s
  double ratio = 0;                   // b_median / a_median
  double p_value = 1;                 // Mann-Whitney U, two-sided
  std::string flag;    // "regression" | "faster" | "no change" | "noisy" | "too few runs"
  std::string reason;  // the test in words
};

struct CommitCompare {
  std::string baseline, against;  // the full revisions the prefixes matched
  std::vector<CommitCompareRow> rows;  // groups both builds measured, by model then backend
  // Groups only one build measured ("model / backend / device / config / prompt+decode").
  std::vector<std::string> only_baseline, only_against;
  int regressions() const;
};

// `baseline` and `against` are revision prefixes; an empty `against` takes the newest stored
// revision other than the baseline. `model` filters by a substring of the model's name or path.
// Throws p64::Error naming the store when a prefix matches no revision or several, or when both
// name the same one.
CommitCompare compare_commits(const Store& store, const std::string& baseline, const std::string& against = "",
                              const std::string& model = "");

// One group's decode tok/s at every revision that measured it, in the order the revisions first
// ran (stored_revisions' order): the chart of speed over commits.
struct RevisionPoint {
  std::string revision;
  int runs = 0;
  double min = 0, median = 0, max = 0;  // over the pooled samples
};
std::vector<RevisionPoint> group_history(const Store& store, const MeasurementGroup& group);

}  // namespace p64
