#include "engine/lab/op_work.h"

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

double sum_elements(std::initializer_list<const TensorView*> tensors) {
  double n = 0;
  for (const TensorView* t : tensors)
    if (t) n += static_cast<double>(t->elements());
  return n;
}

const LayerWeights* layer_of(const Model& model, const OpSpan& span) {
  const auto& layers = model.layers();
  if (span.layer < 0 || static_cast<size_t>(span.layer) >= layers.size()) return nullptr;
  return &layers[static_cast<size_t>(span.layer)];
}

// A decode step at position p attends over positions 0..p; a local (sliding-window) layer over
// the last sliding_window of them.
uint64_t attended_positions(const Model& model, const OpSpan& span) {
  const uint64_t all = static_cast<uint64_t>(std::max(0, span.step)) + 1;
  const HParams& hp = model.hparams();
  return hp.layer_is_local(static_cast<uint32_t>(span.layer)) ? std::min<uint64_t>(all, hp.sliding_window) : all;
}

}  // namespace

uint64_t op_bytes(const Model& model, uint64_t kv_bytes_per_position, const OpSpan& span) {
  const std::string_view name = span.name;
  if (name == "logits" || name == "logits_argmax") return model.output().bytes;
  const LayerWeights* w = layer_of(model, span);
  if (!w) return 0;
  if (name == "qkv") return sum_bytes({w->wq, w->wk, w->wv, w->bq, w->bk, w->bv, w->wqkv});
  if (name == "o") return sum_bytes({w->wo});
  if (name == "gate_up") return sum_bytes({w->w_gate, w->w_up, w->w_gate_up});
  if (name == "down") return sum_bytes({w->w_down});
  // A prefill span covers a batch of positions the span does not record: its KV traffic is unknown.
  if (span.prefill || kv_bytes_per_position == 0) return 0;
  const uint64_t per_layer = kv_bytes_per_position / model.layers().size();
  if (name == "kv_write" || name == "rope_kv_write") return per_layer;
  if (name == "sdpa") return per_layer * attended_positions(model, span);
  return 0;
}

double op_flops(const Model& model, const OpSpan& span) {
  if (span.prefill) return 0;
  const std::string_view name = span.name;
  if (name == "logits" || name == "logits_argmax") return 2 * sum_elements({&model.output()});
  const LayerWeights* w = layer_of(model, span);
  if (!w) return 0;
  if (name == "qkv") return 2 * sum_elements({w->wq, w->wk, w->wv, w->wqkv}) + sum_elements({w->bq, w->bk, w->bv});
  if (name == "o") return 2 * sum_elements({w->wo});
  if (name == "gate_up") return 2 * sum_elements({w->w_gate, w->w_up, w->w_gate_up});
  if (name == "down") return 2 * sum_elements({w->w_down});
  // q·k for every head and attended position, then the same multiply-adds for weights·v.
  if (name == "sdpa") return 4.0 * model.hparams().q_dim() * static_cast<double>(attended_positions(model, span));
  return 0;
}

void count_op_work(const Model& model, uint64_t kv_bytes_per_position, std::span<OpSpan> spans) {
  for (OpSpan& s : spans) {
    s.bytes = op_bytes(model, kv_bytes_per_position, s);
    s.flops = op_flops(model, s);
  }
}

}  // namespace p64
