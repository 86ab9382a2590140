// write_synth: the plan's metadata and tokenizer block, then every tensor filled by random
// quantized blocks through the streaming GGUF writer.
#include <algorithm>
#include <cstring>

#include "engine/common/error.h"
#include "engine/format/gguf_writer.h"
#include "engine/format/synth.h"
#include "engine/format/synth_weights.h"
#include "engine/model/architecture.h"
#include "engine/model/tiktoken.h"

namespace p64 {
namespace {


// Biases spread four times the weights: a q/k/v bias then moves each head's values about as
// much as its inputs do, so a forward pass that drops one decodes other tokens.
constexpr float kBiasPerWeightStd = 4.0f;

// The keys llama.cpp's loader reads for the architecture, spelled by its table.
void add_model_metadata(GgufWriter& w, const SynthPlan& plan) {
  const HParams& hp = plan.hp;
  const ArchKeys& k = architecture(hp.arch, "synth").gguf;
  auto key = [&](std::string_view suffix) { return hp.arch + "." + std::string(suffix); };
  w.add_string("general.architecture", hp.arch);
  w.add_string("general.name", hp.name);
  w.add_u32("general.file_type", synth_file_type(plan.quant));
  w.add_u32("general.quantization_version", 2);
  w.add_u32(key(k.n_ctx_train), hp.n_ctx_train);
  w.add_u32(key(k.n_embd), hp.n_embd);
  w.add_u32(key(k.n_layer), hp.n_layer);
  w.add_u32(key(k.n_ff), hp.n_ff);
  w.add_u32(key(k.n_head), hp.n_head);
  w.add_u32(key(k.n_head_kv), hp.n_head_kv);
  w.add_f32(key(k.rope_base), hp.rope_base);
  w.add_f32(key(k.rms_eps), hp.rms_eps);
  w.add_u32(key(k.head_dim), hp.head_dim);
  w.add_u32(key(k.value_length), hp.head_dim);
  w.add_u32(key(k.rope_dim), hp.rope_dim);
  w.add_u32(key(k.n_vocab), hp.n_vocab);
  // The keys of the architecture's own branches, where its GGUF spells them.
  if (!k.sliding_window.empty() && hp.sliding_window) w.add_u32(key(k.sliding_window), hp.sliding_window);
  if (!k.attn_softcap.empty() && hp.attn_softcap != 0.0f) w.add_f32(key(k.attn_softcap), hp.attn_softcap);
  if (!k.final_softcap.empty() && hp.final_softcap != 0.0f) w.add_f32(key(k.final_softcap), hp.final_softcap);
  // LongRope's factors are tensors; its original context and attention factor are keys.
  if (hp.rope_scaling.type == RopeScalingType::LongRope) {
    w.add_u32(key(k.rope_original_context), hp.rope_scaling.original_context);
    if (!k.rope_attn_factor.empty()) w.add_f32(key(k.rope_attn_factor), hp.rope_attn_factor);
  }
}

void add_vocabulary(GgufWriter& w, const Vocabulary& v) {
  const bool bpe = v.kind == TokenizerKind::ByteLevelBPE;
  w.add_string("tokenizer.ggml.model", bpe ? "gpt2" : "llama");
  if (!v.pre.empty()) w.add_string("tokenizer.ggml.pre", v.pre);
  w.add_string_array("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w.add_f32_array("tokenizer.ggml.scores", v.scores);
  std::vector<int32_t> types = v.types;
  if (types.empty()) types.assign(v.tokens.size(), static_cast<int32_t>(TokenType::Normal));
  w.add_i32_array("tokenizer.ggml.token_type", types);
  if (!v.merges.empty()) w.add_string_array("tokenizer.ggml.merges", v.merges);
  if (v.bos_id >= 0) w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
  if (v.eos_id >= 0) w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
  if (v.eot_id >= 0) w.add_u32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(v.eot_id));
  if (v.unk_id >= 0) w.add_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id));
  if (v.pad_id >= 0) w.add_u32("tokenizer.ggml.padding_token_id", static_cast<uint32_t>(v.pad_id));
  w.add_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  w.add_bool("tokenizer.ggml.add_eos_token", v.add_eos);
  if (!bpe) w.add_bool("tokenizer.ggml.add_space_prefix", v.add_space_prefix);
  if (!v.chat_template.empty()) w.add_string("tokenizer.chat_template", v.chat_template);
}

