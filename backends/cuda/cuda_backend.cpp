#include "backends/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/arch_kernels.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_passport.h"
#include "backends/cuda/gemv_bench.h"
#include "backends/cuda/stream_bench.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/prefill_runner.h"
#include "backends/cuda/rope_freqs.h"
#include "backends/cuda/tiled_weights.h"
#include "engine/common/error.h"
#include "engine/model/architecture.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

using namespace p64::cuda;

// A matrix as the kernels see it: device pointer plus the shape facts the SoA addressing needs.
struct DevMatrix {
  const uint8_t* d = nullptr;
  uint32_t dtype = 0;
  int64_t n = 0;     // row length
  int64_t rows = 0;
  int64_t nb = 0;    // blocks of the whole tensor
  uint64_t bytes = 0;
};

struct DevLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  DevMatrix wq, wk, wv, wo, gate, up, down;
  // The tensors only some architectures have; null where the model has none.
  const float* qkv_bias = nullptr;  // bq | bk | bv end to end (qwen2)
  const float* q_norm = nullptr;    // qwen3, gemma3
  const float* k_norm = nullptr;
  const float* post_attn_norm = nullptr;  // gemma2, gemma3
  const float* post_ffn_norm = nullptr;
};

// The steps beyond the Llama block that a model needs (arch_kernels.h), resolved at load from
// its architecture's table and hyperparameters. All off: the Llama step, launch for launch.
struct ArchSteps {
  bool qkv_heads = false;  // bias, q/k norm, RoPE over halves, LongRope's factor or a local base
  bool halves = false;
  float rope_scale = 1.f;
  bool geglu = false;
  float embd_scale = 0.f;  // > 0: sqrt(n_embd) (gemma)
  bool post_norms = false;
  std::vector<bool> scored;  // per layer: attention through attention_scores.cu
  std::vector<AttnScores> scores;
  bool any() const {
    return qkv_heads || geglu || embd_scale > 0.f || post_norms ||
           std::find(scored.begin(), scored.end(), true) != scored.end();
  }
};

// A fused matrix's rows [first, first + count) as a matrix of their own (phi3's qkv and gate_up).
// `t` holds plain blocks, whose rows lie end to end.
TensorView row_range(const TensorView& t, int64_t first, int64_t count, const char* part) {
  const uint64_t row_bytes = dtype_row_bytes(t.dtype, uint64_t(t.row_length()));
  TensorView v = t;
  v.name = t.name + " (" + part + " rows)";
  v.ne[1] = count;
  v.ne[2] = v.ne[3] = 1;
  v.data = t.data + uint64_t(first) * row_bytes;
  v.bytes = uint64_t(count) * row_bytes;
  return v;
}

// What parse_switches() reads from the table; every field is set there (the table owns the defaults).
struct Switches {
  bool graphs{};
  bool pdl{};
  int smem_carveout{};  // -1: the driver's choice
  bool fuse_norm{};
  bool l2_prefetch{};
  bool gemv_reg_cap{};
  int gemv_in_flight{};  // 0 = auto: 2 for Q8_0 matrices, 1 for the K-quants
  int gemv_gate_up_in_flight{};  // the gate/up GEMV's; 0 = as gemv_in_flight
  bool gemv_ring{};
  int act_bits{};  // act_quant: int16 | int8 | f32 (0)
  bool fused_gate_up{};
  bool qkv_fused{};
  int gemv_rows{};
  int gemv_fill{};  // blocks per multiprocessor a GEMV grid should reach; 0: rows per warp fixed
  int attn_chunk{};
  int attn_grid{};      // split blocks per kv head; 0: one per possible split
  int attn_splits{};    // splits in use per kv head at most; 0: attn_chunk positions each at any depth
  bool attn_lanes{};
  bool attn_stream{};
  int combine_batch{};  // splits the attention combine loads before merging them
  bool rms_batched{};
  int argmax_batch{};
  bool attn_early{};
  bool attn_tail_combine{};
  bool qkv_rope{};  // RoPE + KV write in the q/k/v GEMV epilogue
  bool gemv_tiles{};  // gemv_layout=tiles
  int gemv_split{};       // rows per block of the block-split GEMV; 0: a warp owns whole rows
  bool swiglu_quant{};  // the gate/up GEMV quantizes the down projection's input itself
  bool gemv_prologue{};  // each GEMV normalizes and quantizes its own input
  bool q5_0_int16{};     // Q5_0 matrices on the int16 dp2a path (else fp32 FMA)
  std::string kv_type{};
  bool batched_prefill{};  // prefill: batched | stepwise
  int prefill_chunk{};
  int prefill_batch_min{};  // shorter prompts go token by token through the decode step's graph
  bool prefill_splitk{};
  int prefill_attn_group{};
};

