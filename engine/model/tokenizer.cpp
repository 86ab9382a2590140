#include "engine/model/tokenizer.h"

#include <algorithm>

#include "engine/common/error.h"
#include "engine/model/tokenizer_kinds.h"
#include "engine/model/utf8.h"

namespace p64 {

std::unique_ptr<Tokenizer> Tokenizer::create(const Vocabulary& vocab, const std::string& source) {
  try {
    return create(vocab);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
}

std::unique_ptr<Tokenizer> Tokenizer::create(const Vocabulary& vocab) {
  if (vocab.tokens.empty()) throw Error("tokenizer: the vocabulary is empty");
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size())
    throw Error("tokenizer: " + std::to_string(vocab.types.size()) + " token types for " +
                std::to_string(vocab.tokens.size()) + " tokens");
  switch (vocab.kind) {
    case TokenizerKind::SentencePiece: return make_spm_tokenizer(vocab);
    case TokenizerKind::ByteLevelBPE: return make_bpe_tokenizer(vocab);
  }
  throw Error("tokenizer: unknown tokenizer kind " + std::to_string(static_cast<uint32_t>(vocab.kind)));
}

Tokenizer::Tokenizer(const Vocabulary& vocab) : vocab_(vocab) {
  const auto n = static_cast<int32_t>(vocab_.tokens.size());
  for (int32_t* id : {&vocab_.bos_id, &vocab_.eos_id, &vocab_.eot_id, &vocab_.unk_id, &vocab_.pad_id})
    if (*id >= n) throw Error("tokenizer: special token id " + std::to_string(*id) + " outside a vocabulary of " + std::to_string(n));
  piece_to_id_.reserve(vocab_.tokens.size());
  // The first id wins when a string repeats (some vocabularies pad with duplicates).
  for (int32_t i = 0; i < n; ++i) piece_to_id_.emplace(vocab_.tokens[static_cast<size_t>(i)], i);
  index_specials();
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::index_specials() {
  const auto n = static_cast<int32_t>(vocab_.tokens.size());
  for (int32_t i = 0; i < n; ++i) {
    const TokenType t = vocab_.type_of(i);
    if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) &&
        !vocab_.tokens[static_cast<size_t>(i)].empty())
      specials_.push_back(i);
  }
  for (int32_t id : specials_) special_lead_[static_cast<uint8_t>(vocab_.tokens[static_cast<size_t>(id)][0])] = true;
  // Longest first so that at one position "<|eot_id|>" wins over a shorter prefix of it.
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return vocab_.tokens[static_cast<size_t>(a)].size() > vocab_.tokens[static_cast<size_t>(b)].size();
  });

  for (int32_t id : {vocab_.eos_id, vocab_.eot_id})
    if (id >= 0) eog_ids_.push_back(id);
  static const char* const kEndMarkers[] = {"<|eot_id|>", "<|eom_id|>",  "<|im_end|>",    "<|end_of_text|>",
                                            "<|endoftext|>", "<|end|>", "<end_of_turn>", "<EOT>"};
  for (const char* m : kEndMarkers) {
    const int32_t id = find_piece(m);
    if (id >= 0 && vocab_.type_of(id) != TokenType::Normal) eog_ids_.push_back(id);
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
}

int32_t Tokenizer::find_piece(std::string_view piece) const {
  auto it = piece_to_id_.find(std::string(piece));
  return it == piece_to_id_.end() ? -1 : it->second;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos && vocab_.bos_id >= 0) out.push_back(vocab_.bos_id);

  // Split the text at special-token strings, leftmost first and longest at a position (the
  // rule of HF's added-vocabulary matcher). Without parse_special only user-defined tokens
  // are matched: control text such as "<|eot_id|>" in a user's message stays plain text.
  bool after_special = true;
  size_t plain_from = 0, pos = 0;
  while (pos < text.size()) {
    int32_t hit = -1;
    if (special_lead_[static_cast<uint8_t>(text[pos])])
    for (int32_t id : specials_) {
      if (!parse_special && vocab_.type_of(id) != TokenType::UserDefined) continue;
      const std::string& s = vocab_.tokens[static_cast<size_t>(id)];
      if (text.compare(pos, s.size(), s) == 0) {
        hit = id;
        break;
      }
    }
    if (hit < 0) {
      ++pos;
      continue;
    }
    if (pos > plain_from) {
      encode_plain(text.substr(plain_from, pos - plain_from), after_special, out);
    }
    out.push_back(hit);
    after_special = true;
    pos += vocab_.tokens[static_cast<size_t>(hit)].size();
    plain_from = pos;
  }
  if (plain_from < text.size()) encode_plain(text.substr(plain_from), after_special, out);

  if (add_special && vocab_.add_eos && vocab_.eos_id >= 0) out.push_back(vocab_.eos_id);
  return out;
}

std::string Tokenizer::token_text(int32_t id) const {
  if (!is_valid(id)) return std::string();
  if (vocab_.type_of(id) == TokenType::Control) return std::string();
  return decode_token(id);
}

const std::string& Tokenizer::token_piece(int32_t id) const {
  static const std::string none;
  return is_valid(id) ? vocab_.tokens[static_cast<size_t>(id)] : none;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string bytes;
  for (int32_t id : ids) bytes += token_text(id);
  return utf8::sanitize(bytes);
}

// ---- StreamDecoder ----

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool strip_leading_space)
    : tokenizer_(tokenizer), strip_leading_space_(strip_leading_space) {}

std::string StreamDecoder::push(int32_t id) {
  std::string piece = tokenizer_.token_text(id);
  if (!started_ && !piece.empty()) {
    started_ = true;
    if (strip_leading_space_ && piece[0] == ' ') piece.erase(0, 1);
  }
  pending_ += piece;
  const size_t hold = utf8::incomplete_tail(pending_);
  std::string ready = utf8::sanitize(std::string_view(pending_).substr(0, pending_.size() - hold));
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

std::string StreamDecoder::flush() {
  std::string rest = utf8::sanitize(pending_);
  pending_.clear();
  return rest;
}

void StreamDecoder::reset() {
  pending_.clear();
  started_ = false;
}

}  // namespace p64
