#pragma once
// The model as it lives on the device, described once for the decode step and the batched
// prefill: every weight copied once from the map into one allocation, in the layout the
// kernels read; the steps beyond the Llama block its architecture needs; the KV cache.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/arch_kernels.h"
#include "engine/model/model.h"

namespace p64::cuda {

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
  bool any() const;
};

struct ResidentWeights {
  DevMatrix embd, output;  // output is embd when the model ties them
  const float* output_norm = nullptr;
  std::vector<DevLayer> layers;
  ArchSteps arch;
};

// [layer][kv_head][max_ctx][head_dim] each, f16 or f32.
struct KvCache {
  uint8_t* k = nullptr;
  uint8_t* v = nullptr;
  size_t layer_bytes = 0;
  bool f16 = true;
  int max_ctx = 0;
  uint8_t* k_layer(uint32_t layer) const { return k + layer * layer_bytes; }
  uint8_t* v_layer(uint32_t layer) const { return v + layer * layer_bytes; }
};

// Device memory that lives as long as the loaded model (the backend frees it all at once).
using DeviceAlloc = std::function<void*(size_t bytes, const std::string& what)>;
// `v` rounded up to a multiple of `a`: tensors and scratch vectors start at 256-byte boundaries.
inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// "" when the CUDA backend can run this model's architecture steps at max_ctx positions, else
// why not, naming the file, the architecture and the missing piece (before any device work).
std::string arch_steps_problem(const Model& model, uint32_t max_ctx);

// The weights in one allocation; `tiles`: matrices the tiled reader has go up tiled
// (gemv_layout=tiles). Throws p64::Error naming the tensor a kernel cannot read.
ResidentWeights upload_weights(const Model& model, bool tiles, uint32_t max_ctx, const DeviceAlloc& alloc);

// A zeroed cache of `max_ctx` positions per layer (f16 unless `f16` is false).
KvCache allocate_kv_cache(const HParams& hp, int max_ctx, bool f16, const DeviceAlloc& alloc, cudaStream_t stream);

}  // namespace p64::cuda