// Long by design: one entry per switch with its description, a table rather than logic.
const std::vector<SwitchInfo>& switch_table() {
  static const std::vector<SwitchInfo> t = {
      bool_switch("graphs",
        "capture the decode step once as a CUDA graph and replay it per token (position and token "
        "come from device memory, no re-capture)",
        true, "default"),
      bool_switch("pdl",
        "programmatic dependent launch: each kernel of the step is scheduled while its predecessor "
        "finishes and loads its first weights before waiting for it",
        true, "default"),
      bool_switch("fuse_norm",
        "RMSNorm and the FFN activation quantization folded into the GEMVs: the residual add's "
        "epilogue writes the next norm's input quantized plus partial sums of squares, the "
        "consumer scales by 1/rms (integer paths only); rejected: its 32-row blocks "
        "serialize the rows' loads",
        false, "rejected"),
      bool_switch("l2_prefetch",
        "each GEMV's blocks issue bulk L2 prefetches of the next matrices' weights (up to 32 MiB) "
        "before waiting for their inputs, so weight streaming continues across kernel boundaries; "
        "rejected: the prefetch traffic competes with the live GEMV",
        false, "rejected"),
      enum_switch("smem_carveout",
        "shared-memory carveout of every decode kernel: 'driver' lets the driver size it per kernel, "
        "'shared' asks for the largest shared part everywhere, so a multiprocessor need not be "
        "reconfigured between the GEMVs (no shared memory) and the streamed attention (up to 135 KB)",
        "driver", {"driver", "shared"}, "opt-in"),
      enum_switch("gemv_regs",
        "decode GEMV register budget: 'free' lets the compiler take ~130-160 registers (3 blocks per "
        "SM), 'cap' limits them so 4 blocks fit (integer paths, 1-2 rows per warp)",
        "cap", {"free", "cap"}, "default"),
      enum_switch("gemv_in_flight",
        "decode GEMV (integer paths): 32-unit rounds per lane whose weight loads are issued before "
        "any arithmetic on them; 1 frees registers for more resident warps. auto: 2 for Q8_0 matrices, "
        "1 for the K-quants",
        "auto", {"auto", "1", "2"}, "default"),
      enum_switch("gemv_gate_up_in_flight",
        "gemv_in_flight for the gate/up GEMV alone (its SwiGLU form holds twice the rows' weights "
        "in registers); auto: as the other GEMVs",
        "auto", {"auto", "1", "2"}, "opt-in"),
      bool_switch("gemv_ring",
        "decode GEMV (warp kernel, integer paths): two units per lane in flight, and each unit's "
        "registers refilled with the unit two rounds ahead as soon as it is consumed, so loads stay "
        "in flight while the warp does arithmetic (overrides gemv_in_flight; integer paths at gemv_rows=2 "
        "and gemv_regs=cap, not for the GEMVs that quantize their output)",
        false, "opt-in"),
      enum_switch("act_quant",
        "GEMV activations for Q4_K/Q6_K/Q8_0: int16 per 32 with dp2a, int8 per 32 with dp4a "
        "(llama.cpp's mmvq idea; fails the quality gate on deep models), or f32 FMA on dequantized "
        "weights",
        "int16", {"int16", "int8", "f32"}, "default"),
      bool_switch("fused_gate_up",
        "gate and up rows in one GEMV launch with SwiGLU in its epilogue",
        true, "default"),
      bool_switch("qkv_fused",
        "q, k and v projections of one dtype in one GEMV launch",
        true, "default"),
      int_switch("gemv_rows",
        "matrix rows per warp in the decode GEMV (activation reuse vs. parallelism)",
        2, {1, 2, 4}, "default"),
      int_range_switch("gemv_fill",
        "decode GEMV: rows per warp halved (down to 1; 2 with the rope epilogue) for a matrix whose grid "
        "would have fewer than this many blocks per multiprocessor, e.g. the 3B's o and down (3072 rows: "
        "384 blocks of 8 rows for 528 slots); 0: gemv_rows everywhere",
        0, 0, 64, "opt-in"),
      int_switch("attn_chunk",
        "cached positions per flash-decoding split block",
        16, {16, 32, 64, 128, 256}, "default"),
      int_switch("attn_grid",
        "flash-decoding split blocks launched per kv head, each walking every n-th split in use; 0 "
        "launches one block per possible split of the context (most exit at once at short contexts)",
        0, {0, 16, 32, 64}, "opt-in"),
      int_range_switch("attn_splits",
        "flash-decoding splits in use per kv head at most: past attn_chunk x this many positions each "
        "split block takes a longer run of the cache, so a deep context is not cut into hundreds of "
        "partials for the combine to merge; 0: attn_chunk positions per split at any depth",
        0, 0, 1024, "opt-in"),
      bool_switch("attn_lanes",
        "flash-decoding split kernel with a lane per cached position: each lane dots a whole K row "
        "(16-byte loads) with every q head of its group, no shuffle per dot product; the V pass as before "
        "(f16 KV cache, head_dim 32/64/128/256; else the warp-row kernel)",
        false, "opt-in"),
      bool_switch("attn_stream",
        "flash-decoding split kernel that streams the KV cache through shared memory: each warp keeps two "
        "tiles of 32 cached positions (K and V rows) in flight by cp.async while it works on the oldest, and "
        "the grid is one block per split, attn_splits blocks per kv head (0: the multiprocessors shared "
        "among the kv heads) (f16 KV cache, head_dim 32/64/128; else the kernels above)",
        true, "default"),
      int_switch("combine_batch",
        "attention combine: the partials (max, sum, weighted V) of this many splits are loaded before "
        "any is merged, one online-softmax rescale per batch, so a batch costs one memory latency; 1: a "
        "pass for the max then one for the sums, split by split",
        8, {1, 8}, "default"),
      bool_switch("rms_batched",
        "RMSNorm kernels: each thread loads all its elements of the sum of squares (up to 16) before "
        "adding them, and its norm weight before waiting for the producer, so the pass costs one memory "
        "latency instead of a strided loop's",
        true, "default"),
      int_switch("argmax_batch",
        "device argmax (one block): logits each thread loads before comparing them, so the scan of a "
        "128k vocabulary needs 8 rounds of loads instead of 125 dependent ones",
        16, {1, 16}, "default"),
      bool_switch("attn_early",
        "decode attention: each split block loads its first round of cached K/V rows (all but the step's "
        "own position) and both attention kernels read the position before waiting for the q/k/v GEMV, "
        "so those loads overlap the GEMV's tail",
        true, "default"),
      bool_switch("attn_tail_combine",
        "decode attention: the last split block of each kv head to finish merges the splits of its q heads "
        "and writes the o projection's input, instead of a combine kernel: one launch fewer per layer "
        "(head_dim a multiple of 32; otherwise the combine kernel runs). Rejected: the merge waits in the "
        "split kernel's tail for its slowest block, which costs more than the launch it saves",
        false, "rejected"),
      bool_switch("qkv_rope",
        "RoPE and the k/v cache write in the q/k/v GEMV's epilogue (a warp's adjacent rows are a "
        "rotation pair) instead of a separate kernel; needs gemv_rows 2 or 4 (with 1 the rope kernel runs)",
        true, "default"),
      enum_switch("gemv_layout",
        "decode GEMV weight layout: 'blocks' reads the file's Q4_K/Q6_K blocks (AoS or SoA); 'tiles' "
        "repacks them at load (tiled_weights.h): one 16-byte load per 32-element sub-block, its scale facts "
        "in one header shared by 8 lanes; the prefill GEMMs and the embedding read the same copy; "
        "int16 activations only (act_quant=int8|f32 read the blocks)",
        "tiles", {"blocks", "tiles"}, "default"),
      int_switch("gemv_split",
        "decode GEMV (SoA and tiled integer forms): a block of 128 threads owns this many rows and its "
        "threads split the rows' units, so every weight load of a 3072-wide row is in flight at once "
        "(gemv_split.cu); 0: a warp owns whole rows and loads them in rounds",
        0, {0, 2, 4}, "opt-in"),
      bool_switch("q5_0_int16",
        "decode GEMV: Q5_0 matrices (the quantizer's fallback for Q4_K rows whose width is not a multiple "
        "of 256, e.g. SmolLM2's 960) read int16 activations with dp2a; 0: fp32 FMA on dequantized weights",
        true, "default"),
      bool_switch("swiglu_quant",
        "the fused gate/up GEMV's SwiGLU epilogue writes the down projection's int16 input (blocks "
        "of 32 rows, 16 warps) instead of a separate quantization kernel: one launch fewer per layer",
        false, "opt-in"),
      bool_switch("gemv_prologue",
        "each GEMV block makes its own int16 input in shared memory from the fp32 vector: RMSNorm before "
        "q/k/v, gate/up and the logits, the plain quantization before down (gemv_prologue.cuh); no rms_attn, "
        "rms_ffn, ffn_quant, rms_final launches. Needs int16 activations on integer paths, gemv_rows=2, "
        "gemv_regs=cap, no fuse_norm/swiglu_quant; otherwise the separate kernels run. Rejected: every "
        "block pays the prologue, more than the launch it saves",
        false, "rejected"),
      enum_switch("kv_type",
        "KV cache element type; auto = f32 for F32 models, f16 otherwise",
        "auto", {"auto", "f16", "f32"}, "default"),
      enum_switch("prefill",
        "batched: the prompt as T-token matrices on tensor cores (GEMMs dequantizing weight tiles to "
        "f16 in shared memory, batched causal attention); stepwise: token by token through the decode "
        "step",
        "batched", {"batched", "stepwise"}, "default"),
      int_switch("prefill_chunk",
        "tokens per batched-prefill pass (longer prompts run in chunks of this many)",
        512, {64, 128, 256, 512, 1024, 2048}, "default"),
      int_range_switch("prefill_batch_min",
        "prompts shorter than this many tokens skip the batched prefill and go token by token through the "
        "decode step's graph (the batched pass has a fixed cost of several decode steps); 1: every prompt "
        "batched",
        8, 1, 64, "default"),
      bool_switch("prefill_splitk",
        "batched prefill: GEMMs whose output tiles leave SMs idle (q/k/v, o, down at 512 tokens) "
        "split their k-tiles and add the partial sums in a second pass",
        false, "opt-in"),
      int_switch("prefill_attn_group",
        "batched prefill attention: cached positions per online-softmax update (4: the dot "
        "products of 4 positions reduced together, one rescale per group)",
        1, {1, 4}, "opt-in"),
  };
  return t;
}

Switches parse_switches(const BackendOptions& o) {
  const SwitchValues v("cuda", switch_table(), o.switches);
  Switches s;
  s.graphs = v.flag("graphs");
  s.pdl = v.flag("pdl");
  s.smem_carveout = v.text("smem_carveout") == "shared" ? int(cudaSharedmemCarveoutMaxShared) : -1;
  s.fuse_norm = v.flag("fuse_norm");
  s.l2_prefetch = v.flag("l2_prefetch");
  s.gemv_reg_cap = v.text("gemv_regs") == "cap";
  const std::string& in_flight = v.text("gemv_in_flight");
  s.gemv_in_flight = in_flight == "auto" ? 0 : in_flight == "1" ? 1 : 2;
  const std::string& gate_up_in_flight = v.text("gemv_gate_up_in_flight");
  s.gemv_gate_up_in_flight = gate_up_in_flight == "auto" ? 0 : gate_up_in_flight == "1" ? 1 : 2;
  s.gemv_ring = v.flag("gemv_ring");
  const std::string& act = v.text("act_quant");
  s.act_bits = act == "int16" ? 16 : act == "int8" ? 8 : 0;
  s.fused_gate_up = v.flag("fused_gate_up");
  s.qkv_fused = v.flag("qkv_fused");
  s.gemv_rows = v.integer("gemv_rows");
  s.gemv_fill = v.integer("gemv_fill");
  s.attn_chunk = v.integer("attn_chunk");
  s.attn_grid = v.integer("attn_grid");
  s.attn_splits = v.integer("attn_splits");
  s.attn_lanes = v.flag("attn_lanes");
  s.attn_stream = v.flag("attn_stream");
  s.qkv_rope = v.flag("qkv_rope");
  s.combine_batch = v.integer("combine_batch");
  s.rms_batched = v.flag("rms_batched");
  s.attn_early = v.flag("attn_early");
  s.attn_tail_combine = v.flag("attn_tail_combine");
  s.argmax_batch = v.integer("argmax_batch");
  s.kv_type = v.text("kv_type");
  s.gemv_tiles = v.text("gemv_layout") == "tiles";
  s.swiglu_quant = v.flag("swiglu_quant");
  s.gemv_prologue = v.flag("gemv_prologue");
  s.q5_0_int16 = v.flag("q5_0_int16");
  s.gemv_split = v.integer("gemv_split");
  if (s.gemv_tiles && s.act_bits != 16) {
    if (v.given("gemv_layout"))
      throw Error("CUDA backend: gemv_layout=tiles reads int16 activations only (act_quant=int16)");
    s.gemv_tiles = false;  // the default layout follows the activations
  }
  s.batched_prefill = v.text("prefill") == "batched";
  s.prefill_chunk = v.integer("prefill_chunk");
  s.prefill_batch_min = v.integer("prefill_batch_min");
  s.prefill_splitk = v.flag("prefill_splitk");
  s.prefill_attn_group = v.integer("prefill_attn_group");
  return s;
}

