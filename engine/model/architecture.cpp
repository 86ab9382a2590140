#include "engine/model/architecture.h"

#include <unordered_map>

#include "engine/common/error.h"

namespace p64 {
namespace {

using D = ArchDim;
using R = ArchRole;

// The Llama family spells its hyperparameters alike; each table then adds or blanks the keys
// of its own branches.
constexpr ArchKeys kLlamaFamilyGguf = {
    "embedding_length",      "block_count",        "attention.head_count",  "attention.head_count_kv",
    "attention.key_length",  "attention.value_length", "feed_forward_length", "vocab_size",
    "context_length",        "rope.dimension_count", "rope.freq_base",      "attention.layer_norm_rms_epsilon",
    "rope.scaling.type",     "rope.scaling.factor", "rope.scaling.original_context_length"};
constexpr ArchKeys kLlamaFamilyHf = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "",
    "intermediate_size", "vocab_size", "max_position_embeddings", "", "rope_theta", "rms_norm_eps",
    "rope_scaling", "rope_scaling.factor", "rope_scaling.original_max_position_embeddings"};

// A Llama (Mistral) may declare a sliding window over every layer; qwen2's HF configs name one
// that use_sliding_window turns on, which hf_flags_off refuses.
constexpr ArchKeys with_window(ArchKeys k, std::string_view window) {
  k.sliding_window = window;
  return k;
}
// llama.cpp's Gemma GGUFs carry the soft-caps (gemma2) and the window, not the pattern, the
// local RoPE base or query_pre_attn_scalar (gguf_hparams says what stands for it).
constexpr ArchKeys gemma_gguf(bool softcaps) {
  ArchKeys k = with_window(kLlamaFamilyGguf, "attention.sliding_window");
  if (softcaps) k.attn_softcap = "attn_logit_softcapping", k.final_softcap = "final_logit_softcapping";
  return k;
}
constexpr ArchKeys gemma_hf(bool pattern_key) {
  ArchKeys k = with_window(kLlamaFamilyHf, "sliding_window");
  if (pattern_key) k.sliding_window_pattern = "sliding_window_pattern", k.rope_base_local = "rope_local_base_freq";
  k.attn_softcap = "attn_logit_softcapping";
  k.final_softcap = "final_logit_softcapping";
  k.query_pre_attn_scalar = "query_pre_attn_scalar";
  return k;
}

constexpr ArchTensor kGlobals[] = {
    {R::TokenEmbd, "token_embd.weight", "model.embed_tokens.weight", D::Embd, D::Vocab},
    {R::OutputNorm, "output_norm.weight", "model.norm.weight", D::Embd, D::One},
    {R::Output, "output.weight", "lm_head.weight", D::Embd, D::Vocab, true},
};

// The Llama block's tensors; each architecture's block lists them in the order decode reads
// them (the P64 writer lays them out so), with its own tensors where they are read.
constexpr ArchTensor kAttnNorm = {R::AttnNorm, "attn_norm.weight", "input_layernorm.weight", D::Embd, D::One};
constexpr ArchTensor kWq = {R::Wq, "attn_q.weight", "self_attn.q_proj.weight", D::Embd, D::QDim};
constexpr ArchTensor kWk = {R::Wk, "attn_k.weight", "self_attn.k_proj.weight", D::Embd, D::KvDim};
constexpr ArchTensor kWv = {R::Wv, "attn_v.weight", "self_attn.v_proj.weight", D::Embd, D::KvDim};
constexpr ArchTensor kWo = {R::Wo, "attn_output.weight", "self_attn.o_proj.weight", D::QDim, D::Embd};
constexpr ArchTensor kFfnNorm = {R::FfnNorm, "ffn_norm.weight", "post_attention_layernorm.weight", D::Embd, D::One};
constexpr ArchTensor kGate = {R::Gate, "ffn_gate.weight", "mlp.gate_proj.weight", D::Embd, D::Ff};
constexpr ArchTensor kUp = {R::Up, "ffn_up.weight", "mlp.up_proj.weight", D::Embd, D::Ff};
constexpr ArchTensor kDown = {R::Down, "ffn_down.weight", "mlp.down_proj.weight", D::Ff, D::Embd};
constexpr ArchTensor kQNorm = {R::QNorm, "attn_q_norm.weight", "self_attn.q_norm.weight", D::HeadDim, D::One};
constexpr ArchTensor kKNorm = {R::KNorm, "attn_k_norm.weight", "self_attn.k_norm.weight", D::HeadDim, D::One};

constexpr ArchTensor kLlamaBlock[] = {kAttnNorm, kWq, kWk, kWv, kWo, kFfnNorm, kGate, kUp, kDown};

constexpr ArchTensor kQwen2Block[] = {
    kAttnNorm,
    kWq,
    {R::Bq, "attn_q.bias", "self_attn.q_proj.bias", D::QDim, D::One},
    kWk,
    {R::Bk, "attn_k.bias", "self_attn.k_proj.bias", D::KvDim, D::One},
    kWv,
    {R::Bv, "attn_v.bias", "self_attn.v_proj.bias", D::KvDim, D::One},
    kWo, kFfnNorm, kGate, kUp, kDown};

constexpr ArchTensor kQwen3Block[] = {kAttnNorm, kWq, kWk, kWv, kQNorm, kKNorm, kWo, kFfnNorm, kGate, kUp, kDown};

// Gemma's HF names its four norms by where they sit: post_attention_layernorm is the norm of
// the attention output (Llama's name for the FFN's input norm), pre_feedforward_layernorm
// the FFN's input norm.
constexpr ArchTensor kPostAttnNorm = {R::PostAttnNorm, "post_attention_norm.weight", "post_attention_layernorm.weight",
                                      D::Embd, D::One};
constexpr ArchTensor kGemmaFfnNorm = {R::FfnNorm, "ffn_norm.weight", "pre_feedforward_layernorm.weight", D::Embd, D::One};
constexpr ArchTensor kPostFfnNorm = {R::PostFfnNorm, "post_ffw_norm.weight", "post_feedforward_layernorm.weight",
                                     D::Embd, D::One};

constexpr ArchTensor kGemma2Block[] = {kAttnNorm,     kWq,   kWk, kWv,   kWo,         kPostAttnNorm,
                                       kGemmaFfnNorm, kGate, kUp, kDown, kPostFfnNorm};
constexpr ArchTensor kGemma3Block[] = {kAttnNorm,     kWq,   kWk, kWv,   kQNorm,      kKNorm, kWo, kPostAttnNorm,
                                       kGemmaFfnNorm, kGate, kUp, kDown, kPostFfnNorm};

// phi3: one matrix for q, k and v and one for gate and up, as Microsoft's checkpoints and
// llama.cpp's GGUFs hold them (llama.cpp's ffn_up of a phi3 is the fused gate_up).
constexpr ArchTensor kPhi3Block[] = {
    kAttnNorm,
    {R::Wqkv, "attn_qkv.weight", "self_attn.qkv_proj.weight", D::Embd, D::QkvDim},
    kWo,
    kFfnNorm,
    {R::GateUp, "ffn_up.weight", "mlp.gate_up_proj.weight", D::Embd, D::Ff2},
    kDown};

// phi3's GGUF spells LongRope's attention factor and the window (llama.cpp's converter writes
// 0 for none, Phi-4); HF's config names the original context at its top level.
constexpr ArchKeys phi3_gguf() {
  ArchKeys k = with_window(kLlamaFamilyGguf, "attention.sliding_window");
  k.rope_attn_factor = "rope.scaling.attn_factor";
  return k;
}
constexpr ArchKeys phi3_hf() {
  ArchKeys k = with_window(kLlamaFamilyHf, "sliding_window");
  k.rope_original_context = "original_max_position_embeddings";
  return k;
}

constexpr std::string_view kLlamaFlagsOff[] = {"attention_bias", "mlp_bias"};
constexpr std::string_view kQwen2FlagsOff[] = {"use_sliding_window"};
constexpr std::string_view kQwen3FlagsOff[] = {"attention_bias", "use_sliding_window"};
constexpr std::string_view kGemmaFlagsOff[] = {"attention_bias"};
constexpr std::string_view kPhi3FlagsOff[] = {"attention_bias", "mlp_bias"};

// gemma2: local and global layers alternate, local first; soft-caps 50 (attention) and 30
// (logits). gemma3: five local layers to a global one, local RoPE base 10000, no soft-caps.
constexpr ArchDefaults kGemma2Defaults = {4096, 2, 0.0f, 50.0f, 30.0f};
constexpr ArchDefaults kGemma3Defaults = {4096, 6, 10000.0f, 0.0f, 0.0f};

const Architecture kArchitectures[] = {
    {"llama", "llama", with_window(kLlamaFamilyGguf, "attention.sliding_window"), with_window(kLlamaFamilyHf, "sliding_window"),
     kLlamaFlagsOff, RopeLayout::Adjacent, true, kGlobals, kLlamaBlock},
    {"qwen2", "qwen2", kLlamaFamilyGguf, kLlamaFamilyHf, kQwen2FlagsOff, RopeLayout::Halves, false, kGlobals, kQwen2Block},
    {"qwen3", "qwen3", kLlamaFamilyGguf, kLlamaFamilyHf, kQwen3FlagsOff, RopeLayout::Halves, false, kGlobals, kQwen3Block},
    {"phi3", "phi3", phi3_gguf(), phi3_hf(), kPhi3FlagsOff, RopeLayout::Halves, false, kGlobals, kPhi3Block},
    {"gemma2", "gemma2", gemma_gguf(true), gemma_hf(false), kGemmaFlagsOff, RopeLayout::Halves, false, kGlobals,
     kGemma2Block, kGemma2Defaults, FfnActivation::GeluTanh, true, true},
    // HF's text-only Gemma 3 (gemma-3-1b; the 4B+ checkpoints wrap it with a vision tower).
    {"gemma3", "gemma3_text", gemma_gguf(false), gemma_hf(true), kGemmaFlagsOff, RopeLayout::Halves, false, kGlobals,
     kGemma3Block, kGemma3Defaults, FfnActivation::GeluTanh, true, true},
};

}  // namespace

