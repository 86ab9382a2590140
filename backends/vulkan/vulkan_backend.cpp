#include "backends/vulkan/vulkan_backend_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/common/error.h"
#include "engine/model/architecture.h"
#include "engine/quant/quant.h"

namespace p64::vulkan {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

constexpr uint32_t EPI_STORE = 0, EPI_ADD = 1, EPI_ROPE = 2, EPI_SWIGLU = 3, EPI_ARGMAX = 4;
constexpr uint64_t kStagingBytes = 64ull << 20;
constexpr uint32_t kQueries = 1024;
constexpr uint32_t kStepWords = 4;  // token, pos, result, pad; prefill ids follow

// Push-constant blocks, field for field as the shaders declare them.
struct MvPC {
  uint32_t M, wbase, wbase2, nb, x_off, y_off, pos_stride, head_dim, rope_dim;
  float eps;
  uint32_t pos;
  StageChain::Sync sync;
};
struct AttnPC {
  uint32_t head_dim, group, kv_dim, q_dim, pos0;
  float scale;
  StageChain::Sync sync;
};
struct MmPC { uint32_t M, N, wbase, wbase2, nb, ldy, y_row0, pos0, head_dim, rope_dim, K, epi, splits, part_off, arrived_off; };
// Prefill GEMM split-K: grids under kMmTargetGroups workgroups split their k-steps; a split keeps
// at least 2 of them; the scratch holds at most kMmPartFloats partial sums per region.
constexpr uint32_t kMmTargetGroups = 512, kMmRegions = 3;
constexpr uint64_t kMmPartFloats = 4ull << 20;
struct AttnPrefillPC {
  uint32_t N, group, kv_dim, q_dim, pos0;
  float scale;
};
struct EmbedPC {
  uint32_t wbase, nb, tok_off, n_vocab;
  float scale;
};
struct QkvHeadsPC {
  uint32_t head_dim, rope_dim, n_head, n_head_kv, pos0, flags;
  float eps;
};
constexpr uint32_t kHeadsBias = 1, kHeadsNorm = 2, kHeadsHalves = 4, kHeadsStepPos = 8;  // qkv_heads.comp's flags
struct RmsPC { uint32_t K; float eps; };
struct CountPC { uint32_t n; };
struct ArgmaxPC {
  uint32_t n;
  StageChain::Sync sync;
};

// Shader-name suffix of a weight dtype; nullopt when no shader reads it.
std::optional<std::string> dtype_suffix(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q8_0_SOA: return "q8_0_soa";
    case DType::Q5_0: return "q5_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q4_K_SOA: return "q4_k_soa";
    case DType::Q6_K: return "q6_k";
    case DType::Q6_K_SOA: return "q6_k_soa";
    default: return std::nullopt;
  }
}
bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// Rows [first, first + count) of a matrix in plain blocks, where a row is contiguous (not in
// the SoA forms, whose fields lie in arrays over the whole matrix).
TensorView row_range(const TensorView& t, int64_t first, int64_t count, const std::string& source) {
  if (dtype_is_soa(t.dtype))
    throw Error(source + ": tensor '" + t.name + "' is a fused matrix in " + std::string(dtype_name(t.dtype)) +
                ", which the Vulkan backend cannot split into its parts; convert the model without SoA layouts");
  const uint64_t row_bytes = t.bytes / static_cast<uint64_t>(t.rows());
  TensorView v = t;
  v.ne[1] = count;
  v.ne[2] = v.ne[3] = 1;
  v.data = t.data + static_cast<uint64_t>(first) * row_bytes;
  v.bytes = static_cast<uint64_t>(count) * row_bytes;
  return v;
}
uint32_t unit_elems(DType t) { return is_float(t) ? 4 : 32; }
uint32_t div_up(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
uint64_t align_up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
uint32_t float_bits(float f) {  // a float specialization constant's value
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

VulkanBackend::~VulkanBackend() {
  try {
    release_model();
    if (ctx_) ctx_->destroy(dummy_);
    pipes_.reset();
    ctx_.reset();
  } catch (...) {
  }
}

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

std::vector<SwitchInfo> VulkanBackend::switches() const { return switch_table(); }

// Named, not taken from the table: a new architecture's steps must be added here before it runs
// (docs/vulkan-backend.md lists the steps each one adds to the Llama block).
bool VulkanBackend::runs_architecture(std::string_view arch) const {
  return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "phi3" || arch == "gemma2" || arch == "gemma3";
}

void VulkanBackend::ensure_context(const std::string& device_spec) {
  if (ctx_ && device_spec == device_spec_) return;
  release_model();
  if (ctx_) ctx_->destroy(dummy_);
  pipes_.reset();
  ctx_.reset();
  vk::InstanceOptions io;
  io.validation = settings_.validation;
  io.on_message = settings_.on_message;
  ctx_ = std::make_unique<vk::Context>(io, device_spec);
  pipes_ = std::make_unique<vk::Pipelines>(*ctx_);
  device_spec_ = device_spec;
  passport_.reset();
  dummy_ = ctx_->create_buffer(256, false, "placeholder binding");
}

void VulkanBackend::release_model() {
  if (!ctx_) return;
  vk::Api& a = vk::api();
  a.vkDeviceWaitIdle(ctx_->device);
  for (DecodeProgram& p : decode_) {
    p.rec.reset();
    ctx_->free_command_buffer(p.cmd);
    p.cmd = VK_NULL_HANDLE;
  }
  rec_prefill_.reset();
  ctx_->free_command_buffer(cmd_prefill_);
  cmd_prefill_ = VK_NULL_HANDLE;
  if (queries_) a.vkDestroyQueryPool(ctx_->device, queries_, nullptr);
  queries_ = VK_NULL_HANDLE;
  for (auto& l : layers_)
    for (vk::Buffer* b : {&l.attn_norm, &l.ffn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.gate_up, &l.down, &l.kc, &l.vc,
                          &l.qkv_bias, &l.qk_norm, &l.post_attn_norm, &l.post_ffn_norm})
      ctx_->destroy(*b);
  layers_.clear();
  for (vk::Buffer* b : {&staging_, &embd_, &out_norm_, &output_, &x_, &xn_, &q_, &att_, &g_, &up_,
                        &logits_, &part_, &rope_, &rope_local_, &step_, &readback_, &flags_,
                        &attn_partial_, &attn_arrived_, &mm_part_, &mm_arrived_})
    ctx_->destroy(*b);
  model_.reset();
  max_ctx_ = 0;
  have_origin_ = false;
}

void VulkanBackend::copy_to_device(const vk::Buffer& dst, uint64_t dst_off, const uint8_t* src, uint64_t bytes) {
  // Chunks through one staging buffer: the mapped file is read once, never copied whole.
  if (!staging_.mapped) throw Error("vulkan backend: upload without a staging buffer (internal error)");
  VkCommandBuffer cmd = ctx_->allocate_command_buffer();
  try {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = std::min(bytes - done, staging_.size);
      std::memcpy(staging_.mapped, src + done, n);
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vk::check(vk::api().vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
      VkBufferCopy c{0, dst_off + done, n};
      vk::api().vkCmdCopyBuffer(cmd, staging_.buf, dst.buf, 1, &c);
      vk::check(vk::api().vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
      ctx_->submit_and_wait(cmd);
      done += n;
    }
  } catch (...) {
    ctx_->free_command_buffer(cmd);
    throw;
  }
  ctx_->free_command_buffer(cmd);
}

vk::Buffer VulkanBackend::upload_f32_vectors(std::initializer_list<const TensorView*> parts, const std::string& what) {
  std::vector<float> v;
  for (const TensorView* t : parts) {
    const size_t at = v.size();
    v.resize(at + static_cast<size_t>(t->elements()));
    if (t->dtype == DType::F32) {
      std::memcpy(v.data() + at, t->data, (v.size() - at) * 4);
    } else if (t->dtype == DType::F16) {
      const auto* h = reinterpret_cast<const uint16_t*>(t->data);
      for (size_t i = at; i < v.size(); ++i) v[i] = fp16_to_fp32(h[i - at]);
    } else {
      throw Error(model_->source() + ": tensor '" + t->name + "' has dtype " + std::string(dtype_name(t->dtype)) +
                  "; the Vulkan backend reads norm weights and biases as F32 or F16");
    }
  }
  vk::Buffer b = ctx_->create_buffer(v.size() * 4, false, what);
  copy_to_device(b, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4);
  return b;
}

DeviceMatrix VulkanBackend::upload_matrix(vk::Buffer& dst, const TensorView& stored_a, const TensorView* stored_b,
                                          const std::string& what) {
  // A CPU-layout (row-interleaved) matrix goes up as its plain blocks.
  std::vector<uint8_t> plain_a, plain_b;
  const TensorView a = plain_blocks(stored_a, plain_a);
  const TensorView plain_view_b = stored_b ? plain_blocks(*stored_b, plain_b) : TensorView{};
  const TensorView* b = stored_b ? &plain_view_b : nullptr;
  for (const TensorView* t : {&a, b}) {
    if (!t) continue;
    if (!dtype_suffix(t->dtype))
      throw Error(model_->source() + ": tensor '" + t->name + "' has dtype " + std::string(dtype_name(t->dtype)) +
                  "; the Vulkan backend reads F32, F16, BF16, Q8_0, Q5_0, Q4_K, Q6_K, their SoA and CPU forms");
    if (t->row_length() % unit_elems(t->dtype) != 0)
      throw Error(model_->source() + ": tensor '" + t->name + "' has rows of " + std::to_string(t->row_length()) +
                  " elements, not a multiple of " + std::to_string(unit_elems(t->dtype)));
  }
  if (b && (b->dtype != a.dtype || b->ne[0] != a.ne[0] || b->rows() != a.rows()))
    throw Error(model_->source() + ": '" + a.name + "' and '" + b->name + "' differ in dtype or shape");
  const uint64_t off2 = align_up(a.bytes, 256);
  const uint64_t total = b ? off2 + b->bytes : a.bytes;
  if (total > ctx_->props.limits.maxStorageBufferRange || total > 0xFFFFFFF0ull)
    throw DeviceError("Vulkan: " + what + " needs a " + std::to_string(total >> 20) +
                      " MiB storage buffer; device '" + ctx_->props.deviceName + "' allows " +
                      std::to_string(ctx_->props.limits.maxStorageBufferRange >> 20) + " MiB");
  // Padded to 16 bytes: the GEMVs read 2-byte-aligned 16-byte spans of AoS blocks as whole words.
  dst = ctx_->create_buffer(align_up(total, 16), false, what);
  copy_to_device(dst, 0, a.data, a.bytes);
  if (b) copy_to_device(dst, off2, b->data, b->bytes);
  DeviceMatrix m;
  m.buf = &dst;
  m.base = 0;
  m.base2 = b ? static_cast<uint32_t>(off2) : 0;
  m.dtype = a.dtype;
  m.K = static_cast<uint32_t>(a.row_length());
  m.M = static_cast<uint32_t>(a.rows());
  const auto info = dtype_info(a.dtype);
  m.nb = static_cast<uint32_t>(a.elements() / (info ? info->block_elems : 1));
  return m;
}

vk::Buffer VulkanBackend::build_rope_table(const HParams& hp, const char* what) {
  const uint32_t half = hp.rope_dim / 2;
  std::vector<double> inv(half);
  for (uint32_t i = 0; i < half; ++i) {
    double f = std::pow(static_cast<double>(hp.rope_base), -2.0 * i / hp.rope_dim);
    if (!hp.rope_freq_factors.empty()) {
      f /= hp.rope_freq_factors[std::min<size_t>(i, hp.rope_freq_factors.size() - 1)];
    } else if (hp.rope_scaling.type == RopeScalingType::Linear) {
      f /= hp.rope_scaling.factor;
    } else if (hp.rope_scaling.type == RopeScalingType::Llama3) {
      const auto& s = hp.rope_scaling;
      const double lo_wl = s.original_context / s.low_freq_factor, hi_wl = s.original_context / s.high_freq_factor;
      const double wl = 2.0 * M_PI / f;
      if (wl > lo_wl) {
        f /= s.factor;
      } else if (wl >= hi_wl) {
        const double smooth = (s.original_context / wl - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  std::vector<float> t(static_cast<size_t>(max_ctx_) * half * 2);
  for (uint32_t p = 0; p < max_ctx_; ++p)
    for (uint32_t i = 0; i < half; ++i) {
      const double a = p * inv[i];
      // LongRope's attention factor scales the rotated dimensions (1 but for phi3).
      t[(static_cast<size_t>(p) * half + i) * 2] = static_cast<float>(std::cos(a) * hp.rope_attn_factor);
      t[(static_cast<size_t>(p) * half + i) * 2 + 1] = static_cast<float>(std::sin(a) * hp.rope_attn_factor);
    }
  vk::Buffer b = ctx_->create_buffer(std::max<size_t>(t.size() * 4, 16), false, what);
  if (!t.empty()) copy_to_device(b, 0, reinterpret_cast<const uint8_t*>(t.data()), t.size() * 4);
  return b;
}

void VulkanBackend::load(std::shared_ptr<const Model> model, const BackendOptions& options) {
  const auto t_start = Clock::now();
  report_ = LoadReport{};
  check_backend_runs(*this, *model);  // before any device work: names the file and its architecture
  // Switches first: a typo fails before any device work.
  const SwitchValues sw("vulkan", switch_table(), options.switches);
  auto t0 = Clock::now();
  std::string spec = options.device;
  if (spec.empty())
    if (const char* e = std::getenv("P64_VULKAN_DEVICE"); e) spec = e;
  ensure_context(spec);
  release_model();
  report_.context_ms = ms_since(t0);
  report_.device = ctx_->props.deviceName;

  model_ = std::move(model);
  hp_ = model_->hparams();
  const Architecture& arch = model_->architecture();
  qkv_heads_ = arch.has(ArchRole::Bq) || arch.has(ArchRole::QNorm) || hp_.rope_layout != RopeLayout::Adjacent;
  geglu_ = arch.ffn_activation == FfnActivation::GeluTanh;
  Tuning& tu = tune_;
  tu = Tuning{};
  const std::string& sg = sw.text("subgroup_reduce");
  const bool sg_ok = ctx_->subgroup_arithmetic && (ctx_->full_subgroups || ctx_->min_subgroup == ctx_->max_subgroup);
  if (sg == "1" && !sg_ok) throw Error(std::string("vulkan backend: device '") + ctx_->props.deviceName +
                                       "' has no full compute subgroups with arithmetic; use subgroup_reduce=0");
  tu.subgroups = sg == "auto" ? sg_ok : sg == "1";
  tu.rows = static_cast<uint32_t>(sw.integer("rows_per_workgroup"));
  tu.tpr = static_cast<uint32_t>(sw.integer("threads_per_row"));
  if (tu.tpr == 0) tu.tpr = std::max<uint32_t>(32, tu.subgroups ? ctx_->max_subgroup : 32);
  if (tu.tpr < 1 || tu.tpr > 256 || (tu.tpr & (tu.tpr - 1)))
    throw Error("vulkan backend: threads_per_row must be a power of two up to 256");
  if (tu.subgroups && tu.tpr % ctx_->max_subgroup != 0) tu.subgroups = false;  // rows must not share a subgroup
  if (tu.rows * tu.tpr > ctx_->props.limits.maxComputeWorkGroupInvocations)
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
  if (f16 == "1" && !ctx_->float16)
    throw Error(std::string("vulkan backend: device '") + ctx_->props.deviceName +
                "' has no shaderFloat16; use prefill_f16=0");
  tu.mm_f16 = f16 == "auto" ? ctx_->float16 : f16 == "1";
  tu.mm_coopmat = sw.flag("prefill_coopmat");
  if (tu.mm_coopmat && !ctx_->nv_coopmat)
    throw Error(std::string("vulkan backend: prefill_coopmat=1 needs VK_NV_cooperative_matrix with 16x16x16 f16 x f16 "
                            "-> f32 subgroup matrices and subgroups of 32; device '") +
                ctx_->props.deviceName + "': " + ctx_->nv_coopmat_why);
  tu.mm_rows = static_cast<uint32_t>(sw.integer("prefill_tile_rows"));
  tu.mm_tokens = static_cast<uint32_t>(sw.integer("prefill_tile_tokens"));
  tu.mm_splits = static_cast<uint32_t>(sw.integer("prefill_split_k"));
  if (tu.mm_splits == 0) tu.mm_splits = ctx_->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 1 : 8;

  max_ctx_ = options.max_context;
  if (hp_.n_ctx_train) max_ctx_ = std::min(max_ctx_, hp_.n_ctx_train);
  if (max_ctx_ == 0) throw Error("vulkan backend: max_context is 0");
  // The RoPE table holds LongRope's short factors only, which serve up to original_context.
  if (hp_.rope_scaling.type == RopeScalingType::LongRope && max_ctx_ > hp_.rope_scaling.original_context)
    throw Error("vulkan backend: " + model_->source() + ": LongRope's long factors are not implemented, and its short " +
                "ones serve " + std::to_string(hp_.rope_scaling.original_context) + " positions, not " +
                std::to_string(max_ctx_) + "; lower max_context (--ctx) to at most " +
                std::to_string(hp_.rope_scaling.original_context));
  tu.ubatch = std::min(tu.ubatch, max_ctx_);
  if (hp_.head_dim > 512 || hp_.head_dim % 4 || hp_.rope_dim % 2 || hp_.rope_dim > hp_.head_dim)
    throw Error(model_->source() + ": head_dim " + std::to_string(hp_.head_dim) + " / rope_dim " +
                std::to_string(hp_.rope_dim) + " not supported by the Vulkan backend");
  // Prefill attention tile: the most query rows and keys whose shared arrays fit (8 threads a row).
  {
    const uint64_t row_bytes = 16ull * (hp_.head_dim / 4 + 1), limit = ctx_->props.limits.maxComputeSharedMemorySize;
    const uint32_t max_threads = ctx_->props.limits.maxComputeWorkGroupInvocations;
    tu.pa_rows = tu.pa_keys = 0;
    for (auto [rows, keys] : {std::pair{32u, 32u}, {32u, 16u}, {16u, 16u}, {16u, 8u}, {8u, 8u}, {4u, 4u}})
      if (row_bytes * (rows + 2 * keys) + 4ull * rows * keys <= limit && rows * 8 <= max_threads) {
        tu.pa_rows = rows;
        tu.pa_keys = keys;
        break;
      }
    if (tu.pa_rows == 0)
      throw Error(model_->source() + ": head_dim " + std::to_string(hp_.head_dim) + " needs more shared memory than device '" +
                  ctx_->props.deviceName + "' has for the prefill attention");
  }

  // Refuse early when the model plainly cannot fit, rather than half-way through the upload.
  const uint64_t kv_bytes = 2ull * hp_.n_layer * max_ctx_ * hp_.kv_dim() * 4;
  const uint64_t need = model_->weight_bytes() + model_->token_embd().bytes + kv_bytes;
  if (need > ctx_->device_local_bytes)
    throw DeviceError("Vulkan: the model needs about " + std::to_string(need >> 20) + " MiB (weights + KV cache for " +
                      std::to_string(max_ctx_) + " positions); device '" + ctx_->props.deviceName + "' has " +
                      std::to_string(ctx_->device_local_bytes >> 20) + " MiB");

  t0 = Clock::now();
  staging_ = ctx_->create_buffer(std::min<uint64_t>(kStagingBytes, std::max<uint64_t>(need, 1 << 20)), true, "staging");
  embd_m_ = upload_matrix(embd_, model_->token_embd(), nullptr, "token_embd");
  out_norm_ = upload_f32_vector(model_->output_norm(), "output_norm");
  if (&model_->output() == &model_->token_embd()) {
    output_m_ = embd_m_;
  } else {
    output_m_ = upload_matrix(output_, model_->output(), nullptr, "output");
  }
  layers_.resize(hp_.n_layer);
  for (uint32_t i = 0; i < hp_.n_layer; ++i) {
    const LayerWeights& w = model_->layers()[i];
    DeviceLayer& d = layers_[i];
    const std::string p = "blk." + std::to_string(i) + ".";
    d.attn_norm = upload_f32_vector(*w.attn_norm, p + "attn_norm");
    d.ffn_norm = upload_f32_vector(*w.ffn_norm, p + "ffn_norm");
    if (w.wqkv) {
      // fused qkv (phi3): q, k and v rows go up as three matrices
      std::vector<uint8_t> plain;
      const TensorView qkv = plain_blocks(*w.wqkv, plain);
      const int64_t Q = hp_.q_dim(), KV = hp_.kv_dim();
      d.q = upload_matrix(d.wq, row_range(qkv, 0, Q, model_->source()), nullptr, p + "attn_qkv (q)");
      d.k = upload_matrix(d.wk, row_range(qkv, Q, KV, model_->source()), nullptr, p + "attn_qkv (k)");
      d.v = upload_matrix(d.wv, row_range(qkv, Q + KV, KV, model_->source()), nullptr, p + "attn_qkv (v)");
    } else {
      d.q = upload_matrix(d.wq, *w.wq, nullptr, p + "attn_q");
      d.k = upload_matrix(d.wk, *w.wk, nullptr, p + "attn_k");
      d.v = upload_matrix(d.wv, *w.wv, nullptr, p + "attn_v");
    }
    d.o = upload_matrix(d.wo, *w.wo, nullptr, p + "attn_output");
    if (w.w_gate_up) {
      // fused gate_up (phi3): its gate rows and up rows are the pair the SwiGLU GEMV reads
      std::vector<uint8_t> plain;
      const TensorView gu = plain_blocks(*w.w_gate_up, plain);
      const TensorView up = row_range(gu, hp_.n_ff, hp_.n_ff, model_->source());
      d.gu = upload_matrix(d.gate_up, row_range(gu, 0, hp_.n_ff, model_->source()), &up, p + "ffn_up (gate+up)");
    } else {
      d.gu = upload_matrix(d.gate_up, *w.w_gate, w.w_up, p + "ffn_gate+ffn_up");
    }
    d.dn = upload_matrix(d.down, *w.w_down, nullptr, p + "ffn_down");
    if (w.bq) d.qkv_bias = upload_f32_vectors({w.bq, w.bk, w.bv}, p + "attn_q/k/v.bias");
    if (w.q_norm) d.qk_norm = upload_f32_vectors({w.q_norm, w.k_norm}, p + "attn_q/k_norm");
    if (w.post_attn_norm) d.post_attn_norm = upload_f32_vector(*w.post_attn_norm, p + "post_attention_norm");
    if (w.post_ffn_norm) d.post_ffn_norm = upload_f32_vector(*w.post_ffn_norm, p + "post_ffw_norm");
    const uint64_t kvb = static_cast<uint64_t>(max_ctx_) * hp_.kv_dim() * 4;
    d.kc = ctx_->create_buffer(kvb, false, p + "K cache");
    d.vc = ctx_->create_buffer(kvb, false, p + "V cache");
  }
  report_.upload_ms = ms_since(t0);

  const uint32_t U = tu.ubatch;
  x_ = ctx_->create_buffer(4ull * U * hp_.n_embd, false, "residual stream");
  xn_ = ctx_->create_buffer(4ull * U * hp_.n_embd, false, "normed input");
  q_ = ctx_->create_buffer(4ull * U * hp_.q_dim(), false, "queries");
  att_ = ctx_->create_buffer(4ull * U * hp_.q_dim(), false, "attention output");
  g_ = ctx_->create_buffer(4ull * U * hp_.n_ff, false, "ffn gate");
  up_ = ctx_->create_buffer(4ull * hp_.n_ff, false, "ffn up");  // decode with fused_gate_up=0
  logits_rows_ = std::max<uint32_t>(tu.rows, 4);
  logits_ = ctx_->create_buffer(4ull * hp_.n_vocab, false, "logits");
  part_ = ctx_->create_buffer(8ull * div_up(hp_.n_vocab, logits_rows_), false, "argmax partials");
  step_ = ctx_->create_buffer(4ull * (kStepWords + U), true, "step parameters");
  readback_ = ctx_->create_buffer(4ull * hp_.n_vocab, true, "logits readback");
  // Only for the switches that use them (unbound slots get the dummy buffer).
  if (tu.overlap) flags_ = ctx_->create_buffer(4ull * (16 + 8 * hp_.n_layer), false, "stage flags");
  if (tu.attn_splits > 1) {
    attn_partial_ = ctx_->create_buffer(16ull * hp_.n_head * tu.attn_splits * (hp_.head_dim / 4 + 1), false,
                                        "attention partials");
    attn_arrived_ = ctx_->create_buffer(4ull * hp_.n_head, false, "attention arrivals");
  }
  if (tu.mm_splits > 1) {
    // The widest GEMM output (gate and up rows together), in the smallest tiles (64 rows, 32 tokens).
    const uint64_t rows = std::max({hp_.q_dim(), hp_.kv_dim(), hp_.n_embd, 2 * hp_.n_ff});
    mm_tiles_ = div_up(rows, 64) * div_up(U, 32);
    mm_part_floats_ = std::min<uint64_t>(kMmPartFloats, align_up(rows, 128) * align_up(U, 64) * tu.mm_splits);
    mm_part_ = ctx_->create_buffer(4 * kMmRegions * mm_part_floats_, false, "prefill split-K partial sums");
    mm_arrived_ = ctx_->create_buffer(4ull * kMmRegions * mm_tiles_, false, "prefill split-K arrivals");
  }
  host_logits_.assign(hp_.n_vocab, 0.0f);
  rope_ = build_rope_table(hp_, "RoPE table");
  if (hp_.rope_base_local > 0.0f) {
    // Local layers with their own base rotate unscaled (gemma3), as the CPU backend's do.
    HParams local = hp_;
    local.rope_base = hp_.rope_base_local;
    local.rope_scaling = {};
    local.rope_freq_factors.clear();
    rope_local_ = build_rope_table(local, "local layers' RoPE table");
  }
  ctx_->destroy(staging_);
  if (ctx_->timestamp_bits) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = kQueries;
    vk::check(vk::api().vkCreateQueryPool(ctx_->device, &qi, nullptr, &queries_), "vkCreateQueryPool");
  }

  // Pre-record the decode step: the token and position live in the step buffer, so the same
  // command buffer serves every position and a step is one submit.
  t0 = Clock::now();
  const double pipes_before = pipes_->create_ms();
  for (bool logits : {false, true})
    for (bool long_ctx : {false, true})
      if (!long_ctx || tu.attn_splits > 1) decode_program(false, logits, long_ctx);
  // Prefill pipelines too (for every chunk length's tile), so that a warm start compiles nothing later.
  for (uint32_t n : tu.stepwise ? std::vector<uint32_t>{} : std::vector<uint32_t>{32u, 64u})
    for (const DeviceLayer& l : layers_)
      for (const DeviceMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gu, &l.dn}) mm_pipe(m->dtype, mm_tile(n), m == &l.gu && geglu_);
  if (!tu.stepwise)
    for (uint32_t li = 0; li < hp_.n_layer; ++li) attn_prefill_pipe(layer_window(li));
  simple_pipe("rmsnorm");
  glu_pipe();
  if (qkv_heads_) simple_pipe("qkv_heads");
  if (model_->architecture().has(ArchRole::PostAttnNorm)) simple_pipe("rmsnorm_add");
  rec_prefill_ = std::make_unique<vk::Recorder>(*ctx_, *pipes_, dummy_.buf, hp_.n_layer * 16 + 16);
  cmd_prefill_ = ctx_->allocate_command_buffer();
  report_.pipelines_ms = pipes_->create_ms() - pipes_before;
  report_.record_ms = ms_since(t0) - report_.pipelines_ms;
  report_.pipelines = pipes_->created();
  report_.pipeline_cache_warm = ctx_->pipeline_cache_was_warm();
  report_.pipeline_cache_path = tu.pipeline_cache ? ctx_->pipeline_cache_path() : "";
  if (tu.pipeline_cache) ctx_->save_pipeline_cache();
  logits_fresh_ = false;
  report_.total_ms = ms_since(t_start);
}

// ---- pipelines ---------------------------------------------------------------------------

uint32_t VulkanBackend::base_rows(uint32_t epi) const {
  if (epi == EPI_ROPE) return std::max<uint32_t>(tune_.rows, 2);
  if (epi == EPI_ARGMAX) return logits_rows_;
  return tune_.rows;
}

uint32_t VulkanBackend::mv_rows(const DeviceMatrix& m, uint32_t epi) const {
  uint32_t rows = base_rows(epi);
  if (epi == EPI_ARGMAX || tune_.max_wg_threads == 0) return rows;  // the argmax partials are sized by rows
  const uint32_t tpr = mv_tpr(m, epi), min_rows = epi == EPI_ROPE ? 2 : 1;
  while (rows > min_rows && rows * tpr > tune_.max_wg_threads) rows /= 2;
  return rows;
}

uint32_t VulkanBackend::mv_tpr(const DeviceMatrix& m, uint32_t epi) const {
  uint32_t tpr = tune_.tpr;
  if (tune_.max_units == 0) return tpr;
  const uint32_t units = std::max<uint32_t>(m.K / 32, 1);
  while (units > tune_.max_units * tpr && tpr < 128 && 2 * tpr * base_rows(epi) <= 1024 &&
         2 * tpr * base_rows(epi) <= ctx_->props.limits.maxComputeWorkGroupInvocations)
    tpr *= 2;
  return tpr;
}

bool VulkanBackend::mv_wide_fits(const DeviceMatrix& m, uint32_t epi, uint32_t x_off) const {
  if (!tune_.wide || m.K % 32 != 0 || x_off % 4 != 0) return false;
  const uint32_t rows = mv_rows(m, epi);
  const uint32_t rpg = std::min(tune_.rows_per_group, rows);
  // mv_wide.comp's shared arrays: the padded input, its 16-sums, the reductions, the results.
  const uint64_t input = 16ull * (m.K / 4 + m.K / 32 + m.K / 64) + m.K / 4;
  const uint64_t shared = input + 8ull * (rows / rpg) * mv_tpr(m, epi) * rpg + 8ull * rows + 64;
  return shared <= ctx_->props.limits.maxComputeSharedMemorySize;
}

VkPipeline VulkanBackend::mv_pipe(const DeviceMatrix& m, uint32_t epi, bool fuse_norm, uint32_t x_off,
                                  bool overlap) {
  const uint32_t rows = mv_rows(m, epi);
  const uint32_t tpr = mv_tpr(m, epi);
  const std::string sg = std::string(tune_.subgroups ? "_sg" : "") + (overlap ? "_ov" : "");
  const bool geglu = epi == EPI_SWIGLU && geglu_;
  if (mv_wide_fits(m, epi, x_off)) {
    const uint32_t rpg = std::min(tune_.rows_per_group, rows);
    std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, rows / rpg * tpr}, {1, rows}, {2, m.K}, {3, tpr}, {4, epi},
                                                       {5, fuse_norm ? 1u : 0u}, {7, 1}, {8, tune_.units_in_flight},
                                                       {9, rpg}, {10, tune_.mantissa ? 1u : 0u}};
    if (geglu) spec.push_back({11, 1});
    return pipes_->get("mv_wide_" + *dtype_suffix(m.dtype) + sg, spec, tune_.subgroups);
  }
  const uint32_t wg = rows * tpr;
  const uint64_t fixed = 4ull * (2 * wg + 2 * rows) + 64;
  const uint32_t xs = 4ull * m.K + fixed <= ctx_->props.limits.maxComputeSharedMemorySize ? m.K : 1;
  const std::string name = "mv_" + *dtype_suffix(m.dtype) + sg;
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, wg}, {1, rows}, {2, m.K}, {3, tpr}, {4, epi},
                                                     {5, fuse_norm ? 1u : 0u}, {6, xs}, {7, 1}};
  if (geglu) spec.push_back({11, 1});
  return pipes_->get(name, spec, tune_.subgroups);
}

VulkanBackend::MmTile VulkanBackend::mm_tile(uint32_t n) const {
  // No 16-token tile: the weight tiles (the cost of a short chunk) would be the same, with half the
  // threads to load them, and on lavapipe its 8 tile loads per thread compile twice as slowly.
  MmTile t{tune_.mm_coopmat ? 64u : tune_.mm_rows, tune_.mm_tokens ? tune_.mm_tokens : n <= 32 ? 32u : 64u};
  if (tune_.mm_coopmat) return t;  // 26 KiB of shared memory and 64 or 128 threads fit every such device
  // A thread sums 8 rows x 4 tokens; a device short of shared memory or threads gets smaller tiles.
  const auto& lim = ctx_->props.limits;
  const uint64_t elem = tune_.mm_f16 ? 2 : 4;
  auto fits = [&] {
    return 32 * (t.rows + t.tokens) * elem <= lim.maxComputeSharedMemorySize &&
           t.rows / 8 * (t.tokens / 4) <= lim.maxComputeWorkGroupInvocations;
  };
  while (!fits() && t.rows > 64) t.rows /= 2;
  while (!fits() && t.tokens > 32) t.tokens /= 2;
  return t;
}

VkPipeline VulkanBackend::mm_pipe(DType dtype, MmTile t, bool geglu) {
  const char* variant = tune_.mm_coopmat ? "_cm" : tune_.mm_f16 ? "_f16" : "";
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, t.rows / 8 * (t.tokens / 4)}, {1, t.rows}, {3, t.tokens}};
  if (geglu) spec.push_back({4, 1});
  return pipes_->get("mm_" + *dtype_suffix(dtype) + variant, spec,
                     tune_.mm_coopmat);  // whole subgroups: each multiplies its own block
}