bool supported_dtype(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q5_0: case DType::Q8_0:
    case DType::Q8_0_SOA: case DType::Q4_K: case DType::Q4_K_SOA: case DType::Q6_K: case DType::Q6_K_SOA:
      return true;
    default:
      return false;
  }
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    std::string why;
    if (!cuda_device_available(&why)) throw DeviceError("CUDA backend: " + why);
  }
  ~CudaBackend() override {
    release();
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda"; }
  std::vector<SwitchInfo> switches() const override { return switch_table(); }
  // Named, not taken from the table: a new architecture's steps must be added here before it
  // runs (docs/cuda-backend.md lists the steps each one adds to the Llama block).
  bool runs_architecture(std::string_view arch) const override {
    return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "phi3" || arch == "gemma2" ||
           arch == "gemma3";
  }
  bool runs_sliding_window() const override { return true; }
  uint32_t max_context() const override { return max_ctx_; }
  uint64_t device_memory_peak() const override { return device_bytes_; }
  uint64_t kv_bytes_per_position() const override {
    return model_ ? 2ull * hp_.n_layer * hp_.kv_dim() * (kv_f16_ ? 2 : 4) : 0;  // K and V of every layer
  }
  void set_timeline(TimelineSink* sink) override { sink_ = sink; }

  Passport passport() override {
    ensure_device();
    if (!passport_done_) {
      passport_ = collect_cuda_passport(device_, stream_);
      passport_done_ = true;
    }
    return passport_;
  }

  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override;
  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override;
  int32_t decode_argmax(int32_t token, int32_t pos) override { return step(token, pos); }
  std::span<const float> decode_logits(int32_t token, int32_t pos) override {
    step(token, pos);
    return logits();
  }
  std::span<const float> logits() override {
    if (!model_) throw Error("CUDA backend: logits() before load()");
    if (!host_logits_valid_) {
      P64_CUDA_CHECK(cudaMemcpyAsync(host_logits_.data(), d_logits_, host_logits_.size() * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream_));
      P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
      // final logit soft-capping (gemma2) on the host: the device's argmax is the uncapped
      // logits', which the cap (monotonic) leaves where it was, as the CPU's argmax does
      if (hp_.final_softcap > 0.f)
        for (float& x : host_logits_) x = hp_.final_softcap * std::tanh(x / hp_.final_softcap);
      host_logits_valid_ = true;
    }
    return host_logits_;
  }

 private:
  void ensure_device(const std::string& spec = {});
  void release() noexcept;
  void* alloc(size_t bytes, const std::string& what) {
    void* p = device_alloc(bytes, what);
    allocations_.push_back(p);
    device_bytes_ += bytes;
    return p;
  }
  DevMatrix upload_matrix(const TensorView& t, uint8_t*& cursor);
  void resolve_arch_steps();
  QkvHeads qkv_heads_launch(uint32_t layer) const;
  uint32_t tiled_dtype(const TensorView& t) const;
  int32_t step(int32_t token, int32_t pos);
  void capture_step_graph();
  void enqueue_step();
  void emit_spans();

  // One op of the step: timed with events only while a timeline sink is set.
  template <class F>
  void op(const char* name, OpGroup group, int layer, F&& launch) {
    if (timing_) {
      ensure_events(timed_ops_.size() + 1);
      P64_CUDA_CHECK(cudaEventRecord(events_[2 * timed_ops_.size()], stream_));
    }
    launch();
    if (timing_) {
      P64_CUDA_CHECK(cudaEventRecord(events_[2 * timed_ops_.size() + 1], stream_));
      timed_ops_.push_back({name, group, layer});
    }
  }
  void ensure_events(size_t ops) {
    while (events_.size() < 2 * ops) {
      cudaEvent_t e;
      P64_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
  }
  void gemv(const DevMatrix* mats[], float* outs[], int count, GemvMode mode, const float* xf, const ActBuffers& in,
            int64_t n, const GemvFusion& fuse = {}, const GemvRope& rope = {}, const GemvPrologue& pro = {});
  // The matrices the step's next GEMV reads: what a GEMV prefetches into L2 (l2_prefetch).
  void prefetch_next(std::initializer_list<const DevMatrix*> next);
  L2Prefetch next_prefetch_{};
  bool can_fuse_norm() const;
  bool can_use_prologue() const;
  bool all_on_int_path(bool with_o) const;
  // The activation bits a GEMV of `m` reads: act_quant's, or 0 (fp32) for Q5_0 under q5_0_int16=0.
  int matrix_act_bits(const DevMatrix& m) const {
    return m.dtype == uint32_t(DType::Q5_0) && !sw_.q5_0_int16 ? 0 : sw_.act_bits;
  }

  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<const Model> model_;
  HParams hp_;
  Switches sw_;
  uint32_t max_ctx_ = 0;
  int multiprocessors_ = 0;
  bool kv_f16_ = true;
  uint64_t device_bytes_ = 0;
  std::vector<void*> allocations_;

  DevMatrix embd_, output_;
  const float* output_norm_ = nullptr;
  ArchSteps arch_;
  std::vector<DevLayer> layers_;
  uint8_t* k_cache_ = nullptr;
  uint8_t* v_cache_ = nullptr;
  size_t kv_layer_bytes_ = 0;

  float* d_x_ = nullptr;
  ActBuffers act_{};
  ActBuffers act_alt_{};       // fuse_norm, swiglu_quant: the other side of the ping-pong (a GEMV reads one, writes the other)
  float* d_ssq_attn_ = nullptr;  // fuse_norm: partial sums of squares of the residual, per 32
  float* d_ssq_ffn_ = nullptr;
  bool fuse_norm_ = false;
  bool prologue_ = false;  // gemv_prologue where the model and the other switches allow it
  float* d_qkv_ = nullptr;
  float* d_hidden_ = nullptr;
  float* d_hidden2_ = nullptr;
  float* d_part_m_ = nullptr;
  float* d_part_l_ = nullptr;
  float* d_part_acc_ = nullptr;
  unsigned* d_attn_arrivals_ = nullptr;  // attn_tail_combine: split blocks arrived, per kv head
  float* d_logits_ = nullptr;
  float* d_inv_freq_ = nullptr;
  float* d_inv_freq_local_ = nullptr;  // the local layers' own RoPE base (gemma3); null: d_inv_freq_
  float* d_post_ = nullptr;            // [n_embd]: the o / down product before its post-norm (gemma)
  StepState* d_state_ = nullptr;
  StepState* h_state_ = nullptr;  // pinned
  std::vector<float> host_logits_;
  bool host_logits_valid_ = false;

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;

  TimelineSink* sink_ = nullptr;
  bool timing_ = false;
  struct TimedOp { const char* name; OpGroup group; int layer; };
  std::vector<TimedOp> timed_ops_;
  std::vector<cudaEvent_t> events_;
  cudaEvent_t base_event_ = nullptr;
  bool prefill_step_ = false;
  std::unique_ptr<BatchedPrefill> batched_;  // prefill=batched
  void load_batched_prefill();
  int32_t prefill_batched(std::span<const int32_t> tokens, int32_t pos);
  int32_t step_pos_ = 0;

  Passport passport_;
  bool passport_done_ = false;
};

// `spec` is BackendOptions::device: empty = device 0, digits = an index, else a name substring.
void CudaBackend::ensure_device(const std::string& spec) {
  int want = device_ >= 0 ? device_ : 0;
  if (!spec.empty()) {
    int n = 0;
    P64_CUDA_CHECK(cudaGetDeviceCount(&n));
    want = -1;
    if (spec.find_first_not_of("0123456789") == std::string::npos) {
      want = std::stoi(spec);
      if (want >= n) throw DeviceError("CUDA backend: device index " + spec + " but " + std::to_string(n) + " present");
    } else {
      for (int i = 0; i < n && want < 0; ++i) {
        cudaDeviceProp p{};
        P64_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
        if (std::string(p.name).find(spec) != std::string::npos) want = i;
      }
      if (want < 0) throw DeviceError("CUDA backend: no CUDA device whose name contains '" + spec + "'");
    }
  }
  if (device_ == want) return;
  if (stream_) {
    release();
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
    passport_done_ = false;
  }
  device_ = want;
  P64_CUDA_CHECK(cudaSetDevice(device_));
  P64_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

void CudaBackend::release() noexcept {
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
  graph_exec_ = nullptr;
  graph_ = nullptr;
  for (auto e : events_) cudaEventDestroy(e);
  events_.clear();
  if (base_event_) cudaEventDestroy(base_event_);
  base_event_ = nullptr;
  for (void* p : allocations_) device_free(p);
  allocations_.clear();
  if (h_state_) cudaFreeHost(h_state_);
  h_state_ = nullptr;
  device_bytes_ = 0;
  model_.reset();
}

uint32_t CudaBackend::tiled_dtype(const TensorView& t) const {
  return sw_.gemv_tiles ? tiled_dtype_for(dtype_aos_of(t.dtype), t.row_length()) : 0;
}

DevMatrix CudaBackend::upload_matrix(const TensorView& stored, uint8_t*& cursor) {
  std::vector<uint8_t> plain;  // a CPU-layout (row-interleaved) matrix goes up as its plain blocks
  const TensorView t = plain_blocks(stored, plain);
  if (!supported_dtype(t.dtype))
    throw Error("CUDA backend: " + model_->source() + ": tensor " + t.name + " has dtype " +
                std::string(dtype_name(t.dtype)) + ", which the CUDA kernels do not read");
  const auto info = dtype_info(t.dtype);
  const int64_t n = t.row_length();
  if (!info || n % info->block_elems != 0)
    throw Error("CUDA backend: tensor " + t.name + ": row length " + std::to_string(n) + " is not a multiple of the " +
                std::string(dtype_name(t.dtype)) + " block");
  const uint64_t expect = dtype_row_bytes(t.dtype, uint64_t(n)) * uint64_t(t.rows());
  if (t.bytes < expect)
    throw Error("CUDA backend: tensor " + t.name + " holds " + std::to_string(t.bytes) + " bytes, its shape needs " +
                std::to_string(expect));
  uint8_t* dst = cursor;
  DevMatrix m;
  m.d = dst;
  m.dtype = static_cast<uint32_t>(t.dtype);
  m.n = n;
  m.rows = t.rows();
  m.nb = t.elements() / info->block_elems;
  m.bytes = expect;
  cursor += align_up(expect, 256);
  if (const uint32_t tiled = tiled_dtype(t)) {  // gemv_layout=tiles: every kernel reads the tiled form
    std::vector<uint8_t> blocks;
    const void* src = t.data;
    if (dtype_is_packed(t.dtype)) {
      blocks.resize(expect);
      unpack_tensor(t.dtype, t.data, blocks.data(), m.rows, n);
      src = blocks.data();
    }
    std::vector<uint8_t> tiles(expect);
    pack_tiled(dtype_aos_of(t.dtype), src, tiles.data(), m.rows, n);
    P64_CUDA_CHECK(cudaMemcpy(dst, tiles.data(), expect, cudaMemcpyHostToDevice));
    m.dtype = tiled;
    return m;
  }
  // Straight from the mapped file to the device: no host copy is made (but for a CPU layout).
  P64_CUDA_CHECK(cudaMemcpy(dst, t.data, expect, cudaMemcpyHostToDevice));
  return m;
}

// "" when the CUDA backend can run this model's architecture steps at max_ctx positions, else
// why not, naming the file, the architecture and the missing piece (before any device work).
std::string arch_steps_problem(const Model& model, uint32_t max_ctx) {
  const HParams& hp = model.hparams();
  const std::string where = "CUDA backend: " + model.source() + ": a " + hp.arch + " model";
  // LongRope: the short factors serve contexts up to original_context; the long ones are not implemented.
  if (hp.rope_scaling.type == RopeScalingType::LongRope && max_ctx > hp.rope_scaling.original_context)
    return where + ": a context of " + std::to_string(max_ctx) + " positions is past the " +
           std::to_string(hp.rope_scaling.original_context) +
           " that its short LongRope factors serve, and its long factors are not implemented; lower max_context "
           "(--ctx) to at most " + std::to_string(hp.rope_scaling.original_context);
  for (const LayerWeights& L : model.layers())
    for (const TensorView* t : {L.wqkv, L.w_gate_up})
      if (t && dtype_is_soa(t->dtype))
        return where + ": its fused matrix " + t->name + " is " + std::string(dtype_name(t->dtype)) +
               ", whose rows the CUDA backend cannot split into their parts; convert it without SoA layouts";
  if ((model.architecture().has(ArchRole::QNorm) || model.architecture().has(ArchRole::Bq)) && hp.head_dim > 256)
    return where + ": head_dim " + std::to_string(hp.head_dim) + " is past the 256 of the q/k/v heads kernel";
  return "";
}

void CudaBackend::load(std::shared_ptr<const Model> model, const BackendOptions& options) {
  if (!model) throw Error("CUDA backend: load() without a model");
  check_backend_runs(*this, *model);  // before any device work: names the file and its architecture
  {
    uint32_t ctx = options.max_context;
    if (model->hparams().n_ctx_train > 0) ctx = std::min(ctx, model->hparams().n_ctx_train);
    if (const std::string why = arch_steps_problem(*model, ctx); !why.empty()) throw Error(why);
  }
  ensure_device(options.device);
  release();
  batched_.reset();
  sw_ = parse_switches(options);
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device_));
  model_ = model;
  hp_ = model->hparams();
  const HParams& hp = hp_;
  if (hp.head_dim % 2 != 0 || hp.head_dim > 256 || hp.rope_dim > hp.head_dim)
    throw Error("CUDA backend: head_dim " + std::to_string(hp.head_dim) + " / rope_dim " + std::to_string(hp.rope_dim) +
                " not supported (even head_dim <= 256)");
  if (hp.n_head_kv == 0 || hp.n_head % hp.n_head_kv != 0 || hp.n_head / hp.n_head_kv > 8)
    throw Error("CUDA backend: " + std::to_string(hp.n_head) + " q heads over " + std::to_string(hp.n_head_kv) +
                " kv heads is not supported (groups of at most 8)");
  max_ctx_ = options.max_context;
  if (hp.n_ctx_train > 0) max_ctx_ = std::min(max_ctx_, hp.n_ctx_train);
  if (max_ctx_ == 0) throw Error("CUDA backend: max_context is 0");

  // ---- weights: one device allocation, each tensor copied once from the map
  size_t weight_bytes = 0;
  auto count = [&](const TensorView* t) {
    if (t) weight_bytes += align_up(t->bytes, 256);
  };
  count(&model->token_embd());
  count(&model->output_norm());
  const bool tied = &model->output() == &model->token_embd();
  if (!tied) count(&model->output());
  for (const auto& L : model->layers()) {
    const bool qkv = (L.wq && L.wk && L.wv) || L.wqkv, gate_up = (L.w_gate && L.w_up) || L.w_gate_up;
    if (!qkv || !gate_up || !L.attn_norm || !L.wo || !L.ffn_norm || !L.w_down)
      throw Error("CUDA backend: " + model->source() + ": a layer lacks one of its tensors");
    for (const TensorView* t : {L.attn_norm, L.wq, L.wk, L.wv, L.wo, L.ffn_norm, L.w_gate, L.w_up, L.w_down, L.bq, L.bk,
                                L.bv, L.q_norm, L.k_norm, L.post_attn_norm, L.post_ffn_norm, L.wqkv, L.w_gate_up})
      count(t);
    if (L.wqkv) weight_bytes += 3 * 256;  // its q, k and v rows go up as three aligned matrices
    if (L.w_gate_up) weight_bytes += 2 * 256;
  }
  uint8_t* cursor = static_cast<uint8_t*>(alloc(weight_bytes, "weights"));
  // Vectors (norm weights, biases) end to end from the first cursor, as floats.
  auto upload_f32s = [&](std::initializer_list<const TensorView*> parts) {
    const float* p = reinterpret_cast<const float*>(cursor);
    uint64_t at = 0;
    for (const TensorView* t : parts) {
      if (t->dtype != DType::F32) throw Error("CUDA backend: norm or bias tensor " + t->name + " must be F32");
      P64_CUDA_CHECK(cudaMemcpy(cursor + at, t->data, t->elements() * sizeof(float), cudaMemcpyHostToDevice));
      at += uint64_t(t->elements()) * sizeof(float);
    }
    cursor += align_up(at, 256);
    return p;
  };
  auto upload_f32 = [&](const TensorView& t) { return upload_f32s({&t}); };
  embd_ = upload_matrix(model->token_embd(), cursor);
  output_norm_ = upload_f32(model->output_norm());
  output_ = tied ? embd_ : upload_matrix(model->output(), cursor);
  layers_.clear();
  const int64_t Q = hp.q_dim(), KV = hp.kv_dim(), F = hp.n_ff;
  for (const auto& L : model->layers()) {
    DevLayer d;
    d.attn_norm = upload_f32(*L.attn_norm);
    if (L.wqkv) {
      // fused qkv (phi3): its q, k and v rows go up as three matrices
      std::vector<uint8_t> plain;
      const TensorView qkv = plain_blocks(*L.wqkv, plain);
      d.wq = upload_matrix(row_range(qkv, 0, Q, "q"), cursor);
      d.wk = upload_matrix(row_range(qkv, Q, KV, "k"), cursor);
      d.wv = upload_matrix(row_range(qkv, Q + KV, KV, "v"), cursor);
    } else {
      d.wq = upload_matrix(*L.wq, cursor);
      d.wk = upload_matrix(*L.wk, cursor);
      d.wv = upload_matrix(*L.wv, cursor);
    }
    d.wo = upload_matrix(*L.wo, cursor);
    d.ffn_norm = upload_f32(*L.ffn_norm);
    if (L.w_gate_up) {
      // fused gate_up (phi3): gate rows, then up rows, as two matrices
      std::vector<uint8_t> plain;
      const TensorView gu = plain_blocks(*L.w_gate_up, plain);
      d.gate = upload_matrix(row_range(gu, 0, F, "gate"), cursor);
      d.up = upload_matrix(row_range(gu, F, F, "up"), cursor);
    } else {
      d.gate = upload_matrix(*L.w_gate, cursor);
      d.up = upload_matrix(*L.w_up, cursor);
    }
    d.down = upload_matrix(*L.w_down, cursor);
    if (L.bq) d.qkv_bias = upload_f32s({L.bq, L.bk, L.bv});
    if (L.q_norm) d.q_norm = upload_f32(*L.q_norm);
    if (L.k_norm) d.k_norm = upload_f32(*L.k_norm);
    if (L.post_attn_norm) d.post_attn_norm = upload_f32(*L.post_attn_norm);
    if (L.post_ffn_norm) d.post_ffn_norm = upload_f32(*L.post_ffn_norm);
    layers_.push_back(d);
  }
  resolve_arch_steps();

  // ---- KV cache
  const bool float_model = model->layers().front().wq->dtype == DType::F32;
  kv_f16_ = sw_.kv_type == "f16" || (sw_.kv_type == "auto" && !float_model);
  const size_t elt = kv_f16_ ? 2 : 4;
  kv_layer_bytes_ = size_t(hp.n_head_kv) * max_ctx_ * hp.head_dim * elt;
  k_cache_ = static_cast<uint8_t*>(alloc(kv_layer_bytes_ * hp.n_layer, "K cache"));
  v_cache_ = static_cast<uint8_t*>(alloc(kv_layer_bytes_ * hp.n_layer, "V cache"));
  P64_CUDA_CHECK(cudaMemsetAsync(k_cache_, 0, kv_layer_bytes_ * hp.n_layer, stream_));
  P64_CUDA_CHECK(cudaMemsetAsync(v_cache_, 0, kv_layer_bytes_ * hp.n_layer, stream_));

  // ---- scratch
  const size_t wide = align_up(std::max({size_t(hp.n_embd), size_t(hp.q_dim()), size_t(hp.n_ff)}), 256);
  d_x_ = static_cast<float*>(alloc(hp.n_embd * sizeof(float), "residual"));
  act_.xf = static_cast<float*>(alloc(wide * sizeof(float), "activations"));
  act_.xq = alloc(wide * sizeof(int16_t), "integer activations");
  act_.bits = sw_.act_bits == 8 ? 8 : 16;
  act_.xd = static_cast<float*>(alloc(wide / 32 * sizeof(float), "activation scales"));
  act_.xs = static_cast<float*>(alloc(wide / 16 * sizeof(float), "activation sums"));
  fuse_norm_ = sw_.fuse_norm && can_fuse_norm();
  prologue_ = sw_.gemv_prologue && can_use_prologue();
  if (fuse_norm_ || sw_.swiglu_quant) {
    act_alt_.xf = static_cast<float*>(alloc(wide * sizeof(float), "activations (second)"));
    act_alt_.xq = alloc(wide * sizeof(int16_t), "integer activations (second)");
    act_alt_.bits = act_.bits;
    act_alt_.xd = static_cast<float*>(alloc(wide / 32 * sizeof(float), "activation scales (second)"));
    act_alt_.xs = static_cast<float*>(alloc(wide / 16 * sizeof(float), "activation sums (second)"));
  }
  if (fuse_norm_) {
    d_ssq_attn_ = static_cast<float*>(alloc(wide / 32 * sizeof(float), "norm partial sums"));
    d_ssq_ffn_ = static_cast<float*>(alloc(wide / 32 * sizeof(float), "norm partial sums"));
  }
  d_qkv_ = static_cast<float*>(alloc((hp.q_dim() + 2 * hp.kv_dim()) * sizeof(float), "qkv"));
  d_hidden_ = static_cast<float*>(alloc(hp.n_ff * sizeof(float), "ffn hidden"));
  d_hidden2_ = static_cast<float*>(alloc(hp.n_ff * sizeof(float), "ffn up"));
  const int splits = attention_max_splits(int(max_ctx_), sw_.attn_chunk);
  d_part_m_ = static_cast<float*>(alloc(size_t(hp.n_head) * splits * sizeof(float), "attention partial max"));
  d_part_l_ = static_cast<float*>(alloc(size_t(hp.n_head) * splits * sizeof(float), "attention partial sum"));
  d_part_acc_ = static_cast<float*>(
      alloc(size_t(hp.n_head) * splits * hp.head_dim * sizeof(float), "attention partial output"));
  d_attn_arrivals_ = nullptr;
  if (sw_.attn_tail_combine && hp.head_dim % 32 == 0) {
    d_attn_arrivals_ = static_cast<unsigned*>(alloc(size_t(hp.n_head_kv) * sizeof(unsigned), "attention arrivals"));
    P64_CUDA_CHECK(cudaMemset(d_attn_arrivals_, 0, size_t(hp.n_head_kv) * sizeof(unsigned)));
  }
  d_logits_ = static_cast<float*>(alloc(size_t(hp.n_vocab) * sizeof(float), "logits"));
  const std::vector<float> inv = rope_inv_freq(hp);
  d_inv_freq_ = static_cast<float*>(alloc(std::max<size_t>(1, inv.size()) * sizeof(float), "rope frequencies"));
  if (!inv.empty())
    P64_CUDA_CHECK(cudaMemcpy(d_inv_freq_, inv.data(), inv.size() * sizeof(float), cudaMemcpyHostToDevice));
  d_inv_freq_local_ = nullptr;
  if (hp.rope_base_local > 0.f) {
    // Local layers with their own base rotate unscaled (gemma3), as the CPU backend's do.
    HParams local = hp;
    local.rope_base = hp.rope_base_local;
    local.rope_scaling = {};
    local.rope_freq_factors.clear();
    const std::vector<float> inv_local = rope_inv_freq(local);
    d_inv_freq_local_ = static_cast<float*>(alloc(std::max<size_t>(1, inv_local.size()) * sizeof(float), "local rope frequencies"));
    if (!inv_local.empty())
      P64_CUDA_CHECK(cudaMemcpy(d_inv_freq_local_, inv_local.data(), inv_local.size() * sizeof(float),
                                cudaMemcpyHostToDevice));
  }
  d_post_ = arch_.post_norms ? static_cast<float*>(alloc(hp.n_embd * sizeof(float), "post-norm input")) : nullptr;
  d_state_ = static_cast<StepState*>(alloc(sizeof(StepState), "step state"));
  P64_CUDA_CHECK(cudaMallocHost(&h_state_, sizeof(StepState)));
  std::memset(h_state_, 0, sizeof(StepState));
  host_logits_.assign(hp.n_vocab, 0.f);
  host_logits_valid_ = false;
  if (sw_.batched_prefill) load_batched_prefill();
  // Captured here, so the first token does not pay for the capture and the kernels' first load.
  if (sw_.graphs) capture_step_graph();
  P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// What the model adds to the Llama step: from its layers' tensors (as the CPU branches on them),
// its architecture's table and its hyperparameters.
void CudaBackend::resolve_arch_steps() {
  const HParams& hp = hp_;
  const Architecture& table = model_->architecture();
  ArchSteps s;
  s.halves = hp.rope_layout == RopeLayout::Halves;
  s.rope_scale = hp.rope_attn_factor;
  s.qkv_heads = s.halves || s.rope_scale != 1.f || hp.rope_base_local > 0.f;
  for (const DevLayer& L : layers_) {
    s.qkv_heads = s.qkv_heads || L.qkv_bias || L.q_norm;
    s.post_norms = s.post_norms || L.post_attn_norm || L.post_ffn_norm;
  }
  s.geglu = table.ffn_activation == FfnActivation::GeluTanh;
  s.embd_scale = table.embd_scaled ? std::sqrt(float(hp.n_embd)) : 0.f;
  // A layer's attention leaves the Llama kernels where its scores differ from theirs: a scale
  // other than 1/sqrt(head_dim), a soft-cap, or a window this cache is long enough to cross.
  const float llama_scale = 1.0f / std::sqrt(float(hp.head_dim));
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    AttnScores sc;
    sc.scale = hp.attn_scale();
    sc.softcap = hp.attn_softcap;
    sc.window = hp.layer_is_local(l) ? int(hp.sliding_window) : 0;
    const bool crosses_window = sc.window > 0 && max_ctx_ > uint32_t(sc.window);
    s.scored.push_back(sc.softcap > 0.f || crosses_window || sc.scale != llama_scale);
    s.scores.push_back(sc);
  }
  arch_ = std::move(s);
}

