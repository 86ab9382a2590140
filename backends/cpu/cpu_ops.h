#pragma once
// The element-wise and attention steps of the CPU forward pass, one function per step.
#include <cstdint>
#include <vector>

#include "engine/model/hparams.h"

namespace p64::cpu {

// out = w * x / sqrt(mean(x^2) + eps), one row of n.
void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps);

// Inverse frequency of each rotated pair, with the model's scaling applied: GGUF rope_freqs
// divisors when the file has them, else the llama3 / linear rule of HParams::rope_scaling.
std::vector<float> rope_inv_freq(const HParams& hp);

// Rotates every head of one row (n_heads x head_dim) for position pos. Adjacent layout pairs
// (2i, 2i+1); Halves pairs (i, i + rope_dim / 2).
// `scale` multiplies the rotated dimensions (LongRope's attention factor; 1 for the others).
void rope(float* x, int n_heads, int head_dim, int rope_dim, RopeLayout layout, const std::vector<float>& inv_freq,
          int32_t pos, float scale = 1.0f);

// How one layer forms its attention scores: q.k * scale (1 / sqrt(head_dim), or gemma's
// query_pre_attn_scalar), soft-capped to softcap * tanh(s / softcap) when softcap > 0, and a
// query at causal length n_pos sees positions [n_pos - window, n_pos) when window > 0 (a
// sliding-window layer), else [0, n_pos).
struct AttentionScores {
  float scale = 1.0f;
  float softcap = 0.0f;
  int32_t window = 0;
  int32_t first(int32_t n_pos) const { return window > 0 && n_pos > window ? n_pos - window : 0; }
};

// One query head against keys/values of a KV cache row layout [pos][kv_dim] (F32 or F16
// storage), head offset `kv_off`, over the positions `how` gives it below n_pos:
// out = softmax(scores) V. `scores` has room for n_pos floats (indexed by position).
void attend_head_f32(const float* q, const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off,
                     int head_dim, int32_t n_pos, const AttentionScores& how, float* scores, float* out);
void attend_head_f16(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim,
                     int64_t kv_off, int head_dim, int32_t n_pos, const AttentionScores& how, float* scores, float* out);

// In place over n scores: s = cap * tanh(s / cap).
void softcap(float* x, int64_t n, float cap);

// In place: x = exp(x - max) / sum, the sum in double.
void softmax(float* x, int32_t n);

// Up to kMaxAttentionQueries query heads that read one KV head (heads of a GQA group, of one or
// several tokens), query i over the positions `how` gives causal length n_pos[i]:
// out[i] = softmax(scores) V, with AVX-512 dot products and V accumulation. One pass over the K
// rows and one over the V rows serve every query; each query sees the same operations in the
// same order whatever the others are, so a token gets the same bits in a prefill batch as
// decoded alone. `scores` holds nq rows of `scores_stride` floats (indexed by position). False
// unless head_dim is 16 .. 128 in steps of 16, or 256 (nothing written). Call only where
// isa_supported(Isa::Avx512).
constexpr int kMaxAttentionQueries = 8;
bool attend_group_f32_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off, int head_dim,
                             const AttentionScores& how, float* scores, int64_t scores_stride);
// The same over an fp16 KV cache (elements converted by vcvtph2ps as they are read).
bool attend_group_f16_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim, int64_t kv_off,
                             int head_dim, const AttentionScores& how, float* scores, int64_t scores_stride);

// x += b over n elements (a projection's bias, a post-normed output into the residual stream).
void add_into(float* x, const float* b, int64_t n);

// hb = silu(gate) * up, in place over n elements.
void swiglu(float* gate_inout, const float* up, int64_t n);

// hb = gelu(gate) * up with GELU's tanh approximation
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))), in place over n elements (gemma's GeGLU).
void geglu_tanh(float* gate_inout, const float* up, int64_t n);


}  // namespace p64::cpu
