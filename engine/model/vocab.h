#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace p64 {

enum class TokenizerKind : uint32_t {
  SentencePiece = 0,  // GGUF tokenizer.ggml.model = "llama": score-driven merges, byte fallback
  ByteLevelBPE = 1,   // GGUF tokenizer.ggml.model = "gpt2": ranked merges over byte-level strings
};

// GGUF token types (tokenizer.ggml.token_type values).
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

// The vocabulary exactly as a model file carries it; tokenizers are built from this.
// Token strings are stored the way GGUF stores them: SentencePiece pieces with U+2581 for
// spaces and <0xNN> byte pieces; byte-level BPE tokens in GPT-2's byte-to-unicode alphabet.
struct Vocabulary {
  TokenizerKind kind = TokenizerKind::SentencePiece;
  std::string pre;                   // pre-tokenizer name: "llama-bpe", "smollm", "gpt-2", "qwen2", "default"
  std::vector<std::string> tokens;
  std::vector<float> scores;         // SentencePiece scores (may be empty for BPE)
  std::vector<int32_t> types;        // TokenType per token (empty means all Normal)
  std::vector<std::string> merges;   // "a b" pairs in rank order (BPE)
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t eot_id = -1;               // end of turn (<|eot_id|>, <|im_end|>) when distinct from eos
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  bool add_bos = true;
  bool add_eos = false;
  bool add_space_prefix = true;      // SentencePiece dummy-prefix rule
  std::string chat_template;         // tokenizer.chat_template (Jinja source, treated as data)

  size_t size() const { return tokens.size(); }
  TokenType type_of(int32_t id) const {
    return types.empty() ? TokenType::Normal : static_cast<TokenType>(types[static_cast<size_t>(id)]);
  }
};

}  // namespace p64
