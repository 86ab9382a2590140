#include "engine/format/hf_tokenizer_json.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/format/model_limits.h"
#include "engine/model/pre_tokenizer.h"

namespace p64 {
namespace {

using nlohmann::json;

json parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw FormatError(path, "json", e.byte, e.what());
  } catch (const json::exception& e) {  // e.g. a number too large for any C++ type
    throw FormatError(path, "json", 0, e.what());
  }
}

// "bos_token": "<s>" or {"content": "<s>", ...}
std::string token_content(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::string();
}

std::string regex_of(const json& split) {
  if (!split.contains("pattern")) return std::string();
  const json& p = split["pattern"];
  if (p.contains("Regex") && p["Regex"].is_string()) return p["Regex"].get<std::string>();
  return std::string();
}

// The pre-tokenizer name for what tokenizer.json describes, by its regex and parts.
std::string pre_name_of(const json& pt) {
  if (pt.is_null()) return "default";
  const std::string type = pt.value("type", "");
  if (type == "ByteLevel") return pt.value("use_regex", true) ? "gpt-2" : "default";
  if (type == "Sequence" && pt.contains("pretokenizers")) {
    bool digits = false, byte_level_regex = false;
    for (const auto& p : pt["pretokenizers"]) {
      const std::string t = p.value("type", "");
      if (t == "Split") {
        const std::string re = regex_of(p);
        if (re.find("\\p{N}{1,3}") != std::string::npos && re.find("(?i:'s") != std::string::npos) return "llama-bpe";
        if (re.find("(?i:'s") != std::string::npos && re.find("\\p{N}|") != std::string::npos) return "qwen2";
      } else if (t == "Digits" && p.value("individual_digits", false)) {
        digits = true;
      } else if (t == "ByteLevel" && p.value("use_regex", true)) {
        byte_level_regex = true;
      }
    }
    if (digits && byte_level_regex) return "smollm";
    if (byte_level_regex) return "gpt-2";
  }
  return "default";
}

bool mentions(const json& j, const std::string& s) { return !j.is_null() && j.dump().find(s) != std::string::npos; }

}  // namespace

static Vocabulary read_checked_tokenizer_json(const std::string& path);

Vocabulary read_hf_tokenizer_json(const std::string& path) {
  // The reader checks the types of the fields it relies on; anything it missed (a string
  // where an object was meant, deep inside) still becomes a refusal naming the file.
  try {
    return read_checked_tokenizer_json(path);
  } catch (const json::exception& e) {
    throw FormatError(path, "json", 0, std::string("a field has the wrong type: ") + e.what());
  }
}

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& field, const std::string& why) {
  throw FormatError(path, field, 0, why);
}

// The vocab and the added tokens placed by id (bounded, and dense enough), then the merges.
void read_tokens_and_merges(const json& j, const json& model, Vocabulary& v, const std::string& path) {
  size_t placed = 0;
  auto place = [&](int64_t id, const std::string& text, TokenType t) {
    if (id < 0 || static_cast<uint64_t>(id) >= model_limit(ModelQuantity::Vocab))
      refuse(path, "model.vocab", "token id " + std::to_string(id) + " is outside the limit of " +
                                      std::to_string(model_limit(ModelQuantity::Vocab)) + " vocabulary tokens");
    ++placed;
    if (static_cast<size_t>(id) >= v.tokens.size()) {
      v.tokens.resize(static_cast<size_t>(id) + 1);
      v.types.resize(static_cast<size_t>(id) + 1, static_cast<int32_t>(TokenType::Unused));
    }
    v.tokens[static_cast<size_t>(id)] = text;
    v.types[static_cast<size_t>(id)] = static_cast<int32_t>(t);
  };
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    if (!it.value().is_number_integer()) refuse(path, "model.vocab", "id of \"" + it.key() + "\" is not an integer");
    place(it.value().get<int64_t>(), it.key(), TokenType::Normal);
  }
  if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
    for (const auto& a : j["added_tokens"]) {
      if (!a.contains("id") || !a.contains("content")) refuse(path, "added_tokens", "an entry without id or content");
      // A huge integer literal parses as a float; converting that to int64 would be undefined.
      if (!a["id"].is_number_integer()) refuse(path, "added_tokens", "an id that is not an integer");
      place(a["id"].get<int64_t>(), a["content"].get<std::string>(),
            a.value("special", false) ? TokenType::Control : TokenType::UserDefined);
    }
  }
  if (v.tokens.empty()) refuse(path, "model.vocab", "no tokens");
  // Real vocabularies number their tokens densely; a few ids far apart would make a small file
  // allocate a table of millions of empty tokens (fuzz_vocab_loader: 11 tokens, ids to 7888888).
  if (v.tokens.size() > 2 * placed + 65536)
    refuse(path, "model.vocab", std::to_string(placed) + " tokens with ids up to " + std::to_string(v.tokens.size() - 1) +
                                    ": the ids are too sparse for a vocabulary");

  if (model.contains("merges") && model["merges"].is_array()) {
    v.merges.reserve(model["merges"].size());
    for (const auto& m : model["merges"]) {
      if (m.is_string())
        v.merges.push_back(m.get<std::string>());
      else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
        v.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
      else
        refuse(path, "model.merges", "entry " + std::to_string(v.merges.size()) + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
}

// SentencePiece exported as BPE: the merge ranks stand in for the piece scores (an earlier merge
// is a higher score), <0xNN> pieces are the byte fallback, the space prefix as the normalizer or
// pre-tokenizer says. Byte-level BPE: its pre-tokenizer's name, no space prefix, no BOS yet.
void apply_tokenizer_kind(const json& j, Vocabulary& v) {
  if (v.kind != TokenizerKind::SentencePiece) {
    v.pre = pre_name_of(j.value("pre_tokenizer", json()));
    v.add_space_prefix = false;
    v.add_bos = false;
    return;
  }
  v.scores.assign(v.tokens.size(), -1e9f);
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < v.tokens.size(); ++i) id_of.emplace(v.tokens[i], static_cast<int32_t>(i));
  for (size_t r = 0; r < v.merges.size(); ++r) {
    std::string joined = v.merges[r];
    const size_t sp = joined.find(' ');
    if (sp == std::string::npos) continue;
    joined.erase(sp, 1);
    auto it = id_of.find(joined);
    if (it != id_of.end() && v.scores[static_cast<size_t>(it->second)] < -static_cast<float>(r))
      v.scores[static_cast<size_t>(it->second)] = -static_cast<float>(r);
  }
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    const std::string& t = v.tokens[i];
    if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && v.types[i] == static_cast<int32_t>(TokenType::Normal))
      v.types[i] = static_cast<int32_t>(TokenType::Byte);
  }
  v.add_space_prefix = mentions(j.value("normalizer", json()), "Prepend") ||
                       (mentions(j.value("pre_tokenizer", json()), "Metaspace") &&
                        !mentions(j.value("pre_tokenizer", json()), "\"never\""));
  v.pre = "default";
}

