// SentencePiece-style tokenization as Llama 2, TinyLlama and llama2.c do it: start from UTF-8
// characters, repeatedly merge the adjacent pair whose concatenation is the vocabulary piece
// with the highest score (leftmost on ties), then fall back to <0xNN> byte pieces for what
// is not in the vocabulary.
#include <string>

#include "engine/common/error.h"
#include "engine/model/symbol_merge.h"
#include "engine/model/tokenizer_kinds.h"

namespace p64 {
namespace {

const std::string kSpace = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK: SentencePiece's space

// "<0xNN>" -> NN, or -1.
int byte_piece_value(const std::string& s) {
  if (s.size() != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(s[3]), lo = hex(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(const Vocabulary& v) : Tokenizer(v) {
    for (auto& b : byte_ids_) b = -1;
    for (size_t i = 0; i < vocab_.tokens.size(); ++i) {
      const auto id = static_cast<int32_t>(i);
      const TokenType t = vocab_.type_of(id);
      if (t != TokenType::Byte && !(vocab_.types.empty() || t == TokenType::Normal || t == TokenType::Unused)) continue;
      const int b = byte_piece_value(vocab_.tokens[i]);
      if (b >= 0 && byte_ids_[b] < 0) byte_ids_[b] = id;
    }
  }

 protected:
  void encode_plain(std::string_view raw, bool after_special, std::vector<int32_t>& out) const override {
    std::string text;
    text.reserve(raw.size() * 3 + 3);
    if (vocab_.add_space_prefix && after_special) text += kSpace;
    for (char c : raw) {
      if (c == ' ')
        text += kSpace;
      else
        text += c;
    }

    // The piece of the higher score merges first; a pair merges only into a piece of the vocabulary.
    const auto pieces = merge_symbols(text, [this](std::string_view left, std::string_view right) -> std::optional<double> {
      const int32_t id = find_piece(std::string_view(left.data(), left.size() + right.size()));
      if (id < 0) return std::nullopt;
      return vocab_.scores.empty() ? 0.0 : static_cast<double>(vocab_.scores[static_cast<size_t>(id)]);
    });
    for (const std::string_view piece : pieces) {
      const int32_t id = find_piece(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      // Byte fallback: each byte as its <0xNN> piece; <unk> for a vocabulary without them.
      for (char c : piece) {
        const int32_t b = byte_ids_[static_cast<uint8_t>(c)];
        if (b >= 0)
          out.push_back(b);
        else if (vocab_.unk_id >= 0)
          out.push_back(vocab_.unk_id);
      }
    }
  }

  std::string decode_token(int32_t id) const override {
    const std::string& piece = vocab_.tokens[static_cast<size_t>(id)];
    const TokenType t = vocab_.type_of(id);
    if (t == TokenType::Byte || (vocab_.types.empty() && byte_piece_value(piece) >= 0)) {
      const int b = byte_piece_value(piece);
      if (b >= 0) return std::string(1, static_cast<char>(b));
    }
    if (t == TokenType::Unknown) return "\xE2\x96\x85";  // U+2585, what llama.cpp shows for <unk>
    if (t == TokenType::UserDefined) return piece;
    std::string text;
    text.reserve(piece.size());
    for (size_t pos = 0; pos < piece.size();) {
      if (piece.compare(pos, kSpace.size(), kSpace) == 0) {
        text += ' ';
        pos += kSpace.size();
      } else {
        text += piece[pos++];
      }
    }
    return text;
  }

 private:
  int32_t byte_ids_[256];
};

}  // namespace

std::unique_ptr<Tokenizer> make_spm_tokenizer(const Vocabulary& vocab) { return std::make_unique<SpmTokenizer>(vocab); }

}  // namespace p64
