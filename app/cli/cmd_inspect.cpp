// p64 inspect: what a model file holds (.p64, .gguf, llama2.c .bin, Hugging Face folder):
// header, hparams, tokenizer summary, tensors, and for .p64 the sections, schedule and manifold.
#include <cstdio>
#include <iterator>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/model/architecture.h"
#include "engine/format/llama2c_reader.h"
#include "engine/format/p64_reader.h"
#include "engine/format/source_model.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

using nlohmann::ordered_json;

struct InspectArgs {
  std::string file;
  std::string tokenizer;
  bool json = false;
  bool all_metadata = false;
};

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

ordered_json shape_of(uint32_t n_dims, const int64_t* ne) {
  ordered_json s = ordered_json::array();
  for (uint32_t d = 0; d < n_dims; ++d) s.push_back(ne[d]);
  return s;
}

ordered_json hparams_json(const HParams& hp) {
  static const char* const kScaling[] = {"none", "linear", "llama3", "longrope"};
  ordered_json j;
  j["arch"] = hp.arch;
  j["name"] = hp.name;
  j["n_embd"] = hp.n_embd;
  j["n_layer"] = hp.n_layer;
  j["n_head"] = hp.n_head;
  j["n_head_kv"] = hp.n_head_kv;
  j["head_dim"] = hp.head_dim;
  j["n_ff"] = hp.n_ff;
  j["n_vocab"] = hp.n_vocab;
  j["n_ctx_train"] = hp.n_ctx_train;
  j["rope_dim"] = hp.rope_dim;
  j["rope_base"] = hp.rope_base;
  j["rms_eps"] = hp.rms_eps;
  j["rope_scaling"] = kScaling[static_cast<uint32_t>(hp.rope_scaling.type) % std::size(kScaling)];
  if (hp.rope_scaling.type != RopeScalingType::None) j["rope_scaling_factor"] = hp.rope_scaling.factor;
  j["rope_freq_factors"] = hp.rope_freq_factors.size();
  j["rope_layout"] = hp.rope_layout == RopeLayout::Adjacent ? "adjacent" : "halves";
  j["tied_output"] = hp.tied_output;
  j["file_type"] = hp.file_type;
  // The keys of gemma's branches and sliding windows, where the model has them.
  if (hp.sliding_window) {
    j["sliding_window"] = hp.sliding_window;
    j["sliding_window_pattern"] = hp.sliding_window_pattern;
  }
  if (hp.rope_base_local != 0.0f) j["rope_base_local"] = hp.rope_base_local;
  if (hp.attn_softcap != 0.0f) j["attn_softcap"] = hp.attn_softcap;
  if (hp.final_softcap != 0.0f) j["final_softcap"] = hp.final_softcap;
  if (hp.query_pre_attn_scalar != 0.0f) j["query_pre_attn_scalar"] = hp.query_pre_attn_scalar;
  // LongRope (phi3): the context its short factors serve, and its attention factor.
  if (hp.rope_scaling.type == RopeScalingType::LongRope) {
    j["rope_original_context"] = hp.rope_scaling.original_context;
    j["rope_attn_factor"] = hp.rope_attn_factor;
  }
  return j;
}

ordered_json vocab_json(const Vocabulary& v) {
  ordered_json j;
  j["kind"] = v.kind == TokenizerKind::SentencePiece ? "SentencePiece" : "ByteLevelBPE";
  j["pre"] = v.pre;
  j["tokens"] = v.size();
  j["scores"] = v.scores.size();
  j["merges"] = v.merges.size();
  size_t counts[7] = {};
  for (int32_t t : v.types)
    if (t >= 0 && t < 7) ++counts[t];
  j["byte_tokens"] = counts[static_cast<int>(TokenType::Byte)];
  j["control_tokens"] = counts[static_cast<int>(TokenType::Control)];
  auto id = [&](int32_t i) -> ordered_json {
    if (i < 0 || static_cast<size_t>(i) >= v.size()) return nullptr;
    return ordered_json{{"id", i}, {"text", v.tokens[static_cast<size_t>(i)]}};
  };
  j["bos"] = id(v.bos_id);
  j["eos"] = id(v.eos_id);
  j["eot"] = id(v.eot_id);
  j["unk"] = id(v.unk_id);
  j["pad"] = id(v.pad_id);
  j["add_bos"] = v.add_bos;
  j["add_eos"] = v.add_eos;
  j["add_space_prefix"] = v.add_space_prefix;
  j["chat_template_chars"] = v.chat_template.size();
  return j;
}