VkPipeline VulkanBackend::glu_pipe() {
  return geglu_ ? pipes_->get("silu_mul", {{0, 1}}) : simple_pipe("silu_mul");
}

VkPipeline VulkanBackend::attn_prefill_pipe(uint32_t window) {
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, tune_.pa_rows * 8}, {1, tune_.pa_rows}, {2, hp_.head_dim},
                                                     {3, tune_.pa_keys}};
  if (window) spec.push_back({4, window});
  if (hp_.attn_softcap > 0.0f) spec.push_back({5, float_bits(hp_.attn_softcap)});
  return pipes_->get("attn_prefill", spec);
}

VkPipeline VulkanBackend::embed_pipe() { return pipes_->get("embed_" + *dtype_suffix(embd_m_.dtype), {{2, embd_m_.K}}); }

VkPipeline VulkanBackend::attn_pipe(bool overlap, uint32_t splits, uint32_t window) {
  std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, 128}, {2, hp_.head_dim}, {3, splits},
                                                     {4, tune_.attn_value_batch}};
  if (window) spec.push_back({5, window});
  if (hp_.attn_softcap > 0.0f) spec.push_back({6, float_bits(hp_.attn_softcap)});
  return pipes_->get(std::string(tune_.subgroups ? "attn_sg" : "attn") + (overlap ? "_ov" : ""), spec, tune_.subgroups);
}

