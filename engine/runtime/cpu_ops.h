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

// attend_head_f32 with AVX-512 dot products and V accumulation (the same steps, the float
// sums in another order); false when head_dim is not a multiple of 16 (nothing written).
// Call only where dot::isa_supported(Isa::Avx512).
bool attend_head_f32_avx512(const float* q, const float* k_cache, const float* v_cache, int64_t kv_dim,
                            int64_t kv_off, int head_dim, int32_t n_pos, float* scores, float* out);

// hb = silu(gate) * up, in place over n elements.
void swiglu(float* gate_inout, const float* up, int64_t n);

}  // namespace p64::cpu