QkvHeads CudaBackend::qkv_heads_launch(uint32_t li) const {
  const DevLayer& L = layers_[li];
  QkvHeads h;
  h.qkv = d_qkv_;
  h.ld = int64_t(hp_.q_dim()) + 2 * int64_t(hp_.kv_dim());
  h.bias = L.qkv_bias;
  h.q_norm = L.q_norm;
  h.k_norm = L.k_norm;
  h.eps = hp_.rms_eps;
  h.inv_freq = d_inv_freq_local_ && hp_.layer_is_local(li) ? d_inv_freq_local_ : d_inv_freq_;
  h.n_head = int(hp_.n_head);
  h.n_head_kv = int(hp_.n_head_kv);
  h.head_dim = int(hp_.head_dim);
  h.rope_dim = int(hp_.rope_dim);
  h.halves = arch_.halves;
  h.rope_scale = arch_.rope_scale;
  h.k_cache = k_cache_ + li * kv_layer_bytes_;
  h.v_cache = v_cache_ + li * kv_layer_bytes_;
  h.kv_f16 = kv_f16_;
  h.max_ctx = int(max_ctx_);
  h.state = d_state_;
  return h;
}

// The batched prefill reads the resident weights, KV cache, rope frequencies and logits
// buffer; it allocates only its own scratch (prefill_runner.h).
void CudaBackend::load_batched_prefill() {
  auto mat = [](const DevMatrix& d) { return PrefillMatrix{d.d, d.dtype, d.n, d.rows, d.nb}; };
  PrefillModel pm;
  pm.hp = hp_;
  pm.embd = mat(embd_);
  pm.output = mat(output_);
  pm.output_norm = output_norm_;
  for (const DevLayer& L : layers_) {
    PrefillLayer p{L.attn_norm, L.ffn_norm, mat(L.wq), mat(L.wk), mat(L.wv), mat(L.wo), mat(L.gate), mat(L.up),
                   mat(L.down)};
    p.qkv_bias = L.qkv_bias;
    p.q_norm = L.q_norm;
    p.k_norm = L.k_norm;
    p.post_attn_norm = L.post_attn_norm;
    p.post_ffn_norm = L.post_ffn_norm;
    pm.layers.push_back(p);
  }
  pm.arch.embd_scale = arch_.embd_scale;
  pm.arch.qkv_heads = arch_.qkv_heads;
  pm.arch.halves = arch_.halves;
  pm.arch.rope_scale = arch_.rope_scale;
  pm.arch.geglu = arch_.geglu;
  pm.arch.inv_freq_local = d_inv_freq_local_;
  pm.arch.scored = arch_.scored;
  pm.arch.scores = arch_.scores;
  pm.k_cache = k_cache_;
  pm.v_cache = v_cache_;
  pm.kv_layer_bytes = kv_layer_bytes_;
  pm.kv_f16 = kv_f16_;
  pm.max_ctx = int(max_ctx_);
  pm.inv_freq = d_inv_freq_;
  pm.logits = d_logits_;
  PrefillOptions po;
  po.chunk = std::min(sw_.prefill_chunk, int(max_ctx_));
  po.split_k = sw_.prefill_splitk;
  po.attn_group = sw_.prefill_attn_group;
  batched_ = std::make_unique<BatchedPrefill>(std::move(pm), po, device_);
  device_bytes_ += batched_->device_bytes();
}