uint32_t VulkanBackend::layer_window(uint32_t layer) const { return hp_.layer_is_local(layer) ? hp_.sliding_window : 0; }

VkPipeline VulkanBackend::simple_pipe(const char* name) { return pipes_->get(name, {}); }

// ---- recording ---------------------------------------------------------------------------

void VulkanBackend::rec_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, uint32_t epi, bool fuse_norm,
                           VkBuffer x, uint32_t x_off, VkBuffer g, VkBuffer y, uint32_t pos_stride) {
  const uint32_t groups = div_up(m.M, mv_rows(m, epi));
  MvPC pc{m.M, m.base, m.base2, m.nb, x_off, 0, pos_stride, hp_.head_dim, hp_.rope_dim, hp_.rms_eps, 0, ch.take(groups)};
  r.dispatch(mv_pipe(m, epi, fuse_norm, x_off, ch.on),
             {{0, m.buf->buf}, {1, x}, {2, g}, {3, y}, {4, step_.buf}, {5, rope_.buf}, {6, part_.buf}, {7, flags_.buf}},
             pc, groups);
}

void VulkanBackend::rec_logits(vk::Recorder& r, StageChain& ch, VkBuffer x, uint32_t x_off) {
  VkBuffer xin = x;
  if (!tune_.fuse_norm) {
    RmsPC pc{hp_.n_embd, hp_.rms_eps};
    r.dispatch(simple_pipe("rmsnorm"), {{1, x}, {2, out_norm_.buf}, {3, xn_.buf}}, pc, 1);
    ch.next(r);
    xin = xn_.buf;
    x_off = 0;
  }
  rec_mv(r, ch, output_m_, EPI_ARGMAX, tune_.fuse_norm, xin, x_off, out_norm_.buf, logits_.buf, 0);
  ch.next(r);
  r.mark("logits", OpGroup::Logits, -1);
  ArgmaxPC pc{div_up(output_m_.M, logits_rows_), ch.take(1)};
  r.dispatch(simple_pipe(ch.on ? "argmax_ov" : "argmax"), {{4, step_.buf}, {6, part_.buf}, {7, flags_.buf}}, pc, 1);
  r.mark("argmax", OpGroup::Sample, -1);
}

