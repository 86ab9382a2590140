#pragma once
// Launchers of the steps that only some architectures add to the Llama block (qwen2's qkv bias,
// the q/k norm of qwen3 and gemma3, RoPE over halves, LongRope's attention factor, gemma's
// embedding scale, GeGLU and post-norms, attention with a scale, soft-cap or sliding window of
// its own). They are separate kernels, enqueued only for the models that need them, so the
// tuned Llama kernels (gemv.cu, attention.cu, prefill_attention.cu) keep their code. Each is
// launched through launch_kernel and waits for its predecessor first (launch.cuh), in the decode
// step's graph and in the batched prefill alike. Their math follows the CPU reference
// (backends/cpu/cpu_backend.cpp, cpu_ops.cpp) step by step.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels.h"
#include "backends/cuda/prefill_kernels.h"

namespace p64::cuda {

// ---- arch_ops.cu
// Finishes the q/k/v products of T rows ([T][ld]: q heads, k heads, v heads) where the GEMV's
// RoPE epilogue cannot: adds the bias, normalizes each q and k head, rotates q and k, and writes
// k and v into the layer's cache [kv_head][max_ctx][head_dim] — the CPU's order.
struct QkvHeads {
  float* qkv = nullptr;
  int64_t ld = 0;
  const float* bias = nullptr;    // [q_dim + 2 kv_dim]: bq | bk | bv; null: none (qwen2 has it)
  const float* q_norm = nullptr;  // [head_dim] each; null: no per-head norm (qwen3, gemma3 have it)
  const float* k_norm = nullptr;
  float eps = 0.f;
  const float* inv_freq = nullptr;  // [rope_dim / 2]
  int n_head = 0, n_head_kv = 0, head_dim = 0, rope_dim = 0;
  bool halves = false;     // pairs (i, i + rope_dim / 2); else (2i, 2i + 1)
  float rope_scale = 1.f;  // LongRope's attention factor on the rotated dimensions
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  bool kv_f16 = true;
  int max_ctx = 0;
  const StepState* state = nullptr;  // decode: row 0 at the state's position; null: row t at pos0 + t
  int pos0 = 0;
  int T = 1;
};
void launch_qkv_heads(const QkvHeads& h, cudaStream_t stream);

// x[t] += rmsnorm(y[t]) * w for T rows of n: gemma's post-attention and post-FFN norms, whose
// output joins the residual stream (y: the o or down projection stored, not added).
void launch_post_norm_add(const float* y, const float* w, float eps, int64_t n, int T, float* x, cudaStream_t stream);

// out = gelu_tanh(gate) * up over n elements (gemma's GeGLU; the decode step's unfused FFN).
void launch_geglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);
// out[t] = f16(gelu_tanh(gate[t]) * up[t]) for T rows (the prefill's form of launch_swiglu's).
void launch_prefill_geglu(const float* gate, const float* up, int64_t ld_in, int64_t n, int T, void* out_f16,
                          int64_t ldo, cudaStream_t stream);

// x *= s over n elements (gemma's embedding scale, sqrt(n_embd)).
void launch_scale(float* x, int64_t n, float s, cudaStream_t stream);

// ---- attention_scores.cu
// How a layer's attention forms its scores where the Llama kernels' 1/sqrt(head_dim) alone will
// not do: q.k * scale, soft-capped to softcap * tanh(s / softcap) when softcap > 0, and a query
// at causal length n sees positions [n - window, n) when window > 0 and n > window (cpu_ops.h
// AttentionScores: the same positions).
struct AttnScores {
  float scale = 1.f;
  float softcap = 0.f;
  int window = 0;
};
// The decode split pass with these scores: partials in attention.cu's layout, merged by
// launch_attention_combine (a.max_splits 0, no streaming, no tail combine, no early loads).
void launch_attention_scored(const AttnLaunch& a, const AttnScores& s, cudaStream_t stream);
// The batched prefill's attention with these scores: a warp per (query, q head), reading the
// cache in place, output f16 as launch_prefill_attention writes it.
void launch_prefill_attention_scored(const PrefillAttn& a, const AttnScores& s, cudaStream_t stream);

}  // namespace p64::cuda
