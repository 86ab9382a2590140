#include "engine/format/hf_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/format/model_limits.h"
#include "engine/format/safetensors.h"
#include "engine/model/architecture.h"
#include "engine/format/hf_tokenizer_json.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    throw FormatError(p.string(), "json", 0, e.what());
  }
}

// transformers 5's layer_types as HParams' window pattern: all "full_attention" turns the
// window off; "sliding_attention" everywhere is pattern 0; a global layer every n-th is n.
// Any other list is refused naming the first layer that leaves the pattern.
void apply_layer_types(const json& types, HParams& hp, const std::string& path) {
  auto fail = [&](const std::string& why) { throw FormatError(path, "config", 0, "layer_types: " + why); };
  if (types.size() != hp.n_layer)
    fail("has " + std::to_string(types.size()) + " entries for " + std::to_string(hp.n_layer) + " layers");
  std::vector<bool> local;
  for (const json& t : types) {
    const std::string type = t.is_string() ? t.get<std::string>() : t.dump();
    if (type != "sliding_attention" && type != "full_attention")
      fail("a layer of type '" + type + "' is not supported (full_attention, sliding_attention)");
    local.push_back(type == "sliding_attention");
  }
  const auto first_global = std::find(local.begin(), local.end(), false);
  if (std::find(local.begin(), local.end(), true) == local.end()) {
    hp.sliding_window = 0;
    return;
  }
  if (hp.sliding_window == 0) fail("sliding_attention layers, but no sliding_window is given");
  hp.sliding_window_pattern = first_global == local.end() ? 0 : static_cast<uint32_t>(first_global - local.begin()) + 1;
  for (uint32_t l = 0; l < hp.n_layer; ++l)
    if (local[l] != hp.layer_is_local(l))
      fail("layer " + std::to_string(l) + " is " + (local[l] ? "sliding" : "full") +
           "_attention; the engine runs a global layer every n-th layer (here n = " +
           std::to_string(hp.sliding_window_pattern) + ") and no other mix");
}

// LongRope (phi3): the short factors become rope_freq_factors, the long ones are only checked
// (the backend refuses contexts past the original length, where they would apply). The
// attention factor is the block's attention_factor, else transformers' and llama.cpp's rule
// sqrt(1 + ln s / ln original) for the extension s = max_position_embeddings / original.
void read_longrope(const json& rs, const std::string& block, HParams& hp, const json& c, const ArchKeys& k,
                   const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& why) { throw FormatError(path, "config", 0, block + "." + key + ": " + why); };
  auto factors = [&](const char* key) {
    if (!rs.contains(key) || !rs[key].is_array()) fail(key, "missing (a list of " + std::to_string(hp.rope_dim / 2) + " numbers)");
    std::vector<float> v;
    for (const json& x : rs[key]) {
      if (!x.is_number()) fail(key, "holds " + x.dump() + ", not a number");
      v.push_back(x.get<float>());
    }
    if (v.size() != hp.rope_dim / 2)
      fail(key, "has " + std::to_string(v.size()) + " entries; rotating " + std::to_string(hp.rope_dim) +
                    " dimensions of each head needs " + std::to_string(hp.rope_dim / 2));
    return v;
  };
  RopeScaling& s = hp.rope_scaling;
  s.type = RopeScalingType::LongRope;
  hp.rope_freq_factors = factors("short_factor");
  factors("long_factor");
  // The original context: config.json's top-level key (Phi-3), else the block's, else the
  // trained context (no extension).
  double original = hp.n_ctx_train;
  const std::string top(k.rope_original_context);
  if (!top.empty() && c.contains(top) && c[top].is_number()) original = c[top].get<double>();
  else if (rs.contains("original_max_position_embeddings") && rs["original_max_position_embeddings"].is_number())
    original = rs["original_max_position_embeddings"].get<double>();
  if (!(original >= 1.0 && original <= 1e9)) fail("original_max_position_embeddings", "is out of range");
  s.original_context = static_cast<uint32_t>(original);
  if (rs.contains("attention_factor") && !rs["attention_factor"].is_null()) {
    if (!rs["attention_factor"].is_number()) fail("attention_factor", "not a number");
    hp.rope_attn_factor = rs["attention_factor"].get<float>();
  } else {
    const double extension = rs.contains("factor") && rs["factor"].is_number() ? rs["factor"].get<double>()
                                                                               : hp.n_ctx_train / original;
    hp.rope_attn_factor = extension <= 1.0 ? 1.0f : static_cast<float>(std::sqrt(1.0 + std::log(extension) / std::log(original)));
  }
}