void VulkanBackend::rec_qkv_heads(vk::Recorder& r, uint32_t layer, uint32_t n, uint32_t pos0, bool decode) {
  const DeviceLayer& l = layers_[layer];
  const VkBuffer rope = rope_local_.buf && hp_.layer_is_local(layer) ? rope_local_.buf : rope_.buf;
  const bool bias = l.qkv_bias.buf != VK_NULL_HANDLE, norm = l.qk_norm.buf != VK_NULL_HANDLE;
  const uint32_t flags = (bias ? kHeadsBias : 0) | (norm ? kHeadsNorm : 0) |
                         (hp_.rope_layout == RopeLayout::Halves ? kHeadsHalves : 0) | (decode ? kHeadsStepPos : 0);
  QkvHeadsPC pc{hp_.head_dim, hp_.rope_dim, hp_.n_head, hp_.n_head_kv, pos0, flags, hp_.rms_eps};
  // v's heads only carry a bias; without one they are left alone.
  const uint32_t heads = hp_.n_head + hp_.n_head_kv * (bias ? 2 : 1);
  r.dispatch(simple_pipe("qkv_heads"),
             {{0, q_.buf}, {1, l.kc.buf}, {2, l.vc.buf}, {3, l.qkv_bias.buf}, {4, step_.buf}, {5, rope},
              {6, l.qk_norm.buf}},
             pc, heads, n);
}

