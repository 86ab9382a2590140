#pragma once
// Internals of the Vulkan backend (shared by vulkan_backend.cpp and vulkan_passport.cpp).
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/vk_recorder.h"
#include "backends/vulkan/vulkan_backend.h"

namespace p64::vulkan {

// A weight matrix resident on the device: its buffer, byte offset, and what the shaders need.
struct DeviceMatrix {
  const vk::Buffer* buf = nullptr;
  uint32_t base = 0;   // byte offset of the matrix in buf
  uint32_t base2 = 0;  // byte offset of the paired matrix (up, after gate)
  uint32_t nb = 0;     // blocks of one matrix (SoA array offsets)
  DType dtype = DType::F32;
  uint32_t K = 0, M = 0;  // row length, rows
};

struct DeviceLayer {
  vk::Buffer attn_norm, ffn_norm, wq, wk, wv, wo, gate_up, down, kc, vc;
  vk::Buffer qkv_bias, qk_norm;  // bq|bk|bv and q_norm|k_norm end to end, where the model has them
  vk::Buffer post_attn_norm, post_ffn_norm;  // gemma
  DeviceMatrix q, k, v, o, gu, dn;
};

// How the decode step orders its stages: a pipeline barrier between them, or with overlap=1
// no barrier and flag waits in the shaders (shaders/overlap.glsl). A stage is the dispatches
// between two ordering points; each dispatch signals its stage's slot, waits on the previous.
struct StageChain {
  bool on = false;
  uint32_t slot = 1, prev_wgs = 0, cur_wgs = 0;  // flags[0] is the timed-out-wait word
  struct Sync {
    uint32_t wait, target, signal;
  };
  Sync take(uint32_t workgroups) {
    cur_wgs += workgroups;
    return on ? Sync{slot - 1, prev_wgs, slot} : Sync{0, 0, 0};
  }
  void next(vk::Recorder& r) {
    if (!on) return r.barrier();
    prev_wgs = cur_wgs;
    cur_wgs = 0;
    ++slot;
  }
  void hard(vk::Recorder& r) {  // a real barrier even with overlap (the next stage need not wait)
    r.barrier();
    prev_wgs = cur_wgs = 0;
    ++slot;
  }
};

// Settings resolved from the switches at load().
struct Tuning {
  bool subgroups = true;
  uint32_t rows = 4;        // rows per workgroup of the decode GEMV
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

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(InstanceSettings s) : settings_(std::move(s)) {}
  ~VulkanBackend() override;

  std::string name() const override { return "vulkan"; }
  Passport passport() override;
  std::vector<SwitchInfo> switches() const override;
  bool runs_architecture(std::string_view arch) const override;
  bool runs_sliding_window() const override { return true; }
  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override;
  uint32_t max_context() const override { return max_ctx_; }
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override;
  int32_t decode_argmax(int32_t token, int32_t pos) override;
  std::span<const float> decode_logits(int32_t token, int32_t pos) override;
  std::span<const float> logits() override;
  void set_timeline(TimelineSink* sink) override;
  uint64_t device_memory_peak() const override { return ctx_ ? ctx_->peak_bytes() : 0; }
  uint64_t kv_bytes_per_position() const override { return model_ ? 2ull * hp_.n_layer * hp_.kv_dim() * 4 : 0; }  // f32 K and V

  const LoadReport& report() const { return report_; }

 private:
  void ensure_context(const std::string& device_spec);
  void release_model();
  vk::Buffer upload_f32_vector(const TensorView& t, const std::string& what) { return upload_f32_vectors({&t}, what); }
  vk::Buffer upload_f32_vectors(std::initializer_list<const TensorView*> parts, const std::string& what);  // end to end
  DeviceMatrix upload_matrix(vk::Buffer& dst, const TensorView& a, const TensorView* b, const std::string& what);
  void copy_to_device(const vk::Buffer& dst, uint64_t dst_off, const uint8_t* src, uint64_t bytes);
  // cos, sin of every position and rotated pair, times LongRope's attention factor.
  vk::Buffer build_rope_table(const HParams& hp, const char* what);

  // Pipelines by role.
  uint32_t base_rows(uint32_t epi) const;  // rows per workgroup of a decode GEMV with this epilogue ...
  uint32_t mv_rows(const DeviceMatrix& m, uint32_t epi) const;  // ... and for this matrix
  // gemv_kernel=wide where the matrix and the input offset allow it (else the scalar kernel).
  uint32_t mv_tpr(const DeviceMatrix& m, uint32_t epi) const;  // threads per row for this matrix
  bool mv_wide_fits(const DeviceMatrix& m, uint32_t epi, uint32_t x_off) const;
  VkPipeline mv_pipe(const DeviceMatrix& m, uint32_t epi, bool fuse_norm, uint32_t x_off, bool overlap);
  struct MmTile {
    uint32_t rows, tokens;  // per workgroup
  };
  MmTile mm_tile(uint32_t n) const;  // the prefill GEMM's tile for a chunk of n tokens
  VkPipeline mm_pipe(DType dtype, MmTile t, bool geglu = false);
  VkPipeline glu_pipe();  // silu_mul.comp, or its GeGLU form
  // A window > 0: a local layer's attention (sliding_window), 0: the whole context.
  uint32_t layer_window(uint32_t layer) const;
  VkPipeline attn_prefill_pipe(uint32_t window);
  VkPipeline embed_pipe();
  VkPipeline attn_pipe(bool overlap, uint32_t splits, uint32_t window);  // decode attention
  VkPipeline simple_pipe(const char* name);

