#pragma once
// What the Vulkan backend's switches resolve to on a device and for a model. The switch table
// itself (switch_table(), vulkan_backend.h) is defined beside the resolving, in vulkan_tuning.cpp.
#include <cstdint>
#include <string>

#include "backends/vulkan/vk_context.h"
#include "engine/model/hparams.h"
#include "engine/runtime/switch_table.h"

namespace p64::vulkan {

struct Tuning {
  bool subgroups = true;
  uint32_t rows = 4;        // rows per workgroup of the decode GEMV
  uint32_t logits_rows = 4;  // rows per workgroup of the logits GEMV (its argmax partials are sized by it)
  uint32_t tpr = 32;        // threads per row
  uint32_t attn_splits = 1;  // decode attention workgroups per head ...
  uint32_t attn_split_from = 512;  // ... from this many positions on
  uint32_t attn_value_batch = 4;   // value rows a thread group loads at once
  uint32_t max_units = 0;   // max_units_per_thread: per-matrix threads per row (0 = off)
  uint32_t max_wg_threads = 512;  // per-matrix rows cap: rows x threads per row (0 = off)
  bool wide = false;        // gemv_kernel=wide (mv_wide.comp)
  uint32_t units_in_flight = 2;  // wide: units per row a thread loads before computing
  uint32_t rows_per_group = 1;   // wide: rows per group of tpr threads
  bool mantissa = true;          // wide: Q4_K/Q6_K fields by mantissa placement
  bool fused_gate_up = true;
  bool fuse_norm = true;
  bool overlap = false;     // decode stages ordered by flag waits, not barriers (overlap.glsl)
  bool pipeline_cache = true;
  bool fence_poll = false;  // decode steps wait by polling the fence
  uint32_t ubatch = 512;    // prefill tokens per recorded batch
  bool stepwise = false;    // prefill=stepwise: token by token through the decode step
  uint32_t batch_min = 8;   // shorter prompts go stepwise
  bool mm_f16 = false;      // prefill GEMM with f16 tiles and products (prefill_f16)
  bool mm_coopmat = false;  // prefill GEMM on NV cooperative matrices (prefill_coopmat)
  uint32_t mm_rows = 128;   // prefill GEMM weight rows per workgroup
  uint32_t mm_tokens = 0;   // prefill GEMM tokens per workgroup; 0 = by chunk length
  uint32_t mm_splits = 1;   // prefill GEMM: most workgroups sharing a tile's k-steps
  uint32_t pa_rows = 16, pa_keys = 16;  // prefill attention: query rows, keys per tile
};

// The switches read and checked against what the device has. Throws p64::Error naming the
// switch to change.
Tuning resolve_switches(const SwitchValues& sw, const vk::Context& ctx);
// KV positions for a load: what was asked, capped by the model's training context. Throws
// p64::Error for 0, or past what LongRope's short factors serve.
uint32_t context_positions(const HParams& hp, uint32_t asked, const std::string& source);
// The parts of `tune` that depend on the model: prefill chunks no longer than the context, and
// the prefill attention tile its head_dim fits in shared memory. Throws p64::Error for a head
// shape the shaders do not take.
void fit_to_model(Tuning& tune, const vk::Context& ctx, const HParams& hp, uint32_t max_ctx, const std::string& source);

}  // namespace p64::vulkan
