#include "engine/format/gguf_model.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine/format/model_limits.h"
#include "engine/model/architecture.h"

namespace p64 {
namespace {

// Some converters write per-layer arrays for head_count_kv / feed_forward_length; the engine
// supports one value for all layers, so an array must hold the same value throughout.
std::optional<uint32_t> uniform_u32(const GgufFile& f, const std::string& key) {
  const GgufKV* kv = f.find_kv(key);
  if (!kv) return std::nullopt;
  if (!kv->value.is_array()) return f.get_u32(key);
  std::optional<uint32_t> v;
  kv->value.for_each_item([&](const GgufValue& it) {
    auto u = it.as_uint();
    if (!u || *u > 0xFFFFFFFFu) f.fail("metadata", kv->offset, "key '" + key + "' holds a non-integer entry");
    if (v && *v != *u) f.fail("metadata", kv->offset, "key '" + key + "' differs between layers; not supported");
    v = static_cast<uint32_t>(*u);
    return true;
  });
  if (!v) f.fail("metadata", kv->offset, "key '" + key + "' is an empty array");
  return v;
}

}  // namespace

HParams gguf_hparams(const GgufFile& f) {
  HParams hp;
  hp.arch = f.get_string_opt("general.architecture").value_or("llama");
  const Architecture* arch = find_architecture(hp.arch);
  if (!arch)
    f.fail("metadata", f.find_kv("general.architecture")->offset,
           "general.architecture '" + hp.arch + "' is not supported (" + architecture_names() + ")");
  // Every key of the architecture's table, as this file spells it: "<arch>.<key>".
  const ArchKeys& k = arch->gguf;
  auto key = [&](std::string_view suffix) { return hp.arch + "." + std::string(suffix); };
  hp.name = f.get_string_opt("general.name").value_or("");
  hp.n_embd = f.get_u32(key(k.n_embd));
  hp.n_layer = f.get_u32(key(k.n_layer));
  hp.n_head = uniform_u32(f, key(k.n_head)).value_or(0);
  if (!f.find_kv(key(k.n_head))) f.get_u32(key(k.n_head));  // names the missing key
  hp.n_head_kv = uniform_u32(f, key(k.n_head_kv)).value_or(hp.n_head);
  hp.n_ff = uniform_u32(f, key(k.n_ff)).value_or(0);
  hp.head_dim = f.get_u32_opt(key(k.head_dim)).value_or(hp.n_head ? hp.n_embd / hp.n_head : 0);
  if (auto vl = f.get_u32_opt(key(k.value_length)); vl && *vl != hp.head_dim)
    f.fail("metadata", f.find_kv(key(k.value_length))->offset,
           std::string(k.value_length) + " " + std::to_string(*vl) + " differs from " + std::string(k.head_dim) + " " +
               std::to_string(hp.head_dim) + "; not supported");
  hp.rope_dim = f.get_u32_opt(key(k.rope_dim)).value_or(hp.head_dim);
  hp.rope_base = f.get_f32_opt(key(k.rope_base)).value_or(10000.0f);
  hp.rms_eps = f.get_f32_opt(key(k.rms_eps)).value_or(1e-5f);
  hp.n_ctx_train = f.get_u32_opt(key(k.n_ctx_train)).value_or(0);
  hp.file_type = f.get_u32_opt("general.file_type").value_or(0);

  if (auto st = f.get_string_opt(key(k.rope_scaling_type))) {
    const GgufKV* kv = f.find_kv(key(k.rope_scaling_type));
    if (*st == "linear") hp.rope_scaling.type = RopeScalingType::Linear;
    else if (*st == "none") hp.rope_scaling.type = RopeScalingType::None;
    else if (*st == "llama3") hp.rope_scaling.type = RopeScalingType::Llama3;
    else if (*st == "longrope") hp.rope_scaling.type = RopeScalingType::LongRope;  // its factors are tensors (below)
    else f.fail("metadata", kv->offset, std::string(k.rope_scaling_type) + " '" + *st + "' is not supported");
  }
  if (auto fac = f.get_f32_opt(key(k.rope_scaling_factor))) {
    hp.rope_scaling.factor = *fac;
    // Older files give only a factor; a factor other than 1 without a type means linear.
    if (!f.find_kv(key(k.rope_scaling_type)) && *fac != 1.0f && *fac != 0.0f) hp.rope_scaling.type = RopeScalingType::Linear;
  }
  if (auto oc = f.get_u32_opt(key(k.rope_original_context))) hp.rope_scaling.original_context = *oc;

  // Sliding windows, a local RoPE base and soft-caps: the file's where its table spells a key,
  // else the architecture's own values (llama.cpp's loader assumes the same).
  const ArchDefaults& d = arch->defaults;
  auto opt_u32 = [&](std::string_view name, uint32_t def) { return name.empty() ? def : f.get_u32_opt(key(name)).value_or(def); };
  auto opt_f32 = [&](std::string_view name, float def) { return name.empty() ? def : f.get_f32_opt(key(name)).value_or(def); };
  hp.sliding_window = opt_u32(k.sliding_window, d.sliding_window);
  // Phi-3 GGUFs converted before llama.cpp wrote the window carry none; its loader then takes
  // the published models' windows by shape (mini and medium 4k: 2047; mini 128k: 262144;
  // medium 128k: 131072). The same file decodes alike here.
  if (hp.arch == "phi3" && !f.find_kv(key(k.sliding_window))) {
    if ((hp.n_layer == 32 || hp.n_layer == 40) && hp.n_ctx_train == 4096) hp.sliding_window = 2047;
    else if (hp.n_layer == 32 && hp.n_head_kv == 32 && hp.n_ctx_train == 131072) hp.sliding_window = 262144;
    else if (hp.n_layer == 40 && hp.n_ctx_train == 131072) hp.sliding_window = 131072;
  }
  hp.sliding_window_pattern = opt_u32(k.sliding_window_pattern, d.sliding_window_pattern);
  hp.rope_base_local = opt_f32(k.rope_base_local, d.rope_base_local);
  hp.attn_softcap = opt_f32(k.attn_softcap, d.attn_softcap);
  hp.final_softcap = opt_f32(k.final_softcap, d.final_softcap);
  // llama.cpp's converter writes no query_pre_attn_scalar for Gemma; its loader takes
  // n_embd / n_head for the 27B models (46 layers in Gemma 2, 62 in Gemma 3: the only ones whose
  // scalar is not head_dim) and head_dim otherwise. The same file decodes alike here.
  const bool gemma_27b = (hp.arch == "gemma2" && hp.n_layer == 46) || (hp.arch == "gemma3" && hp.n_layer == 62);
  hp.query_pre_attn_scalar = gemma_27b && hp.n_head > 0 ? static_cast<float>(hp.n_embd / hp.n_head)
                                                         : opt_f32(k.query_pre_attn_scalar, 0.0f);

  // llama.cpp expresses Llama 3.x frequency scaling as a tensor of per-frequency divisors.
  if (const GgufTensorInfo* rf = f.find_tensor("rope_freqs.weight")) {
    if (rf->dtype != DType::F32)
      f.fail("tensor info", rf->info_offset, "tensor 'rope_freqs.weight' must be F32");
    hp.rope_freq_factors.resize(static_cast<size_t>(rf->elements()));
    std::memcpy(hp.rope_freq_factors.data(), rf->data, hp.rope_freq_factors.size() * sizeof(float));
    hp.rope_scaling.type = RopeScalingType::Llama3;
  }

  // phi3's LongRope: llama.cpp's converter writes the short and long factors as tensors and the
  // attention factor as a key; the short ones serve contexts up to the original length.
  if (const GgufTensorInfo* sf = f.find_tensor("rope_factors_short.weight")) {
    if (sf->dtype != DType::F32) f.fail("tensor info", sf->info_offset, "tensor 'rope_factors_short.weight' must be F32");
    hp.rope_freq_factors.resize(static_cast<size_t>(sf->elements()));
    std::memcpy(hp.rope_freq_factors.data(), sf->data, hp.rope_freq_factors.size() * sizeof(float));
    hp.rope_scaling.type = RopeScalingType::LongRope;
    if (!f.find_kv(key(k.rope_original_context))) hp.rope_scaling.original_context = hp.n_ctx_train;
  } else if (const GgufTensorInfo* lf = f.find_tensor("rope_factors_long.weight")) {
    f.fail("tensor info", lf->info_offset, "tensor 'rope_factors_long.weight' without 'rope_factors_short.weight'; "
                                           "the short factors are the ones this engine runs");
  }
  if (!k.rope_attn_factor.empty()) hp.rope_attn_factor = f.get_f32_opt(key(k.rope_attn_factor)).value_or(1.0f);

  HParamsFields fields = hparams_fields("gguf", hp.arch);
  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (auto vs = f.get_u32_opt(key(k.n_vocab))) {
    hp.n_vocab = *vs;
  } else if (const GgufValue* toks = f.get_array_opt("tokenizer.ggml.tokens")) {
    hp.n_vocab = static_cast<uint32_t>(std::min<uint64_t>(toks->count, UINT32_MAX));
    fields.n_vocab = "tokenizer.ggml.tokens";
  } else if (emb) {
    hp.n_vocab = static_cast<uint32_t>(std::min<int64_t>(emb->ne[1], UINT32_MAX));
    fields.n_vocab = "token_embd.weight rows";
  }
  hp.tied_output = !f.tensors().empty() && !f.find_tensor("output.weight");
  hp.rope_layout = arch->gguf_rope_layout;  // llama.cpp's rope type of the architecture
  check_hparams_bounds(hp, f.path(), fields);
  return hp;
}

Vocabulary gguf_vocabulary(const GgufFile& f) {
  Vocabulary v;
  const std::string model = f.get_string("tokenizer.ggml.model");
  if (model == "llama") v.kind = TokenizerKind::SentencePiece;
  else if (model == "gpt2") v.kind = TokenizerKind::ByteLevelBPE;
  else
    f.fail("metadata", f.find_kv("tokenizer.ggml.model")->offset,
           "tokenizer.ggml.model '" + model + "' is not supported (llama or gpt2)");
  const bool spm = v.kind == TokenizerKind::SentencePiece;
  v.pre = f.get_string_opt("tokenizer.ggml.pre").value_or("default");
  if (const GgufValue* a = f.get_array_opt("tokenizer.ggml.tokens"))
    check_model_limit(f.path(), "tokenizer.ggml.tokens", a->count, ModelQuantity::Vocab);
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) f.get_array("tokenizer.ggml.tokens");  // throws naming the missing key
  v.tokens = std::move(*tokens);
  const size_t n = v.tokens.size();
  auto same_length = [&](const char* key, size_t got) {
    if (got != n)
      f.fail("metadata", f.find_kv(key)->offset,
             std::string(key) + " has " + std::to_string(got) + " entries but there are " + std::to_string(n) + " tokens");
  };
  if (auto s = f.get_f32_array("tokenizer.ggml.scores")) {
    same_length("tokenizer.ggml.scores", s->size());
    v.scores = std::move(*s);
  }
  if (auto t = f.get_i32_array("tokenizer.ggml.token_type")) {
    same_length("tokenizer.ggml.token_type", t->size());
    for (int32_t x : *t)
      if (x < 0 || x > static_cast<int32_t>(TokenType::Byte))
        f.fail("metadata", f.find_kv("tokenizer.ggml.token_type")->offset, "token type " + std::to_string(x) + " is unknown");
    v.types = std::move(*t);
  }
  if (auto m = f.get_string_array("tokenizer.ggml.merges")) v.merges = std::move(*m);

