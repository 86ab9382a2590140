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
void rope(float* x, int n_heads, int head_dim, int rope_dim, RopeLayout layout, const std::vector<float>& inv_freq,
          int32_t pos);

// One query head against keys/values of positions [0, n_pos) of a KV cache row layout
// [pos][kv_dim] (F32 or F16 storage), head offset `kv_off`: out = softmax(q.K / sqrt(d)) V.
// `scores` has room for n_pos floats.
void attend_head_f32(const float* q, const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off,
                     int head_dim, int32_t n_pos, float* scores, float* out);
void attend_head_f16(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim,
                     int64_t kv_off, int head_dim, int32_t n_pos, float* scores, float* out);

// In place: x = exp(x - max) / sum, the sum in double.
void softmax(float* x, int32_t n);

// Up to kMaxAttentionQueries query heads that read one KV head (heads of a GQA group, of one or
// several tokens), query i over positions [0, n_pos[i]): out[i] = softmax(q[i].K / sqrt(d)) V,
// with AVX-512 dot products and V accumulation. One pass over the K rows and one over the V rows
// serve every query; each query sees the same operations in the same order whatever the others
// are, so a token gets the same bits in a prefill batch as decoded alone. `scores` holds
// nq rows of `scores_stride` floats. False unless head_dim is 16 .. 128 in steps of 16, or 256
// (nothing written). Call only where dot::isa_supported(Isa::Avx512).
constexpr int kMaxAttentionQueries = 8;
bool attend_group_f32_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off, int head_dim,
                             float* scores, int64_t scores_stride);
// The same over an fp16 KV cache (elements converted by vcvtph2ps as they are read).
bool attend_group_f16_avx512(const float* const* q, float* const* out, const int32_t* n_pos, int nq,
                             const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim, int64_t kv_off,
                             int head_dim, float* scores, int64_t scores_stride);

// x += b over n elements (a projection's bias).
void add_bias(float* x, const float* b, int64_t n);

// hb = silu(gate) * up, in place over n elements.
void swiglu(float* gate_inout, const float* up, int64_t n);

}  // namespace p64::cpu
