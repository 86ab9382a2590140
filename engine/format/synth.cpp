// Presets, tensor-type mixes and the tensor plan of synthetic models.
#include "engine/format/synth.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/common/error.h"
#include "engine/model/architecture.h"

namespace p64 {
namespace {

struct Preset {
  const char* name;
  const char* display_name;
  const char* arch;  // engine/model/architecture.h
  uint32_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx;
  float rope_base;
  float rms_eps;
  float llama3_factor;  // 0: no rope scaling
  bool tied;
  // Local layers' window (0: none); which layers are local and their RoPE base are the
  // architecture's (ArchDefaults), as llama.cpp assumes them for the GGUF.
  uint32_t sliding_window = 0;
  // Soft-caps (written to the GGUF); 0: the architecture's (gemma2 50 and 30).
  float attn_softcap = 0.0f, final_softcap = 0.0f;
  // LongRope's original context (phi3); 0: no LongRope. Its factors are synthetic (below).
  uint32_t longrope_original = 0;
};

// Hyperparameters of the published checkpoints (their config.json files).
constexpr Preset kPresets[] = {
    {"llama-3.2-3b", "Llama 3.2 3B (synthetic)", "llama", 3072, 28, 24, 8, 128, 8192, 128256, 131072, 500000.0f, 1e-5f, 32.0f, true},
    {"llama-3.2-1b", "Llama 3.2 1B (synthetic)", "llama", 2048, 16, 32, 8, 64, 8192, 128256, 131072, 500000.0f, 1e-5f, 32.0f, true},
    {"llama-3.1-8b", "Llama 3.1 8B (synthetic)", "llama", 4096, 32, 32, 8, 128, 14336, 128256, 131072, 500000.0f, 1e-5f, 8.0f, false},
    {"smollm2-360m", "SmolLM2 360M (synthetic)", "llama", 960, 32, 15, 5, 64, 2560, 49152, 8192, 100000.0f, 1e-5f, 0.0f, true},
    {"smollm2-135m", "SmolLM2 135M (synthetic)", "llama", 576, 30, 9, 3, 64, 1536, 49152, 8192, 100000.0f, 1e-5f, 0.0f, true},
    {"qwen2.5-0.5b", "Qwen2.5 0.5B (synthetic)", "qwen2", 896, 24, 14, 2, 64, 4864, 151936, 32768, 1000000.0f, 1e-6f, 0.0f, true},
    {"qwen2.5-3b", "Qwen2.5 3B (synthetic)", "qwen2", 2048, 36, 16, 2, 128, 11008, 151936, 32768, 1000000.0f, 1e-6f, 0.0f, true},
    {"qwen3-0.6b", "Qwen3 0.6B (synthetic)", "qwen3", 1024, 28, 16, 8, 128, 3072, 151936, 40960, 1000000.0f, 1e-6f, 0.0f, true},
    {"qwen3-4b", "Qwen3 4B (synthetic)", "qwen3", 2560, 36, 32, 8, 128, 9728, 151936, 40960, 1000000.0f, 1e-6f, 0.0f, true},
    {"tiny", "tiny (synthetic)", "llama", 64, 2, 4, 2, 16, 128, 320, 512, 10000.0f, 1e-5f, 0.0f, true},
    {"tiny-k", "tiny-k (synthetic)", "llama", 256, 2, 4, 2, 64, 320, 320, 512, 10000.0f, 1e-5f, 0.0f, false},
    // For tests against other implementations: untied, as tiny-k, since with random weights a
    // tied output repeats the last token whatever the blocks compute. tiny-qwen3's head_dim 32
    // is not n_embd / n_head (16), as in Qwen3-0.6B (1024 / 16 = 64, head_dim 128).
    {"tiny-qwen2", "tiny qwen2 (synthetic)", "qwen2", 64, 2, 4, 2, 16, 128, 320, 512, 10000.0f, 1e-6f, 0.0f, false},
    {"tiny-qwen3", "tiny qwen3 (synthetic)", "qwen3", 64, 2, 4, 2, 32, 128, 320, 512, 10000.0f, 1e-6f, 0.0f, false},
    // Gemma ties its output to the embedding (llama.cpp's loader has no output.weight for it).
    {"gemma-2-2b", "Gemma 2 2B (synthetic)", "gemma2", 2304, 26, 8, 4, 256, 9216, 256000, 8192, 10000.0f, 1e-6f, 0.0f, true, 4096},
    {"gemma-3-1b", "Gemma 3 1B (synthetic)", "gemma3", 1152, 26, 4, 1, 256, 6912, 262144, 32768, 1000000.0f, 1e-6f, 0.0f, true, 512},
    // tiny-gemma2 has Gemma-2-2B's 26 layers: llama.cpp's snapshot (c392e509) sizes a gemma2 by
    // its layer count and stops on any other. Windows of 8 positions, so short tests cross them;
    // an attention soft-cap that bends this model's scores, which are about 1 (Gemma 2's 50 would
    // leave them as they are, and a forward pass without the cap would agree with llama.cpp too);
    // the logits' cap is Gemma 2's 30, which already moves this model's perplexity by 0.25%.
    // tiny-gemma3's 6 layers are five local ones and a global one, head_dim 32 not 64 / 4.
    {"tiny-gemma2", "tiny gemma2 (synthetic)", "gemma2", 64, 26, 4, 2, 16, 128, 320, 512, 10000.0f, 1e-6f, 0.0f, true, 8,
     1.0f},
    {"tiny-gemma3", "tiny gemma3 (synthetic)", "gemma3", 64, 6, 4, 2, 32, 128, 320, 512, 1000000.0f, 1e-6f, 0.0f, true, 8},
    // Phi-3.5-mini: 131072 positions from an original 4096 by LongRope, whose attention factor
    // is then sqrt(1 + ln 32 / ln 4096) = 1.19; its window of 262144 covers every context.
    // tiny-phi3 keeps that RoPE (the factor bends its scores by 1.19^2) with a window of 32
    // positions, so a 128-token perplexity run crosses it. Their names spell neither "phi3" nor
    // "phi-3": llama.cpp's vocabulary loader looks Phi-3's special tokens up by name in a model
    // so named, and the synthetic vocabulary has none.
    {"phi-3.5-mini", "Phi 3.5 mini (synthetic)", "phi3", 3072, 32, 32, 32, 96, 8192, 32064, 131072, 10000.0f, 1e-5f, 0.0f,
     false, 262144, 0.0f, 0.0f, 4096},
    {"tiny-phi3", "tiny phi 3 (synthetic)", "phi3", 64, 2, 4, 2, 16, 128, 320, 131072, 10000.0f, 1e-5f, 0.0f, false, 32,
     0.0f, 0.0f, 4096},
};

std::string known_presets() {
  std::string s;
  for (const auto& p : kPresets) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

bool is_k_quant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

}  // namespace

std::vector<std::string> synth_preset_names() {
  std::vector<std::string> v;
  for (const auto& p : kPresets) v.emplace_back(p.name);
  return v;
}

HParams synth_preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (name != p.name) continue;
    HParams hp;
    hp.arch = p.arch;
    hp.name = p.display_name;
    hp.n_embd = p.n_embd;
    hp.n_layer = p.n_layer;
    hp.n_head = p.n_head;
    hp.n_head_kv = p.n_head_kv;
    hp.head_dim = p.head_dim;
    hp.n_ff = p.n_ff;
    hp.n_vocab = p.n_vocab;
    hp.n_ctx_train = p.n_ctx;
    hp.rope_dim = p.head_dim;
    hp.rope_base = p.rope_base;
    hp.rms_eps = p.rms_eps;
    const Architecture& arch = architecture(p.arch, "synth");
    hp.rope_layout = arch.gguf_rope_layout;
    hp.tied_output = p.tied;
    hp.sliding_window = p.sliding_window;
    hp.sliding_window_pattern = arch.defaults.sliding_window_pattern;
    hp.rope_base_local = arch.defaults.rope_base_local;
    hp.attn_softcap = p.attn_softcap > 0.0f ? p.attn_softcap : arch.defaults.attn_softcap;
    hp.final_softcap = p.final_softcap > 0.0f ? p.final_softcap : arch.defaults.final_softcap;
    if (p.llama3_factor > 0) {
      hp.rope_scaling.type = RopeScalingType::Llama3;
      hp.rope_scaling.factor = p.llama3_factor;
      hp.rope_scaling.low_freq_factor = 1.0f;
      hp.rope_scaling.high_freq_factor = 4.0f;
      hp.rope_scaling.original_context = 8192;
      hp.rope_freq_factors = llama3_rope_freq_factors(hp);
    }
    if (p.longrope_original > 0) {
      hp.rope_scaling.type = RopeScalingType::LongRope;
      hp.rope_scaling.original_context = p.longrope_original;
      hp.rope_freq_factors = synth_longrope_factors(hp, false);
      const double extension = static_cast<double>(p.n_ctx) / p.longrope_original;
      hp.rope_attn_factor = static_cast<float>(std::sqrt(1.0 + std::log(extension) / std::log(static_cast<double>(p.longrope_original))));
    }
    return hp;
  }
  throw Error("synth: unknown preset '" + std::string(name) + "' (known: " + known_presets() + ")");
}