// The global RoPE block's scaling (rope_scaling, or transformers 5's rope_parameters): llama3,
// linear or longrope; any other type is refused.
void read_rope_scaling(const json& rs, const std::string& block_name, HParams& hp, const json& c, const ArchKeys& k,
                       const std::string& path) {
  auto fail = [&](const std::string& why) -> void { throw FormatError(path, "config", 0, block_name + ": " + why); };
  const std::string type = rs.value("rope_type", rs.value("type", ""));
  auto rf = [&](const char* key, float def) { return rs.contains(key) && rs[key].is_number() ? rs[key].get<float>() : def; };
  RopeScaling& s = hp.rope_scaling;
  if (type == "llama3") {
    s.type = RopeScalingType::Llama3;
    s.factor = rf("factor", 8.0f);
    s.low_freq_factor = rf("low_freq_factor", 1.0f);
    s.high_freq_factor = rf("high_freq_factor", 4.0f);
    const float original = rf("original_max_position_embeddings", 8192.0f);
    if (!(original >= 1.0f && original <= 1e9f)) fail("original_max_position_embeddings is out of range");
    s.original_context = static_cast<uint32_t>(original);
  } else if (type == "linear") {
    s.type = RopeScalingType::Linear;
    s.factor = rf("factor", 1.0f);
  } else if (type == "longrope" || type == "su") {
    read_longrope(rs, block_name, hp, c, k, path);
  } else if (type != "default" && !type.empty()) {
    fail("type '" + type + "' is not supported (llama3, linear, longrope)");
  }
}

// Config switches the architecture's forward pass has no branch for (hf_flags_off), and an FFN
// nonlinearity other than the architecture's, are refused rather than decoded wrongly.
void refuse_unsupported_switches(const json& c, const Architecture& arch, const std::string& model_type,
                                 const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& why) -> void {
    throw FormatError(path, "config", 0, key + ": " + why);
  };
  for (std::string_view flag : arch.hf_flags_off) {
    const std::string key(flag);
    if (c.contains(key) && !c[key].is_null() && !(c[key].is_boolean() && !c[key].get<bool>()))
      fail(key, "is " + c[key].dump() + "; a " + model_type + " model with it is not supported");
  }
  const char* activation = arch.ffn_activation == FfnActivation::Silu ? "silu" : "gelu_pytorch_tanh";
  for (const char* key : {"hidden_act", "hidden_activation"})
    if (c.contains(key) && !c[key].is_null() && c[key] != activation)
      fail(key, "is " + c[key].dump() + "; a " + model_type + " model with it is not supported (" + activation + ")");
}