ordered_json inspect_p64_file(const std::string& path) {
  const P64Contents c = inspect_p64(path);
  ordered_json j;
  j["file"] = path;
  j["format"] = "p64";
  const P64Header& h = c.header;
  j["header"] = {{"version", h.version},         {"flags", p64_flags_text(h.flags)}, {"file_size", h.file_size},
                 {"data_offset", h.data_offset}, {"data_size", h.data_size},        {"sections", h.section_count},
                 {"header_crc32c", hex32(h.header_crc32c)}};
  ordered_json secs = ordered_json::array();
  for (const auto& s : c.sections)
    secs.push_back({{"section", std::string(p64_section_name(s.kind))}, {"offset", s.offset}, {"size", s.size},
                    {"count", s.count}, {"crc32c", hex32(s.crc32c)}});
  j["sections"] = secs;
  j["hparams"] = hparams_json(c.hparams);
  j["tokenizer"] = vocab_json(c.vocab);
  ordered_json ts = ordered_json::array();
  for (const auto& t : c.tensors)
    ts.push_back({{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape_of(t.n_dims, t.ne)},
                  {"offset", t.offset}, {"bytes", t.bytes}, {"crc32c", hex32(t.crc32c)}});
  j["tensors"] = ts;
  static const char* const kGroup[] = {"embedding", "layer", "head"};
  ordered_json sc = ordered_json::array();
  for (const auto& r : c.schedule)
    sc.push_back({{"group", kGroup[static_cast<uint32_t>(r.kind) % 3]}, {"layer", r.layer}, {"first_tensor", r.first_tensor},
                  {"tensors", r.n_tensors}, {"offset", r.offset}, {"bytes", r.bytes}});
  j["schedule"] = sc;
  ordered_json mf = ordered_json::array();
  for (const auto& m : c.manifold) {
    ordered_json row;
    row["id"] = m.id == kManifoldGlobalId ? ordered_json("global") : ordered_json(m.id);
    for (int i = 0; i < 10; ++i) row[kManifoldCoordinateNames[i]] = m.c[i];
    mf.push_back(row);
  }
  j["manifold"] = mf;
  return j;
}

ordered_json tensors_json(const std::vector<P64TensorSource>& tensors) {
  ordered_json ts = ordered_json::array();
  for (const auto& t : tensors)
    ts.push_back({{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape_of(t.n_dims, t.ne)}});
  return ts;
}

ordered_json inspect_gguf_file(const std::string& path, bool all_metadata) {
  const GgufFile g = GgufFile::open(path);
  ordered_json j;
  j["file"] = path;
  j["format"] = "gguf";
  j["header"] = {{"version", g.version()}, {"alignment", g.alignment()}, {"metadata_keys", g.metadata().size()},
                 {"tensors", g.tensors().size()}, {"data_offset", g.data_offset()}};
  ordered_json md;
  for (const auto& kv : g.metadata())
    md[kv.key] = std::string(gguf_type_name(kv.value.type)) + " " + kv.value.summary(all_metadata ? 1u << 30 : 4);
  j["metadata"] = md;
  if (g.find("tokenizer.ggml.model")) j["tokenizer"] = vocab_json(gguf_vocabulary(g));
  // Hyperparameters are read for the architectures the engine runs; a vocabulary-only file of
  // another family (gpt2, ...) is still shown, with its architecture named.
  const std::string arch = g.get_string_opt("general.architecture").value_or("llama");
  j["architecture"] = arch;
  if (find_architecture(arch) && g.find(arch + ".embedding_length")) j["hparams"] = hparams_json(gguf_hparams(g));
  ordered_json ts = ordered_json::array();
  for (const auto& t : g.tensors())
    ts.push_back({{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape_of(t.n_dims, t.ne)},
                  {"offset", g.data_offset() + t.offset}, {"bytes", t.bytes}});
  j["tensors"] = ts;
  return j;
}

