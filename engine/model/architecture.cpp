#include "engine/model/architecture.h"

#include <unordered_map>

#include "engine/common/error.h"

namespace p64 {
namespace {

using D = ArchDim;
using R = ArchRole;

// llama, qwen2 and qwen3 spell their hyperparameters alike.
constexpr ArchKeys kLlamaFamilyGguf = {
    "embedding_length",      "block_count",        "attention.head_count",  "attention.head_count_kv",
    "attention.key_length",  "attention.value_length", "feed_forward_length", "vocab_size",
    "context_length",        "rope.dimension_count", "rope.freq_base",      "attention.layer_norm_rms_epsilon",
    "rope.scaling.type",     "rope.scaling.factor", "rope.scaling.original_context_length"};
constexpr ArchKeys kLlamaFamilyHf = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "",
    "intermediate_size", "vocab_size", "max_position_embeddings", "", "rope_theta", "rms_norm_eps",
    "rope_scaling", "rope_scaling.factor", "rope_scaling.original_max_position_embeddings"};

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

constexpr ArchTensor kQwen3Block[] = {
    kAttnNorm, kWq, kWk, kWv,
    {R::QNorm, "attn_q_norm.weight", "self_attn.q_norm.weight", D::HeadDim, D::One},
    {R::KNorm, "attn_k_norm.weight", "self_attn.k_norm.weight", D::HeadDim, D::One},
    kWo, kFfnNorm, kGate, kUp, kDown};

constexpr std::string_view kLlamaFlagsOff[] = {"attention_bias", "mlp_bias"};
constexpr std::string_view kQwen2FlagsOff[] = {"use_sliding_window"};
constexpr std::string_view kQwen3FlagsOff[] = {"attention_bias", "use_sliding_window"};

const Architecture kArchitectures[] = {
    {"llama", "llama", kLlamaFamilyGguf, kLlamaFamilyHf, kLlamaFlagsOff, RopeLayout::Adjacent, true, kGlobals, kLlamaBlock},
    {"qwen2", "qwen2", kLlamaFamilyGguf, kLlamaFamilyHf, kQwen2FlagsOff, RopeLayout::Halves, false, kGlobals, kQwen2Block},
    {"qwen3", "qwen3", kLlamaFamilyGguf, kLlamaFamilyHf, kQwen3FlagsOff, RopeLayout::Halves, false, kGlobals, kQwen3Block},
};

}  // namespace

bool ArchTensor::norm() const { return ne1 == ArchDim::One; }

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
