#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace p64 {

// How RoPE pairs the elements of a head. GGUF `llama` files and llama2.c rotate adjacent
// pairs (2i, 2i+1); Hugging Face checkpoints rotate halves (i, i + d/2) unless the importer
// permuted Q/K rows the way llama.cpp's converter does for Llama. A Llama is always imported
// Adjacent; qwen2, qwen3, phi3, gemma2 and gemma3 keep their halves, from GGUF (llama.cpp's NEOX rope
// type) and HF alike (engine/model/architecture.h says which is which).
enum class RopeLayout : uint32_t { Adjacent = 0, Halves = 1 };

// LongRope (phi3's "longrope", earlier "su"): per-frequency divisors, the short ones for
// contexts within original_context (HParams::rope_freq_factors), and an attention factor.
enum class RopeScalingType : uint32_t { None = 0, Linear = 1, Llama3 = 2, LongRope = 3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f;   // llama3 only
  float high_freq_factor = 4.0f;  // llama3 only
  uint32_t original_context = 8192;  // llama3; longrope: the longest context its short factors serve
};

// Llama-family hyperparameters, one name per concept across engine, CLI and store.
struct HParams {
  std::string arch = "llama";     // a name of engine/model/architecture.h
  std::string name;               // general.name when known
  uint32_t n_embd = 0;            // model width
  uint32_t n_layer = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;         // GQA: n_head % n_head_kv == 0
  uint32_t head_dim = 0;          // may differ from n_embd / n_head where the file says so
  uint32_t n_ff = 0;              // FFN hidden width
  uint32_t n_vocab = 0;
  uint32_t n_ctx_train = 0;       // context length the model was trained for
  uint32_t rope_dim = 0;          // rotated dims per head (normally head_dim)
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  RopeScaling rope_scaling;
  // Per-frequency divisors (GGUF `rope_freqs` tensor, length rope_dim/2); empty when the
  // scaling is computed from rope_scaling instead. LongRope: its short factors (GGUF
  // `rope_factors_short`, HF short_factor).
  std::vector<float> rope_freq_factors;
  // LongRope's attention factor: the rotated dimensions of q and k are multiplied by it after
  // RoPE (llama.cpp's rope.scaling.attn_factor, transformers' attention_scaling; Phi-3.5-mini
  // sqrt(1 + ln 32 / ln 4096) = 1.19). 1: none.
  float rope_attn_factor = 1.0f;
  RopeLayout rope_layout = RopeLayout::Adjacent;
  bool tied_output = false;       // output projection shares token_embd
  uint32_t file_type = 0;         // GGUF general.file_type (llama_ftype), informational

  // Sliding-window attention: a local layer's query sees the last `sliding_window` positions,
  // its own included (gemma2 4096, Mistral 4096); 0: every layer attends to the whole context.
  uint32_t sliding_window = 0;
  // Which layers are local: all but every sliding_window_pattern-th (layer l is global when
  // l + 1 is a multiple of it: gemma2 2, gemma3 6); 0: every layer is local (Mistral).
  uint32_t sliding_window_pattern = 0;
  // RoPE base of the local layers, which take no rope_scaling (gemma3's rope_local_base_freq,
  // 10000 against 1e6 global); 0: local layers rotate as global ones do.
  float rope_base_local = 0.0f;
  // Soft-capping, x -> cap * tanh(x / cap), of the attention scores before the softmax and of
  // the final logits (gemma2 50 and 30); 0: none.
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  // Attention scores are q.k / sqrt(query_pre_attn_scalar) (gemma's key); 0: sqrt(head_dim).
  float query_pre_attn_scalar = 0.0f;

  uint32_t q_dim() const { return n_head * head_dim; }
  uint32_t kv_dim() const { return n_head_kv * head_dim; }
  bool layer_is_local(uint32_t layer) const {
    return sliding_window > 0 && (sliding_window_pattern == 0 || (layer + 1) % sliding_window_pattern != 0);
  }
  float attn_scale() const;  // the factor of q.k in the attention scores
};

// Throws p64::Error naming the inconsistent field (zero sizes, n_head % n_head_kv, ...).
void validate(const HParams& hp, const std::string& source);

}  // namespace p64
