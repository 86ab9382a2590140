// Byte-level BPE (GPT-2, Llama 3, SmolLM, Qwen2): the model's pre-tokenizer regex cuts the
// text into words, each word's bytes are written in GPT-2's byte alphabet, and within a word
// the adjacent pair with the lowest merge rank is merged until no ranked pair is left.
#include <string>
#include <unordered_map>

#include "engine/common/error.h"
#include "engine/model/byte_level.h"
#include "engine/model/pre_tokenizer.h"
#include "engine/model/symbol_merge.h"
#include "engine/model/tokenizer_kinds.h"
#include "engine/model/utf8.h"

namespace p64 {
namespace {

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(const Vocabulary& v) : Tokenizer(v), pre_(PreTokenizer::for_name(v.pre)) {
    // Llama 3 (like tiktoken) takes a word that is itself a token as that token, whatever
    // the merges would make of it (tokenizer.json "ignore_merges": true).
    ignore_merges_ = pre_->ignore_merges();
    merge_rank_.reserve(vocab_.merges.size());
    for (size_t r = 0; r < vocab_.merges.size(); ++r) {
      const std::string& m = vocab_.merges[r];
      if (m.find(' ') == std::string::npos)
        throw Error("tokenizer: merge " + std::to_string(r) + " (\"" + m + "\") is not two pieces separated by a space");
      merge_rank_.emplace(m, static_cast<int32_t>(r));
    }
  }

 protected:
  void encode_plain(std::string_view text, bool, std::vector<int32_t>& out) const override {
    for (std::string_view word_bytes : pre_->split(text)) {
      const std::string word = byte_level::encode(word_bytes);
      if (ignore_merges_) {
        const int32_t id = find_piece(word);
        if (id >= 0) {
          out.push_back(id);
          continue;
        }
      }
      merge_word(word, out);
    }
  }

  std::string decode_token(int32_t id) const override {
    const std::string& piece = vocab_.tokens[static_cast<size_t>(id)];
    if (vocab_.type_of(id) == TokenType::UserDefined) return piece;  // added tokens are stored as plain text
    std::string bytes;
    byte_level::decode(piece, bytes);
    return bytes;
  }

 private:
  int32_t rank_of(std::string_view left, std::string_view right) const {
    std::string key;
    key.reserve(left.size() + right.size() + 1);
    key.append(left).append(1, ' ').append(right);
    auto it = merge_rank_.find(key);
    return it == merge_rank_.end() ? -1 : it->second;
  }

  void merge_word(const std::string& word, std::vector<int32_t>& out) const {
    // The lowest merge rank merges first.
    const auto pieces = merge_symbols(word, [this](std::string_view left, std::string_view right) -> std::optional<double> {
      const int32_t rank = rank_of(left, right);
      if (rank < 0) return std::nullopt;
      return -static_cast<double>(rank);
    });
    for (const std::string_view piece : pieces) {
      const int32_t id = find_piece(piece);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      // A merged piece missing from the vocabulary (an inconsistent file): fall back to its
      // characters, each of which is a one-byte token in any byte-level vocabulary.
      for (size_t pos = 0; pos < piece.size();) {
        size_t len = utf8::sequence_length(static_cast<uint8_t>(piece[pos]));
        if (len == 0 || pos + len > piece.size()) len = 1;
        const int32_t cid = find_piece(piece.substr(pos, len));
        if (cid >= 0)
          out.push_back(cid);
        else if (vocab_.unk_id >= 0)
          out.push_back(vocab_.unk_id);
        pos += len;
      }
    }
  }

  std::unique_ptr<PreTokenizer> pre_;
  bool ignore_merges_ = false;
  std::unordered_map<std::string, int32_t> merge_rank_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(const Vocabulary& vocab) { return std::make_unique<BpeTokenizer>(vocab); }

}  // namespace p64
