#pragma once
// The work each op of a timeline does, counted from the model's shapes so a span's time turns
// into GB/s and GFLOP/s: the bytes it moves through memory and the floating-point operations it
// performs (a multiply-add is two).
// - Bytes: the weights a projection reads (qkv, o, gate_up, down, logits), the KV cache attention
//   reads over the positions a decode step attends (sdpa), and the one position kv_write stores.
//   Weights count once per span: a prefill batch reads each row once.
// - FLOPs: the projections' multiply-adds (bias adds included) and attention's q·k and weights·v
//   over the attended positions, for decode spans; a prefill span covers a batch of positions it
//   does not record, so its FLOPs stay unknown.
// Ops whose traffic is mostly activations (norms, rope, argmax, embed) or that a backend splits
// its own way (sdpa_combine, ffn_quant, swiglu) stay unknown (0) rather than guessed.
#include <cstdint>
#include <span>

#include "engine/runtime/timeline.h"

namespace p64 {

class Model;

// `kv_bytes_per_position`: K and V of one position over all layers, as the backend holds them
// (Backend::kv_bytes_per_position); 0 leaves the KV ops unknown. 0 for an op it cannot count.
uint64_t op_bytes(const Model& model, uint64_t kv_bytes_per_position, const OpSpan& span);

// 0 for an op it cannot count.
double op_flops(const Model& model, const OpSpan& span);

// Sets OpSpan::bytes and OpSpan::flops of each span.
void count_op_work(const Model& model, uint64_t kv_bytes_per_position, std::span<OpSpan> spans);

}  // namespace p64
