#pragma once
// A tiny random Llama as a P64Image, for the container tests (F32 weights, norms near 1).
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/format/p64_writer.h"

namespace p64::test {

struct TinyModel {
  P64Image image;
  std::vector<std::shared_ptr<std::vector<float>>> storage;  // what the sources point into
};

inline TinyModel tiny_image(uint32_t seed = 7, uint32_t n_layer = 2, uint32_t n_embd = 32, uint32_t n_ff = 64) {
  TinyModel m;
  HParams& hp = m.image.hparams;
  hp.name = "tiny-test";
  hp.n_embd = n_embd;
  hp.n_layer = n_layer;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim = 8;
  hp.n_ff = n_ff;
  hp.n_vocab = 16;
  hp.n_ctx_train = 128;
  hp.rope_dim = 8;
  hp.tied_output = true;
  Vocabulary& v = m.image.vocab;
  for (uint32_t i = 0; i < hp.n_vocab; ++i) {
    v.tokens.push_back(i < 3 ? std::string(i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>") : "\xE2\x96\x81t" + std::to_string(i));
    v.scores.push_back(-static_cast<float>(i));
    v.types.push_back(i < 3 ? 3 : 1);
  }
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = 0;
  v.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}";
  std::mt19937 rng(seed);
  std::normal_distribution<float> w(0.0f, 0.02f);
  auto add = [&](const std::string& name, int64_t ne0, int64_t ne1, bool norm) {
    auto buf = std::make_shared<std::vector<float>>(static_cast<size_t>(ne0 * ne1));
    for (auto& x : *buf) x = norm ? 1.0f + w(rng) : w(rng);
    m.storage.push_back(buf);
    P64TensorSource s;
    s.name = name;
    s.dtype = DType::F32;
    s.n_dims = ne1 > 1 ? 2 : 1;
    s.ne[0] = ne0;
    s.ne[1] = ne1;
    s.data = reinterpret_cast<const uint8_t*>(buf->data());
    m.image.tensors.push_back(std::move(s));
  };
  // Deliberately not in layer-major order: the writer must order them.
  add("output_norm.weight", hp.n_embd, 1, true);
  for (uint32_t l = hp.n_layer; l-- > 0;) {
    std::string p = "blk." + std::to_string(l) + ".";
    add(p + "ffn_down.weight", hp.n_ff, hp.n_embd, false);
    add(p + "attn_q.weight", hp.n_embd, hp.q_dim(), false);
    add(p + "attn_k.weight", hp.n_embd, hp.kv_dim(), false);
    add(p + "attn_v.weight", hp.n_embd, hp.kv_dim(), false);
    add(p + "attn_output.weight", hp.q_dim(), hp.n_embd, false);
    add(p + "attn_norm.weight", hp.n_embd, 1, true);
    add(p + "ffn_norm.weight", hp.n_embd, 1, true);
    add(p + "ffn_gate.weight", hp.n_embd, hp.n_ff, false);
    add(p + "ffn_up.weight", hp.n_embd, hp.n_ff, false);
  }
  add("token_embd.weight", hp.n_embd, hp.n_vocab, false);
  return m;
}

}  // namespace p64::test
