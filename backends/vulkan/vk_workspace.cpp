#include "backends/vulkan/vk_workspace.h"

#include <algorithm>

#include "backends/vulkan/vk_common.h"

namespace p64::vulkan {

void Workspace::allocate(const HParams& hp, const Tuning& tune) {
  const uint32_t U = tune.ubatch;
  x = ctx_.create_buffer(4ull * U * hp.n_embd, false, "residual stream");
  xn = ctx_.create_buffer(4ull * U * hp.n_embd, false, "normed input");
  q = ctx_.create_buffer(4ull * U * hp.q_dim(), false, "queries");
  att = ctx_.create_buffer(4ull * U * hp.q_dim(), false, "attention output");
  g = ctx_.create_buffer(4ull * U * hp.n_ff, false, "ffn gate");
  up = ctx_.create_buffer(4ull * hp.n_ff, false, "ffn up");  // decode with fused_gate_up=0
  logits = ctx_.create_buffer(4ull * hp.n_vocab, false, "logits");
  part = ctx_.create_buffer(8ull * div_up(hp.n_vocab, tune.logits_rows), false, "argmax partials");
  step = ctx_.create_buffer(4ull * (kStepWords + U), true, "step parameters");
  readback = ctx_.create_buffer(4ull * hp.n_vocab, true, "logits readback");
  // Only for the switches that use them (unbound slots get the dummy buffer).
  if (tune.overlap) flags = ctx_.create_buffer(4ull * (16 + 8 * hp.n_layer), false, "stage flags");
  if (tune.attn_splits > 1) {
    attn_partial = ctx_.create_buffer(16ull * hp.n_head * tune.attn_splits * (hp.head_dim / 4 + 1), false,
                                     "attention partials");
    attn_arrived = ctx_.create_buffer(4ull * hp.n_head, false, "attention arrivals");
  }
  if (tune.mm_splits > 1) {
    // The widest GEMM output (gate and up rows together), in the smallest tiles (64 rows, 32 tokens).
    const uint64_t rows = std::max({hp.q_dim(), hp.kv_dim(), hp.n_embd, 2 * hp.n_ff});
    mm_tiles = div_up(rows, 64) * div_up(U, 32);
    mm_part_floats = std::min<uint64_t>(kMmPartFloats, align_up(rows, 128) * align_up(U, 64) * tune.mm_splits);
    mm_part = ctx_.create_buffer(4 * kMmRegions * mm_part_floats, false, "prefill split-K partial sums");
    mm_arrived = ctx_.create_buffer(4ull * kMmRegions * mm_tiles, false, "prefill split-K arrivals");
  }
}

Workspace::~Workspace() {
  for (vk::Buffer* b : {&x, &xn, &q, &att, &g, &up, &logits, &part, &step, &readback, &flags, &attn_partial,
                        &attn_arrived, &mm_part, &mm_arrived})
    ctx_.destroy(*b);
}

}  // namespace p64::vulkan
