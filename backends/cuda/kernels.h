#pragma once
// Host-side launchers of the CUDA backend's kernels, one .cu per op family. Every launcher
// enqueues on `stream`, checks the launch, and reads the step's position/token from device
// memory (StepState) so the same launches can be captured once in a CUDA graph.
#include <cuda_runtime.h>

#include <cstdint>

namespace p64::cuda {

// Per-step scalars the host writes (via a captured copy from pinned memory) before a step.
struct StepState {
  int32_t token;
  int32_t pos;
  int32_t argmax;
  int32_t pad;
};

// Activation buffers in both forms (see weight_formats.cuh ActRef): fp32, and integers of
// `bits` (8 or 16) with one scale per 32 elements, which the integer GEMV paths read.
struct ActBuffers {
  float* xf;
  void* xq;   // int8_t[n] or int16_t[n]
  float* xd;
  float* xs;
  int bits = 8;
};

// ---- gemv.cu
enum class GemvMode : int { Store = 0, AddTo = 1, SwiGLU = 2 };
struct GemvSegment {
  const uint8_t* w = nullptr;  // tensor base on the device
  float* out = nullptr;
  int64_t rows = 0;
  int64_t nb = 0;              // blocks of the whole tensor (SoA field arrays)
};
// The q/k/v projection's epilogue (the qkv_rope switch): RoPE on q and k rows and the k/v cache
// write at the step's position, in place of rope.cu's kernel. A rotated pair is rows (2i, 2i+1)
// of one head, which a warp of 2 or 4 rows holds in adjacent lanes.
struct GemvRope {
  const float* inv_freq = nullptr;  // [rope_dim / 2]; null: no epilogue
  const float* qkv = nullptr;       // the q, k, v vector the segments' outputs lie in: which of them a row is
  int q_rows = 0, kv_rows = 0;
  int head_dim = 0, rope_dim = 0, max_ctx = 0;
  bool kv_f16 = true;
  void* k_cache = nullptr;  // this layer's [n_head_kv][max_ctx][head_dim]
  void* v_cache = nullptr;
  const StepState* state = nullptr;
};
// RMSNorm folded into the GEMVs around it (the fuse_norm switch). The producer of the residual
// stream (AddTo) writes, per 32 rows, the sum of squares of the new values and the values times
// the next norm's weights quantized; the consumer scales its dot products by
// rsqrt(sum / n + eps), which is the norm's only step that needs the whole vector. The SwiGLU
// epilogue uses the same output quantization (no norm) for the down projection's input.
struct GemvFusion {
  const float* in_ssq = nullptr;  // [n / 32] partial sums of squares of the input; null: no norm
  float in_eps = 0.f;
  bool quantize_out = false;      // write `out` (integer form) from the epilogue
  ActBuffers out{};
  const float* out_norm = nullptr;  // next norm's weights (null: none)
  float* out_ssq = nullptr;         // [rows / 32] (null: not needed)
};
// Weights of the step's next matrices, pulled into L2 by the current GEMV's blocks before they
// wait for their inputs (the l2_prefetch switch): the memory system streams the next matrix
// while this one computes and the small kernels in between run.
struct L2Prefetch {
  const void* ptr[3] = {nullptr, nullptr, nullptr};
  uint64_t bytes[3] = {0, 0, 0};
  int count = 0;
};
// The GEMV's own input (the gemv_prologue switch): with `x` set, every block turns x (scaled by
// rsqrt(mean(x^2) + eps) * norm where `norm` is given) into the int16 form in shared memory and
// reads that instead of xq/xd/xs, so no norm or quantization kernel runs before the GEMV.
// Integer paths at 2 rows per warp under gemv_regs=cap, n % 32 == 0, n <= kGemvPrologueMaxN.
struct GemvPrologue {
  const float* x = nullptr;  // null: no prologue
  const float* norm = nullptr;
  float eps = 0.f;
};
constexpr int64_t kGemvPrologueMaxN = 16384;  // its shared memory stays under the 48 KiB default
struct GemvLaunch {
  GemvSegment seg[3];
  int nseg = 1;
  uint32_t dtype = 0;          // p64::DType value, shared by all segments
  int64_t n = 0;               // row length (input size)
  const float* xf = nullptr;
  const void* xq = nullptr;
  const float* xd = nullptr;
  const float* xs = nullptr;
  GemvMode mode = GemvMode::Store;  // SwiGLU: seg[0] = gate, seg[1] = up, out = seg[0].out
  // Integer activations read by the GEMV: 8 (dp4a), 16 (dp2a) or 0 (fp32 FMA on dequantized
  // weights); an integer path is taken only where the dtype has one (gemv_has_int_path).
  int act_bits = 16;
  int rows_per_warp = 2;       // 1 | 2 | 4
  int64_t fill_blocks = 0;     // gemv_fill: rows per warp halved while the grid has fewer blocks (0: never)
  GemvFusion fuse;
  L2Prefetch prefetch;
  bool cap_registers = false;  // gemv_regs=cap: registers capped so 4 blocks fit per multiprocessor
  int units_in_flight = 1;     // gemv_in_flight: units per lane loaded before any arithmetic (1 | 2)
  // gemv_ring: with 2 units in flight, each unit's registers are refilled with the unit two
  // rounds ahead as soon as it is consumed (warp kernel on an integer path, 2 rows per warp under
  // the register cap, no output quantization or prologue; other shapes run without it)
  bool ring_refill = false;
  // gemv_split: rows per 128-thread block whose threads split the rows' units (2 | 4), for the
  // SoA and tiled integer forms without fusions; 0: a warp owns whole rows
  int split_rows = 0;
  GemvRope rope;               // Store mode, 2 or 4 rows per warp
  GemvPrologue prologue;
};
// True when an integer-activation path of `act_bits` (16 or 8) exists for this dtype and row
// length (Q5_0 has the int16 one only).
bool gemv_has_int_path(uint32_t dtype, int64_t n, int act_bits = 16);
void launch_gemv(const GemvLaunch& g, cudaStream_t stream);
// out[n] = row `token` (read from state) of an embedding matrix, dequantized.
void launch_embed(uint32_t dtype, const uint8_t* w, int64_t rows, int64_t n, int64_t nb,
                  const StepState* state, float* out, cudaStream_t stream);

// ---- norm.cu
// act = quantize(x * rsqrt(mean(x^2) + eps) * weight); weight == nullptr: act = quantize(x).
// batched_loads (the rms_batched switch): each thread loads all its elements of the sum of
// squares before adding them (n <= 4096; longer vectors take the loop).
void launch_rmsnorm_quant(const float* x, const float* weight, float eps, int64_t n,
                          const ActBuffers& act, cudaStream_t stream, bool batched_loads = false);
// out = silu(gate) * up (the unfused FFN path).
void launch_swiglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);

