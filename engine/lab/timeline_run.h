#pragma once
// timeline: per-op spans for one prefill and N decode steps, from the backend's own clock
// (CUDA events, Vulkan timestamp queries, steady_clock on the CPU), grouped as the plan's
// split: RMS, ATTN (qkv, rope, kv_write, sdpa, o), FFN (gate_up, down), LOGITS, SAMPLE, OTHER.
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/common/atomic_output.h"
#include "engine/common/progress.h"
#include "engine/lab/op_spread.h"
#include "engine/lab/store_types.h"
#include "engine/runtime/backend.h"

namespace p64 {

// Collects spans as a backend reports them (thread-safe: a backend may report from a
// completion thread).
class TimelineRecorder : public TimelineSink {
 public:
  void on_span(const OpSpan& span) override;
  std::vector<OpSpan> take();

 private:
  std::mutex mu_;
  std::vector<OpSpan> spans_;
};

struct GroupSplit {
  std::string group;  // RMS | ATTN | FFN | LOGITS | SAMPLE | OTHER
  double ms = 0;      // per decode step (mean over the steps)
  double share = 0;   // of the summed span time
};

struct OpTotal {
  std::string name;
  std::string group;
  double ms = 0;      // per decode step, summed over layers
  int count = 0;      // spans per decode step
  double share = 0;
  double mb = 0;      // MB it moved per decode step (op_work.h); 0 where its traffic is not counted
  double mflop = 0;   // MFLOP it performed per decode step (op_work.h); 0 where not counted
  double gbs() const { return ms > 0 && mb > 0 ? mb / ms : 0; }         // achieved, over its own spans
  double gflops() const { return ms > 0 && mflop > 0 ? mflop / ms : 0; }  // achieved GFLOP/s, the same way
  double intensity() const { return mb > 0 && mflop > 0 ? mflop / mb : 0; }  // FLOP per byte moved
};

// What the timeline command prints and stores; computed from spans so stored runs (whose ops
// are read back from the store) give the same figures as live ones.
struct TimelineSummary {
  int steps = 0;                  // decode steps seen
  double span_ms_per_step = 0;    // summed decode span time per step
  std::vector<GroupSplit> groups;  // fixed order RMS, ATTN, FFN, LOGITS, SAMPLE, OTHER
  std::vector<OpTotal> top_ops;    // descending by time
  double dispatches_per_layer = 0; // decode spans inside blocks / (layers x steps)
  double dispatches_per_step = 0;  // all decode spans / steps
  int layers = 0;
  double prefill_ms = 0;           // summed prefill span time
  std::vector<OpSpread> spread;    // per op over the decode steps (op_spread.h), the most time first
};

TimelineSummary summarize_timeline(std::span<const OpSpan> spans);
std::vector<OpSpan> spans_from_records(std::span<const TimelineOpRecord> records);

struct TimelineParams {
  int decode_tokens = 16;
  int prompt_tokens = 32;
};

struct TimelineResult {
  std::vector<OpSpan> spans;
  double decode_wall_ms = 0;   // host wall time around the decode steps
  double prefill_wall_ms = 0;
  double coverage = 0;         // summed decode span time / decode wall time
  TimelineSummary summary;
};

// One untimed warm-up step first (so first-call costs are not in the spans), then one timed
// prefill of the proxy prompt and N decode steps with the sink set. Each span gets the bytes it
// moved (op_work.h).
TimelineResult run_timeline(Backend& backend, const Model& model, const TimelineParams& params,
                            const ProgressFn& progress = {});

void to_json(nlohmann::json& j, const TimelineSummary& s);

// Chrome trace-event JSON ("X" complete events on a track per phase and op group, named
// "prefill ATTN", "decode FFN", ... by thread_name metadata; Perfetto and chrome://tracing open
// it). Times are microseconds as the format wants.
nlohmann::json chrome_trace(std::span<const OpSpan> spans, const std::string& title);
// chrome_trace() to `path` through the atomic output writer (the CLI's --trace, the GUI's
// "Open in Perfetto").
void write_chrome_trace(const std::string& path, std::span<const OpSpan> spans, const std::string& title,
                        const OutputPolicy& policy);

}  // namespace p64
