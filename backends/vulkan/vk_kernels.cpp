#include "backends/vulkan/vk_kernels.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "backends/vulkan/vk_common.h"

namespace p64::vulkan {

uint32_t Kernels::base_rows(uint32_t epi) const {
  if (epi == EPI_ROPE) return std::max<uint32_t>(tune_.rows, 2);
  if (epi == EPI_ARGMAX) return tune_.logits_rows;
  return tune_.rows;
}

uint32_t Kernels::mv_rows(const DeviceMatrix& m, uint32_t epi) const {
  uint32_t rows = base_rows(epi);
  if (epi == EPI_ARGMAX || tune_.max_wg_threads == 0) return rows;  // the argmax partials are sized by rows
  const uint32_t tpr = mv_tpr(m, epi), min_rows = epi == EPI_ROPE ? 2 : 1;
  while (rows > min_rows && rows * tpr > tune_.max_wg_threads) rows /= 2;
  return rows;
}

uint32_t Kernels::mv_tpr(const DeviceMatrix& m, uint32_t epi) const {
  uint32_t tpr = tune_.tpr;
  if (tune_.max_units == 0) return tpr;
  const uint32_t units = std::max<uint32_t>(m.K / 32, 1);
  while (units > tune_.max_units * tpr && tpr < 128 && 2 * tpr * base_rows(epi) <= 1024 &&
         2 * tpr * base_rows(epi) <= ctx_.props.limits.maxComputeWorkGroupInvocations)
    tpr *= 2;
  return tpr;
}

bool Kernels::mv_wide_fits(const DeviceMatrix& m, uint32_t epi, uint32_t x_off) const {
  if (!tune_.wide || m.K % 32 != 0 || x_off % 4 != 0) return false;
  const uint32_t rows = mv_rows(m, epi);
  const uint32_t rpg = std::min(tune_.rows_per_group, rows);
  // mv_wide.comp's shared arrays: the padded input, its 16-sums, the reductions, the results.
  const uint64_t input = 16ull * (m.K / 4 + m.K / 32 + m.K / 64) + m.K / 4;
  const uint64_t shared = input + 8ull * (rows / rpg) * mv_tpr(m, epi) * rpg + 8ull * rows + 64;
  return shared <= ctx_.props.limits.maxComputeSharedMemorySize;
}

VkPipeline Kernels::mv_pipe(const DeviceMatrix& m, uint32_t epi, bool fuse_norm, uint32_t x_off,
                                  bool overlap) {
  const uint32_t rows = mv_rows(m, epi);
  const uint32_t tpr = mv_tpr(m, epi);
  const std::string sg = std::string(tune_.subgroups ? "_sg" : "") + (overlap ? "_ov" : "");
  const bool geglu = epi == EPI_SWIGLU && model_.geglu;
  if (mv_wide_fits(m, epi, x_off)) {
    const uint32_t rpg = std::min(tune_.rows_per_group, rows);
    std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, rows / rpg * tpr}, {1, rows}, {2, m.K}, {3, tpr}, {4, epi},
                                                       {5, fuse_norm ? 1u : 0u}, {7, 1}, {8, tune_.units_in_flight},
                                                       {9, rpg}, {10, tune_.mantissa ? 1u : 0u}};
    if (geglu) spec.push_back({11, 1});
    return pipes_.get("mv_wide_" + *dtype_suffix(m.dtype) + sg, spec, tune_.subgroups);
  }
  const uint32_t wg = rows * tpr;
  const uint64_t fixed = 4ull * (2 * wg + 2 * rows) + 64;
  const uint32_t xs = 4ull * m.K + fixed <= ctx_.props.limits.maxComputeSharedMemorySize ? m.K : 1;
  const std::string name = "mv_" + *dtype_suffix(m.dtype) + sg;
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, wg}, {1, rows}, {2, m.K}, {3, tpr}, {4, epi},
                                                     {5, fuse_norm ? 1u : 0u}, {6, xs}, {7, 1}};
  if (geglu) spec.push_back({11, 1});
  return pipes_.get(name, spec, tune_.subgroups);
}

Kernels::MmTile Kernels::mm_tile(uint32_t n) const {
  // No 16-token tile: the weight tiles (the cost of a short chunk) would be the same, with half the
  // threads to load them, and on lavapipe its 8 tile loads per thread compile twice as slowly.
  MmTile t{tune_.mm_coopmat ? 64u : tune_.mm_rows, tune_.mm_tokens ? tune_.mm_tokens : n <= 32 ? 32u : 64u};
  if (tune_.mm_coopmat) return t;  // 26 KiB of shared memory and 64 or 128 threads fit every such device
  // A thread sums 8 rows x 4 tokens; a device short of shared memory or threads gets smaller tiles.
  const auto& lim = ctx_.props.limits;
  const uint64_t elem = tune_.mm_f16 ? 2 : 4;
  auto fits = [&] {
    return 32 * (t.rows + t.tokens) * elem <= lim.maxComputeSharedMemorySize &&
           t.rows / 8 * (t.tokens / 4) <= lim.maxComputeWorkGroupInvocations;
  };
  while (!fits() && t.rows > 64) t.rows /= 2;
  while (!fits() && t.tokens > 32) t.tokens /= 2;
  return t;
}

VkPipeline Kernels::mm_pipe(DType dtype, MmTile t, bool geglu) {
  const char* variant = tune_.mm_coopmat ? "_cm" : tune_.mm_f16 ? "_f16" : "";
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, t.rows / 8 * (t.tokens / 4)}, {1, t.rows}, {3, t.tokens}};
  if (geglu) spec.push_back({4, 1});
  return pipes_.get("mm_" + *dtype_suffix(dtype) + variant, spec,
                     tune_.mm_coopmat);  // whole subgroups: each multiplies its own block
}

VkPipeline Kernels::glu_pipe() {
  return model_.geglu ? pipes_.get("silu_mul", {{0, 1}}) : simple_pipe("silu_mul");
}

VkPipeline Kernels::attn_prefill_pipe(uint32_t window) {
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, tune_.pa_rows * 8}, {1, tune_.pa_rows}, {2, hp_.head_dim},
                                                     {3, tune_.pa_keys}};
  if (window) spec.push_back({4, window});
  if (hp_.attn_softcap > 0.0f) spec.push_back({5, float_bits(hp_.attn_softcap)});
  return pipes_.get("attn_prefill", spec);
}

VkPipeline Kernels::embed_pipe() { return pipes_.get("embed_" + *dtype_suffix(model_.embd.dtype), {{2, model_.embd.K}}); }

VkPipeline Kernels::attn_pipe(bool overlap, uint32_t splits, uint32_t window) {
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, 128}, {2, hp_.head_dim}, {3, splits},
                                                     {4, tune_.attn_value_batch}};
  if (window) spec.push_back({5, window});
  if (hp_.attn_softcap > 0.0f) spec.push_back({6, float_bits(hp_.attn_softcap)});
  return pipes_.get(std::string(tune_.subgroups ? "attn_sg" : "attn") + (overlap ? "_ov" : ""), spec, tune_.subgroups);
}

uint32_t Kernels::layer_window(uint32_t layer) const { return hp_.layer_is_local(layer) ? hp_.sliding_window : 0; }

VkPipeline Kernels::simple_pipe(const char* name) { return pipes_.get(name, {}); }

}  // namespace p64::vulkan
