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

// Poro, BLOOM and GPT-3 Finnish: a word is what runs up to whitespace or one of these marks
// (the parentheses and the bar are inside the class, as the models' tokenizer.json has them).
const char* const kPoro = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
// Mistral's Tekken (Mistral Nemo): words split at a change from lower to upper case, single digits.
const char* const kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// GPT-4o (tiktoken's o200k_base): Tekken's case split with the contractions kept on the word,
// digits in threes.
const char* const kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// ChatGLM-4: Llama 3's expression with the contractions' case spelled out per letter.
const char* const kChatGlm4 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek V3 (and R1): a punctuation mark may lead an ASCII word; letters with their marks.
const char* const kDeepseekV3 =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

struct PreTokenizerSpec {
  std::vector<const char*> patterns;
  // A word that is itself a token is taken as that token, whatever the merges would make of it
  // (tokenizer.json "ignore_merges": true; llama.cpp does it for Llama 3 and Tekken).
  bool ignore_merges = false;
};

const std::map<std::string, PreTokenizerSpec>& pattern_table() {
  static const std::map<std::string, PreTokenizerSpec> table = {
      {"llama-bpe", {{kLlama3}, true}},
      // DBRX and Smaug: Llama 3's expression, merges applied to every word.
      {"dbrx", {{kLlama3}}},
      {"gpt-2", {{kGpt2}}},
      {"qwen2", {{kQwen2}}},
      // SmolLM/StarCoder: digits split one by one (HF Digits(individual_digits)), then GPT-2's.
      {"smollm", {{R"(\p{N})", kGpt2}}},
      // DeepSeek Coder: line breaks alone, letters and punctuation runs each with one leading
      // space, CJK and Hangul runs, single digits.
      {"deepseek-coder", {{R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N})"}}},
      // Falcon: punctuation runs (the backtick among them), GPT-2's words, then digits in threes.
      {"falcon", {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"}}},
      {"poro", {{kPoro}}},
      {"viking", {{kPoro, R"(\p{N})"}}},
      {"chatglm-bpe", {{kChatGlm4}}},
      {"tekken", {{kTekken}, true}},
      // DeepSeek V3: digits in threes, CJK and kana runs, then its word expression.
      {"deepseek-v3", {{R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)", kDeepseekV3}}},
      // Chameleon: its sentinel and image tokens, tabs, newlines and runs of two or four spaces,
      // single digits, single punctuation marks, then GPT-2's words.
      {"chameleon",
       {{R"(<sentinel:[0-9]+>)", R"((IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z)", R"(([\t\n]|    |  ))", R"(\p{N})",
         R"([\p{P}!-/:-@\[-`{-~])", kGpt2}}},
      {"gpt-4o", {{kGpt4o}}},
      // llama.cpp's fallback for BPE vocabularies without a known pre-tokenizer.
      {"default", {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"}}},
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
      // The names llama.cpp's converter writes for the same expressions.
      {"phi-2", "gpt-2"},         {"roberta-bpe", "gpt-2"},  {"exaone", "smollm"},
      {"minerva-7b", "smollm"},   {"dbrx", "dbrx"},          {"smaug-bpe", "dbrx"},
      {"deepseek-coder", "deepseek-coder"}, {"falcon", "falcon"}, {"poro-chat", "poro"},
      {"poro", "poro"},           {"bloom", "poro"},         {"gpt3-finnish", "poro"},
      {"viking", "viking"},       {"chatglm-bpe", "chatglm-bpe"}, {"tekken", "tekken"},
      {"gpt-4o", "gpt-4o"},       {"deepseek-v3", "deepseek-v3"}, {"chameleon", "chameleon"},
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

std::string PreTokenizer::known_names() {
  std::string s;
  for (const auto& [alias, name] : alias_table())
    if (!alias.empty()) s += (s.empty() ? "" : ", ") + alias;
  return s;
}

std::string PreTokenizer::canonical_name(const std::string& pre) {
  auto it = alias_table().find(pre);
  return it == alias_table().end() ? std::string() : it->second;
}

std::unique_ptr<PreTokenizer> PreTokenizer::for_name(const std::string& pre) {
  const std::string name = canonical_name(pre);
  if (name.empty())
    throw Error("unknown pre-tokenizer \"" + pre + "\" (known: " + known_names() + ")");
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  p->name_ = name;
  const PreTokenizerSpec& spec = pattern_table().at(name);
  p->ignore_merges_ = spec.ignore_merges;
  for (const char* source : spec.patterns) {
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
