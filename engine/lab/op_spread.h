#pragma once
// How each op's time spreads over the decode steps of a timeline: the durations of its spans
// with their min, median and max, per op and per op and layer. Identical layers doing the same
// work should take the same time; where the slowest layer's median is several times the
// fastest's, or one span of an op takes 10x its median, the per-step averages hide it and this
// shows it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/stats.h"
#include "engine/runtime/timeline.h"

namespace p64 {

struct OpSpread {
  std::string name;
  std::string group;   // RMS | ATTN | FFN | LOGITS | SAMPLE | OTHER
  int32_t layer = -1;  // a per-layer row's layer; -1: the op over every layer, or an op outside blocks
  MinMedianMax us;     // span durations in microseconds
  // Per-op rows of ops inside blocks: the layers whose spans have the lowest and highest
  // median, and those medians; -1 and 0 elsewhere.
  int32_t fastest_layer = -1, slowest_layer = -1;
  double fastest_layer_us = 0, slowest_layer_us = 0;
};

struct OpSpreadTable {
  std::vector<OpSpread> ops;     // one row per op, the most summed time first
  std::vector<OpSpread> layers;  // one row per op inside blocks and layer, in the order of `ops`, then by layer
};

// Decode spans only: the prefill is one step of another shape.
OpSpreadTable op_spread(std::span<const OpSpan> spans);

void to_json(nlohmann::json& j, const OpSpread& s);

}  // namespace p64