// fuse_norm needs every matrix on an integer path, 32-aligned widths (the epilogue quantizes
// blocks of 32 rows) and the fused gate-up (its epilogue quantizes the hidden vector).
bool CudaBackend::can_fuse_norm() const {
  const HParams& hp = hp_;
  if (arch_.any()) return false;  // the architecture's steps run between the unfused ops
  if (sw_.act_bits == 0 || !sw_.fused_gate_up || hp.n_embd % 32 || hp.n_ff % 32 || hp.head_dim % 32) return false;
  for (const DevLayer& L : layers_)
    if (L.gate.dtype != L.up.dtype) return false;
  return all_on_int_path(/*with_o=*/true);
}

// Every matrix a decode step reads on an integer path (the o projection only `with_o`).
bool CudaBackend::all_on_int_path(bool with_o) const {
  auto ok = [&](const DevMatrix& m) { return gemv_has_int_path(m.dtype, m.n, matrix_act_bits(m)); };
  if (!ok(output_)) return false;
  for (const DevLayer& L : layers_)
    if (!ok(L.wq) || !ok(L.wk) || !ok(L.wv) || (with_o && !ok(L.wo)) || !ok(L.gate) || !ok(L.up) || !ok(L.down))
      return false;
  return true;
}

// gemv_prologue needs every GEMV that follows a norm or the FFN quantization on the int16
// path at 2 rows per warp under the register cap (the kernel instances it has), and widths its
// shared memory holds.
bool CudaBackend::can_use_prologue() const {
  const HParams& hp = hp_;
  if (arch_.any()) return false;  // as can_fuse_norm
  if (sw_.act_bits != 16 || fuse_norm_ || sw_.swiglu_quant || sw_.gemv_rows != 2 || !sw_.gemv_reg_cap) return false;
  if (hp.n_embd % 32 || hp.n_ff % 32 || hp.n_embd > kGemvPrologueMaxN || hp.n_ff > kGemvPrologueMaxN) return false;
  return all_on_int_path(/*with_o=*/false);
}

