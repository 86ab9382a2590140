#pragma once
// A tiny random model of any architecture (a Llama unless hp.arch says otherwise) built in
// memory (Model::from_parts) for forward-pass tests, with the float weights kept beside it so
// a test can recompute the model in its own way.
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/model/architecture.h"
#include "engine/model/model.h"
#include "engine/quant/quant.h"

namespace p64::test {

struct TinyForwardModel {
  std::shared_ptr<const Model> model;
  // The weights each tensor holds, as floats (after quantization when the dtype is lossy).
  std::map<std::string, std::vector<float>> values;
};

inline HParams tiny_hparams(const std::string& arch = "llama") {
  HParams hp;
  hp.arch = arch;
  hp.rope_layout = architecture(arch, "tiny").gguf_rope_layout;
  hp.name = "tiny";
  hp.n_embd = 256;
  hp.n_layer = 2;
  hp.n_head = 4;
  hp.n_head_kv = 2;    // GQA
  hp.head_dim = 128;   // q_dim 512 != n_embd: head_dim as the file says, not n_embd / n_head
  hp.n_ff = 512;
  hp.n_vocab = 300;
  hp.n_ctx_train = 64;
  hp.rope_dim = 128;
  hp.rope_base = 10000.0f;
  hp.rms_eps = 1e-5f;
  hp.rope_scaling.type = RopeScalingType::Llama3;
  hp.rope_scaling.factor = 8.0f;
  hp.rope_scaling.low_freq_factor = 1.0f;
  hp.rope_scaling.high_freq_factor = 4.0f;
  hp.rope_scaling.original_context = 16;  // small, so the scaled bands matter at these positions
  if (arch == "gemma2" || arch == "gemma3") {
    // The architecture's layer pattern and local RoPE base, with a window these tests' sequences
    // cross; gemma3 gets six layers so that one is global. A query scalar that is not head_dim,
    // and gemma2's soft-caps small enough to bend these tiny models' scores and logits (the
    // real ones, 50 and 30, would barely touch them).
    const ArchDefaults& d = architecture(arch, "tiny").defaults;
    hp.n_layer = arch == "gemma3" ? 6 : 2;
    hp.sliding_window = 6;
    hp.sliding_window_pattern = d.sliding_window_pattern;
    hp.rope_base_local = d.rope_base_local;
    hp.query_pre_attn_scalar = 100.0f;
    if (arch == "gemma2") hp.attn_softcap = 1.0f, hp.final_softcap = 3.0f;
  }
  if (arch == "phi3") {
    // LongRope: short factors from 1 to 5.7 and an attention factor, over a partial rotation
    // (Phi-4-mini rotates 3/4 of each head) so that the factor's reach is checked too; a window
    // over every layer that the tests' sequences cross.
    hp.rope_dim = 96;
    hp.rope_scaling = {};
    hp.rope_scaling.type = RopeScalingType::LongRope;
    hp.rope_scaling.original_context = 64;
    for (uint32_t i = 0; i < hp.rope_dim / 2; ++i) hp.rope_freq_factors.push_back(1.0f + 0.1f * static_cast<float>(i));
    hp.rope_attn_factor = 1.3f;
    hp.sliding_window = 6;
  }
  return hp;
}

// `matrix_type` is used for every projection and the embedding where the shape allows (a
// row-interleaved type needs whole row groups, else the matrix keeps its AoS type); norms stay F32.
inline TinyForwardModel make_tiny_model(const HParams& hp, DType matrix_type, uint32_t seed = 1) {
  TinyForwardModel tm;
  auto storage = std::make_shared<std::vector<std::vector<uint8_t>>>();
  std::vector<TensorView> views;
  std::mt19937 rng(seed);
  auto add = [&](const std::string& name, int64_t ne0, int64_t ne1, DType t, float spread, float centre) {
    std::normal_distribution<float> g(centre, spread);
    std::vector<float> v(static_cast<size_t>(ne0 * ne1));
    for (auto& x : v) x = g(rng);
    const DType aos = dtype_aos_of(t);
    const DType stored = dtype_shape_problem(t, ne0, ne1).empty() ? t : aos;
    const uint64_t bytes = dtype_row_bytes(aos, static_cast<uint64_t>(ne0)) * static_cast<uint64_t>(ne1);
    storage->emplace_back(bytes);
    std::vector<uint8_t>& buf = storage->back();
    for (int64_t r = 0; r < ne1; ++r) {
      const size_t row_bytes = dtype_row_bytes(aos, static_cast<uint64_t>(ne0));
      quantize_row(aos, v.data() + r * ne0, buf.data() + r * row_bytes, ne0);
      dequantize_row(aos, buf.data() + r * row_bytes, v.data() + r * ne0, ne0);
    }
    if (dtype_is_interleaved(stored)) {
      const std::vector<uint8_t> plain = buf;
      interleave_rows(aos, plain.data(), buf.data(), ne1, ne0);
    }
    TensorView tv;
    tv.name = name;
    tv.dtype = stored;
    tv.n_dims = ne1 > 1 ? 2 : 1;
    tv.ne[0] = ne0;
    tv.ne[1] = ne1;
    tv.data = buf.data();
    tv.bytes = bytes;
    views.push_back(tv);
    tm.values[name] = std::move(v);
  };
  // The tensors of hp.arch's table in its order (for a Llama: the order, hence the random
  // values, the tests were written with). Norms centre on 1 (Gemma's as its GGUF holds them,
  // 1 + w); qwen2's biases are large enough that a forward pass without them gives other logits.
  const float s = 0.08f;
  const Architecture& arch = architecture(hp.arch, "tiny");
  auto add_as = [&](const ArchTensor& t, const std::string& name) {
    const int64_t ne0 = arch_dim(hp, t.ne0), ne1 = arch_dim(hp, t.ne1);
    const bool bias = t.role == ArchRole::Bq || t.role == ArchRole::Bk || t.role == ArchRole::Bv;
    if (t.role == ArchRole::TokenEmbd) add(name, ne0, ne1, matrix_type, 1.0f, 0);
    else if (bias) add(name, ne0, 1, DType::F32, 0.5f, 0);
    else if (t.role == ArchRole::QNorm || t.role == ArchRole::KNorm) add(name, ne0, 1, DType::F32, 0.3f, 1.0f);
    else if (t.norm()) add(name, ne0, 1, DType::F32, 0.1f, 1.0f);
    else add(name, ne0, ne1, matrix_type, s, 0);
  };
  for (const ArchTensor& t : arch.globals) add_as(t, std::string(t.gguf));
  for (uint32_t l = 0; l < hp.n_layer; ++l)
    for (const ArchTensor& t : arch.block) add_as(t, "blk." + std::to_string(l) + "." + std::string(t.gguf));
  Vocabulary vocab;
  for (uint32_t i = 0; i < hp.n_vocab; ++i) vocab.tokens.push_back("t" + std::to_string(i));
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  tm.model = Model::from_parts("tiny-in-memory", hp, vocab, std::move(views), storage);
  return tm;
}

}  // namespace p64::test
