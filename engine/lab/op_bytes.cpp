#include "engine/lab/op_bytes.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "engine/model/model.h"

namespace p64 {
namespace {

uint64_t sum_bytes(std::initializer_list<const TensorView*> tensors) {
  uint64_t n = 0;
  for (const TensorView* t : tensors)
    if (t) n += t->bytes;
  return n;
}

}  // namespace

uint64_t op_bytes(const Model& model, uint64_t kv_bytes_per_position, const OpSpan& span) {
  const std::string_view name = span.name;
  if (name == "logits" || name == "logits_argmax") return model.output().bytes;
  const auto& layers = model.layers();
  if (span.layer < 0 || static_cast<size_t>(span.layer) >= layers.size()) return 0;
  const LayerWeights& w = layers[static_cast<size_t>(span.layer)];
  if (name == "qkv") return sum_bytes({w.wq, w.wk, w.wv, w.bq, w.bk, w.bv, w.wqkv});
  if (name == "o") return sum_bytes({w.wo});
  if (name == "gate_up") return sum_bytes({w.w_gate, w.w_up, w.w_gate_up});
  if (name == "down") return sum_bytes({w.w_down});
  // A prefill span covers a batch of positions the span does not record: its KV traffic is unknown.
  if (span.prefill || kv_bytes_per_position == 0 || layers.empty()) return 0;
  const uint64_t per_layer = kv_bytes_per_position / layers.size();
  if (name == "kv_write" || name == "rope_kv_write") return per_layer;
  // A decode step at position p attends over positions 0..p.
  if (name == "sdpa") return per_layer * (static_cast<uint64_t>(std::max(0, span.step)) + 1);
  return 0;
}

void count_op_bytes(const Model& model, uint64_t kv_bytes_per_position, std::span<OpSpan> spans) {
  for (OpSpan& s : spans) s.bytes = op_bytes(model, kv_bytes_per_position, s);
}

}  // namespace p64