void CudaBackend::prefetch_next(std::initializer_list<const DevMatrix*> next) {
  next_prefetch_ = L2Prefetch{};
  if (!sw_.l2_prefetch) return;
  uint64_t budget = uint64_t(32) << 20;  // about half the L2: the current matrix streams through the rest
  for (const DevMatrix* m : next) {
    if (!m || next_prefetch_.count == 3 || budget == 0) break;
    const uint64_t b = std::min(m->bytes, budget);
    next_prefetch_.ptr[next_prefetch_.count] = m->d;
    next_prefetch_.bytes[next_prefetch_.count] = b;
    ++next_prefetch_.count;
    budget -= b;
  }
}

void CudaBackend::gemv(const DevMatrix* mats[], float* outs[], int count, GemvMode mode, const float* xf,
                       const ActBuffers& in, int64_t n, const GemvFusion& fuse, const GemvRope& rope,
                       const GemvPrologue& pro) {
  GemvLaunch g;
  g.nseg = count;
  g.dtype = mats[0]->dtype;
  g.n = n;
  for (int i = 0; i < count; ++i) g.seg[i] = GemvSegment{mats[i]->d, outs[i], mats[i]->rows, mats[i]->nb};
  g.xf = xf;
  g.xq = in.xq;
  g.xd = in.xd;
  g.xs = in.xs;
  g.fuse = fuse;
  g.prefetch = next_prefetch_;
  g.cap_registers = sw_.gemv_reg_cap;
  const bool q8 = g.dtype == uint32_t(DType::Q8_0) || g.dtype == uint32_t(DType::Q8_0_SOA);
  g.units_in_flight = sw_.gemv_in_flight != 0 ? sw_.gemv_in_flight : q8 ? 2 : 1;
  if (mode == GemvMode::SwiGLU && sw_.gemv_gate_up_in_flight != 0) g.units_in_flight = sw_.gemv_gate_up_in_flight;
  if (sw_.gemv_ring) {
    g.units_in_flight = 2;
    g.ring_refill = true;
  }
  next_prefetch_ = L2Prefetch{};
  g.mode = mode;
  g.act_bits = matrix_act_bits(*mats[0]);
  g.rows_per_warp = sw_.gemv_rows;
  g.fill_blocks = int64_t(sw_.gemv_fill) * multiprocessors_;
  g.rope = rope;
  g.split_rows = sw_.gemv_split;
  g.prologue = pro;
  launch_gemv(g, stream_);
}