// The writer with every key and tensor declared; nothing is generated until write().
GgufWriter make_synth_writer(const SynthPlan& plan, const SynthOptions& options) {
  Vocabulary vocab;
  if (options.vocab_path.empty()) {
    vocab = synth_vocabulary(plan.hp.n_vocab);
  } else {
    vocab = read_tiktoken_model(options.vocab_path);
    if (vocab.size() != plan.hp.n_vocab)
      throw Error(options.vocab_path + ": vocabulary has " + std::to_string(vocab.size()) + " tokens but the preset needs " +
                  std::to_string(plan.hp.n_vocab));
  }

  GgufWriter w;
  add_model_metadata(w, plan);
  add_vocabulary(w, vocab);

  for (size_t ti = 0; ti < plan.tensors.size(); ++ti) {
    const SynthTensor& t = plan.tensors[ti];
    const uint64_t row_bytes = dtype_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
    GgufFillFn fill;
    switch (t.role) {
      case SynthRole::Norm:
        fill = [n = t.ne[0]](uint8_t* dst, int64_t, int64_t rows) {
          auto* f = reinterpret_cast<float*>(dst);
          std::fill(f, f + n * rows, 1.0f);
        };
        break;
      case SynthRole::RopeFreqs: {
        std::vector<float> factors = plan.hp.rope_freq_factors;
        if (factors.empty()) factors = llama3_rope_freq_factors(plan.hp);
        if (static_cast<int64_t>(factors.size()) != t.ne[0])
          throw Error("synth: rope_freqs needs " + std::to_string(t.ne[0]) + " factors, have " + std::to_string(factors.size()));
        fill = [factors](uint8_t* dst, int64_t, int64_t) { std::memcpy(dst, factors.data(), factors.size() * sizeof(float)); };
        break;
      }
      case SynthRole::RopeFactorsLong: {
        const std::vector<float> factors = synth_longrope_factors(plan.hp, true);
        fill = [factors](uint8_t* dst, int64_t, int64_t) { std::memcpy(dst, factors.data(), factors.size() * sizeof(float)); };
        break;
      }
      case SynthRole::Bias:
        fill = [n = t.ne[0], ti, seed = options.seed, std = options.weight_std](uint8_t* dst, int64_t, int64_t) {
          synth_detail::Rng rng(synth_detail::row_seed(seed, ti, 0));
          synth_detail::fill_random_row(DType::F32, dst, n, rng, kBiasPerWeightStd * std);
        };
        break;
      case SynthRole::RandomNorm:
        fill = [n = t.ne[0], ti, seed = options.seed](uint8_t* dst, int64_t, int64_t) {
          synth_detail::Rng rng(synth_detail::row_seed(seed, ti, 0));
          auto* f = reinterpret_cast<float*>(dst);
          for (int64_t i = 0; i < n; ++i) f[i] = 0.5f + rng.uniform();
        };
        break;
      case SynthRole::Matrix:
        fill = [type = t.type, n = t.ne[0], row_bytes, ti, seed = options.seed, std = options.weight_std](
                   uint8_t* dst, int64_t first, int64_t rows) {
          for (int64_t r = 0; r < rows; ++r) {
            synth_detail::Rng rng(synth_detail::row_seed(seed, ti, first + r));
            synth_detail::fill_random_row(type, dst + static_cast<uint64_t>(r) * row_bytes, n, rng, std);
          }
        };
        break;
    }
    w.add_tensor(t.name, t.type, t.ne, std::move(fill));
  }
  return w;
}

}  // namespace

uint64_t synth_file_size(const SynthPlan& plan, const SynthOptions& options) {
  return make_synth_writer(plan, options).file_size();
}

SynthResult write_synth(const SynthPlan& plan, const std::string& path, const SynthOptions& options) {
  GgufWriteOptions wo;
  wo.output = options.output;
  wo.output.reads(options.vocab_path, "the vocabulary being read");
  check_output_path(path, wo.output);  // before the vocabulary is read and the metadata built
  const GgufWriter w = make_synth_writer(plan, options);
  wo.threads = options.threads;
  wo.progress = options.progress;
  wo.sync = options.sync;
  w.write(path, wo);
  return {w.file_size(), plan.tensor_bytes(), plan.tensors.size()};
}

}  // namespace p64