HParams hf_hparams(const json& c, const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& why) -> void { throw FormatError(path, "config", 0, key + ": " + why); };
  const std::string model_type = c.value("model_type", "");
  const Architecture* arch = find_hf_architecture(model_type);
  if (!arch) fail("model_type", "'" + model_type + "' is not supported (" + architecture_names() + ")");
  const ArchKeys& k = arch->hf;
  auto u32 = [&](std::string_view key_name, std::optional<uint32_t> def) -> uint32_t {
    const std::string key(key_name);
    if (!c.contains(key) || c[key].is_null()) {
      if (!def) fail(key, "missing");
      return *def;
    }
    if (!c[key].is_number_unsigned() || c[key].get<uint64_t>() > 0xFFFFFFFFu) fail(key, "not an unsigned integer");
    return c[key].get<uint32_t>();
  };
  auto f32 = [&](std::string_view key_name, float def) -> float {
    const std::string key(key_name);
    if (!c.contains(key) || c[key].is_null()) return def;
    if (!c[key].is_number()) fail(key, "not a number");
    return c[key].get<float>();
  };
  refuse_unsupported_switches(c, *arch, model_type, path);
  HParams hp;
  hp.arch = std::string(arch->name);
  hp.name = c.value("_name_or_path", "");
  hp.n_embd = u32(k.n_embd, std::nullopt);
  hp.n_layer = u32(k.n_layer, std::nullopt);
  hp.n_head = u32(k.n_head, std::nullopt);
  hp.n_head_kv = u32(k.n_head_kv, hp.n_head);
  hp.n_ff = u32(k.n_ff, std::nullopt);
  hp.n_vocab = u32(k.n_vocab, std::nullopt);
  hp.head_dim = u32(k.head_dim, hp.n_head ? hp.n_embd / hp.n_head : 0);
  hp.rope_dim = hp.head_dim;
  // phi3 (Phi-4-mini) rotates the first part of each head only; the other halves-layout
  // architectures take it as transformers does, and a Llama's row permutation has no such form.
  if (c.contains("partial_rotary_factor") && !c["partial_rotary_factor"].is_null()) {
    const float part = f32("partial_rotary_factor", 1.0f);
    const double dims = static_cast<double>(hp.head_dim) * part;
    if (!(part > 0.0f && part <= 1.0f) || dims != std::floor(dims) || static_cast<uint32_t>(dims) % 2 != 0)
      fail("partial_rotary_factor", "is " + c["partial_rotary_factor"].dump() + "; head_dim " + std::to_string(hp.head_dim) +
                                        " times it must be an even number of dimensions");
    if (part != 1.0f && arch->hf_permute_qk)
      fail("partial_rotary_factor", "is " + c["partial_rotary_factor"].dump() + "; a " + model_type + " model with it is not supported");
    hp.rope_dim = static_cast<uint32_t>(dims);
  }
  hp.n_ctx_train = u32(k.n_ctx_train, 0);
  hp.rms_eps = f32(k.rms_eps, 1e-6f);
  // transformers 5 writes rope_theta and the scaling block together, as rope_parameters; where
  // layers differ (gemma3) it holds one block per layer type, the global one "full_attention".
  std::string rope_block_name = c.contains("rope_scaling") && c["rope_scaling"].is_object()         ? "rope_scaling"
                                : c.contains("rope_parameters") && c["rope_parameters"].is_object() ? "rope_parameters"
                                                                                                     : "";
  const json* rope_block = rope_block_name.empty() ? nullptr : &c[rope_block_name];
  const json* local_rope_block = nullptr;
  if (rope_block && rope_block->contains("full_attention") && (*rope_block)["full_attention"].is_object()) {
    if (rope_block->contains("sliding_attention") && (*rope_block)["sliding_attention"].is_object())
      local_rope_block = &(*rope_block)["sliding_attention"];
    rope_block = &(*rope_block)["full_attention"];
    rope_block_name += ".full_attention";
  }
  auto block_theta = [&](const json* block, const std::string& name, float def) {
    if (!block || !block->contains("rope_theta")) return def;
    if (!(*block)["rope_theta"].is_number()) fail(name + ".rope_theta", "not a number");
    return (*block)["rope_theta"].get<float>();
  };
  hp.rope_base = f32(k.rope_base, block_theta(rope_block, rope_block_name, 10000.0f));
  hp.tied_output = c.value("tie_word_embeddings", false);
  // Sliding windows, the local RoPE base, soft-caps and the attention scale, where the
  // architecture's table has a key for them (an explicit null turns a soft-cap off).
  const ArchDefaults& d = arch->defaults;
  auto opt_f32 = [&](std::string_view key, float def) -> float {
    if (key.empty()) return def;
    if (c.contains(std::string(key)) && c[std::string(key)].is_null()) return 0.0f;
    return f32(key, def);
  };
  hp.sliding_window = k.sliding_window.empty() ? d.sliding_window : u32(k.sliding_window, d.sliding_window);
  hp.sliding_window_pattern =
      k.sliding_window_pattern.empty() ? d.sliding_window_pattern : u32(k.sliding_window_pattern, d.sliding_window_pattern);
  hp.rope_base_local = block_theta(local_rope_block, "rope_parameters.sliding_attention", opt_f32(k.rope_base_local, d.rope_base_local));
  if (local_rope_block && local_rope_block->value("rope_type", "default") != "default")
    fail("rope_parameters.sliding_attention", "rope_type " + (*local_rope_block)["rope_type"].dump() +
                                                  " is not supported (local layers rotate unscaled)");
  hp.attn_softcap = opt_f32(k.attn_softcap, d.attn_softcap);
  hp.final_softcap = opt_f32(k.final_softcap, d.final_softcap);
  hp.query_pre_attn_scalar = opt_f32(k.query_pre_attn_scalar, 0.0f);
  // transformers 5 names each layer's attention instead of a pattern; the engine runs the
  // patterns in use (every layer local, or every n-th global), so the list must be one.
  if (c.contains("layer_types") && c["layer_types"].is_array()) apply_layer_types(c["layer_types"], hp, path);
  if (rope_block) read_rope_scaling(*rope_block, rope_block_name, hp, c, k, path);
  // Llama's Q/K rows are permuted to adjacent pairs below; the others keep HF's halves.
  hp.rope_layout = arch->hf_permute_qk ? RopeLayout::Adjacent : RopeLayout::Halves;
  check_hparams_bounds(hp, path, hparams_fields("hf", hp.arch));  // before the factors: their count is head_dim / 2
  const RopeScaling& s = hp.rope_scaling;
  if (s.type == RopeScalingType::Llama3)
    hp.rope_freq_factors = llama3_rope_freq_factors(hp.rope_base, hp.rope_dim, s.factor, s.low_freq_factor,
                                                    s.high_freq_factor, s.original_context);
  validate(hp, path);
  return hp;
}

