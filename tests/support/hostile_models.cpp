#include "support/hostile_models.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>

#include "engine/format/crc32c.h"
#include "engine/format/gguf_writer.h"
#include "engine/format/p64_format.h"
#include "fuzz/fuzz_samples.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "engine/p64_test_model.h"
#include "engine/quant/quant.h"

namespace p64::test {
namespace fs = std::filesystem;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(p.string() + ": cannot write");
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Deterministic small weights; norms are 1.
float weight(uint64_t i, bool norm) { return norm ? 1.0f : 0.05f * static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.0)); }

// A tiny Llama GGUF: a byte-level BPE vocabulary of six tokens and `layers` complete layers of
// F32 (or `matrix_type`) weights, with `block_count` claimed in the metadata.
struct GgufSpec {
  uint64_t block_count = 1;
  uint32_t layers = 1;
  uint32_t n_embd = 8, n_ff = 16, n_head = 2, n_head_kv = 1;
  uint32_t alignment = 32;
  DType matrix_type = DType::F32;
  std::vector<std::pair<std::string, uint32_t>> u32_keys;  // values for keys the writer sets, or more keys
  std::function<void(GgufWriter&)> extra;  // more metadata or tensors
  std::string poison_tensor;               // this tensor's first value is replaced by `poison`
  float poison = 0.0f;
  bool poison_scale = false;               // for a block type: the first block's fp16 scale instead
};

void write_gguf(const fs::path& path, const GgufSpec& s) {
  GgufWriter w(s.alignment);
  std::vector<std::pair<std::string, uint32_t>> keys = s.u32_keys;
  auto u32 = [&](const std::string& key, uint32_t v) {
    for (auto it = keys.begin(); it != keys.end(); ++it)
      if (it->first == key) {
        v = it->second;
        keys.erase(it);
        break;
      }
    w.add_u32(key, v);
  };
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "hostile");
  u32("llama.embedding_length", s.n_embd);
  if (s.block_count <= std::numeric_limits<uint32_t>::max()) u32("llama.block_count", static_cast<uint32_t>(s.block_count));
  else w.add_u64("llama.block_count", s.block_count);
  u32("llama.attention.head_count", s.n_head);
  u32("llama.attention.head_count_kv", s.n_head_kv);
  u32("llama.feed_forward_length", s.n_ff);
  u32("llama.context_length", 64);
  for (const auto& [key, v] : keys) w.add_u32(key, v);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "gpt-2");
  w.add_string_array("tokenizer.ggml.tokens", {"h", "e", "l", "he", "ll", "<|endoftext|>"});
  w.add_i32_array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3});
  w.add_string_array("tokenizer.ggml.merges", {"h e", "l l"});
  w.add_u32("tokenizer.ggml.eos_token_id", 5);
  if (s.extra) s.extra(w);
  uint64_t serial = 0;
  auto add = [&](const std::string& name, int64_t ne0, int64_t ne1, bool norm) {
    const DType type = norm ? DType::F32 : s.matrix_type;
    const uint64_t base = (serial++) << 20;
    const bool poisoned = name == s.poison_tensor;
    const float poison = s.poison;
    const bool scale = s.poison_scale;
    std::vector<int64_t> ne = {ne0};
    if (ne1 > 1 || !norm) ne.push_back(ne1);
    w.add_tensor(name, type, ne, [=](uint8_t* dst, int64_t first, int64_t rows) {
      std::vector<float> row(static_cast<size_t>(ne0));
      const uint64_t row_bytes = dtype_row_bytes(type, static_cast<uint64_t>(ne0));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < ne0; ++i) row[static_cast<size_t>(i)] = weight(base + static_cast<uint64_t>((first + r) * ne0 + i), norm);
        if (poisoned && first + r == 0 && !scale) row[0] = poison;
        uint8_t* out = dst + static_cast<uint64_t>(r) * row_bytes;
        quantize_row(type, row.data(), out, ne0);
        if (poisoned && first + r == 0 && scale) {
          const uint16_t h = fp32_to_fp16(poison);
          std::memcpy(out, &h, 2);  // Q8_0 and Q4_0 blocks start with their fp16 scale
        }
      }
    });
  };
  uint32_t head_dim = s.n_embd / s.n_head;
  for (const auto& [key, v] : s.u32_keys)
    if (key == "llama.attention.key_length" && v <= 4096) head_dim = v;  // a hostile one stays a claim
  const uint32_t q = s.n_head * head_dim, kv = s.n_head_kv * head_dim;
  add("token_embd.weight", s.n_embd, 6, false);
  for (uint32_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", s.n_embd, 1, true);
    add(p + "attn_q.weight", s.n_embd, q, false);
    add(p + "attn_k.weight", s.n_embd, kv, false);
    add(p + "attn_v.weight", s.n_embd, kv, false);
    add(p + "attn_output.weight", q, s.n_embd, false);
    add(p + "ffn_norm.weight", s.n_embd, 1, true);
    add(p + "ffn_gate.weight", s.n_embd, s.n_ff, false);
    add(p + "ffn_up.weight", s.n_embd, s.n_ff, false);
    add(p + "ffn_down.weight", s.n_ff, s.n_embd, false);
  }
  add("output_norm.weight", s.n_embd, 1, true);
  GgufWriteOptions o;
  o.threads = 1;
  o.sync = false;
  w.write(path.string(), o);
}