void VulkanBackend::rec_post_norm(vk::Recorder& r, const vk::Buffer& w, uint32_t n) {
  RmsPC pc{hp_.n_embd, hp_.rms_eps};
  r.dispatch(simple_pipe("rmsnorm_add"), {{1, xn_.buf}, {2, w.buf}, {3, x_.buf}}, pc, n);
}

void VulkanBackend::rec_residual_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, VkBuffer in,
                                    const vk::Buffer& post_norm, const OpMark& op, const char* norm_op) {
  if (!post_norm.buf) {
    rec_mv(r, ch, m, EPI_ADD, false, in, 0, VK_NULL_HANDLE, x_.buf, 0);
    ch.next(r);
    r.mark(op.name, op.group, op.layer);
    return;
  }
  // the product's own rmsnorm before the residual add (gemma), between real barriers
  rec_mv(r, ch, m, EPI_STORE, false, in, 0, VK_NULL_HANDLE, xn_.buf, 0);
  ch.hard(r);
  r.mark(op.name, op.group, op.layer);
  rec_post_norm(r, post_norm, 1);
  ch.hard(r);
  r.mark(norm_op, OpGroup::Rms, op.layer);
}

void VulkanBackend::final_softcap() {
  if (hp_.final_softcap > 0.0f)
    for (float& x : host_logits_) x = hp_.final_softcap * std::tanh(x / hp_.final_softcap);
}