bool ArchTensor::norm() const { return ne1 == ArchDim::One; }

bool ArchTensor::rms_weight() const { return norm() && role != ArchRole::Bq && role != ArchRole::Bk && role != ArchRole::Bv; }

const ArchTensor* Architecture::find_block(ArchRole r) const {
  for (const ArchTensor& t : block)
    if (t.role == r) return &t;
  return nullptr;
}

std::span<const Architecture> architectures() { return kArchitectures; }

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture& a : kArchitectures)
    if (a.name == name) return &a;
  return nullptr;
}

const Architecture* find_hf_architecture(std::string_view model_type) {
  for (const Architecture& a : kArchitectures)
    if (a.hf_model_type == model_type) return &a;
  return nullptr;
}

const Architecture& architecture(std::string_view name, const std::string& where) {
  if (const Architecture* a = find_architecture(name)) return *a;
  throw Error(where + ": architecture '" + std::string(name) + "' is not supported (" + architecture_names() + ")");
}

std::string architecture_names() {
  std::string s;
  for (const Architecture& a : kArchitectures) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

int64_t arch_dim(const HParams& hp, ArchDim d) {
  switch (d) {
    case ArchDim::One: return 1;
    case ArchDim::Embd: return hp.n_embd;
    case ArchDim::QDim: return hp.q_dim();
    case ArchDim::KvDim: return hp.kv_dim();
    case ArchDim::Ff: return hp.n_ff;
    case ArchDim::Vocab: return hp.n_vocab;
    case ArchDim::HeadDim: return hp.head_dim;
    case ArchDim::QkvDim: return static_cast<int64_t>(hp.q_dim()) + 2 * static_cast<int64_t>(hp.kv_dim());
    case ArchDim::Ff2: return 2 * static_cast<int64_t>(hp.n_ff);
  }
  return 0;
}

std::string arch_tensors_problem(const HParams& hp, std::span<const TensorShapeRef> tensors) {
  std::unordered_map<std::string_view, const TensorShapeRef*> by_name;
  for (const TensorShapeRef& t : tensors) by_name.emplace(t.name, &t);  // the first of a repeated name
  const Architecture& arch = architecture(hp.arch, "hparams");
  auto check = [&](const ArchTensor& want, const std::string& name) -> std::string {
    const auto it = by_name.find(name);
    if (it == by_name.end()) {
      if (want.optional) return "";
      return "tensor '" + name + "' is missing (a " + hp.arch + " model needs it)";
    }
    const TensorShapeRef& t = *it->second;
    const int64_t ne0 = arch_dim(hp, want.ne0), rows = arch_dim(hp, want.ne1);
    if (t.ne[0] == ne0 && t.ne[1] * t.ne[2] * t.ne[3] == rows) return "";
    std::string got = "[";
    for (uint32_t d = 0; d < t.n_dims; ++d) got += (d ? ", " : "") + std::to_string(t.ne[d]);
    return "tensor '" + name + "' has shape " + got + "], expected [" + std::to_string(ne0) +
           (want.norm() ? "" : ", " + std::to_string(rows)) + "]";
  };
  for (const ArchTensor& t : arch.globals) {
    if (t.role == ArchRole::Output && hp.tied_output) continue;
    if (std::string why = check(t, std::string(t.gguf)); !why.empty()) return why;
  }
  for (uint32_t i = 0; i < hp.n_layer; ++i)
    for (const ArchTensor& t : arch.block)
      if (std::string why = check(t, "blk." + std::to_string(i) + "." + std::string(t.gguf)); !why.empty()) return why;
  return "";
}

}  // namespace p64
