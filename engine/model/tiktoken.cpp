#include "engine/model/tiktoken.h"

#include <algorithm>
#include <unordered_map>

#include "engine/common/error.h"
#include "engine/common/mapped_file.h"
#include "engine/model/byte_level.h"

namespace p64 {
namespace {

constexpr int kLlama3Specials = 256;

// Meta's Llama 3 chat format, written as a Jinja template (data for chat_template.h's
// marker detection; nothing executes it).
const char* const kLlama3ChatTemplate =
    "{{- bos_token }}{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < in.size() && in[i] != '='; ++i) {
    const int v = base64_value(in[i]);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  for (; i < in.size(); ++i)
    if (in[i] != '=') return false;
  return !out.empty();
}

// Every way a ranked token splits into two ranked tokens, ordered by the ranks of the left and
// then the right piece. This is the rule of HF's TikTokenConverter, which wrote the merges of
// Meta's tokenizer.json and so of every llama-bpe GGUF: a token can have several merges, and
// the tokens Meta added above cl100k's 100k have no single "lowest-rank" split.
// Byte strings -> rank, looked up by string_view so splitting a token allocates nothing.
struct ByteStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using RankMap = std::unordered_map<std::string, int32_t, ByteStringHash, std::equal_to<>>;

struct Split {
  int32_t left_rank, right_rank;
  size_t at;
};
void ranked_splits(std::string_view token, const RankMap& rank_of, std::vector<Split>& out) {
  out.clear();
  for (size_t at = 1; at < token.size(); ++at) {
    auto l = rank_of.find(token.substr(0, at));
    if (l == rank_of.end()) continue;
    auto r = rank_of.find(token.substr(at));
    if (r == rank_of.end()) continue;
    out.push_back({l->second, r->second, at});
  }
  std::sort(out.begin(), out.end(), [](const Split& a, const Split& b) {
    return a.left_rank != b.left_rank ? a.left_rank < b.left_rank : a.right_rank < b.right_rank;
  });
}

}  // namespace

std::string llama3_special_token(int i) {
  switch (i) {
    case 0: return "<|begin_of_text|>";
    case 1: return "<|end_of_text|>";
    case 6: return "<|start_header_id|>";
    case 7: return "<|end_header_id|>";
    case 9: return "<|eot_id|>";
    default: break;
  }
  // 2..5 are reserved 0..3, 8 is reserved 4, from 10 on reserved 5, 6, ...
  const int n = i < 6 ? i - 2 : i == 8 ? 4 : i - 5;
  return "<|reserved_special_token_" + std::to_string(n) + "|>";
}

Vocabulary read_tiktoken_model(const std::string& path) {
  auto file = MappedFile::open(path);
  const std::string_view text(reinterpret_cast<const char*>(file->data()), file->size());

  std::vector<std::string> raw;  // token bytes by rank
  RankMap rank_of;
  rank_of.reserve(160000);
  size_t line_no = 0, pos = 0;
  std::string bytes;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t line_start = pos;
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    auto fail = [&](const std::string& why) {
      throw FormatError(path, "tiktoken line " + std::to_string(line_no), line_start, why);
    };
    if (sp == std::string_view::npos) fail("expected \"base64 rank\"");
    if (!base64_decode(line.substr(0, sp), bytes)) fail("the token is not valid base64");
    int64_t rank = 0;
    const std::string_view num = line.substr(sp + 1);
    if (num.empty() || num.size() > 9) fail("the rank is not a number");
    for (char c : num) {
      if (c < '0' || c > '9') fail("the rank is not a number");
      rank = rank * 10 + (c - '0');
    }
    if (rank != static_cast<int64_t>(raw.size()))
      fail("rank " + std::to_string(rank) + " where " + std::to_string(raw.size()) + " was expected (ranks must run 0, 1, 2, ...)");
    if (!rank_of.emplace(bytes, static_cast<int32_t>(rank)).second) fail("the token repeats an earlier one");
    raw.push_back(bytes);
  }
  if (raw.size() < 256) throw FormatError(path, "tiktoken", 0, "only " + std::to_string(raw.size()) + " ranked tokens (a byte-level BPE needs all 256 bytes)");

  Vocabulary v;
  v.kind = TokenizerKind::ByteLevelBPE;
  v.pre = "llama-bpe";
  v.add_bos = true;
  v.add_eos = false;
  v.add_space_prefix = false;
  const auto n_ranked = static_cast<int32_t>(raw.size());
  v.tokens.reserve(raw.size() + kLlama3Specials);
  for (const auto& t : raw) v.tokens.push_back(byte_level::encode(t));
  v.types.assign(raw.size(), static_cast<int32_t>(TokenType::Normal));
  for (int i = 0; i < kLlama3Specials; ++i) {
    v.tokens.push_back(llama3_special_token(i));
    v.types.push_back(static_cast<int32_t>(TokenType::Control));
  }
  v.bos_id = n_ranked + 0;
  v.eos_id = n_ranked + 1;
  v.eot_id = n_ranked + 9;

  // Merges grouped by the rank of the token they make, in rank order.
  std::vector<Split> splits;
  v.merges.reserve(raw.size() * 5 / 2);
  for (int32_t r = 0; r < n_ranked; ++r) {
    const std::string& t = raw[static_cast<size_t>(r)];
    if (t.size() < 2) continue;
    ranked_splits(t, rank_of, splits);
    if (splits.empty())
      throw FormatError(path, "tiktoken rank " + std::to_string(r), 0,
                        "the token does not split into two ranked tokens (not a BPE rank table)");
    for (const Split& s : splits)
      v.merges.push_back(byte_level::encode(std::string_view(t).substr(0, s.at)) + " " +
                         byte_level::encode(std::string_view(t).substr(s.at)));
  }
  v.chat_template = kLlama3ChatTemplate;
  return v;
}

}  // namespace p64