void CudaBackend::enqueue_step() {
  const HParams& hp = hp_;
  const int64_t E = hp.n_embd, Q = hp.q_dim(), KV = hp.kv_dim(), F = hp.n_ff;
  auto int_path = [&](const DevMatrix& m) {
    return matrix_act_bits(m) != 0 && gemv_has_int_path(m.dtype, m.n, matrix_act_bits(m));
  };
  set_dependent_launch(sw_.pdl);
  set_smem_carveout(sw_.smem_carveout);
  // With fuse_norm the step's activations ping-pong: the residual's normalized form is in act_,
  // the attention output and the FFN hidden vector in act_alt_ (a GEMV never reads and writes
  // one buffer). Without it every input is in act_.
  const bool fused = fuse_norm_;
  const ActBuffers& normed = act_;
  const ActBuffers& mixed = fused ? act_alt_ : act_;
  auto residual_epilogue = [&](const float* next_norm, float* ssq) {
    GemvFusion f;
    f.quantize_out = true;
    f.out = act_;
    f.out_norm = next_norm;
    f.out_ssq = ssq;
    return f;
  };
  auto normed_input = [&](const float* ssq) {
    GemvFusion f;
    f.in_ssq = ssq;
    f.in_eps = hp.rms_eps;
    return f;
  };

  op("embed", OpGroup::Other, -1, [&] {
    launch_embed(embd_.dtype, embd_.d, embd_.rows, embd_.n, embd_.nb, d_state_, d_x_, stream_);
    // embedding scaled by sqrt(n_embd) (gemma)
    if (arch_.embd_scale > 0.f) launch_scale(d_x_, E, arch_.embd_scale, stream_);
  });
  // The GEMV's RoPE epilogue rotates adjacent pairs only; qkv_heads does the rest (arch_kernels.h).
  const bool rope_in_qkv = sw_.qkv_rope && sw_.gemv_rows >= 2 && !arch_.qkv_heads;
  // gemv_prologue: the GEMVs after a norm (and down) make their own input from these vectors
  const bool pro = prologue_;
  auto own_input = [&](const float* x, const float* norm) {
    return pro ? GemvPrologue{x, norm, hp.rms_eps} : GemvPrologue{};
  };
  for (uint32_t li = 0; li < hp.n_layer; ++li) {
    const DevLayer& L = layers_[li];
    const int l = int(li);
    const bool last = li + 1 == hp.n_layer;
    if (!pro && (!fused || li == 0))
      op("rms_attn", OpGroup::Rms, l, [&] { launch_rmsnorm_quant(d_x_, L.attn_norm, hp.rms_eps, E, act_, stream_, sw_.rms_batched); });
    op("qkv", OpGroup::Attn, l, [&] {
      const DevMatrix* m[3] = {&L.wq, &L.wk, &L.wv};
      float* o[3] = {d_qkv_, d_qkv_ + Q, d_qkv_ + Q + KV};
      const GemvFusion f = fused && li > 0 ? normed_input(d_ssq_attn_) : GemvFusion{};
      const GemvRope r = rope_in_qkv ? GemvRope{d_inv_freq_, d_qkv_, int(Q), int(KV), int(hp.head_dim),
                                                int(hp.rope_dim), int(max_ctx_), kv_f16_,
                                                k_cache_ + li * kv_layer_bytes_, v_cache_ + li * kv_layer_bytes_,
                                                d_state_}
                                     : GemvRope{};
      prefetch_next({&L.wo});
      // consecutive projections of one dtype share a launch
      int i = 0;
      while (i < 3) {
        int j = i + 1;
        while (sw_.qkv_fused && j < 3 && m[j]->dtype == m[i]->dtype) ++j;
        gemv(m + i, o + i, j - i, GemvMode::Store, normed.xf, normed, E, f, r, own_input(d_x_, L.attn_norm));
        i = j;
      }
    });
    uint8_t* kc = k_cache_ + li * kv_layer_bytes_;
    uint8_t* vc = v_cache_ + li * kv_layer_bytes_;
    if (arch_.qkv_heads) {
      // qkv bias (qwen2), q/k norm (qwen3, gemma3), RoPE over halves, kv_write
      op("qkv_heads", OpGroup::Attn, l, [&] { launch_qkv_heads(qkv_heads_launch(li), stream_); });
    } else if (!rope_in_qkv) {
      op("rope", OpGroup::Attn, l, [&] {  // rope + kv_write in one kernel
        launch_rope_kv_write(d_qkv_, d_inv_freq_, int(hp.n_head), int(hp.n_head_kv), int(hp.head_dim),
                             int(hp.rope_dim), kc, vc, kv_f16_, int(max_ctx_), d_state_, stream_);
      });
    }
    AttnLaunch a{};
    a.q = d_qkv_;
    a.k_cache = kc;
    a.v_cache = vc;
    a.kv_f16 = kv_f16_;
    a.n_head = int(hp.n_head);
    a.n_head_kv = int(hp.n_head_kv);
    a.head_dim = int(hp.head_dim);
    a.max_ctx = int(max_ctx_);
    a.chunk = sw_.attn_chunk;
    a.grid_splits = sw_.attn_grid;
    a.max_splits = sw_.attn_splits;
    a.lanes = sw_.attn_lanes;
    a.stream_kv = sw_.attn_stream && attention_stream_supported(a);
    if (a.stream_kv && a.max_splits <= 0) a.max_splits = std::max(1, multiprocessors_ / a.n_head_kv);
    a.combine_batch = sw_.combine_batch;
    a.early = sw_.attn_early;
    a.part_m = d_part_m_;
    a.part_l = d_part_l_;
    a.part_acc = d_part_acc_;
    a.out = mixed;
    a.quantize_out = int_path(L.wo) && hp.head_dim % 32 == 0;
    a.state = d_state_;
    a.tail_counter = d_attn_arrivals_;
    const bool scored = arch_.scored[li];
    if (scored) {
      // scale, soft-cap or sliding window (attention_scores.cu): the plain split geometry
      a.lanes = false;
      a.stream_kv = false;
      a.max_splits = 0;
      a.early = false;
      a.tail_counter = nullptr;
    }
    op("sdpa", OpGroup::Attn, l, [&] {
      if (scored) launch_attention_scored(a, arch_.scores[li], stream_);
      else launch_attention_decode(a, stream_);
    });
    if (!a.tail_counter) op("sdpa_combine", OpGroup::Attn, l, [&] { launch_attention_combine(a, stream_); });
    // gemma: the o product is stored, normed, then added to the residual (post_attn_norm)
    const bool post_attn = L.post_attn_norm != nullptr;
    op("o", OpGroup::Attn, l, [&] {
      const DevMatrix* m[1] = {&L.wo};
      float* o[1] = {post_attn ? d_post_ : d_x_};
      prefetch_next({&L.gate, &L.up});
      if (fused) {
        gemv(m, o, 1, GemvMode::AddTo, mixed.xf, mixed, Q, residual_epilogue(L.ffn_norm, d_ssq_ffn_));
        return;
      }
      if (int_path(L.wo) && !a.quantize_out) {
        // head_dim not a multiple of 32: quantize the whole attention output instead
        launch_rmsnorm_quant(act_.xf, nullptr, 0.f, Q, act_, stream_);
      }
      gemv(m, o, 1, post_attn ? GemvMode::Store : GemvMode::AddTo, act_.xf, act_, Q);
    });
    if (post_attn)
      op("post_attn_norm", OpGroup::Rms, l,
         [&] { launch_post_norm_add(d_post_, L.post_attn_norm, hp.rms_eps, E, 1, d_x_, stream_); });
    if (!fused && !pro)
      op("rms_ffn", OpGroup::Rms, l, [&] { launch_rmsnorm_quant(d_x_, L.ffn_norm, hp.rms_eps, E, act_, stream_, sw_.rms_batched); });
    // GeGLU (gemma) takes the unfused gate and up GEMVs: the fused epilogue is SwiGLU's
    const bool fuse = sw_.fused_gate_up && L.gate.dtype == L.up.dtype && !arch_.geglu;
    const bool down_int = int_path(L.down);
    // swiglu_quant: the SwiGLU epilogue writes down's input into act_alt_ (gate_up reads act_)
    const bool swiglu_quant = sw_.swiglu_quant && !fused && fuse && down_int && int_path(L.gate) && F % 32 == 0;
    op("gate_up", OpGroup::Ffn, l, [&] {
      const DevMatrix* m[2] = {&L.gate, &L.up};
      float* o[2] = {d_hidden_, d_hidden2_};
      prefetch_next({&L.down});
      if (fused) {
        GemvFusion f = normed_input(d_ssq_ffn_);
        f.quantize_out = true;
        f.out = act_alt_;
        gemv(m, o, 2, GemvMode::SwiGLU, normed.xf, normed, E, f);
      } else if (swiglu_quant) {
        GemvFusion f;
        f.quantize_out = true;
        f.out = act_alt_;
        gemv(m, o, 2, GemvMode::SwiGLU, act_.xf, act_, E, f);
      } else if (fuse) {
        gemv(m, o, 2, GemvMode::SwiGLU, act_.xf, act_, E, {}, {}, own_input(d_x_, L.ffn_norm));
      } else {
        if (L.gate.dtype == L.up.dtype) {
          gemv(m, o, 2, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(d_x_, L.ffn_norm));
        } else {
          gemv(m, o, 1, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(d_x_, L.ffn_norm));
          gemv(m + 1, o + 1, 1, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(d_x_, L.ffn_norm));
        }
        if (arch_.geglu) launch_geglu(d_hidden_, d_hidden2_, d_hidden_, F, stream_);
        else launch_swiglu(d_hidden_, d_hidden2_, d_hidden_, F, stream_);
      }
    });
    if (down_int && !fused && !swiglu_quant && !pro)
      op("ffn_quant", OpGroup::Ffn, l, [&] { launch_rmsnorm_quant(d_hidden_, nullptr, 0.f, F, act_, stream_); });
    const bool post_ffn = L.post_ffn_norm != nullptr;  // as post_attn, after the FFN (gemma)
    const GemvMode down_mode = post_ffn ? GemvMode::Store : GemvMode::AddTo;
    op("down", OpGroup::Ffn, l, [&] {
      const DevMatrix* m[1] = {&L.down};
      float* o[1] = {post_ffn ? d_post_ : d_x_};
      if (last) prefetch_next({&output_});
      else prefetch_next({&layers_[li + 1].wq, &layers_[li + 1].wk, &layers_[li + 1].wv});
      if (fused) {
        const float* next_norm = last ? output_norm_ : layers_[li + 1].attn_norm;
        gemv(m, o, 1, GemvMode::AddTo, mixed.xf, mixed, F, residual_epilogue(next_norm, d_ssq_attn_));
        return;
      }
      if (swiglu_quant) return gemv(m, o, 1, down_mode, act_alt_.xf, act_alt_, F);
      gemv(m, o, 1, down_mode, down_int ? act_.xf : d_hidden_, act_, F, {}, {}, own_input(d_hidden_, nullptr));
    });
    if (post_ffn)
      op("post_ffn_norm", OpGroup::Rms, l,
         [&] { launch_post_norm_add(d_post_, L.post_ffn_norm, hp.rms_eps, E, 1, d_x_, stream_); });
  }
  if (!fused && !pro)
    op("rms_final", OpGroup::Rms, -1,
       [&] { launch_rmsnorm_quant(d_x_, output_norm_, hp.rms_eps, E, act_, stream_, sw_.rms_batched); });
  op("logits", OpGroup::Logits, -1, [&] {
    const DevMatrix* m[1] = {&output_};
    float* o[1] = {d_logits_};
    gemv(m, o, 1, GemvMode::Store, normed.xf, normed, E, fused ? normed_input(d_ssq_attn_) : GemvFusion{}, {},
         own_input(d_x_, output_norm_));
  });
  op("argmax", OpGroup::Sample, -1, [&] { launch_argmax(d_logits_, hp.n_vocab, d_state_, stream_, sw_.argmax_batch); });
}