VulkanBackend::DecodeProgram& VulkanBackend::decode_program(bool timed, bool logits, bool long_ctx) {
  DecodeProgram& p = decode_[(timed ? 4 : 0) + (logits ? 2 : 0) + (long_ctx ? 1 : 0)];
  if (!p.rec) {
    p.rec = std::make_unique<vk::Recorder>(*ctx_, *pipes_, dummy_.buf, hp_.n_layer * 16 + 16);
    p.cmd = ctx_->allocate_command_buffer();
    record_decode(*p.rec, p.cmd, logits, timed ? queries_ : VK_NULL_HANDLE, long_ctx ? tune_.attn_splits : 1);
  }
  return p;
}

void VulkanBackend::record_decode(vk::Recorder& r, VkCommandBuffer cmd, bool copy_logits, VkQueryPool queries,
                                  uint32_t attn_splits) {
  r.reset();
  r.begin(cmd, queries);
  const bool fn = tune_.fuse_norm;
  const uint32_t kvd = hp_.kv_dim();
  StageChain ch;
  ch.on = tune_.overlap;
  // Both ordered before their first use by the barrier after embed.
  if (ch.on) r.fill_zero(flags_.buf);
  if (attn_splits > 1) r.fill_zero(attn_arrived_.buf);
  EmbedPC epc{embd_m_.base, embd_m_.nb, 0, hp_.n_vocab, embd_scale()};
  const uint32_t units = is_float(embd_m_.dtype) ? embd_m_.K : embd_m_.K / 32;
  r.dispatch(embed_pipe(), {{0, embd_m_.buf->buf}, {3, x_.buf}, {4, step_.buf}}, epc, div_up(units, 64));
  ch.hard(r);
  r.mark("embed", OpGroup::Other, -1);
  for (uint32_t li = 0; li < hp_.n_layer; ++li) {
    const DeviceLayer& l = layers_[li];
    const int32_t L = static_cast<int32_t>(li);
    VkBuffer xin = x_.buf;
    if (!fn) {
      RmsPC pc{hp_.n_embd, hp_.rms_eps};
      r.dispatch(simple_pipe("rmsnorm"), {{1, x_.buf}, {2, l.attn_norm.buf}, {3, xn_.buf}}, pc, 1);
      ch.next(r);
      r.mark("rms_attn", OpGroup::Rms, L);
      xin = xn_.buf;
    }
    // Q, K, V: independent dispatches with no barrier between them; RoPE and the KV-cache
    // write happen in their epilogues.
    const uint32_t qk_epi = qkv_heads_ ? EPI_STORE : EPI_ROPE;
    rec_mv(r, ch, l.q, qk_epi, fn, xin, 0, l.attn_norm.buf, q_.buf, 0);
    rec_mv(r, ch, l.k, qk_epi, fn, xin, 0, l.attn_norm.buf, l.kc.buf, kvd);
    rec_mv(r, ch, l.v, EPI_STORE, fn, xin, 0, l.attn_norm.buf, l.vc.buf, kvd);
    if (qkv_heads_) {
      // Real barriers around it (overlap too): it takes no part in the stage flags.
      ch.hard(r);
      r.mark("qkv", OpGroup::Attn, L);
      rec_qkv_heads(r, li, 1, 0, true);
      ch.hard(r);
      r.mark("qkv_heads", OpGroup::Attn, L);
    } else {
      ch.next(r);
      r.mark("qkv", OpGroup::Attn, L);
    }
    AttnPC apc{hp_.head_dim, hp_.n_head / hp_.n_head_kv, kvd, hp_.q_dim(), 0, hp_.attn_scale(),
               ch.take(hp_.n_head * attn_splits)};
    r.dispatch(attn_pipe(ch.on, attn_splits, layer_window(li)),
               {{0, l.kc.buf}, {1, q_.buf}, {2, l.vc.buf}, {3, att_.buf}, {4, step_.buf}, {5, attn_partial_.buf},
                {6, attn_arrived_.buf}, {7, flags_.buf}},
               apc, hp_.n_head * attn_splits);
    ch.next(r);
    r.mark("sdpa", OpGroup::Attn, L);
    rec_residual_mv(r, ch, l.o, att_.buf, l.post_attn_norm, {"o", OpGroup::Attn, L}, "post_attn_norm");
    xin = x_.buf;
    if (!fn) {
      RmsPC pc{hp_.n_embd, hp_.rms_eps};
      r.dispatch(simple_pipe("rmsnorm"), {{1, x_.buf}, {2, l.ffn_norm.buf}, {3, xn_.buf}}, pc, 1);
      ch.next(r);
      r.mark("rms_ffn", OpGroup::Rms, L);
      xin = xn_.buf;
    }
    if (tune_.fused_gate_up) {
      rec_mv(r, ch, l.gu, EPI_SWIGLU, fn, xin, 0, l.ffn_norm.buf, g_.buf, 0);
    } else {
      DeviceMatrix up = l.gu;
      up.base = l.gu.base2;
      rec_mv(r, ch, l.gu, EPI_STORE, fn, xin, 0, l.ffn_norm.buf, g_.buf, 0);
      rec_mv(r, ch, up, EPI_STORE, fn, xin, 0, l.ffn_norm.buf, up_.buf, 0);
      ch.next(r);
      CountPC pc{hp_.n_ff};
      r.dispatch(glu_pipe(), {{2, up_.buf}, {3, g_.buf}}, pc, div_up(hp_.n_ff, 256));
    }
    ch.next(r);
    r.mark("gate_up", OpGroup::Ffn, L);
    rec_residual_mv(r, ch, l.dn, g_.buf, l.post_ffn_norm, {"down", OpGroup::Ffn, L}, "post_ffn_norm");
  }
  rec_logits(r, ch, x_.buf, 0);
  if (copy_logits) {
    r.barrier();
    r.copy(logits_.buf, readback_.buf, 4ull * hp_.n_vocab);
  }
  r.barrier_to_host();
  r.end();
}