// A .safetensors file of F32 tensors whose values come from `value(tensor, i)`.
std::string safetensors(const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors,
                        const std::function<float(const std::string&, uint64_t)>& value) {
  std::string header = "{", data;
  for (const auto& [name, shape] : tensors) {
    uint64_t n = 1;
    std::string dims;
    for (int64_t d : shape) {
      n *= static_cast<uint64_t>(d);
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    const uint64_t at = data.size();
    for (uint64_t i = 0; i < n; ++i) {
      const float x = value(name, i);
      data.append(reinterpret_cast<const char*>(&x), 4);
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"F32\",\"shape\":[" + dims +
              "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  return out + header + data;
}

// A one-layer Hugging Face Llama folder (width 8, 2 heads, 1 KV head, FFN 16, 13 tokens) whose
// config.json fields are replaced or added by `config`, and whose `poison_tensor` starts with
// `poison`.
struct HfSpec {
  std::vector<std::pair<std::string, std::string>> config;  // field -> JSON text, replacing the default
  std::string poison_tensor;
  float poison = 0.0f;
};

void write_hf(const fs::path& dir, const HfSpec& s) {
  fs::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> fields = {
      {"model_type", "\"llama\""},         {"hidden_size", "8"},          {"num_hidden_layers", "1"},
      {"num_attention_heads", "2"},        {"num_key_value_heads", "1"},  {"intermediate_size", "16"},
      {"vocab_size", "13"},                {"rms_norm_eps", "1e-05"},     {"max_position_embeddings", "64"},
      {"rope_theta", "10000.0"},           {"tie_word_embeddings", "true"}};
  for (const auto& [k, v] : s.config) {
    bool replaced = false;
    for (auto& f : fields)
      if (f.first == k) f.second = v, replaced = true;
    if (!replaced) fields.push_back({k, v});
  }
  std::string config = "{";
  for (const auto& [k, v] : fields) config += (config.size() > 1 ? "," : "") + std::string("\"") + k + "\":" + v;
  write_bytes(dir / "config.json", config + "}");
  write_bytes(dir / "tokenizer.json",
              R"({"version":"1.0","added_tokens":[{"id":11,"content":"<|im_end|>","special":true},)"
              R"({"id":12,"content":"<|im_start|>","special":true}],"normalizer":null,)"
              R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},)"
              R"("model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{"h":0,"e":1,"l":2,"o":3,"Ġ":4,"w":5,)"
              R"("he":6,"ll":7,"hell":8,"hello":9,"Ġw":10},"merges":["h e","l l","he ll","hell o","Ġ w"]}})");
  const std::string poison_tensor = s.poison_tensor;
  const float poison = s.poison;
  write_bytes(dir / "model.safetensors",
              safetensors(fuzz::tiny_llama_tensor_shapes(),
                          [&](const std::string& name, uint64_t i) {
                            if (name == poison_tensor && i == 0) return poison;
                            return weight(i + name.size() * 1000, name.find("norm") != std::string::npos);
                          }));
}

// A llama2.c checkpoint (dim 2, one head, FFN 2, vocab 4, seq 32) of `layers` layers, and its
// tokenizer file; `poison` goes into the final norm's first value when given.
void write_llama2c(const fs::path& model, const fs::path& tokenizer, int32_t layers, float poison = 1.0f) {
  const int32_t dim = 2, hidden = 2, vocab = 4, seq = 32, hs = 2;
  const int32_t h[7] = {dim, hidden, layers, 1, 1, vocab, seq};
  const uint64_t per_layer = dim + dim * dim * 3 + dim * dim + dim + dim * hidden * 3;
  const uint64_t floats = uint64_t(vocab) * dim + uint64_t(layers) * per_layer + dim + uint64_t(seq) * hs;
  std::string bytes(28 + floats * 4, '\0');
  std::memcpy(bytes.data(), h, 28);
  for (uint64_t i = 0; i < floats; ++i) {
    const float x = weight(i, false) + 1.0f;
    std::memcpy(bytes.data() + 28 + i * 4, &x, 4);
  }
  const uint64_t final_norm = uint64_t(vocab) * dim + uint64_t(layers) * per_layer;
  std::memcpy(bytes.data() + 28 + final_norm * 4, &poison, 4);
  write_bytes(model, bytes);
  std::string tok(4, '\0');
  const int32_t max_len = 8;
  std::memcpy(tok.data(), &max_len, 4);
  for (const std::string piece : {"<unk>", "\n<s>\n", "\n</s>\n", "he"}) {
    const float score = 0.0f;
    const int32_t len = static_cast<int32_t>(piece.size());
    tok.append(reinterpret_cast<const char*>(&score), 4).append(reinterpret_cast<const char*>(&len), 4).append(piece);
  }
  write_bytes(tokenizer, tok);
}

// Rewrites the CRCs of a .p64 after its bytes were changed, so only the change is left to find.
void reseal_p64(std::string& b) {
  for (uint32_t i = 0; i < kP64MaxSections; ++i) {
    const uint64_t e = kP64SectionTableOffset + uint64_t{i} * kP64SectionEntryBytes;
    uint32_t kind;
    std::memcpy(&kind, b.data() + e, 4);
    if (kind == 0) continue;
    uint64_t off, size;
    std::memcpy(&off, b.data() + e + 8, 8);
    std::memcpy(&size, b.data() + e + 16, 8);
    const uint32_t crc = crc32c(b.data() + off, static_cast<size_t>(size));
    std::memcpy(b.data() + e + 24, &crc, 4);
  }
  const uint32_t header = crc32c(b.data(), kP64HeaderCrcOffset);
  std::memcpy(b.data() + kP64HeaderCrcOffset, &header, 4);
}

// A tiny valid .p64 whose hparams say n_layer = `n_layer`, CRCs made to match.
void write_p64_claiming_layers(const fs::path& path, uint32_t n_layer) {
  TinyModel tiny = tiny_image(7, 1, 16, 32);
  write_p64(path.string(), tiny.image);
  std::string b = read_bytes(path);
  const std::string key = std::string("\x07\0\0\0n_layer", 11);
  const size_t at = b.find(key);
  if (at == std::string::npos) throw std::runtime_error("no n_layer key in the tiny .p64");
  std::memcpy(b.data() + at + key.size() + 4, &n_layer, 4);
  reseal_p64(b);
  write_bytes(path, b);
}

// A tiny valid .p64 with a NaN in `tensor` (1-D, F32) and every CRC made to match.
void write_p64_with_nan(const fs::path& path, const std::string& tensor) {
  TinyModel tiny = tiny_image(7, 1, 16, 32);
  write_p64(path.string(), tiny.image);
  const P64Contents c = inspect_p64(path.string());
  std::string b = read_bytes(path);
  for (const P64TensorEntry& t : c.tensors) {
    if (t.name != tensor) continue;
    std::memcpy(b.data() + t.offset, &kNaN, 4);
    const uint32_t crc = crc32c(b.data() + t.offset, static_cast<size_t>(t.bytes));
    const uint64_t crc_at = t.entry_offset + 4 + t.name.size() + 4 + 4 + 32 + 8 + 8;
    std::memcpy(b.data() + crc_at, &crc, 4);
  }
  reseal_p64(b);
  write_bytes(path, b);
}

}  // namespace

