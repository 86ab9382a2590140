#pragma once
// Two stored runs side by side (the lab's run diff): per op, the time per decode step of each and
// the delta, from the timeline ops the store keeps (timeline runs record them; decode-proxy and
// A/B runs do not), plus each run's headline figures from its samples. An A/B run diffs its two
// sides: their headline figures (it records no per-op data). The CLI's `p64 runs diff` and a GUI
// view read the same struct.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/lab/store_types.h"

namespace p64 {
class Store;

struct OpDelta {
  std::string name;   // the op ("qkv", "sdpa", ...), a group ("ATTN"), or "all ops"
  std::string group;  // RMS | ATTN | FFN | LOGITS | SAMPLE | OTHER; empty on a group or total row
  double a_ms = 0, b_ms = 0;   // per decode step, summed over layers
  bool in_a = false, in_b = false;  // an op one run lacks (another backend's op set) is 0 there
  double delta_ms() const { return b_ms - a_ms; }
  double ratio() const { return a_ms > 0 ? b_ms / a_ms : 0; }  // 0: A has none
};

// A headline figure of each side: the median over its samples (0 where it has none).
struct FigureDelta {
  std::string name;  // "decode tok/s", "prefill tok/s", "TTFT ms", "effective GB/s"
  double a = 0, b = 0;
  double ratio() const { return a > 0 ? b / a : 0; }
};

struct RunDiff {
  RunRecord a, b;          // the two runs; for an A/B's sides, the A/B run twice
  std::string a_label, b_label;  // "run 12 (timeline, cpu)", or "backend=cpu (A side of A/B run 9)"
  std::vector<FigureDelta> figures;
  std::vector<OpDelta> ops;     // most time first (the larger of A and B)
  std::vector<OpDelta> groups;  // RMS, ATTN, FFN, LOGITS, SAMPLE, OTHER (those either run has)
  std::optional<OpDelta> total; // all decode spans per step; nullopt without ops
  int a_steps = 0, b_steps = 0; // decode steps each timeline recorded
  std::optional<ComparisonRecord> verdict;  // an A/B's own verdict
  std::string note;  // why there are no op rows, when there are none
};

// Two timeline runs. Throws p64::Error naming the store and the id for a run it lacks, and for a
// run without op data (saying which kind it is and which command records ops).
RunDiff diff_runs(const Store& store, int64_t run_a, int64_t run_b);
// The two sides of A/B run `ab_run`: headline figures from each side's samples, its verdict.
// Throws p64::Error for an unknown id or a run that is not an A/B.
RunDiff diff_ab_sides(const Store& store, int64_t ab_run);

}  // namespace p64