void VulkanBackend::record_prefill_chunk(vk::Recorder& r, VkCommandBuffer cmd, uint32_t n, uint32_t pos0, bool last,
                                         VkQueryPool queries) {
  r.reset();
  r.begin(cmd, queries);
  const uint32_t E = hp_.n_embd, kvd = hp_.kv_dim(), qd = hp_.q_dim();
  if (mm_arrived_.buf) r.fill_zero(mm_arrived_.buf);  // ordered before the GEMMs by the barrier after embed
  EmbedPC epc{embd_m_.base, embd_m_.nb, kStepWords, hp_.n_vocab, embd_scale()};
  const uint32_t units = is_float(embd_m_.dtype) ? embd_m_.K : embd_m_.K / 32;
  r.dispatch(embed_pipe(), {{0, embd_m_.buf->buf}, {3, x_.buf}, {4, step_.buf}}, epc, div_up(units, 64), n);
  r.barrier();
  r.mark("embed", OpGroup::Other, -1);
  const MmTile tile = mm_tile(n);
  // y row y_row0 + t of token t: 0 for the chunk's buffers, pos0 for the KV cache. GEMMs running
  // at the same time (no barrier between them) take different split-K regions.
  auto mm = [&](const DeviceMatrix& m, uint32_t epi, VkBuffer x, VkBuffer y, uint32_t ldy, uint32_t y_row0,
                uint32_t region) {
    const uint32_t M = epi == EPI_SWIGLU ? hp_.n_ff : m.M;
    const uint32_t gx = div_up(M, epi == EPI_SWIGLU ? tile.rows / 2 : tile.rows), gy = div_up(n, tile.tokens);
    const uint64_t tile_floats = uint64_t(tile.rows) * tile.tokens, grid = uint64_t(gx) * gy;
    uint32_t splits = 1;
    if (mm_part_.buf) {
      splits = std::min({tune_.mm_splits, div_up(kMmTargetGroups, grid), std::max(div_up(m.K, 32) / 2, 1u)});
      while (splits > 1 && grid * tile_floats * splits > mm_part_floats_) --splits;
    }
    MmPC pc{M, n, m.base, m.base2, m.nb, ldy, y_row0, pos0, hp_.head_dim, hp_.rope_dim, m.K, epi, splits,
            static_cast<uint32_t>(region * mm_part_floats_), region * mm_tiles_};
    r.dispatch(mm_pipe(m.dtype, tile, epi == EPI_SWIGLU && geglu_),
               {{0, m.buf->buf}, {1, x}, {3, y}, {5, rope_.buf}, {6, mm_part_.buf}, {7, mm_arrived_.buf}}, pc, gx, gy,
               splits);
  };
  for (uint32_t li = 0; li < hp_.n_layer; ++li) {
    const DeviceLayer& l = layers_[li];
    const int32_t L = static_cast<int32_t>(li);
    RmsPC rpc{E, hp_.rms_eps};
    r.dispatch(simple_pipe("rmsnorm"), {{1, x_.buf}, {2, l.attn_norm.buf}, {3, xn_.buf}}, rpc, n);
    r.barrier();
    r.mark("rms_attn", OpGroup::Rms, L);
    // RoPE in the epilogues; K and V go straight into the cache at positions pos0 + t.
    const uint32_t qk_epi = qkv_heads_ ? EPI_STORE : EPI_ROPE;
    mm(l.q, qk_epi, xn_.buf, q_.buf, qd, 0, 0);
    mm(l.k, qk_epi, xn_.buf, l.kc.buf, kvd, pos0, 1);
    mm(l.v, EPI_STORE, xn_.buf, l.vc.buf, kvd, pos0, 2);
    r.barrier();
    r.mark("qkv", OpGroup::Attn, L);
    if (qkv_heads_) {
      rec_qkv_heads(r, li, n, pos0, false);
      r.barrier();
      r.mark("qkv_heads", OpGroup::Attn, L);
    }
    const uint32_t group = hp_.n_head / hp_.n_head_kv;
    AttnPrefillPC apc{n, group, kvd, qd, pos0, hp_.attn_scale()};
    r.dispatch(attn_prefill_pipe(layer_window(li)), {{0, l.kc.buf}, {1, q_.buf}, {2, l.vc.buf}, {3, att_.buf}}, apc, hp_.n_head_kv,
               div_up(uint64_t(n) * group, tune_.pa_rows));
    r.barrier();
    r.mark("sdpa", OpGroup::Attn, L);
    mm(l.o, l.post_attn_norm.buf ? EPI_STORE : EPI_ADD, att_.buf, l.post_attn_norm.buf ? xn_.buf : x_.buf, E, 0, 0);
    r.barrier();
    r.mark("o", OpGroup::Attn, L);
    if (l.post_attn_norm.buf) {
      rec_post_norm(r, l.post_attn_norm, n);
      r.barrier();
      r.mark("post_attn_norm", OpGroup::Rms, L);
    }
    r.dispatch(simple_pipe("rmsnorm"), {{1, x_.buf}, {2, l.ffn_norm.buf}, {3, xn_.buf}}, rpc, n);
    r.barrier();
    r.mark("rms_ffn", OpGroup::Rms, L);
    mm(l.gu, EPI_SWIGLU, xn_.buf, g_.buf, hp_.n_ff, 0, 0);
    r.barrier();
    r.mark("gate_up", OpGroup::Ffn, L);
    mm(l.dn, l.post_ffn_norm.buf ? EPI_STORE : EPI_ADD, g_.buf, l.post_ffn_norm.buf ? xn_.buf : x_.buf, E, 0, 0);
    r.barrier();
    r.mark("down", OpGroup::Ffn, L);
    if (l.post_ffn_norm.buf) {
      rec_post_norm(r, l.post_ffn_norm, n);
      r.barrier();
      r.mark("post_ffn_norm", OpGroup::Rms, L);
    }
  }
  if (last) {
    StageChain barriers;
    rec_logits(r, barriers, x_.buf, (n - 1) * E);
  }
  r.barrier_to_host();
  r.end();
}

