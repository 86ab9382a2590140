#include "engine/format/model_limits.h"

#include <cmath>
#include <cstdio>

#include "engine/common/error.h"
#include "engine/format/p64_sections.h"
#include "engine/model/architecture.h"

namespace p64 {
namespace {

// The limits are far above every published Llama-family model and far below what would let a
// small file make a command allocate gigabytes. For scale, Llama 3.1 405B has 126 layers, width
// 16384, FFN 53248, 128 heads of 128; the largest vocabularies are about 256k (Gemma); the
// longest trained contexts are about 10M positions (Llama 4 Scout).
struct Limit {
  uint64_t max;
  const char* what;
};
Limit limit_of(ModelQuantity q) {
  switch (q) {
    case ModelQuantity::Layers: return {4096, "layers"};
    case ModelQuantity::Embedding: return {uint64_t{1} << 17, "model width"};
    case ModelQuantity::FeedForward: return {uint64_t{1} << 20, "FFN width"};
    case ModelQuantity::Heads: return {4096, "attention heads"};
    case ModelQuantity::HeadDim: return {4096, "head width"};
    case ModelQuantity::Vocab: return {uint64_t{1} << 22, "vocabulary tokens"};
    case ModelQuantity::Context: return {uint64_t{1} << 24, "context positions"};
  }
  return {0, "?"};
}

// RoPE bases in use run from 10,000 to a few billion (long-context fine-tunes); scaling factors
// from 1 to 64. Outside these ranges the angles are meaningless, not merely unusual.
constexpr double kMinRopeBase = 1.0, kMaxRopeBase = 1e12;
constexpr double kMaxRopeFactor = 1024.0;
constexpr double kMaxRmsEps = 1.0;
constexpr double kMaxSoftcap = 1e6, kMaxQueryScalar = 1e9;

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

[[noreturn]] void refuse(const std::string& file, std::string_view field, const std::string& problem) {
  throw Error(file + ": " + std::string(field) + " " + problem);
}

}  // namespace

uint64_t model_limit(ModelQuantity q) { return limit_of(q).max; }

void check_model_limit(const std::string& file, std::string_view field, uint64_t value, ModelQuantity q) {
  const Limit l = limit_of(q);
  if (value > l.max)
    refuse(file, field, std::to_string(value) + " exceeds the limit " + std::to_string(l.max) + " (" + l.what + ")");
}

std::string count_fits_problem(std::string_view field, uint64_t count, uint64_t min_bytes, uint64_t bytes_left) {
  if (min_bytes == 0 || count <= bytes_left / min_bytes) return {};
  return std::string(field) + " " + std::to_string(count) + ": that many entries of at least " + std::to_string(min_bytes) +
         " bytes cannot fit in the " + std::to_string(bytes_left) + " bytes left";
}

HParamsFields hparams_fields(std::string_view format, std::string_view arch) {
  // An architecture without a table is refused by name before its numbers are read; its
  // fields are spelled as Llama's meanwhile.
  const Architecture* a = find_architecture(arch);
  if (!a) a = find_architecture("llama");
  if (format == "gguf") {
    const std::string p = std::string(arch) + ".";
    const ArchKeys& k = a->gguf;
    auto key = [&](std::string_view suffix) { return p + std::string(suffix); };
    // An architecture with a LongRope attention factor (phi3) carries its factors as rope_factors_*.
    return {key(k.n_embd),    key(k.n_layer),     key(k.n_head),    key(k.n_head_kv),        key(k.head_dim),
            key(k.n_ff),      key(k.n_vocab),     key(k.n_ctx_train), key(k.rope_base),       key(k.rms_eps),
            p + "rope.scaling", key(k.rope_original_context),
            k.rope_attn_factor.empty() ? "rope_freqs.weight" : "rope_factors_short.weight",
            key(k.sliding_window), key(k.rope_base_local), key(k.attn_softcap), key(k.final_softcap),
            key(k.query_pre_attn_scalar), key(k.rope_attn_factor)};
  }
  if (format == "hf") {
    const ArchKeys& k = a->hf;
    return {std::string(k.n_embd),    std::string(k.n_layer),     std::string(k.n_head),   std::string(k.n_head_kv),
            std::string(k.head_dim),  std::string(k.n_ff),        std::string(k.n_vocab),  std::string(k.n_ctx_train),
            std::string(k.rope_base), std::string(k.rms_eps),     "rope_scaling",          std::string(k.rope_original_context),
            "rope_scaling", std::string(k.sliding_window), std::string(k.rope_base_local), std::string(k.attn_softcap),
            std::string(k.final_softcap), std::string(k.query_pre_attn_scalar), "rope_scaling.attention_factor"};
  }
  if (format == "llama2c")
    return {"dim", "n_layers", "n_heads", "n_kv_heads", "dim/n_heads", "hidden_dim", "vocab_size", "seq_len",
            "rope base", "norm epsilon", "rope scaling", "rope original context", "rope factors",
            "sliding window", "local rope base", "attention soft-cap", "final soft-cap", "query scalar",
            "rope attention factor"};
  return {"n_embd",         "n_layer",         "n_head",       "n_head_kv",     "head_dim",
          "n_ff",           "n_vocab",         "n_ctx_train",  "rope_base",     "rms_eps",
          "rope_scaling",   "rope_scaling.original_context", "rope_freq_factors",
          "sliding_window", "rope_base_local", "attn_softcap", "final_softcap", "query_pre_attn_scalar",
          "rope_attn_factor"};
}

void check_hparams_bounds(const HParams& hp, const std::string& file, const HParamsFields& f) {
  check_model_limit(file, f.n_layer, hp.n_layer, ModelQuantity::Layers);
  check_model_limit(file, f.n_embd, hp.n_embd, ModelQuantity::Embedding);
  check_model_limit(file, f.n_ff, hp.n_ff, ModelQuantity::FeedForward);
  check_model_limit(file, f.n_head, hp.n_head, ModelQuantity::Heads);
  check_model_limit(file, f.n_head_kv, hp.n_head_kv, ModelQuantity::Heads);
  check_model_limit(file, f.head_dim, hp.head_dim, ModelQuantity::HeadDim);
  check_model_limit(file, f.n_vocab, hp.n_vocab, ModelQuantity::Vocab);
  check_model_limit(file, f.n_ctx_train, hp.n_ctx_train, ModelQuantity::Context);

  // NaN fails every comparison, so each test is written to pass only for a good value.
  auto in_range = [&](std::string_view field, double v, double lo, double hi, bool lo_open) {
    const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok) refuse(file, field, number(v) + " is not in " + (lo_open ? "(" : "[") + number(lo) + ", " + number(hi) + "]");
  };
  in_range(f.rope_base, hp.rope_base, kMinRopeBase, kMaxRopeBase, false);
  in_range(f.rms_eps, hp.rms_eps, 0.0, kMaxRmsEps, true);
  check_model_limit(file, f.sliding_window, hp.sliding_window, ModelQuantity::Context);
  // 0 means "none" for these; a soft-cap divides, the scalar is square-rooted.
  if (hp.rope_base_local != 0.0f) in_range(f.rope_base_local, hp.rope_base_local, kMinRopeBase, kMaxRopeBase, false);
  if (hp.attn_softcap != 0.0f) in_range(f.attn_softcap, hp.attn_softcap, 0.0, kMaxSoftcap, true);
  if (hp.final_softcap != 0.0f) in_range(f.final_softcap, hp.final_softcap, 0.0, kMaxSoftcap, true);
  if (hp.query_pre_attn_scalar != 0.0f)
    in_range(f.query_pre_attn_scalar, hp.query_pre_attn_scalar, 0.0, kMaxQueryScalar, true);
  const RopeScaling& s = hp.rope_scaling;
  if (s.type != RopeScalingType::None) in_range(f.rope_scaling + ".factor", s.factor, 0.0, kMaxRopeFactor, true);
  if (s.type == RopeScalingType::Llama3) {
    in_range(f.rope_scaling + ".low_freq_factor", s.low_freq_factor, 0.0, kMaxRopeFactor, true);
    in_range(f.rope_scaling + ".high_freq_factor", s.high_freq_factor, 0.0, kMaxRopeFactor, true);
    // The Llama 3 ramp divides by high - low.
    if (!(s.high_freq_factor > s.low_freq_factor))
      refuse(file, f.rope_scaling, "high_freq_factor " + number(s.high_freq_factor) + " is not above low_freq_factor " +
                                       number(s.low_freq_factor));
    if (s.original_context == 0) refuse(file, f.rope_original_context, "is 0");
    check_model_limit(file, f.rope_original_context, s.original_context, ModelQuantity::Context);
  }
  if (s.type == RopeScalingType::LongRope) {
    if (s.original_context == 0) refuse(file, f.rope_original_context, "is 0");
    check_model_limit(file, f.rope_original_context, s.original_context, ModelQuantity::Context);
  }
  // It multiplies q and k: a scale, like a RoPE factor.
  in_range(f.rope_attn_factor, hp.rope_attn_factor, 0.0, kMaxRopeFactor, true);
  for (size_t i = 0; i < hp.rope_freq_factors.size(); ++i) {
    const float x = hp.rope_freq_factors[i];
    if (!(std::isfinite(x) && x > 0.0f))
      refuse(file, f.rope_freq_factors,
             "entry " + std::to_string(i) + " is " + number(x) + "; RoPE frequency divisors must be finite and > 0");
  }
}

void check_layers_present(const std::string& file, std::string_view field, uint32_t n_layer,
                          const std::vector<std::string>& tensor_names) {
  std::vector<bool> held(n_layer, false);  // n_layer is within its limit by now
  for (const std::string& name : tensor_names) {
    const int32_t layer = p64io::layer_of_tensor(name);
    if (layer < 0) continue;
    if (static_cast<uint32_t>(layer) >= n_layer)
      refuse(file, field, std::to_string(n_layer) + " but tensor '" + name + "' belongs to layer " + std::to_string(layer));
    held[static_cast<size_t>(layer)] = true;
  }
  for (uint32_t l = 0; l < n_layer; ++l)
    if (!held[l])
      refuse(file, field, std::to_string(n_layer) + " but the file holds no tensor of layer " + std::to_string(l) +
                              " (blk." + std::to_string(l) + ".*)");
}

std::string nonfinite_weights_problem(const std::string& tensor, double sum2) {
  if (std::isfinite(sum2)) return {};
  return "tensor '" + tensor + "' holds NaN or infinite values; a model with them decodes to garbage";
}

}  // namespace p64
