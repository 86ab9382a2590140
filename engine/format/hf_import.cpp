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
#include "engine/model/hf_tokenizer_json.h"
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
  for (std::string_view flag : arch->hf_flags_off) {
    const std::string key(flag);
    if (c.contains(key) && !c[key].is_null() && !(c[key].is_boolean() && !c[key].get<bool>()))
      fail(key, "is " + c[key].dump() + "; a " + model_type + " model with it is not supported");
  }
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
  hp.n_ctx_train = u32(k.n_ctx_train, 0);
  hp.rms_eps = f32(k.rms_eps, 1e-6f);
  // transformers 5 writes rope_theta and the scaling block together, as rope_parameters.
  const char* rope_block = c.contains("rope_scaling") && c["rope_scaling"].is_object()         ? "rope_scaling"
                           : c.contains("rope_parameters") && c["rope_parameters"].is_object() ? "rope_parameters"
                                                                                                : nullptr;
  float rope_theta = 10000.0f;
  if (rope_block && c[rope_block].contains("rope_theta")) {
    if (!c[rope_block]["rope_theta"].is_number()) fail(std::string(rope_block) + ".rope_theta", "not a number");
    rope_theta = c[rope_block]["rope_theta"].get<float>();
  }
  hp.rope_base = f32(k.rope_base, rope_theta);
  hp.tied_output = c.value("tie_word_embeddings", false);
  // transformers 5 names each layer's attention; a sliding-window layer is not implemented.
  if (c.contains("layer_types") && c["layer_types"].is_array())
    for (const json& t : c["layer_types"])
      if (!t.is_string() || t.get<std::string>() != "full_attention")
        fail("layer_types", "a layer of type " + t.dump() + " is not supported (full_attention only)");
  if (rope_block) {
    const json& rs = c[rope_block];
    std::string type = rs.value("rope_type", rs.value("type", ""));
    auto rf = [&](const char* k, float d) { return rs.contains(k) && rs[k].is_number() ? rs[k].get<float>() : d; };
    RopeScaling& s = hp.rope_scaling;
    if (type == "llama3") {
      s.type = RopeScalingType::Llama3;
      s.factor = rf("factor", 8.0f);
      s.low_freq_factor = rf("low_freq_factor", 1.0f);
      s.high_freq_factor = rf("high_freq_factor", 4.0f);
      const float original = rf("original_max_position_embeddings", 8192.0f);
      if (!(original >= 1.0f && original <= 1e9f)) fail(rope_block, "original_max_position_embeddings is out of range");
      s.original_context = static_cast<uint32_t>(original);
    } else if (type == "linear") {
      s.type = RopeScalingType::Linear;
      s.factor = rf("factor", 1.0f);
    } else if (type != "default" && !type.empty()) {
      fail(rope_block, "type '" + type + "' is not supported (llama3, linear)");
    }
  }
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

// HF tensor name -> GGUF name by the architecture's table; "" to skip (RoPE caches); throws
// for names the table does not have.
std::string gguf_name(const Architecture& arch, const std::string& hf, const std::string& path) {
  for (const ArchTensor& t : arch.globals)
    if (hf == t.hf) return std::string(t.gguf);
  static const std::regex kLayerRe(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(hf, m, kLayerRe)) {
    const std::string inner = m[2].str();
    if (inner == "self_attn.rotary_emb.inv_freq") return "";
    for (const ArchTensor& t : arch.block)
      if (inner == t.hf) return "blk." + m[1].str() + "." + std::string(t.gguf);
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

SourceModel load_hf_directory(const std::string& dir, const std::string& tokenizer_override) {
  const fs::path d(dir);
  SourceModel src;
  src.kind = "hf";
  src.path = dir;
  const fs::path config_path = d / "config.json";
  if (!fs::exists(config_path)) throw Error(dir + ": no config.json (not a Hugging Face model folder)");
  check_input_file(config_path.string(), dir);
  try {
    const json config = read_json(config_path);
    if (!config.is_object()) throw FormatError(config_path.string(), "config", 0, "not a JSON object");
    src.hparams = hf_hparams(config, config_path.string());
  } catch (const json::exception& e) {  // a field of the wrong type the checks above did not expect
    throw FormatError(config_path.string(), "config", 0, std::string("a field has the wrong type: ") + e.what());
  }
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
      if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
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
      std::string name = gguf_name(arch, t.name, sp.string());
      if (name.empty()) continue;
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
      } else if (s.n_dims == 1 && t.dtype != DType::F32) {
        // Norm weights and biases are F32 in every P64 (the decode profile requires it).
        const DType from = t.dtype;
        s.dtype = DType::F32;
        const int64_t n = s.ne[0];
        s.produce = [tp, from, n, shard](uint8_t* dst, uint64_t) {
          dequantize_row(from, tp->data, reinterpret_cast<float*>(dst), n);
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