  auto special = [&](const char* key, int32_t fallback) -> int32_t {
    const GgufKV* kv = f.find_kv(key);
    if (!kv) return fallback;
    // llama.cpp writes "no such token" as u32 0xFFFFFFFF (LLAMA_TOKEN_NULL = -1).
    if (kv->value.as_uint() == uint64_t{0xFFFFFFFFu}) return -1;
    auto id = f.get_i32_opt(key);
    if (*id < 0 || static_cast<size_t>(*id) >= n)
      f.fail("metadata", f.find_kv(key)->offset,
             std::string(key) + " = " + std::to_string(*id) + " is outside the " + std::to_string(n) + "-token vocabulary");
    return *id;
  };
  // llama.cpp's defaults for SentencePiece vocabularies when the ids are not written.
  v.bos_id = special("tokenizer.ggml.bos_token_id", spm && n > 1 ? 1 : -1);
  v.eos_id = special("tokenizer.ggml.eos_token_id", spm && n > 2 ? 2 : -1);
  v.unk_id = special("tokenizer.ggml.unknown_token_id", spm && n > 0 ? 0 : -1);
  v.eot_id = special("tokenizer.ggml.eot_token_id", -1);
  v.pad_id = special("tokenizer.ggml.padding_token_id", -1);
  v.add_bos = f.get_bool_opt("tokenizer.ggml.add_bos_token").value_or(spm);
  v.add_eos = f.get_bool_opt("tokenizer.ggml.add_eos_token").value_or(false);
  v.add_space_prefix = f.get_bool_opt("tokenizer.ggml.add_space_prefix").value_or(spm);
  v.chat_template = f.get_string_opt("tokenizer.chat_template").value_or("");
  return v;
}

}  // namespace p64
