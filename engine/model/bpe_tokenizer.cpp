// Byte-level BPE (GPT-2, Llama 3, SmolLM, Qwen2): the model's pre-tokenizer regex cuts the
// text into words, each word's bytes are written in GPT-2's byte alphabet, and within a word
// the adjacent pair with the lowest merge rank is merged until no ranked pair is left.
#include <queue>
#include <string>
#include <unordered_map>

#include "engine/common/error.h"
#include "engine/model/byte_level.h"
#include "engine/model/pre_tokenizer.h"
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
    struct Symbol {
      int prev, next;
      size_t begin, len;
    };
    std::vector<Symbol> sym;
    for (size_t pos = 0; pos < word.size();) {
      size_t len = utf8::sequence_length(static_cast<uint8_t>(word[pos]));
      if (len == 0 || pos + len > word.size()) len = 1;
      const int i = static_cast<int>(sym.size());
      sym.push_back({i - 1, -1, pos, len});
      if (i > 0) sym[static_cast<size_t>(i - 1)].next = i;
      pos += len;
    }
    struct Bigram {
      int left, right;
      int32_t rank;
      size_t len;
    };
    auto worse = [](const Bigram& a, const Bigram& b) { return a.rank > b.rank || (a.rank == b.rank && a.left > b.left); };
    std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
    const std::string_view w(word);
    auto try_pair = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      const auto& L = sym[static_cast<size_t>(l)];
      const auto& R = sym[static_cast<size_t>(r)];
      const int32_t rank = rank_of(w.substr(L.begin, L.len), w.substr(R.begin, R.len));
      if (rank >= 0) queue.push({l, r, rank, L.len + R.len});
    };
    for (size_t i = 1; i < sym.size(); ++i) try_pair(static_cast<int>(i - 1), static_cast<int>(i));
    while (!queue.empty()) {
      const Bigram bg = queue.top();
      queue.pop();
      auto& L = sym[static_cast<size_t>(bg.left)];
      auto& R = sym[static_cast<size_t>(bg.right)];
      if (L.len == 0 || R.len == 0 || L.len + R.len != bg.len || L.next != bg.right) continue;
      L.len += R.len;
      R.len = 0;
      L.next = R.next;
      if (R.next >= 0) sym[static_cast<size_t>(R.next)].prev = bg.left;
      try_pair(L.prev, bg.left);
      try_pair(bg.left, L.next);
    }
    for (int i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
      const auto& s = sym[static_cast<size_t>(i)];
      const std::string_view piece = w.substr(s.begin, s.len);
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