// HF tensor name -> GGUF name by the architecture's table, with the table's entry; "" (and
// nullptr) to skip (RoPE caches); throws for names the table does not have.
std::pair<std::string, const ArchTensor*> gguf_name(const Architecture& arch, const std::string& hf, const std::string& path) {
  for (const ArchTensor& t : arch.globals)
    if (hf == t.hf) return {std::string(t.gguf), &t};
  static const std::regex kLayerRe(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(hf, m, kLayerRe)) {
    const std::string inner = m[2].str();
    if (inner == "self_attn.rotary_emb.inv_freq") return {"", nullptr};
    for (const ArchTensor& t : arch.block)
      if (inner == t.hf) return {"blk." + m[1].str() + "." + std::string(t.gguf), &t};
  }
  throw FormatError(path, "tensor data", 0, "tensor '" + hf + "' is not part of a " + std::string(arch.name) + " checkpoint");
}

}  // namespace

std::vector<int64_t> hf_rope_row_permutation(int64_t n_head, int64_t head_dim) {
  std::vector<int64_t> perm(static_cast<size_t>(n_head * head_dim));
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t s = 0; s < 2; ++s) perm[static_cast<size_t>(h * head_dim + 2 * i + s)] = h * head_dim + s * half + i;
  return perm;
}

std::vector<float> llama3_rope_freq_factors(float rope_base, uint32_t rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, uint32_t original_context) {
  std::vector<float> out;
  const double low_wavelen = original_context / low_freq_factor;
  const double high_wavelen = original_context / high_freq_factor;
  for (uint32_t i = 0; i < rope_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(rope_base), static_cast<double>(i) / rope_dim);
    const double wavelen = 2.0 * M_PI / freq;
    if (wavelen < high_wavelen) out.push_back(1.0f);
    else if (wavelen > low_wavelen) out.push_back(factor);
    else {
      const double smooth = (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      out.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / factor + smooth)));
    }
  }
  return out;
}