// ---- steps -------------------------------------------------------------------------------

void VulkanBackend::check_position(int32_t pos, size_t n) const {
  if (!model_) throw Error("vulkan backend: load() a model first");
  if (pos < 0 || static_cast<uint64_t>(pos) + n > max_ctx_)
    throw Error("vulkan backend: positions [" + std::to_string(pos) + ", " + std::to_string(pos + n) +
                ") exceed the KV cache of " + std::to_string(max_ctx_) + " positions");
}

void VulkanBackend::emit_spans(const vk::Recorder& r, bool prefill, int32_t step) {
  if (!sink_ || !r.timing() || r.query_count() < 2) return;
  std::vector<uint64_t> t(r.query_count());
  vk::check(vk::api().vkGetQueryPoolResults(ctx_->device, queries_, 0, r.query_count(), t.size() * 8, t.data(), 8,
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
  const uint64_t mask = ctx_->timestamp_bits >= 64 ? ~0ull : ((1ull << ctx_->timestamp_bits) - 1);
  const double ns = ctx_->props.limits.timestampPeriod;
  if (!have_origin_) {
    origin_ticks_ = t[0] & mask;
    have_origin_ = true;
  }
  auto us = [&](uint64_t ticks) { return static_cast<double>(static_cast<int64_t>((ticks & mask) - origin_ticks_)) * ns / 1000.0; };
  for (size_t i = 0; i < r.spans().size(); ++i) {
    const vk::SpanMeta& m = r.spans()[i];
    OpSpan s;
    s.name = m.name;
    s.group = m.group;
    s.layer = m.layer;
    s.prefill = prefill;
    s.step = step;
    s.start_us = us(t[i]);
    s.dur_us = static_cast<double>((t[i + 1] - t[i]) & mask) * ns / 1000.0;
    sink_->on_span(s);
  }
}

int32_t VulkanBackend::run_decode(int32_t token, int32_t pos, bool want_logits, bool prefill_step) {
  check_position(pos, 1);
  if (token < 0 || static_cast<uint32_t>(token) >= hp_.n_vocab)
    throw Error("vulkan backend: token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(hp_.n_vocab));
  auto* s = static_cast<uint32_t*>(step_.mapped);
  s[0] = static_cast<uint32_t>(token);
  s[1] = static_cast<uint32_t>(pos);
  s[2] = 0xFFFFFFFFu;
  const bool timed = sink_ && queries_;
  const bool long_ctx = tune_.attn_splits > 1 && static_cast<uint32_t>(pos) + 1 >= tune_.attn_split_from;
  DecodeProgram& prog = decode_program(timed, want_logits, long_ctx);
  vk::Recorder* rec = timed ? prog.rec.get() : nullptr;
  ctx_->submit_and_wait(prog.cmd, tune_.fence_poll);
  if (tune_.overlap && s[3] != 0)
    throw DeviceError("Vulkan (overlap=1): a decode dispatch waited too long for the one before it; this device "
                      "does not start dispatches in order, so run it with overlap=0");
  if (rec) emit_spans(*rec, prefill_step, pos);
  if (want_logits) {
    std::memcpy(host_logits_.data(), readback_.mapped, 4ull * hp_.n_vocab);
    final_softcap();
  }
  logits_fresh_ = want_logits;
  return static_cast<int32_t>(s[2]);
}

int32_t VulkanBackend::decode_argmax(int32_t token, int32_t pos) { return run_decode(token, pos, false); }

std::span<const float> VulkanBackend::decode_logits(int32_t token, int32_t pos) {
  run_decode(token, pos, true);
  return host_logits_;
}

std::span<const float> VulkanBackend::logits() {
  if (!model_) throw Error("vulkan backend: load() a model first");
  if (!logits_fresh_) {
    VkCommandBuffer cmd = ctx_->allocate_command_buffer();
    vk::Recorder r(*ctx_, *pipes_, dummy_.buf, 1);
    r.begin(cmd, VK_NULL_HANDLE);
    r.copy(logits_.buf, readback_.buf, 4ull * hp_.n_vocab);
    r.barrier_to_host();
    r.end();
    try {
      ctx_->submit_and_wait(cmd);
    } catch (...) {
      ctx_->free_command_buffer(cmd);
      throw;
    }
    ctx_->free_command_buffer(cmd);
    std::memcpy(host_logits_.data(), readback_.mapped, 4ull * hp_.n_vocab);
    final_softcap();
    logits_fresh_ = true;
  }
  return host_logits_;
}

int32_t VulkanBackend::prefill(std::span<const int32_t> tokens, int32_t pos) {
  if (tokens.empty()) throw Error("vulkan backend: prefill of zero tokens");
  check_position(pos, tokens.size());
  for (int32_t t : tokens)
    if (t < 0 || static_cast<uint32_t>(t) >= hp_.n_vocab)
      throw Error("vulkan backend: token id " + std::to_string(t) + " outside the vocabulary of " +
                  std::to_string(hp_.n_vocab));
  if (!tune_.stepwise && tokens.size() >= tune_.batch_min) return prefill_batched(tokens, pos);
  // prefill=stepwise (or a short prompt): token by token through the pre-recorded decode step.
  int32_t id = 0;
  for (size_t i = 0; i < tokens.size(); ++i) id = run_decode(tokens[i], pos + static_cast<int32_t>(i), false, true);
  return id;
}

// prefill=batched: chunks of prefill_ubatch tokens, each one command buffer
// (record_prefill_chunk); only the last token's argmax comes back.
int32_t VulkanBackend::prefill_batched(std::span<const int32_t> tokens, int32_t pos) {
  auto* s = static_cast<uint32_t*>(step_.mapped);
  const bool timed = sink_ && queries_;
  for (size_t done = 0; done < tokens.size();) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(tune_.ubatch, tokens.size() - done));
    const bool last = done + n == tokens.size();
    for (uint32_t i = 0; i < n; ++i) s[kStepWords + i] = static_cast<uint32_t>(tokens[done + i]);
    s[2] = 0xFFFFFFFFu;
    const uint32_t p0 = static_cast<uint32_t>(pos + done);
    record_prefill_chunk(*rec_prefill_, cmd_prefill_, n, p0, last, timed ? queries_ : VK_NULL_HANDLE);
    ctx_->submit_and_wait(cmd_prefill_);
    if (timed) emit_spans(*rec_prefill_, true, static_cast<int32_t>(p0));
    done += n;
  }
  logits_fresh_ = false;
  return static_cast<int32_t>(s[2]);
}

void VulkanBackend::set_timeline(TimelineSink* sink) {
  sink_ = sink;
  have_origin_ = false;
}

LoadReport load_report(const Backend& b) {
  const auto* v = dynamic_cast<const VulkanBackend*>(&b);
  if (!v) throw Error("load_report: backend '" + b.name() + "' is not the Vulkan backend");
  return v->report();
}

std::unique_ptr<Backend> make_backend(InstanceSettings settings) {
  if (!settings.validation)
    if (const char* e = std::getenv("P64_VULKAN_VALIDATION"); e && std::string(e) == "1") settings.validation = true;
  return std::make_unique<VulkanBackend>(std::move(settings));
}

}  // namespace p64::vulkan