SynthQuant synth_quant_from_name(std::string_view name) {
  for (SynthQuant q : {SynthQuant::Q4_K_M, SynthQuant::Q8_0, SynthQuant::F16, SynthQuant::F32})
    if (name == synth_quant_name(q)) return q;
  throw Error("synth: unknown quant mix '" + std::string(name) + "' (known: Q4_K_M, Q8_0, F16, F32)");
}

std::string_view synth_quant_name(SynthQuant q) {
  switch (q) {
    case SynthQuant::Q4_K_M: return "Q4_K_M";
    case SynthQuant::Q8_0: return "Q8_0";
    case SynthQuant::F16: return "F16";
    case SynthQuant::F32: return "F32";
  }
  return "?";
}

uint32_t synth_file_type(SynthQuant q) {
  switch (q) {
    case SynthQuant::Q4_K_M: return 15;  // LLAMA_FTYPE_MOSTLY_Q4_K_M
    case SynthQuant::Q8_0: return 7;     // LLAMA_FTYPE_MOSTLY_Q8_0
    case SynthQuant::F16: return 1;      // LLAMA_FTYPE_MOSTLY_F16
    case SynthQuant::F32: return 0;      // LLAMA_FTYPE_ALL_F32
  }
  return 0;
}

DType synth_matrix_type(SynthQuant q, std::string_view base, int layer, int n_layer, int64_t row_length, bool is_output) {
  DType t = DType::F16;
  switch (q) {
    case SynthQuant::F16: return DType::F16;
    case SynthQuant::F32: return DType::F32;
    case SynthQuant::Q8_0: t = DType::Q8_0; break;
    case SynthQuant::Q4_K_M:
      if (is_output) t = DType::Q6_K;
      else if ((base == "attn_v" || base == "ffn_down") && use_more_bits(layer, n_layer)) t = DType::Q6_K;
      // llama-quantize makes a fused attn_qkv Q5_K here; the cpu backend has no Q5_K kernel,
      // so the mix keeps it Q4_K (llama.cpp's file is larger by a bit per attn_qkv weight).
      else t = DType::Q4_K;
      break;
  }
  if (is_k_quant(t) && row_length % 256 != 0) {
    // llama.cpp's fallback for rows that do not fill 256-element super-blocks.
    t = t == DType::Q4_K ? DType::Q5_0 : t == DType::Q5_K ? DType::Q5_1 : DType::Q8_0;
  }
  if (row_length % 32 != 0) t = DType::F16;  // not even a legacy block fits
  return t;
}