  // Recording.
  void rec_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, uint32_t epi, bool fuse_norm, VkBuffer x,
              uint32_t x_off, VkBuffer g, VkBuffer y, uint32_t pos_stride);
  // One decode step as a pre-recorded command buffer, per (timed, full logits, split attention).
  struct DecodeProgram {
    std::unique_ptr<vk::Recorder> rec;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
  };
  DecodeProgram& decode_program(bool timed, bool logits, bool long_ctx);  // recorded on first use
  void record_decode(vk::Recorder& r, VkCommandBuffer cmd, bool copy_logits, VkQueryPool queries, uint32_t attn_splits);
  void record_prefill_chunk(vk::Recorder& r, VkCommandBuffer cmd, uint32_t n, uint32_t pos0, bool last,
                            VkQueryPool queries);
  void rec_logits(vk::Recorder& r, StageChain& ch, VkBuffer x, uint32_t x_off);
  // qkv_heads.comp over the q/k/v products of n tokens (decode: the step's position).
  void rec_qkv_heads(vk::Recorder& r, uint32_t layer, uint32_t n, uint32_t pos0, bool decode);
  // gemma's post-norm: x_ += rmsnorm(xn_) * w for n tokens.
  void rec_post_norm(vk::Recorder& r, const vk::Buffer& w, uint32_t n);
  // A timeline mark: the op's name, group and layer.
  struct OpMark {
    const char* name;
    OpGroup group;
    int32_t layer;
  };
  // The o or down product into the residual stream x_: added in its epilogue, or with a
  // post-norm (gemma) stored, normalised and added by rmsnorm_add.
  void rec_residual_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, VkBuffer in, const vk::Buffer& post_norm,
                       const OpMark& op, const char* norm_op);
  void final_softcap();  // gemma2: host_logits_ -> cap tanh(logit / cap), which keeps the argmax
  // gemma scales the token embedding by sqrt(n_embd).
  float embd_scale() const { return model_->architecture().embd_scaled ? std::sqrt(static_cast<float>(hp_.n_embd)) : 1.0f; }
  int32_t run_decode(int32_t token, int32_t pos, bool want_logits, bool prefill_step = false);
  int32_t prefill_batched(std::span<const int32_t> tokens, int32_t pos);
  void emit_spans(const vk::Recorder& r, bool prefill, int32_t step);
  void check_position(int32_t pos, size_t n) const;

  InstanceSettings settings_;
  std::unique_ptr<vk::Context> ctx_;
  std::unique_ptr<vk::Pipelines> pipes_;
  std::string device_spec_;
  std::optional<Passport> passport_;

  std::shared_ptr<const Model> model_;
  HParams hp_;
  Tuning tune_;
  // The model needs steps the GEMV's RoPE epilogue cannot do (qkv bias, q/k norm, RoPE over
  // halves): its q and k products are stored plain and qkv_heads.comp finishes them.
  bool qkv_heads_ = false;
  bool geglu_ = false;  // the FFN's gate is GELU (gemma), else silu
  uint32_t max_ctx_ = 0;
  vk::Buffer dummy_, staging_, embd_, out_norm_, output_;
  DeviceMatrix embd_m_, output_m_;
  std::vector<DeviceLayer> layers_;
  vk::Buffer x_, xn_, q_, att_, g_, up_, logits_, part_, rope_, step_, readback_, flags_;
  vk::Buffer rope_local_;  // local layers' RoPE table where they have their own base (gemma3)
  vk::Buffer attn_partial_, attn_arrived_;  // attn_splits > 1
  // Prefill GEMM split-K scratch: kMmRegions regions (the concurrent q, k, v GEMMs) of
  // mm_part_floats_ partial sums and mm_tiles_ arrival counters each.
  vk::Buffer mm_part_, mm_arrived_;
  uint64_t mm_part_floats_ = 0;
  uint32_t mm_tiles_ = 0;
  uint32_t logits_rows_ = 4;
  std::vector<float> host_logits_;
  bool logits_fresh_ = false;  // host_logits_ holds the latest step's logits

  DecodeProgram decode_[8];
  std::unique_ptr<vk::Recorder> rec_prefill_;
  VkCommandBuffer cmd_prefill_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  TimelineSink* sink_ = nullptr;
  bool have_origin_ = false;
  uint64_t origin_ticks_ = 0;
  LoadReport report_;
};

// Read and copy bandwidth of the device (medians of timestamp-timed repeats).
MeasuredBandwidth measure_bandwidth(vk::Context& ctx, vk::Pipelines& pipes);
DeviceFacts device_facts(const vk::Context& ctx);

}  // namespace p64::vulkan
