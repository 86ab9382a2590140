#include "backends/vulkan/vulkan_tuning.h"

#include <algorithm>
#include <utility>

#include "backends/vulkan/vulkan_backend.h"
#include "engine/common/error.h"

namespace p64::vulkan {

// The defaults were set by A/B wins: docs/results/vulkan-switch-promotions.md has the evidence.
const std::vector<SwitchInfo>& switch_table() {
  static const std::vector<SwitchInfo> t = {
      enum_switch("subgroup_reduce",
        "row sums with subgroup adds (else a shared-memory tree); auto = when the device has them",
        "auto", {"auto", "0", "1"}, "default"),
      int_switch("rows_per_workgroup",
        "matrix rows per workgroup of the decode GEMV",
        16, {1, 2, 4, 8, 16, 32}, "default"),
      int_switch("threads_per_row",
        "threads summing one row of the decode GEMV; 0 = max(32, subgroup size)",
        0, {0, 1, 2, 4, 8, 16, 32, 64, 128, 256}, "default"),
      enum_switch("gemv_kernel",
        "decode GEMV: scalar = one unit per thread at a time; wide = 16-byte loads, units_in_flight units per "
        "row in flight per thread, rows_per_group rows per thread group",
        "wide", {"scalar", "wide"}, "default"),
      int_range_switch("max_units_per_thread",
        "decode GEMV: per matrix, double threads_per_row (up to 128, and 1024 threads per workgroup) while a "
        "thread would sum more than this many 32-element units of a row (long rows, e.g. FFN down); 0 = off",
        4, 0, 64, "default"),
      int_switch("attn_splits",
        "decode attention: workgroups per query head, each over its share of the positions; the "
        "last to finish merges them (flash-decoding in one dispatch), from attn_split_from positions on",
        16, {1, 2, 4, 8, 16, 32}, "default"),
      int_switch("attn_value_batch",
        "decode attention: positions whose value rows a thread group loads before it sums them",
        4, {4, 8, 16}, "opt-in"),
      int_range_switch("attn_split_from",
        "context length (positions) from which decode attention uses attn_splits",
        512, 1, 1048576, "default"),
      int_range_switch("max_workgroup_threads",
        "decode GEMV: halve a matrix's rows per workgroup while rows x threads per row "
        "exceed this (FFN down, whose long rows get more threads); 0 = no cap",
        512, 0, 1024, "default"),
      int_switch("units_in_flight",
        "weight units per row a thread loads before it computes on them (gemv_kernel=wide)",
        1, {1, 2, 4, 8}, "default"),
      int_switch("rows_per_group",
        "rows one group of threads_per_row threads sums together, sharing input reads "
        "(gemv_kernel=wide)",
        1, {1, 2, 4}, "opt-in"),
      bool_switch("mantissa_fields",
        "decode GEMV (gemv_kernel=wide): Q4_K/Q6_K fields or'ed into the mantissa of 1.0 "
        "and 1.0 subtracted (exact; two ops per element) instead of int-to-float per element",
        true, "default"),
      bool_switch("fused_gate_up",
        "gate and up GEMV in one dispatch with SwiGLU in its epilogue",
        true, "default"),
      bool_switch("fuse_norm",
        "RMS norm computed inside the following GEMV (no dispatch of its own)",
        true, "default"),
      bool_switch("overlap",
        "decode dispatches without pipeline barriers: each workgroup issues its first weight loads, "
        "then waits on a flag the previous stage's workgroups set (needs subgroups, fuse_norm and fused_gate_up); "
        "rejected (docs/results/vulkan-switch-promotions.md)",
        false, "rejected"),
      bool_switch("fence_poll",
        "wait for a decode step by polling its fence (then blocking after 20 ms) instead of a "
        "blocking wait, which can add the driver's wake-up latency to every token",
        true, "default"),
      bool_switch("pipeline_cache",
        "persist the pipeline cache under $XDG_CACHE_HOME/p64lab",
        true, "default"),
      enum_switch("prefill",
        "batched: the prompt as chunks of T-token matrices (tiled GEMMs dequantizing each weight tile once "
        "for the chunk's tokens, one causal attention dispatch per layer); stepwise: token by token through "
        "the decode step",
        "batched", {"batched", "stepwise"}, "default"),
      int_range_switch("prefill_ubatch",
        "prefill tokens per batched chunk (one command buffer each)",
        512, 16, 4096, "default"),
      int_range_switch("prefill_batch_min",
        "prompts shorter than this many tokens go token by token through the decode step (the batched "
        "pass reads every weight tile for a handful of tokens); 1: every prompt batched",
        8, 1, 64, "default"),
      enum_switch("prefill_f16",
        "batched prefill GEMM: weight and input tiles as f16 in shared memory, products as f16 pairs summed "
        "over each 32-element step, then into f32 (twice the FMA rate); auto = when the device has "
        "shaderFloat16",
        "auto", {"auto", "0", "1"}, "default"),
      bool_switch("prefill_coopmat",
        "batched prefill GEMM on VK_NV_cooperative_matrix (16x16x16 f16 x f16 -> f32 subgroup matrices: "
        "tensor cores on NVIDIA) with 64-row tiles; Debian 12's glslc rejects the KHR extension; "
        "wrong logits on NVIDIA (H100, 2026-12-07: VulkanPrefill.CooperativeMatrixGemmMatchesCpuOrIsRefused fails), "
        "untested where lavapipe runs the suite (it lacks the extension)",
        false, "opt-in"),
      int_switch("prefill_tile_rows",
        "batched prefill GEMM: weight rows per workgroup",
        128, {64, 128}, "default"),
      int_switch("prefill_split_k",
        "batched prefill GEMM: where the tile grid has fewer than 512 workgroups (short chunks, narrow "
        "matrices), up to this many workgroups share a tile's k-steps; the last to finish adds the partial "
        "sums in a fixed order and applies the epilogue; 1 = off; 0 = 8 on GPUs, off on CPU devices "
        "(lavapipe), which any grid fills",
        0, {0, 1, 2, 4, 8, 16}, "default"),
      int_switch("prefill_tile_tokens",
        "batched prefill GEMM: tokens per workgroup; 0 = 32 for chunks of up to 32 tokens, else 64",
        0, {0, 32, 64}, "default"),
  };
  return t;
}

Tuning resolve_switches(const SwitchValues& sw, const vk::Context& ctx) {
  Tuning tu;
  const std::string& sg = sw.text("subgroup_reduce");
  const bool sg_ok = ctx.subgroup_arithmetic && (ctx.full_subgroups || ctx.min_subgroup == ctx.max_subgroup);
  if (sg == "1" && !sg_ok) throw Error(std::string("vulkan backend: device '") + ctx.props.deviceName +
                                       "' has no full compute subgroups with arithmetic; use subgroup_reduce=0");
  tu.subgroups = sg == "auto" ? sg_ok : sg == "1";
  tu.rows = static_cast<uint32_t>(sw.integer("rows_per_workgroup"));
  tu.tpr = static_cast<uint32_t>(sw.integer("threads_per_row"));
  if (tu.tpr == 0) tu.tpr = std::max<uint32_t>(32, tu.subgroups ? ctx.max_subgroup : 32);
  if (tu.tpr < 1 || tu.tpr > 256 || (tu.tpr & (tu.tpr - 1)))
    throw Error("vulkan backend: threads_per_row must be a power of two up to 256");
  if (tu.subgroups && tu.tpr % ctx.max_subgroup != 0) tu.subgroups = false;  // rows must not share a subgroup
  tu.logits_rows = std::max<uint32_t>(tu.rows, 4);
  if (tu.rows * tu.tpr > ctx.props.limits.maxComputeWorkGroupInvocations)
    throw Error("vulkan backend: rows_per_workgroup x threads_per_row exceeds the device's workgroup size");
  tu.attn_splits = static_cast<uint32_t>(sw.integer("attn_splits"));
  tu.attn_split_from = static_cast<uint32_t>(sw.integer("attn_split_from"));
  tu.max_wg_threads = static_cast<uint32_t>(sw.integer("max_workgroup_threads"));
  tu.attn_value_batch = static_cast<uint32_t>(sw.integer("attn_value_batch"));
  tu.max_units = static_cast<uint32_t>(sw.integer("max_units_per_thread"));
  tu.wide = sw.text("gemv_kernel") == "wide";
  tu.units_in_flight = static_cast<uint32_t>(sw.integer("units_in_flight"));
  tu.rows_per_group = static_cast<uint32_t>(sw.integer("rows_per_group"));
  tu.mantissa = sw.flag("mantissa_fields");
  tu.fused_gate_up = sw.flag("fused_gate_up");
  tu.fuse_norm = sw.flag("fuse_norm");
  tu.overlap = sw.flag("overlap");
  if (tu.overlap && (!tu.subgroups || !tu.fuse_norm || !tu.fused_gate_up))
    throw Error("vulkan backend: overlap=1 needs subgroup reductions, fuse_norm=1 and fused_gate_up=1");
  tu.pipeline_cache = sw.flag("pipeline_cache");
  tu.fence_poll = sw.flag("fence_poll");
  tu.ubatch = static_cast<uint32_t>(sw.integer("prefill_ubatch"));
  tu.stepwise = sw.text("prefill") == "stepwise";
  tu.batch_min = static_cast<uint32_t>(sw.integer("prefill_batch_min"));
  const std::string& f16 = sw.text("prefill_f16");
  if (f16 == "1" && !ctx.float16)
    throw Error(std::string("vulkan backend: device '") + ctx.props.deviceName +
                "' has no shaderFloat16; use prefill_f16=0");
  tu.mm_f16 = f16 == "auto" ? ctx.float16 : f16 == "1";
  tu.mm_coopmat = sw.flag("prefill_coopmat");
  if (tu.mm_coopmat && !ctx.nv_coopmat)
    throw Error(std::string("vulkan backend: prefill_coopmat=1 needs VK_NV_cooperative_matrix with 16x16x16 f16 x f16 "
                            "-> f32 subgroup matrices and subgroups of 32; device '") +
                ctx.props.deviceName + "': " + ctx.nv_coopmat_why);
  tu.mm_rows = static_cast<uint32_t>(sw.integer("prefill_tile_rows"));
  tu.mm_tokens = static_cast<uint32_t>(sw.integer("prefill_tile_tokens"));
  tu.mm_splits = static_cast<uint32_t>(sw.integer("prefill_split_k"));
  if (tu.mm_splits == 0) tu.mm_splits = ctx.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 8;
  return tu;
}

uint32_t context_positions(const HParams& hp, uint32_t asked, const std::string& source) {
  uint32_t max_ctx = asked;
  if (hp.n_ctx_train) max_ctx = std::min(max_ctx, hp.n_ctx_train);
  if (max_ctx == 0) throw Error("vulkan backend: max_context is 0");
  // The RoPE table holds LongRope's short factors only, which serve up to original_context.
  if (hp.rope_scaling.type == RopeScalingType::LongRope && max_ctx > hp.rope_scaling.original_context)
    throw Error("vulkan backend: " + source + ": LongRope's long factors are not implemented, and its short " +
                "ones serve " + std::to_string(hp.rope_scaling.original_context) + " positions, not " +
                std::to_string(max_ctx) + "; lower max_context (--ctx) to at most " +
                std::to_string(hp.rope_scaling.original_context));
  return max_ctx;
}

void fit_to_model(Tuning& tune, const vk::Context& ctx, const HParams& hp, uint32_t max_ctx, const std::string& source) {
  tune.ubatch = std::min(tune.ubatch, max_ctx);
  if (hp.head_dim > 512 || hp.head_dim % 4 || hp.rope_dim % 2 || hp.rope_dim > hp.head_dim)
    throw Error(source + ": head_dim " + std::to_string(hp.head_dim) + " / rope_dim " +
                std::to_string(hp.rope_dim) + " not supported by the Vulkan backend");
  // Prefill attention tile: the most query rows and keys whose shared arrays fit (8 threads a row).
  const uint64_t row_bytes = 16ull * (hp.head_dim / 4 + 1), limit = ctx.props.limits.maxComputeSharedMemorySize;
  const uint32_t max_threads = ctx.props.limits.maxComputeWorkGroupInvocations;
  tune.pa_rows = tune.pa_keys = 0;
  for (auto [rows, keys] : {std::pair{32u, 32u}, {32u, 16u}, {16u, 16u}, {16u, 8u}, {8u, 8u}, {4u, 4u}})
    if (row_bytes * (rows + 2 * keys) + 4ull * rows * keys <= limit && rows * 8 <= max_threads) {
      tune.pa_rows = rows;
      tune.pa_keys = keys;
      break;
    }
  if (tune.pa_rows == 0)
    throw Error(source + ": head_dim " + std::to_string(hp.head_dim) + " needs more shared memory than device '" +
                ctx.props.deviceName + "' has for the prefill attention");
}

}  // namespace p64::vulkan
