#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/vocab.h"

namespace p64 {

// Text <-> token ids, exactly as the model's own tokenizer does it. Built from a Vocabulary
// (it keeps its own copy); encode/decode are const and safe to call from several threads.
class Tokenizer {
 public:
  // SentencePiece or byte-level BPE by vocab.kind. Throws p64::Error for an empty vocabulary,
  // an unknown pre-tokenizer name or special ids outside the vocabulary.
  static std::unique_ptr<Tokenizer> create(const Vocabulary& vocab);
  // The same, with `source` (the model's file) starting the message of an error: "m.gguf:
  // unknown pre-tokenizer ...".
  static std::unique_ptr<Tokenizer> create(const Vocabulary& vocab, const std::string& source);
  virtual ~Tokenizer();

  // add_special: BOS (and EOS) as the vocabulary asks (add_bos / add_eos).
  // parse_special: text such as "<|eot_id|>" becomes that control token; when false such
  // text is tokenized as plain text (user-defined tokens are still matched, as in HF and
  // llama.cpp).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes one token stands for: SentencePiece U+2581 becomes a space, <0xNN> one byte,
  // byte-level characters their bytes. Control tokens (BOS, <|eot_id|> ...) give "" — use
  // token_piece() to show them. The bytes of one token need not be valid UTF-8 on their own.
  std::string token_text(int32_t id) const;
  // The token's string as the vocabulary stores it ("<|eot_id|>", "▁the", "Ġthe").
  const std::string& token_piece(int32_t id) const;
  // The concatenated bytes of ids, with malformed UTF-8 replaced by U+FFFD.
  std::string decode(std::span<const int32_t> ids) const;

  // End of generation: eos, eot and the end-of-turn controls of the common families
  // (<|eot_id|>, <|eom_id|>, <|im_end|>, <|end_of_text|>, <|endoftext|>, <|end|>, <end_of_turn>).
  bool is_end_of_generation(int32_t id) const;
  const std::vector<int32_t>& end_of_generation_ids() const { return eog_ids_; }

  int32_t bos() const { return vocab_.bos_id; }
  int32_t eos() const { return vocab_.eos_id; }
  int32_t eot() const { return vocab_.eot_id; }
  size_t n_vocab() const { return vocab_.tokens.size(); }
  TokenizerKind kind() const { return vocab_.kind; }
  const Vocabulary& vocabulary() const { return vocab_; }
  // The id of a token string as stored, or -1.
  int32_t find_piece(std::string_view piece) const;
  bool is_valid(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < vocab_.tokens.size(); }

 protected:
  explicit Tokenizer(const Vocabulary& vocab);
  // Tokenizes one run of plain text (no special tokens in it). `after_special` is true at
  // the start of the text and right after a special token (SentencePiece's dummy prefix).
  virtual void encode_plain(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;
  virtual std::string decode_token(int32_t id) const = 0;

  Vocabulary vocab_;
  std::unordered_map<std::string, int32_t> piece_to_id_;

 private:
  void index_specials();
  std::vector<int32_t> specials_;      // Control / UserDefined / Unknown ids, longest text first
  bool special_lead_[256] = {};        // first bytes of those texts: most positions are skipped at once
  std::vector<int32_t> eog_ids_;
};

// Turns a stream of token ids into text chunks that are always whole UTF-8: bytes of a
// character split across tokens (<0xE2><0x96><0x81>, or byte-level pieces) are held back
// until the character is complete.
class StreamDecoder {
 public:
  // strip_leading_space: drop one leading space of the first text (SentencePiece's dummy
  // prefix, the way llama2.c prints after BOS).
  explicit StreamDecoder(const Tokenizer& tokenizer, bool strip_leading_space = false);
  // Text ready to show after this token (may be empty while a character is incomplete).
  std::string push(int32_t id);
  // What is still held at the end of a stream; a sequence that never completed becomes U+FFFD.
  std::string flush();
  void reset();

 private:
  const Tokenizer& tokenizer_;
  bool strip_leading_space_;
  bool started_ = false;
  std::string pending_;
};

}  // namespace p64