int32_t CudaBackend::step(int32_t token, int32_t pos) {
  if (!model_) throw Error("CUDA backend: decode before load()");
  if (token < 0 || uint32_t(token) >= hp_.n_vocab)
    throw Error("CUDA backend: token id " + std::to_string(token) + " outside the vocabulary of " +
                std::to_string(hp_.n_vocab));
  if (pos < 0 || uint32_t(pos) >= max_ctx_)
    throw Error("CUDA backend: position " + std::to_string(pos) + " outside the KV cache of " +
                std::to_string(max_ctx_) + " positions");
  h_state_->token = token;
  h_state_->pos = pos;
  host_logits_valid_ = false;
  step_pos_ = pos;
  timing_ = sink_ != nullptr;
  if (sw_.graphs && !timing_) {
    if (!graph_exec_) capture_step_graph();  // load() captures it; not after a load that failed past the weights
    P64_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
  } else {
    P64_CUDA_CHECK(cudaMemcpyAsync(d_state_, h_state_, 2 * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
    timed_ops_.clear();
    if (timing_ && !base_event_) {
      P64_CUDA_CHECK(cudaEventCreate(&base_event_));
      P64_CUDA_CHECK(cudaEventRecord(base_event_, stream_));
    }
    enqueue_step();
    P64_CUDA_CHECK(cudaMemcpyAsync(&h_state_->argmax, &d_state_->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost,
                                   stream_));
  }
  P64_CUDA_CHECK(cudaStreamSynchronize(stream_));  // kernel faults surface here as DeviceError
  if (timing_) emit_spans();
  return h_state_->argmax;
}

// The decode step as a CUDA graph, instantiated and uploaded, so its first replay costs what
// every other does.
void CudaBackend::capture_step_graph() {
  timing_ = false;  // no timeline events inside the graph
  P64_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    // The copies read/write the pinned StepState at replay time, so each replay sees the
    // token and position written just before it.
    P64_CUDA_CHECK(cudaMemcpyAsync(d_state_, h_state_, 2 * sizeof(int32_t), cudaMemcpyHostToDevice, stream_));
    enqueue_step();
    P64_CUDA_CHECK(
        cudaMemcpyAsync(&h_state_->argmax, &d_state_->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  P64_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
  P64_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  P64_CUDA_CHECK(cudaGraphUpload(graph_exec_, stream_));
}

void CudaBackend::emit_spans() {
  for (size_t i = 0; i < timed_ops_.size(); ++i) {
    float start = 0, dur = 0;
    P64_CUDA_CHECK(cudaEventElapsedTime(&start, base_event_, events_[2 * i]));
    P64_CUDA_CHECK(cudaEventElapsedTime(&dur, events_[2 * i], events_[2 * i + 1]));
    OpSpan s;
    s.name = timed_ops_[i].name;
    s.group = timed_ops_[i].group;
    s.layer = timed_ops_[i].layer;
    s.prefill = prefill_step_;
    s.step = step_pos_;
    s.start_us = double(start) * 1000.0;
    s.dur_us = double(dur) * 1000.0;
    sink_->on_span(s);
  }
}

int32_t CudaBackend::prefill(std::span<const int32_t> tokens, int32_t pos) {
  if (tokens.empty()) throw Error("CUDA backend: prefill of zero tokens");
  if (batched_ && tokens.size() >= size_t(sw_.prefill_batch_min)) return prefill_batched(tokens, pos);
  // prefill=stepwise: token by token through the decode step (graph replays).
  prefill_step_ = true;
  int32_t id = 0;
  try {
    for (size_t i = 0; i < tokens.size(); ++i) id = step(tokens[i], pos + int32_t(i));
  } catch (...) {
    prefill_step_ = false;
    throw;
  }
  prefill_step_ = false;
  return id;
}

// prefill=batched: the whole prompt as matrices (prefill_runner.h), then the decode's argmax
// on the last token's logits; only the id comes back.
int32_t CudaBackend::prefill_batched(std::span<const int32_t> tokens, int32_t pos) {
  if (!model_) throw Error("CUDA backend: prefill before load()");
  for (int32_t t : tokens)
    if (t < 0 || uint32_t(t) >= hp_.n_vocab)
      throw Error("CUDA backend: token id " + std::to_string(t) + " outside the vocabulary of " +
                  std::to_string(hp_.n_vocab));
  if (pos < 0 || uint64_t(pos) + tokens.size() > max_ctx_)
    throw Error("CUDA backend: prefill of " + std::to_string(tokens.size()) + " tokens at position " +
                std::to_string(pos) + " exceeds the KV cache of " + std::to_string(max_ctx_) + " positions");
  host_logits_valid_ = false;
  timing_ = sink_ != nullptr;
  prefill_step_ = true;
  step_pos_ = pos;
  timed_ops_.clear();
  try {
    if (timing_ && !base_event_) {
      P64_CUDA_CHECK(cudaEventCreate(&base_event_));
      P64_CUDA_CHECK(cudaEventRecord(base_event_, stream_));
    }
    PrefillOpHook hook;
    if (timing_) hook = [this](const char* name, OpGroup g, int l, const std::function<void()>& f) { op(name, g, l, f); };
    batched_->enqueue(tokens, pos, stream_, hook);
    op("argmax", OpGroup::Sample, -1, [&] { launch_argmax(d_logits_, hp_.n_vocab, d_state_, stream_, sw_.argmax_batch); });
    P64_CUDA_CHECK(
        cudaMemcpyAsync(&h_state_->argmax, &d_state_->argmax, sizeof(int32_t), cudaMemcpyDeviceToHost, stream_));
    P64_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (timing_) emit_spans();
  } catch (...) {
    prefill_step_ = false;
    throw;
  }
  prefill_step_ = false;
  return h_state_->argmax;
}

}  // namespace

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ")";
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device: the driver reports 0 devices";
    return false;
  }
  return true;
}

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

void register_cuda_backend() {
  register_backend({"cuda", 100, [](std::string* why) { return cuda_device_available(why); },
                    [] { return make_cuda_backend(); }, [] { return switch_table(); }});
  register_gemv_bench("cuda", cuda::run_gemv_bench);
  register_gemv_chain_bench("cuda", cuda::run_gemv_chain_bench);
}

}  // namespace p64