std::vector<float> llama3_rope_freq_factors(const HParams& hp) {
  const RopeScaling& s = hp.rope_scaling;
  const double low_wavelen = s.original_context / s.low_freq_factor;
  const double high_wavelen = s.original_context / s.high_freq_factor;
  std::vector<float> f;
  for (uint32_t i = 0; i < hp.rope_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(hp.rope_base), static_cast<double>(i) / hp.rope_dim);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    if (wavelen < high_wavelen) {
      f.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      f.push_back(s.factor);
    } else {
      const double smooth = (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / s.factor + smooth)));
    }
  }
  return f;
}

std::vector<float> synth_longrope_factors(const HParams& hp, bool long_factors) {
  // Published short factors rise from 1 to a few over the pairs, the long ones much further;
  // these follow that shape: short 1 + 2 x^2 and long short x (1 + (extension - 1) x), x in [0, 1].
  const uint32_t pairs = hp.rope_dim / 2;
  const double extension = std::max(1.0, static_cast<double>(hp.n_ctx_train) / hp.rope_scaling.original_context);
  std::vector<float> f;
  for (uint32_t i = 0; i < pairs; ++i) {
    const double x = pairs > 1 ? static_cast<double>(i) / (pairs - 1) : 0.0;
    const double short_factor = 1.0 + 2.0 * x * x;
    f.push_back(static_cast<float>(long_factors ? short_factor * (1.0 + (extension - 1.0) * x) : short_factor));
  }
  return f;
}

uint64_t SynthPlan::tensor_bytes() const {
  uint64_t b = 0;
  for (const auto& t : tensors) b += t.bytes;
  return b;
}

