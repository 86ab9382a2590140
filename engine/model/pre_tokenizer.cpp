#include "engine/model/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>

#include "engine/common/error.h"

namespace p64 {
namespace {

// The expressions of each pre-tokenizer, as the models' tokenizer.json files (and llama.cpp's
// table of them) give them. Several entries run in sequence.
const char* const kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::map<std::string, std::vector<const char*>>& pattern_table() {
  static const std::map<std::string, std::vector<const char*>> table = {
      {"llama-bpe", {kLlama3}},
      {"gpt-2", {kGpt2}},
      {"qwen2", {kQwen2}},
      // SmolLM/StarCoder: digits split one by one (HF Digits(individual_digits)), then GPT-2's.
      {"smollm", {R"(\p{N})", kGpt2}},
      // llama.cpp's fallback for BPE vocabularies without a known pre-tokenizer.
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"}},
  };
  return table;
}

const std::map<std::string, std::string>& alias_table() {
  static const std::map<std::string, std::string> aliases = {
      {"llama-bpe", "llama-bpe"}, {"llama3", "llama-bpe"},   {"llama-v3", "llama-bpe"},
      {"smollm", "smollm"},       {"starcoder", "smollm"},   {"refact", "smollm"},
      {"command-r", "smollm"},    {"codeshell", "smollm"},   {"gpt-2", "gpt-2"},
      {"gpt2", "gpt-2"},          {"mpt", "gpt-2"},          {"olmo", "gpt-2"},
      {"jais", "gpt-2"},          {"qwen2", "qwen2"},        {"stablelm2", "qwen2"},
      {"deepseek-r1-qwen", "qwen2"}, {"default", "default"}, {"", "default"},
  };
  return aliases;
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  ~Pattern() {
    if (code) pcre2_code_free(code);
  }
};

PreTokenizer::~PreTokenizer() = default;

std::string PreTokenizer::canonical_name(const std::string& pre) {
  auto it = alias_table().find(pre);
  return it == alias_table().end() ? std::string() : it->second;
}

std::unique_ptr<PreTokenizer> PreTokenizer::for_name(const std::string& pre) {
  const std::string name = canonical_name(pre);
  if (name.empty())
    throw Error("unknown pre-tokenizer \"" + pre +
                "\" (known: llama-bpe/llama3, smollm/starcoder, gpt-2/gpt2, qwen2/stablelm2, default)");
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  p->name_ = name;
  for (const char* source : pattern_table().at(name)) {
    int err = 0;
    PCRE2_SIZE err_at = 0;
    // UTF + UCP: \s, \p{L}, \d follow Unicode; MATCH_INVALID_UTF: stray bytes in the input
    // never make a match fail, they fall into the gaps and are kept as pieces.
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source), PCRE2_ZERO_TERMINATED,
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_at, nullptr);
    if (!code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw Error("pre-tokenizer " + name + ": regex does not compile at " + std::to_string(err_at) + ": " +
                  reinterpret_cast<const char*>(msg));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // a speed-up only: the interpreter is used when JIT is absent
    auto pat = std::make_unique<Pattern>();
    pat->code = code;
    p->patterns_.push_back(std::move(pat));
  }
  return p;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  for (const auto& pat : patterns_) {
    std::vector<std::string_view> next;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(pat->code, nullptr);
    if (!md) throw Error("pre-tokenizer: out of memory");
    for (std::string_view piece : pieces) {
      // Each piece is its own subject, so look-arounds never see past it (the pieces of an
      // earlier expression are final boundaries, as in HF's Sequence).
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t start = 0, gap = 0;
      while (start < piece.size()) {
        const int rc = pcre2_match(pat->code, subject, piece.size(), start, 0, md, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          pcre2_match_data_free(md);
          throw Error("pre-tokenizer " + name_ + ": match failed (PCRE2 error " + std::to_string(rc) + ")");
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (e == b) {  // an empty match cannot make progress; step one byte
          start = b + 1;
          continue;
        }
        if (b > gap) next.push_back(piece.substr(gap, b - gap));
        next.push_back(piece.substr(b, e - b));
        start = gap = e;
      }
      if (gap < piece.size()) next.push_back(piece.substr(gap));
    }
    pcre2_match_data_free(md);
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace p64