ordered_json inspect_llama2c_file(const std::string& path, const std::string& tokenizer) {
  const Llama2cCheckpoint c = read_llama2c(path);
  ordered_json j;
  j["file"] = path;
  j["format"] = "llama2c";
  const int32_t* h = c.header;
  j["header"] = {{"dim", h[0]}, {"hidden_dim", h[1]}, {"n_layers", h[2]}, {"n_heads", h[3]}, {"n_kv_heads", h[4]},
                 {"vocab_size", h[5]}, {"seq_len", h[6]}, {"shared_classifier", c.shared_classifier}};
  j["hparams"] = hparams_json(c.hparams);
  if (!tokenizer.empty()) j["tokenizer"] = vocab_json(read_llama2c_tokenizer(tokenizer, c.hparams.n_vocab));
  ordered_json ts = ordered_json::array();
  for (const auto& t : c.tensors)
    ts.push_back({{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", shape_of(t.n_dims, t.ne)},
                  {"offset", static_cast<uint64_t>(t.data - c.map->data())}, {"bytes", t.bytes}});
  j["tensors"] = ts;
  return j;
}

ordered_json inspect_hf_folder(const std::string& path, const std::string& tokenizer) {
  const SourceModel s = load_source_model(path, tokenizer);
  ordered_json j;
  j["file"] = path;
  j["format"] = "hf";
  j["hparams"] = hparams_json(s.hparams);
  j["tokenizer"] = vocab_json(s.vocab);
  j["tensors"] = tensors_json(s.tensors);
  return j;
}

std::string cell(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + cell(v[i]);
    return s + "]";
  }
  if (v.is_object() && v.contains("id")) return cell(v["id"]) + " " + json_text(v["text"]);
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v.get<double>());
    return b;
  }
  return json_text(v);
}

// Objects as "key: value" lines, arrays of rows as aligned tables.
void print_text(const ordered_json& j) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const ordered_json& v = it.value();
    if (v.is_object()) {
      std::printf("%s:\n", it.key().c_str());
      for (auto f = v.begin(); f != v.end(); ++f) std::printf("  %-28s %s\n", f.key().c_str(), cell(f.value()).c_str());
    } else if (v.is_array() && !v.empty() && v[0].is_object()) {
      std::printf("%s (%zu):\n", it.key().c_str(), v.size());
      std::vector<std::string> keys;
      for (auto f = v[0].begin(); f != v[0].end(); ++f) keys.push_back(f.key());
      std::vector<size_t> width(keys.size());
      std::vector<std::vector<std::string>> rows;
      for (size_t k = 0; k < keys.size(); ++k) width[k] = keys[k].size();
      for (const auto& r : v) {
        std::vector<std::string> row;
        for (size_t k = 0; k < keys.size(); ++k) {
          row.push_back(r.contains(keys[k]) ? cell(r[keys[k]]) : "");
          width[k] = std::max(width[k], row.back().size());
        }
        rows.push_back(std::move(row));
      }
      auto line = [&](const std::vector<std::string>& cells) {
        std::string s = " ";
        for (size_t k = 0; k < cells.size(); ++k) s += " " + cells[k] + std::string(width[k] - cells[k].size(), ' ');
        std::printf("%s\n", s.c_str());
      };
      line(keys);
      for (const auto& r : rows) line(r);
    } else {
      std::printf("%s: %s\n", it.key().c_str(), cell(v).c_str());
    }
  }
}

void run_inspect(const InspectArgs& a) {
  const std::string kind = detect_model_format(a.file);
  ordered_json j;
  if (kind == "p64") j = inspect_p64_file(a.file);
  else if (kind == "gguf") j = inspect_gguf_file(a.file, a.all_metadata);
  else if (kind == "llama2c") j = inspect_llama2c_file(a.file, a.tokenizer);
  else if (kind == "hf") j = inspect_hf_folder(a.file, a.tokenizer);
  else throw Error(a.file + ": not a model this build reads (P64, GGUF, llama2.c checkpoint, Hugging Face folder)");
  if (a.json) std::cout << json_text(j, 2) << "\n";
  else print_text(j);
}

const CommandRegistration reg(11, [](CLI::App& root) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* c = root.add_subcommand("inspect", "Show what a .p64, .gguf, llama2.c .bin or HF folder holds");
  c->add_option("file", a->file, "model file or folder")->required();
  c->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer file to summarise with a .bin checkpoint")->capture_default_str();
  c->add_flag("--json", a->json, "print JSON instead of text")->capture_default_str();
  c->add_flag("--all-metadata", a->all_metadata, "GGUF: print whole metadata arrays, not a preview")->capture_default_str();
  c->callback([a] { run_inspect(*a); });
});

}  // namespace
}  // namespace p64::cli