// ---- rope.cu
// Rotates q (n_head heads) and k (n_head_kv) of `qkv` in place at the state's position and
// writes k and v into the layer's cache rows [kv_head][pos][head_dim].
void launch_rope_kv_write(float* qkv, const float* inv_freq, int n_head, int n_head_kv, int head_dim,
                          int rope_dim, void* k_cache, void* v_cache, bool kv_f16, int max_ctx,
                          const StepState* state, cudaStream_t stream);

// ---- attention.cu
struct AttnLaunch {
  const float* q;            // [n_head * head_dim]
  const void* k_cache;       // this layer's [n_head_kv][max_ctx][head_dim]
  const void* v_cache;
  bool kv_f16;
  int n_head, n_head_kv, head_dim, max_ctx;
  int chunk;                 // positions per split (flash-decoding)
  int grid_splits;           // split blocks launched per kv head (each walks every grid_splits-th split); 0: all
  int max_splits = 0;        // attn_splits: splits in use per kv head at most (chunk grows with the context); 0: chunk fixed
  bool lanes = false;        // attn_lanes: a lane per cached position (f16 cache, head_dim 32/64/128/256); else the warp-row kernel
  bool stream_kv = false;    // attn_stream: cached tiles streamed through shared memory (f16 cache, head_dim 32/64/128; max_splits > 0)
  float* part_m;             // [n_head * max_splits]
  float* part_l;
  float* part_acc;           // [n_head * max_splits * head_dim]
  ActBuffers out;            // [n_head * head_dim] in both forms
  bool quantize_out;
  const StepState* state;
  int combine_batch = 1;     // splits the combine loads before merging them (1 or 8; 1: two serial passes)
  bool early = false;        // attn_early: cached rows and the position read before waiting for the producer
  // attn_tail_combine: [n_head_kv] counters, zero between launches; the last split block of each
  // kv head merges its heads' splits in the split kernel (head_dim % 32 == 0), and no combine
  // pass is launched. Null: launch_attention_combine merges.
  unsigned* tail_counter = nullptr;
};
int attention_max_splits(int max_ctx, int chunk);
void launch_attention_decode(const AttnLaunch& a, cudaStream_t stream);      // split pass (and merge, tail_counter set)
void launch_attention_combine(const AttnLaunch& a, cudaStream_t stream);     // merge pass
bool attention_stream_supported(const AttnLaunch& a);                         // attn_stream runs this cache and head size
void launch_attention_stream(const AttnLaunch& a, cudaStream_t stream);       // attention_stream.cu


// ---- sample.cu
// batch (the argmax_batch switch): logits each thread loads before comparing them (1 or 16).
void launch_argmax(const float* logits, int64_t n, StepState* state, cudaStream_t stream, int batch = 1);

// ---- fault.cu
// Launches a kernel that traps, leaving the context failed as a lost device would (tests only).
void launch_trap(cudaStream_t stream);

// ---- passport.cu
// Read-only streaming bandwidth (16-byte loads) over `bytes` at `buf`; returns GB/s of one pass.
float measure_read_kernel_ms(const void* buf, size_t bytes, unsigned* sink, cudaStream_t stream);

}  // namespace p64::cuda