HParams read_hf_config(const std::string& config_path) {
  try {
    const json config = read_json(config_path);
    if (!config.is_object()) throw FormatError(config_path, "config", 0, "not a JSON object");
    return hf_hparams(config, config_path);
  } catch (const json::exception& e) {  // a field of the wrong type the checks above did not expect
    throw FormatError(config_path, "config", 0, std::string("a field has the wrong type: ") + e.what());
  }
}

SourceModel load_hf_directory(const std::string& dir, const std::string& tokenizer_override) {
  const fs::path d(dir);
  SourceModel src;
  src.kind = "hf";
  src.path = dir;
  const fs::path config_path = d / "config.json";
  if (!fs::exists(config_path)) throw Error(dir + ": no config.json (not a Hugging Face model folder)");
  check_input_file(config_path.string(), dir);
  src.hparams = read_hf_config(config_path.string());
  const HParams& hp = src.hparams;
  const Architecture& arch = architecture(hp.arch, config_path.string());

  // Shards: the index's weight_map names the file of each tensor; a single file otherwise.
  std::vector<fs::path> shard_paths;
  if (fs::exists(d / "model.safetensors.index.json")) {
    check_input_file((d / "model.safetensors.index.json").string(), dir);
    json idx = read_json(d / "model.safetensors.index.json");
    if (!idx.contains("weight_map") || !idx["weight_map"].is_object())
      throw FormatError((d / "model.safetensors.index.json").string(), "json", 0, "no weight_map object");
    std::set<std::string> files;
    for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
      if (!it.value().is_string()) throw FormatError((d / "model.safetensors.index.json").string(), "json", 0, "weight_map entry is not a file name");
      std::string f = it.value().get<std::string>();
      // A plain file name: fs::path splits it as this system does (Windows also at '\\' and
      // after a drive's "C:"), so an absolute or nested name keeps a folder part.
      if (fs::path(f).filename() != fs::path(f) || f.find("..") != std::string::npos)
        throw FormatError((d / "model.safetensors.index.json").string(), "json", 0, "shard name '" + f + "' leaves the folder");
      files.insert(f);
    }
    for (const auto& f : files) shard_paths.push_back(d / f);
  } else if (fs::exists(d / "model.safetensors")) {
    shard_paths.push_back(d / "model.safetensors");
  } else {
    throw Error(dir + ": no model.safetensors or model.safetensors.index.json");
  }

  std::set<std::string> seen;
  for (const auto& sp : shard_paths) check_input_file(sp.string(), dir);  // all before the first is read
  for (const auto& sp : shard_paths) {
    auto shard = std::make_shared<SafetensorsFile>(SafetensorsFile::open(sp.string()));
    src.keepalive.push_back(shard);
    for (const SafetensorsTensor& t : shard->tensors()) {
      auto [name, entry] = gguf_name(arch, t.name, sp.string());
      if (name.empty()) continue;
      const bool plus_one = arch.hf_norm_plus_one && entry->rms_weight();
      if (name == "output.weight" && hp.tied_output) continue;  // some exports save the tied copy too
      if (!seen.insert(name).second) throw FormatError(sp.string(), "tensor data", 0, "tensor '" + t.name + "' appears in two shards");
      P64TensorSource s;
      s.name = name;
      s.dtype = t.dtype;
      s.n_dims = static_cast<uint32_t>(t.shape.size());
      for (size_t i = 0; i < t.shape.size(); ++i) s.ne[i] = t.shape[t.shape.size() - 1 - i];  // PyTorch -> GGML order
      const bool is_q = arch.hf_permute_qk && name.find(".attn_q.weight") != std::string::npos;
      const bool is_k = arch.hf_permute_qk && name.find(".attn_k.weight") != std::string::npos;
      const SafetensorsTensor* tp = &t;
      if (is_q || is_k) {
        const int64_t heads = is_q ? hp.n_head : hp.n_head_kv;
        if (s.n_dims != 2 || s.ne[1] != heads * hp.head_dim)
          throw FormatError(sp.string(), "tensor data", 0, "tensor '" + t.name + "' has " + std::to_string(s.ne[1]) +
                                                                  " rows, expected " + std::to_string(heads * hp.head_dim));
        auto perm = std::make_shared<std::vector<int64_t>>(hf_rope_row_permutation(heads, hp.head_dim));
        const uint64_t row_bytes = tp->bytes / static_cast<uint64_t>(s.ne[1]);
        s.produce = [tp, perm, row_bytes, shard](uint8_t* dst, uint64_t bytes) {
          for (size_t r = 0; r < perm->size(); ++r)
            std::memcpy(dst + r * row_bytes, tp->data + static_cast<uint64_t>((*perm)[r]) * row_bytes, row_bytes);
        };
      } else if (s.n_dims == 1 && (t.dtype != DType::F32 || plus_one)) {
        // Norm weights and biases are F32 in every P64 (the decode profile requires it); a
        // Gemma norm weight becomes the 1 + w its GGUF holds, added in float as transformers does.
        const DType from = t.dtype;
        s.dtype = DType::F32;
        const int64_t n = s.ne[0];
        s.produce = [tp, from, n, plus_one, shard](uint8_t* dst, uint64_t) {
          float* w = reinterpret_cast<float*>(dst);
          dequantize_row(from, tp->data, w, n);
          if (plus_one)
            for (int64_t i = 0; i < n; ++i) w[i] = 1.0f + w[i];
        };
      } else {
        s.data = t.data;
      }
      src.tensors.push_back(std::move(s));
    }
  }

  if (!seen.count("output.weight")) src.hparams.tied_output = true;

  const fs::path tok_path = tokenizer_override.empty() ? d / "tokenizer.json" : fs::path(tokenizer_override);
  if (!fs::exists(tok_path)) throw Error(dir + ": no tokenizer.json (give one with --tokenizer)");
  check_input_file(tok_path.string(), tokenizer_override.empty() ? dir : "");
  // vocab_size is the embedding's row count; checked before the vocabulary is padded up to it.
  const auto emb = std::find_if(src.tensors.begin(), src.tensors.end(), [](const P64TensorSource& t) { return t.name == "token_embd.weight"; });
  if (emb == src.tensors.end()) throw Error(dir + ": the checkpoint has no model.embed_tokens.weight");
  if (emb->n_dims != 2 || emb->ne[1] != hp.n_vocab)
    throw Error(config_path.string() + ": vocab_size " + std::to_string(hp.n_vocab) + " but model.embed_tokens.weight has " +
                std::to_string(emb->ne[1]) + " rows");
  src.vocab = read_hf_tokenizer_json(tok_path.string());
  if (src.vocab.size() > hp.n_vocab)
    throw FormatError(tok_path.string(), "tokenizer", 0, std::to_string(src.vocab.size()) + " tokens but config vocab_size is " + std::to_string(hp.n_vocab));
  // Ids the tokenizer leaves unassigned (gaps) and the padding up to vocab_size.
  for (size_t i = 0; i < src.vocab.tokens.size(); ++i)
    if (src.vocab.tokens[i].empty()) src.vocab.tokens[i] = "[PAD" + std::to_string(i) + "]";
  while (src.vocab.tokens.size() < hp.n_vocab) {
    const size_t i = src.vocab.tokens.size();
    src.vocab.tokens.push_back("[PAD" + std::to_string(i) + "]");
    if (!src.vocab.types.empty()) src.vocab.types.push_back(static_cast<int32_t>(TokenType::Unused));
    if (!src.vocab.scores.empty()) src.vocab.scores.push_back(-1e9f);
  }
  return src;
}

}  // namespace p64
