#include "support/test_models.h"

#include <cmath>
#include <filesystem>
#include <random>

#include "engine/format/llama2c_reader.h"
#include "engine/quant/quant.h"
#include "support/shared_files.h"

namespace p64::test {

namespace {

struct Owned {
  std::vector<std::vector<uint8_t>> blobs;
};

}  // namespace

TinyTypes all_types(DType t) {
  TinyTypes x;
  x.embd = x.q = x.k = x.v = x.o = x.gate_up = x.down = x.output = t;
  return x;
}

namespace {
// The default mix with every type in a packed form (types without one stay as they are).
TinyTypes packed_mix(DType (*form)(DType)) {
  TinyTypes x;
  for (DType* t : {&x.embd, &x.q, &x.k, &x.v, &x.o, &x.gate_up, &x.down, &x.output}) *t = form(*t);
  return x;
}
}  // namespace

TinyTypes cpu_rows_mix() { return packed_mix(dtype_interleaved_of); }

TinyTypes soa_mix() { return packed_mix(dtype_soa_of); }

std::shared_ptr<const Model> make_tiny_model(const TinyTypes& types, uint64_t seed, bool tied, bool dequantized_twin,
                                             uint32_t n_ctx_train, uint32_t n_head) {
  HParams hp;
  hp.name = "test-tiny";
  hp.n_embd = 256;
  hp.n_layer = 2;
  hp.n_head = n_head;
  hp.n_head_kv = 2;
  hp.head_dim = 64;
  hp.n_ff = 512;
  hp.n_vocab = 384;
  hp.n_ctx_train = n_ctx_train;
  hp.rope_dim = 64;
  hp.rope_base = 10000.0f;
  hp.rms_eps = 1e-5f;
  hp.tied_output = tied;
  auto owned = std::make_shared<Owned>();
  std::vector<TensorView> tensors;
  std::mt19937_64 rng(seed);

  auto add = [&](const std::string& name, DType type_in, int64_t ne0, int64_t ne1, float stddev, float mean) {
    DType type = type_in;
    std::normal_distribution<float> nd(mean, stddev);
    std::vector<float> f(static_cast<size_t>(ne0 * ne1));
    for (auto& v : f) v = nd(rng);
    const DType aos = dtype_aos_of(type_in);
    const uint64_t row_bytes = dtype_row_bytes(aos, ne0);
    std::vector<uint8_t> data(row_bytes * ne1);
    for (int64_t r = 0; r < ne1; ++r) quantize_row(aos, f.data() + r * ne0, data.data() + r * row_bytes, ne0);
    if (dequantized_twin) {
      std::vector<uint8_t> back(f.size() * 4);
      for (int64_t r = 0; r < ne1; ++r)
        dequantize_row(aos, data.data() + r * row_bytes, reinterpret_cast<float*>(back.data()) + r * ne0, ne0);
      data.swap(back);
      type = DType::F32;
    } else if (dtype_is_soa(type)) {
      std::vector<uint8_t> soa(data.size());
      soa_pack(aos, data.data(), soa.data(), ne0 * ne1 / dtype_info(aos)->block_elems);
      data.swap(soa);
    } else if (dtype_is_interleaved(type)) {
      std::vector<uint8_t> rows(data.size());
      interleave_rows(aos, data.data(), rows.data(), ne1, ne0);
      data.swap(rows);
    }
    owned->blobs.push_back(std::move(data));
    TensorView t;
    t.name = name;
    t.dtype = type;
    t.n_dims = ne1 > 1 ? 2 : 1;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.data = owned->blobs.back().data();
    t.bytes = owned->blobs.back().size();
    tensors.push_back(t);
  };
  const float s_in = 1.0f / std::sqrt(256.0f), s_ff = 1.0f / std::sqrt(512.0f);
  add("token_embd.weight", types.embd, hp.n_embd, hp.n_vocab, 1.0f, 0.0f);
  add("output_norm.weight", DType::F32, hp.n_embd, 1, 0.1f, 1.0f);
  if (!tied) add("output.weight", types.output, hp.n_embd, hp.n_vocab, s_in * 2, 0.0f);
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", DType::F32, hp.n_embd, 1, 0.1f, 1.0f);
    add(p + "attn_q.weight", types.q, hp.n_embd, hp.q_dim(), s_in * 2, 0.0f);
    add(p + "attn_k.weight", types.k, hp.n_embd, hp.kv_dim(), s_in * 2, 0.0f);
    add(p + "attn_v.weight", types.v, hp.n_embd, hp.kv_dim(), s_in, 0.0f);
    add(p + "attn_output.weight", types.o, hp.q_dim(), hp.n_embd, s_in, 0.0f);
    add(p + "ffn_norm.weight", DType::F32, hp.n_embd, 1, 0.1f, 1.0f);
    add(p + "ffn_gate.weight", types.gate_up, hp.n_embd, hp.n_ff, s_in, 0.0f);
    add(p + "ffn_up.weight", types.gate_up, hp.n_embd, hp.n_ff, s_in, 0.0f);
    add(p + "ffn_down.weight", types.down, hp.n_ff, hp.n_embd, s_ff, 0.0f);
  }
  Vocabulary vocab;
  for (uint32_t i = 0; i < hp.n_vocab; ++i) vocab.tokens.push_back("t" + std::to_string(i));
  vocab.scores.assign(hp.n_vocab, 0.0f);
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  return Model::from_parts("tiny(" + std::string(dtype_name(types.q)) + ")", hp, vocab, tensors, owned);
}

std::shared_ptr<const Model> load_stories260k() {
  const auto bin = shared_model("stories260K.bin"), tok = shared_model("tok512.bin");
  if (!std::filesystem::exists(bin) || !std::filesystem::exists(tok)) return nullptr;
  Llama2cCheckpoint ck = read_llama2c(bin.string());
  Vocabulary vocab = read_llama2c_tokenizer(tok.string(), ck.hparams.n_vocab);
  return Model::from_parts(bin.string(), ck.hparams, vocab, ck.tensors, ck.map);
}

std::vector<int32_t> random_tokens(size_t n, uint32_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % vocab);
  return t;
}

}  // namespace p64::test
