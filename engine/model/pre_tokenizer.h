#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

// Splits text into the words a byte-level BPE merges within, by the regular expressions of
// the model's own pre-tokenizer (GGUF tokenizer.ggml.pre / tokenizer.json pre_tokenizer).
// The expressions run in PCRE2 with UTF and UCP, so \p{L}, \p{N} and \s mean what they mean
// in the tokenizers that trained the model. Several expressions apply in sequence, each to
// the pieces the previous one produced; text between matches is kept as pieces of its own.
class PreTokenizer {
 public:
  // Known names (GGUF tokenizer.ggml.pre as llama.cpp's converter writes it): llama-bpe
  // (aliases llama3, llama-v3), dbrx (smaug-bpe), smollm (starcoder, refact, command-r,
  // codeshell, exaone, minerva-7b), gpt-2 (gpt2, mpt, olmo, jais, phi-2, roberta-bpe), qwen2
  // (stablelm2, deepseek-r1-qwen), deepseek-coder, falcon, poro (poro-chat, bloom,
  // gpt3-finnish), viking, chatglm-bpe, tekken, gpt-4o, deepseek-v3, chameleon, default ("" too).
  // Throws p64::Error listing these for any other name.
  static std::unique_ptr<PreTokenizer> for_name(const std::string& pre);
  // The canonical name an alias resolves to, or "" when unknown.
  static std::string canonical_name(const std::string& pre);
  // Every name for_name takes, comma-separated: for error messages.
  static std::string known_names();

  ~PreTokenizer();
  std::vector<std::string_view> split(std::string_view text) const;
  const std::string& name() const { return name_; }
  // Whether a word that is itself a token is taken whole, before any merge (Llama 3, Tekken).
  bool ignore_merges() const { return ignore_merges_; }

 private:
  struct Pattern;
  PreTokenizer() = default;
  std::string name_;
  bool ignore_merges_ = false;
  std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace p64