std::vector<HostileModel> write_hostile_models(const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<HostileModel> out;
  auto gguf = [&](const std::string& name, const GgufSpec& spec, const std::string& refusal) {
    const fs::path p = dir / (name + ".gguf");
    write_gguf(p, spec);
    out.push_back({name, p.string(), "", refusal});
  };
  auto hf = [&](const std::string& name, const HfSpec& spec, const std::string& refusal) {
    const fs::path p = dir / name;
    write_hf(p, spec);
    out.push_back({name, p.string(), "", refusal});
  };

  // The control: a plain tiny model every command takes, for what a command costs anyway.
  gguf("control-tiny", GgufSpec{}, "");

  // Counts far beyond any model, with one real layer behind them.
  for (uint64_t n : {uint64_t{10'000'000}, uint64_t{1'000'000}, uint64_t{4294967295u}}) {
    GgufSpec s;
    s.block_count = n;
    gguf("gguf-block-count-" + std::to_string(n), s, "llama.block_count " + std::to_string(n) + " exceeds the limit 4096");
  }
  {
    GgufSpec s;
    s.block_count = 4000;  // within the limit, but the file holds one layer
    gguf("gguf-block-count-4000-of-1", s, "llama.block_count 4000 but the file holds no tensor of layer 1");
  }
  struct Key { const char* key; uint32_t value; const char* limit; };
  for (const Key& k : {Key{"llama.vocab_size", 1u << 26, "4194304"}, Key{"llama.context_length", 4294967295u, "16777216"},
                       Key{"llama.embedding_length", 1u << 31, "131072"}, Key{"llama.feed_forward_length", 1u << 31, "1048576"},
                       Key{"llama.attention.key_length", 1u << 31, "4096"}}) {
    GgufSpec s;
    s.u32_keys = {{k.key, k.value}};
    const std::string key = k.key;
    gguf("gguf-" + key.substr(6) + "-" + std::to_string(k.value), s,
         key + " " + std::to_string(k.value) + " exceeds the limit " + k.limit);
  }

  // Metadata arrays as long as the file: fine, and must cost about their size in memory.
  {
    GgufSpec s;
    s.extra = [](GgufWriter& w) {
      GgufValue bytes;
      bytes.type = GgufType::ARRAY;
      bytes.elem_type = GgufType::UINT8;
      bytes.count = 1'900'000;
      bytes.encoded.assign(bytes.count, 7);
      w.add_value("hostile.bytes", bytes);
    };
    gguf("gguf-u8-array-1900000", s, "");
  }
  {
    GgufSpec s;
    s.extra = [](GgufWriter& w) { w.add_string_array("hostile.strings", std::vector<std::string>(240'000)); };
    gguf("gguf-string-array-240000", s, "");
  }
  {
    GgufSpec s;
    s.extra = [](GgufWriter& w) {
      GgufValue empty = gguf_array(GgufType::UINT8, {});
      w.add_value("hostile.arrays", gguf_array(GgufType::ARRAY, std::vector<GgufValue>(160'000, empty)));
    };
    gguf("gguf-nested-array-160000", s, "");
  }
  {
    GgufSpec s;
    s.extra = [](GgufWriter& w) {
      GgufValue claim;  // 2^40 elements said, 8 present
      claim.type = GgufType::ARRAY;
      claim.elem_type = GgufType::UINT8;
      claim.count = uint64_t{1} << 40;
      claim.encoded.assign(8, 0);
      w.add_value("hostile.claim", claim);
    };
    gguf("gguf-array-length-1099511627776", s, "array length (u8) 1099511627776: that many entries of at least 1 bytes cannot fit");
  }
  // 2000 complete layers of the smallest shapes: a real model, just a long one.
  {
    GgufSpec s;
    s.block_count = s.layers = 2000;
    s.n_embd = 2, s.n_ff = 2, s.n_head = 1, s.n_head_kv = 1;
    s.alignment = 8;
    gguf("gguf-2000-tiny-layers", s, "");
  }

  // The widest KV cache a 2 MB file can ask for at the default 4096 positions: Q4_0 matrices
  // of the narrowest rows (32) and 4096-wide K and V, six layers.
  {
    GgufSpec s;
    s.block_count = s.layers = 6;
    s.n_embd = 32, s.n_ff = 32, s.n_head = 8, s.n_head_kv = 8;
    s.matrix_type = DType::Q4_0;
    s.u32_keys = {{"llama.attention.key_length", 512}, {"llama.attention.value_length", 512}, {"llama.context_length", 1u << 24}};
    gguf("gguf-wide-kv-6-layers", s, "");
  }

  // Weights and constants that decode to garbage.
  {
    GgufSpec s;
    s.poison_tensor = "blk.0.attn_norm.weight", s.poison = kNaN;
    gguf("gguf-nan-norm", s, "tensor 'blk.0.attn_norm.weight' holds NaN or infinite values");
  }
  {
    GgufSpec s;
    s.poison_tensor = "token_embd.weight", s.poison = kInf;
    gguf("gguf-inf-embedding", s, "tensor 'token_embd.weight' holds NaN or infinite values");
  }
  {
    GgufSpec s;
    s.n_embd = 32, s.n_ff = 32, s.n_head = 2, s.n_head_kv = 1;
    s.matrix_type = DType::Q8_0;
    s.poison_tensor = "blk.0.attn_q.weight", s.poison = kNaN, s.poison_scale = true;
    gguf("gguf-nan-q8-scale", s, "tensor 'blk.0.attn_q.weight' holds NaN or infinite values");
  }
  struct F32Key { const char* name; const char* key; float value; const char* refusal; };
  for (const F32Key& k : {F32Key{"gguf-rope-base-nan", "llama.rope.freq_base", kNaN,
                                 "llama.rope.freq_base nan is not in [1, 1e+12]"},
                          F32Key{"gguf-rope-base-negative", "llama.rope.freq_base", -10000.0f,
                                 "llama.rope.freq_base -10000 is not in [1, 1e+12]"},
                          F32Key{"gguf-rms-eps-inf", "llama.attention.layer_norm_rms_epsilon", kInf,
                                 "llama.attention.layer_norm_rms_epsilon inf is not in (0, 1]"},
                          F32Key{"gguf-rope-scaling-factor-1e30", "llama.rope.scaling.factor", 1e30f,
                                 "llama.rope.scaling.factor 1e+30 is not in (0, 1024]"}}) {
    GgufSpec s;
    const std::string key = k.key;
    const float v = k.value;
    s.extra = [key, v](GgufWriter& w) {
      w.add_f32(key, v);
      if (key == "llama.rope.scaling.factor") w.add_string("llama.rope.scaling.type", "linear");
    };
    gguf(k.name, s, k.refusal);
  }
  {
    GgufSpec s;
    s.extra = [](GgufWriter& w) {
      w.add_tensor("rope_freqs.weight", DType::F32, {2}, [](uint8_t* dst, int64_t, int64_t) {
        const float f[2] = {0.0f, 1.0f};
        std::memcpy(dst, f, sizeof f);
      });
    };
    gguf("gguf-rope-freqs-zero", s, "rope_freqs.weight entry 0 is 0");
  }

  // Hugging Face folders.
  hf("hf-layers-10000000", {{{"num_hidden_layers", "10000000"}}, "", 0}, "num_hidden_layers 10000000 exceeds the limit 4096");
  hf("hf-vocab-67108864", {{{"vocab_size", "67108864"}}, "", 0}, "vocab_size 67108864 exceeds the limit 4194304");
  hf("hf-vocab-4000000-of-13", {{{"vocab_size", "4000000"}}, "", 0},
     "vocab_size 4000000 but model.embed_tokens.weight has 13 rows");
  hf("hf-head-dim-2147483648-llama3",
     {{{"head_dim", "2147483648"}, {"rope_scaling", R"({"rope_type":"llama3","factor":8.0})"}}, "", 0},
     "head_dim 2147483648 exceeds the limit 4096");
  hf("hf-rope-theta-negative", {{{"rope_theta", "-1.0"}}, "", 0}, "rope_theta -1 is not in [1, 1e+12]");
  hf("hf-rope-theta-1e39", {{{"rope_theta", "1e39"}}, "", 0}, "rope_theta inf is not in [1, 1e+12]");
  hf("hf-rope-llama3-low-equals-high",
     {{{"rope_scaling", R"({"rope_type":"llama3","factor":8.0,"low_freq_factor":4.0,"high_freq_factor":4.0})"}}, "", 0},
     "rope_scaling high_freq_factor 4 is not above low_freq_factor 4");
  hf("hf-nan-norm", {{}, "model.norm.weight", kNaN}, "tensor 'output_norm.weight' holds NaN or infinite values");

  // llama2.c checkpoints: the file must hold every layer, so a long one is a large file.
  {
    const fs::path m = dir / "llama2c-layers-15000.bin", t = dir / "llama2c-tokenizer.bin";
    write_llama2c(m, t, 15000);
    out.push_back({"llama2c-layers-15000", m.string(), t.string(), "n_layers 15000 exceeds the limit 4096"});
    const fs::path n = dir / "llama2c-nan-norm.bin";
    write_llama2c(n, t, 1, kNaN);
    out.push_back({"llama2c-nan-norm", n.string(), t.string(), "tensor 'output_norm.weight' holds NaN or infinite values"});
  }

  // .p64 files whose CRCs all match what was changed.
  {
    const fs::path p = dir / "p64-n-layer-10000000.p64";
    write_p64_claiming_layers(p, 10'000'000);
    out.push_back({"p64-n-layer-10000000", p.string(), "", "n_layer 10000000 exceeds the limit 4096"});
    const fs::path q = dir / "p64-nan-norm.p64";
    write_p64_with_nan(q, "blk.0.attn_norm.weight");
    out.push_back({"p64-nan-norm", q.string(), "", "tensor 'blk.0.attn_norm.weight' holds NaN or infinite values"});
  }
  for (auto& m : out)
    if (m.name.rfind("p64-", 0) == 0) m.prompt = "t3";
  return out;
}

}  // namespace p64::test
