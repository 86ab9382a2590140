#pragma once
// The architectures the engine decodes, one table each: the hyperparameter keys a GGUF and a
// Hugging Face config spell, the tensors a model holds under their GGUF and HF names with
// their shapes, and how the file's q/k rows pair the dimensions RoPE rotates. Readers,
// Model, the P64 writer and the synth presets all take their names from here; what differs in
// the forward pass is a few named branches of the CPU backend (qkv bias, q/k norm, post-norms,
// GeGLU, embedding scale, soft-capping, sliding windows, fused qkv and gate_up).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/model/hparams.h"

namespace p64 {

// A tensor's extent along one axis, in the model's own sizes.
// QkvDim: q, k and v rows of a fused projection (q_dim + 2 kv_dim); Ff2: gate and up rows (2 n_ff).
enum class ArchDim { One, Embd, QDim, KvDim, Ff, Vocab, HeadDim, QkvDim, Ff2 };

// What a tensor is to the forward pass (the field of LayerWeights / Model it fills).
enum class ArchRole {
  TokenEmbd, OutputNorm, Output,                      // global
  AttnNorm, Wq, Wk, Wv, Wo, FfnNorm, Gate, Up, Down,  // every block
  Bq, Bk, Bv,                                         // qkv bias (qwen2)
  QNorm, KNorm,                                       // per-head RMSNorm of q and k (qwen3, gemma3)
  PostAttnNorm, PostFfnNorm,  // RMSNorm of the attention / FFN output before its residual add (gemma2, gemma3)
  Wqkv,    // q, k and v rows in one matrix, in that order (phi3)
  GateUp,  // gate rows then up rows in one matrix (phi3; llama.cpp names it ffn_up)
};

// The FFN's gate: SwiGLU silu(gate) * up, or GeGLU gelu(gate) * up with GELU's tanh
// approximation (HF's gelu_pytorch_tanh, gemma).
enum class FfnActivation { Silu, GeluTanh };

struct ArchTensor {
  ArchRole role;
  std::string_view gguf;  // "attn_q.bias": after "blk.N." in a block, the whole name otherwise
  std::string_view hf;    // "self_attn.q_proj.bias": after "model.layers.N." in a block
  ArchDim ne0, ne1;       // GGML order; ne1 One for a vector
  bool optional = false;  // output.weight: absent when tied to token_embd
  bool norm() const;      // a 1-D weight every P64 stores as F32 (norms and biases)
  bool rms_weight() const;  // an RMSNorm's weight (a 1-D weight that is not a bias)
};

// How a format spells the hyperparameters: GGUF keys follow "<arch>." and HF keys are
// config.json's. One spelling per concept; where two architectures agree they share it.
// "" where the format has no key for it (the architecture's default below holds).
struct ArchKeys {
  std::string_view n_embd, n_layer, n_head, n_head_kv, head_dim, value_length, n_ff, n_vocab, n_ctx_train, rope_dim,
      rope_base, rms_eps, rope_scaling_type, rope_scaling_factor, rope_original_context;
  std::string_view sliding_window, sliding_window_pattern, rope_base_local, attn_softcap, final_softcap,
      query_pre_attn_scalar;
  // LongRope's attention factor where the format writes it (phi3's GGUF; HF derives it).
  std::string_view rope_attn_factor;
};

// The values of HParams' sliding-window, local-RoPE and soft-capping fields that a file leaving
// the key out means. For gemma these are what llama.cpp's loader and transformers' config
// classes both assume (llama.cpp's GGUFs of Gemma carry neither the pattern nor the local base).
struct ArchDefaults {
  uint32_t sliding_window = 0, sliding_window_pattern = 0;
  float rope_base_local = 0.0f, attn_softcap = 0.0f, final_softcap = 0.0f;
};

struct Architecture {
  std::string_view name;           // GGUF general.architecture, P64 hparams "arch"
  std::string_view hf_model_type;  // config.json model_type
  ArchKeys gguf, hf;
  // Config switches the forward pass depends on: a model that turns one on is refused rather
  // than decoded wrongly (sliding-window attention, biases this table has no tensor for).
  std::span<const std::string_view> hf_flags_off;
  // How the q/k rows of the architecture's GGUF files pair the rotated dimensions: llama.cpp's
  // rope type NORM (adjacent pairs) or NEOX (halves, i and i + rope_dim/2).
  RopeLayout gguf_rope_layout;
  // HF q/k rows rotate halves; llama.cpp's converter permutes Llama's (only) to adjacent pairs,
  // and our importer does the same so that a Llama from either source is the same P64.
  bool hf_permute_qk;
  std::span<const ArchTensor> globals, block;
  ArchDefaults defaults;
  FfnActivation ffn_activation = FfnActivation::Silu;
  // gemma: the token embedding is multiplied by sqrt(n_embd) before the first block.
  bool embd_scaled = false;
  // gemma: HF checkpoints hold each RMSNorm weight as w and normalise by (1 + w); the GGUF (and
  // P64) hold 1 + w, as llama.cpp's converter writes it, so the importer adds the 1.
  bool hf_norm_plus_one = false;

  const ArchTensor* find_block(ArchRole r) const;  // nullptr when the architecture has none
  bool has(ArchRole r) const { return find_block(r) != nullptr; }
};

// Every table, llama first.
std::span<const Architecture> architectures();
// The table of `name` (general.architecture / P64 arch), or nullptr.
const Architecture* find_architecture(std::string_view name);
// The table whose hf_model_type is `model_type`, or nullptr.
const Architecture* find_hf_architecture(std::string_view model_type);
// The table of `name`; throws p64::Error "<where>: architecture 'x' is not supported (llama, ...)".
const Architecture& architecture(std::string_view name, const std::string& where);
// "llama, qwen2, qwen3": for error messages.
std::string architecture_names();

// The size an ArchDim stands for in `hp`.
int64_t arch_dim(const HParams& hp, ArchDim d);

// A tensor's name and GGML shape, as a reader or a converter holds it.
struct TensorShapeRef {
  std::string_view name;
  uint32_t n_dims = 0;
  const int64_t* ne = nullptr;  // 4 entries
};
// "" when `tensors` hold every tensor hp.arch's table names, each of its shape (output.weight
// may be absent: tied to token_embd); else the first problem, naming the tensor:
// "tensor 'blk.0.attn_q.bias' is missing (a qwen2 model needs it)" or "... has shape [8],
// expected [16]". hp.arch must have a table. Tensors the table does not name are not looked at.
std::string arch_tensors_problem(const HParams& hp, std::span<const TensorShapeRef> tensors);

}  // namespace p64