int32_t find_token(const Vocabulary& v, const std::string& s) {
  if (s.empty()) return -1;
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.tokens[i] == s) return static_cast<int32_t>(i);
  return -1;
}

int32_t first_present(const Vocabulary& v, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (int32_t id = find_token(v, n); id >= 0) return id;
  return -1;
}

// BOS, EOS, UNK, PAD, EOT and the chat template: defaults from the file alone (BOS when the
// post-processor puts one in front), then what tokenizer_config.json beside it chose.
void read_special_tokens(const json& j, const json& model, Vocabulary& v, const std::string& path) {
  const json post = j.value("post_processor", json());
  if (post.is_object() && post.contains("single") && post["single"].is_array() && !post["single"].empty() &&
      post["single"][0].contains("SpecialToken")) {
    v.bos_id = find_token(v, post["single"][0]["SpecialToken"].value("id", ""));
    v.add_bos = v.bos_id >= 0;
  }
  if (v.kind == TokenizerKind::SentencePiece) {
    if (v.bos_id < 0) v.bos_id = find_token(v, "<s>");
    v.add_bos = v.bos_id >= 0;
  }
  v.eos_id = first_present(v, {"<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>", "<|im_end|>"});
  v.unk_id = model.contains("unk_token") ? find_token(v, token_content(model["unk_token"])) : -1;

  const auto cfg_path = std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(cfg_path)) {
    const json cfg = parse_file(cfg_path.string());
    if (cfg.contains("bos_token"))
      if (int32_t id = find_token(v, token_content(cfg["bos_token"])); id >= 0) v.bos_id = id;
    if (cfg.contains("eos_token"))
      if (int32_t id = find_token(v, token_content(cfg["eos_token"])); id >= 0) v.eos_id = id;
    if (cfg.contains("pad_token")) v.pad_id = find_token(v, token_content(cfg["pad_token"]));
    if (cfg.contains("add_bos_token") && cfg["add_bos_token"].is_boolean()) v.add_bos = cfg["add_bos_token"].get<bool>();
    if (cfg.contains("add_eos_token") && cfg["add_eos_token"].is_boolean()) v.add_eos = cfg["add_eos_token"].get<bool>();
    if (cfg.contains("chat_template")) {
      const json& ct = cfg["chat_template"];
      if (ct.is_string()) {
        v.chat_template = ct.get<std::string>();
      } else if (ct.is_array()) {  // [{"name": "default", "template": "..."}, ...]
        for (const auto& e : ct)
          if (e.value("name", "") == "default") v.chat_template = e.value("template", "");
      }
    }
  }
  v.eot_id = first_present(v, {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>"});
  if (v.eot_id == v.eos_id) v.eot_id = -1;
  if (v.add_bos && v.bos_id < 0) v.add_bos = false;
}

}  // namespace

Vocabulary read_checked_tokenizer_json(const std::string& path) {
  const json j = parse_file(path);
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    refuse(path, "model", "no \"model\" object (not a tokenizer.json)");
  const json& model = j["model"];
  const std::string type = model.value("type", "BPE");
  if (type != "BPE") refuse(path, "model.type", "\"" + type + "\" is not supported (only BPE)");
  if (!model.contains("vocab") || !model["vocab"].is_object()) refuse(path, "model.vocab", "missing or not an object");
  Vocabulary v;
  v.kind = model.value("byte_fallback", false) ? TokenizerKind::SentencePiece : TokenizerKind::ByteLevelBPE;
  read_tokens_and_merges(j, model, v, path);
  apply_tokenizer_kind(j, v);
  read_special_tokens(j, model, v, path);
  return v;
}

}  // namespace p64
