#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace p64 {

// Op groups of the plan's timeline split.
enum class OpGroup : uint32_t { Rms, Attn, Ffn, Logits, Sample, Other };
std::string_view op_group_name(OpGroup g);  // "RMS", "ATTN", "FFN", "LOGITS", "SAMPLE", "OTHER"

// One op of one step, timed by the device's own clock (CUDA events, Vulkan timestamp queries;
// steady_clock on the CPU backend). `name` is the op's short name: qkv, rope, kv_write, sdpa,
// o, gate_up, down, rms_attn, rms_ffn, rms_final, logits, argmax, embed, ...
struct OpSpan {
  std::string name;
  OpGroup group = OpGroup::Other;
  int32_t layer = -1;     // -1 for ops outside a block
  bool prefill = false;   // span of a prefill step rather than a decode step
  int32_t step = 0;       // decode step index (position) the span belongs to
  double start_us = 0;    // relative to the first span the backend reported for this session
  double dur_us = 0;
  // Weight and KV-cache bytes the op moves and the FLOPs it performs, counted from the model's
  // shapes by the lab (engine/lab/op_work.h) after the step; 0: not known for this op. Backends
  // leave them 0.
  uint64_t bytes = 0;
  double flops = 0;
};

// Receives the spans of each step once the step's timings are known. Backends report only
// when a sink is set: with none, timing costs nothing.
class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void on_span(const OpSpan& span) = 0;
};

}  // namespace p64
