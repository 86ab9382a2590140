#include "engine/format/llama2c_reader.h"

#include <cstring>

#include "engine/common/error.h"
#include "engine/format/model_limits.h"

namespace p64 {
namespace {

constexpr int32_t kMaxDim = 1 << 20;

struct Layout {
  uint64_t floats = 0;  // total floats after the header, wcls included when unshared
};

// Size in floats that run.c's memory_map_weights walks for this header.
bool expected_floats(const int32_t* h, uint64_t* out) {
  int64_t dim = h[0], hidden = h[1], layers = h[2], heads = h[3], kv = h[4], vocab = h[5], seq = h[6];
  if (vocab < 0) vocab = -vocab;
  for (int64_t v : {dim, hidden, layers, heads, kv, vocab, seq})
    if (v <= 0 || v > kMaxDim) return false;
  if (dim % heads != 0 || heads % kv != 0) return false;
  int64_t hs = dim / heads;
  uint64_t n = uint64_t(vocab) * dim;                                // token embedding
  n += uint64_t(layers) * dim;                                       // rms_att
  n += uint64_t(layers) * dim * (heads * hs);                        // wq
  n += uint64_t(layers) * dim * (kv * hs) * 2;                       // wk, wv
  n += uint64_t(layers) * (heads * hs) * dim;                        // wo
  n += uint64_t(layers) * dim;                                       // rms_ffn
  n += uint64_t(layers) * dim * hidden * 3;                          // w1, w2, w3
  n += uint64_t(dim);                                                // rms_final
  n += uint64_t(seq) * hs;                                           // freq_cis_real + imag (hs/2 each)
  if (h[5] < 0) n += uint64_t(vocab) * dim;                          // wcls
  *out = n;
  return true;
}

}  // namespace

bool is_llama2c_checkpoint(const MappedFile& map) {
  if (map.size() < 28) return false;
  int32_t h[7];
  std::memcpy(h, map.data(), 28);
  uint64_t n = 0;
  return expected_floats(h, &n) && map.size() == 28 + n * 4;
}

Llama2cCheckpoint read_llama2c(const std::string& path) {
  Llama2cCheckpoint c;
  c.map = MappedFile::open(path);
  const MappedFile& m = *c.map;
  if (m.size() < 28) throw FormatError(path, "header", m.size(), "file is shorter than the 28-byte llama2.c header");
  if (std::memcmp(m.data(), "ak42", 4) == 0)
    throw FormatError(path, "header", 0, "llama2.c export version 1/2 (magic ak42) is not supported; export with --version 0");
  std::memcpy(c.header, m.data(), 28);
  const int32_t* h = c.header;
  static const char* const kNames[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    int64_t v = i == 5 ? (h[i] < 0 ? -int64_t(h[i]) : h[i]) : h[i];
    if (v <= 0 || v > kMaxDim)
      throw FormatError(path, "header", uint64_t(i) * 4, std::string(kNames[i]) + " = " + std::to_string(h[i]) + " is out of range");
  }
  if (h[0] % h[3] != 0) throw FormatError(path, "header", 0, "dim is not a multiple of n_heads");
  if (h[3] % h[4] != 0) throw FormatError(path, "header", 12, "n_heads is not a multiple of n_kv_heads");
  if ((h[0] / h[3]) % 2 != 0) throw FormatError(path, "header", 12, "head size dim/n_heads is odd");
  uint64_t floats = 0;
  expected_floats(h, &floats);
  if (m.size() != 28 + floats * 4)
    throw FormatError(path, m.size() < 28 + floats * 4 ? "tensor data" : "header", m.size() < 28 + floats * 4 ? m.size() : 0,
                      "file is " + std::to_string(m.size()) + " bytes; the header implies " + std::to_string(28 + floats * 4) +
                          " (a truncated file, or not a llama2.c legacy checkpoint)");
  c.shared_classifier = h[5] > 0;
  const uint32_t dim = uint32_t(h[0]), hidden = uint32_t(h[1]), layers = uint32_t(h[2]), heads = uint32_t(h[3]),
                 kv = uint32_t(h[4]), vocab = uint32_t(h[5] < 0 ? -h[5] : h[5]), seq = uint32_t(h[6]);
  const uint32_t hs = dim / heads;
  HParams& hp = c.hparams;
  hp.name = "llama2.c";
  hp.n_embd = dim;
  hp.n_layer = layers;
  hp.n_head = heads;
  hp.n_head_kv = kv;
  hp.head_dim = hs;
  hp.n_ff = hidden;
  hp.n_vocab = vocab;
  hp.n_ctx_train = seq;
  hp.rope_dim = hs;
  hp.rope_base = 10000.0f;  // run.c's constant
  hp.rms_eps = 1e-5f;       // run.c's constant
  hp.rope_layout = RopeLayout::Adjacent;
  hp.tied_output = c.shared_classifier;
  check_hparams_bounds(hp, path, hparams_fields("llama2c"));  // before a tensor is listed per layer

  const uint8_t* base = m.data() + 28;
  uint64_t at = 0;  // in floats
  // Per-layer stacks: run.c stores each weight kind for all layers, then the next kind.
  auto add = [&](const std::string& name, int64_t ne0, int64_t ne1) {
    TensorView t;
    t.name = name;
    t.dtype = DType::F32;
    t.n_dims = ne1 > 1 ? 2 : 1;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.data = base + at * 4;
    t.bytes = uint64_t(ne0) * uint64_t(ne1) * 4;
    at += uint64_t(ne0) * uint64_t(ne1);
    c.tensors.push_back(std::move(t));
  };
  auto per_layer = [&](const char* suffix, int64_t ne0, int64_t ne1) {
    for (uint32_t l = 0; l < layers; ++l) add("blk." + std::to_string(l) + "." + suffix, ne0, ne1);
  };
  add("token_embd.weight", dim, vocab);
  per_layer("attn_norm.weight", dim, 1);
  per_layer("attn_q.weight", dim, heads * hs);
  per_layer("attn_k.weight", dim, kv * hs);
  per_layer("attn_v.weight", dim, kv * hs);
  per_layer("attn_output.weight", heads * hs, dim);
  per_layer("ffn_norm.weight", dim, 1);
  per_layer("ffn_gate.weight", dim, hidden);  // w1
  per_layer("ffn_down.weight", hidden, dim);  // w2
  per_layer("ffn_up.weight", dim, hidden);    // w3
  add("output_norm.weight", dim, 1);
  at += uint64_t(seq) * hs;  // freq_cis_real, freq_cis_imag: RoPE tables, recomputed at run time
  if (!c.shared_classifier) add("output.weight", dim, vocab);
  return c;
}

Vocabulary read_llama2c_tokenizer(const std::string& path, uint32_t n_vocab) {
  auto map = MappedFile::open(path);
  const uint8_t* p = map->data();
  const uint64_t size = map->size();
  auto fail = [&](uint64_t off, const std::string& what) { throw FormatError(path, "tokenizer", off, what); };
  if (size < 4) fail(0, "file is shorter than the 4-byte header");
  int32_t max_len;
  std::memcpy(&max_len, p, 4);
  if (max_len <= 0 || max_len > (1 << 16)) fail(0, "max_token_length " + std::to_string(max_len) + " is out of range");
  Vocabulary v;
  v.kind = TokenizerKind::SentencePiece;
  v.pre = "default";
  v.add_bos = true;
  v.add_eos = false;
  v.add_space_prefix = true;
  uint64_t at = 4;
  while (n_vocab == 0 ? at < size : v.tokens.size() < n_vocab) {
    if (size - at < 8) fail(at, "file ends inside token " + std::to_string(v.tokens.size()) + "'s score and length");
    float score;
    int32_t len;
    std::memcpy(&score, p + at, 4);
    std::memcpy(&len, p + at + 4, 4);
    if (len < 0 || len > max_len) fail(at + 4, "token " + std::to_string(v.tokens.size()) + " length " + std::to_string(len) + " is out of range");
    if (size - at - 8 < uint64_t(len)) fail(at + 8, "file ends inside token " + std::to_string(v.tokens.size()));
    std::string raw(reinterpret_cast<const char*>(p + at + 8), size_t(len));
    at += 8 + uint64_t(len);
    const size_t id = v.tokens.size();
    TokenType type = TokenType::Normal;
    std::string piece;
    if (id == 1 && raw == "\n<s>\n") { piece = "<s>"; type = TokenType::Control; }
    else if (id == 2 && raw == "\n</s>\n") { piece = "</s>"; type = TokenType::Control; }
    else if (raw == "<unk>") { piece = raw; type = TokenType::Unknown; }
    else if (raw.size() == 6 && raw.rfind("<0x", 0) == 0 && raw[5] == '>') { piece = raw; type = TokenType::Byte; }
    else {
      for (char ch : raw) piece += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);
    }
    v.tokens.push_back(std::move(piece));
    v.scores.push_back(score);
    v.types.push_back(static_cast<int32_t>(type));
  }
  if (n_vocab != 0 && at != size)
    fail(at, std::to_string(size - at) + " bytes follow the " + std::to_string(n_vocab) + " tokens the model has");
  const int32_t n = int32_t(v.tokens.size());
  v.unk_id = n > 0 ? 0 : -1;
  v.bos_id = n > 1 ? 1 : -1;
  v.eos_id = n > 2 ? 2 : -1;
  return v;
}

}  // namespace p64