SynthPlan plan_synth(const HParams& hp, SynthQuant quant) {
  validate(hp, "synth");
  SynthPlan plan;
  plan.hp = hp;
  plan.quant = quant;
  auto add = [&](std::string name, DType type, std::vector<int64_t> ne, SynthRole role) {
    const uint64_t rows = ne.size() > 1 ? static_cast<uint64_t>(ne[1]) : 1;
    const uint64_t bytes = dtype_row_bytes(type, static_cast<uint64_t>(ne[0])) * rows;
    plan.tensors.push_back({std::move(name), type, std::move(ne), bytes, role});
  };
  auto matrix = [&](const std::string& prefix, const char* base, int layer, int64_t in, int64_t out, bool is_output) {
    const DType t = synth_matrix_type(quant, base, layer, static_cast<int>(hp.n_layer), in, is_output);
    add(prefix + base + ".weight", t, {in, out}, SynthRole::Matrix);
  };
  const Architecture& arch = architecture(hp.arch, "synth");
  if (hp.rope_scaling.type == RopeScalingType::Llama3)
    add("rope_freqs.weight", DType::F32, {static_cast<int64_t>(hp.rope_dim / 2)}, SynthRole::RopeFreqs);
  if (hp.rope_scaling.type == RopeScalingType::LongRope) {
    add("rope_factors_long.weight", DType::F32, {static_cast<int64_t>(hp.rope_dim / 2)}, SynthRole::RopeFactorsLong);
    add("rope_factors_short.weight", DType::F32, {static_cast<int64_t>(hp.rope_dim / 2)}, SynthRole::RopeFreqs);
  }
  // The architecture's tensors in its table's order; a 1-D one is a norm, a bias or a q/k norm.
  auto tensor = [&](const ArchTensor& t, const std::string& prefix, int layer) {
    const int64_t ne0 = arch_dim(hp, t.ne0), ne1 = arch_dim(hp, t.ne1);
    const std::string name = prefix + std::string(t.gguf);
    if (t.norm()) {
      // q/k norms and all of Gemma's (whose HF form is w - 1) are random: a forward pass that
      // took them for ones, or read one for another, would decode other tokens.
      const bool random_norm = t.role == ArchRole::QNorm || t.role == ArchRole::KNorm || arch.hf_norm_plus_one;
      const SynthRole role = !t.rms_weight() ? SynthRole::Bias : random_norm ? SynthRole::RandomNorm : SynthRole::Norm;
      add(name, DType::F32, {ne0}, role);
      return;
    }
    const std::string base = std::string(t.gguf.substr(0, t.gguf.rfind('.')));  // "attn_v"
    // With tied embeddings token_embd is also the output projection and gets the output's type.
    const bool is_output = t.role == ArchRole::Output || (t.role == ArchRole::TokenEmbd && hp.tied_output);
    matrix(prefix, base.c_str(), layer, ne0, ne1, is_output);
  };
  for (const ArchTensor& t : arch.globals)
    if (t.role == ArchRole::TokenEmbd) tensor(t, "", 0);
  for (uint32_t i = 0; i < hp.n_layer; ++i)
    for (const ArchTensor& t : arch.block) tensor(t, "blk." + std::to_string(i) + ".", static_cast<int>(i));
  for (const ArchTensor& t : arch.globals)
    if (t.role == ArchRole::OutputNorm || (t.role == ArchRole::Output && !hp.tied_output)) tensor(t, "", 0);
  return plan;
}

Vocabulary synth_vocabulary(uint32_t n_vocab) {
  if (n_vocab < 259) throw Error("synth: a vocabulary needs at least 259 tokens (3 special + 256 bytes), asked for " + std::to_string(n_vocab));
  Vocabulary v;
  v.kind = TokenizerKind::SentencePiece;
  v.tokens.reserve(n_vocab);
  auto push = [&](std::string s, float score, TokenType type) {
    v.tokens.push_back(std::move(s));
    v.scores.push_back(score);
    v.types.push_back(static_cast<int32_t>(type));
  };
  push("<unk>", 0.0f, TokenType::Unknown);
  push("<s>", 0.0f, TokenType::Control);
  push("</s>", 0.0f, TokenType::Control);
  static const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) push(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0.0f, TokenType::Byte);
  // Pieces: lowercase words in length-then-lexicographic order, each once bare and once with
  // the SentencePiece word-start mark U+2581; scores fall with the id like log-probabilities.
  const std::string mark = "\xe2\x96\x81";
  for (uint64_t k = 0; v.tokens.size() < n_vocab; ++k) {
    std::string w;
    uint64_t x = k;
    uint64_t len = 1, span = 26;
    while (x >= span) {
      x -= span;
      ++len;
      span *= 26;
    }
    for (uint64_t i = 0; i < len; ++i) {
      w.insert(w.begin(), static_cast<char>('a' + x % 26));
      x /= 26;
    }
    const float score = -static_cast<float>(v.tokens.size());
    push(mark + w, score, TokenType::Normal);
    if (v.tokens.size() < n_vocab) push(w, score - 0.5f, TokenType::Normal);
  }
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = 0;
  v.add_bos = true;
  v.add_eos = false;
  v.add_space_prefix = true;
  return v;
}

}  // namespace p64
