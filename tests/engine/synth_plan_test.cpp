// Synthetic-model plans: presets, the llama.cpp tensor-type mixes, sizes. Nothing is written.
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/format/synth.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

const SynthTensor& find(const SynthPlan& p, const std::string& name) {
  for (const auto& t : p.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

// The Q4_K_M rule restated independently of the implementation.
bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

TEST(SynthPlan, Llama32_3B_Q4_K_M_TypesFollowTheRule) {
  const SynthPlan p = plan_synth(synth_preset("llama-3.2-3b"), SynthQuant::Q4_K_M);
  const int n = 28;
  // 1 rope_freqs + 1 token_embd + 9 per layer + output_norm; tied, so no output.weight.
  ASSERT_EQ(p.tensors.size(), 2u + 9u * n + 1u);
  EXPECT_EQ(find(p, "token_embd.weight").type, DType::Q6_K);  // the tied embedding is the output
  EXPECT_EQ(find(p, "rope_freqs.weight").type, DType::F32);
  EXPECT_EQ(find(p, "output_norm.weight").type, DType::F32);
  std::vector<int> q6_layers;
  for (int i = 0; i < n; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    const DType wide = more_bits(i, n) ? DType::Q6_K : DType::Q4_K;
    EXPECT_EQ(find(p, b + "attn_v.weight").type, wide) << i;
    EXPECT_EQ(find(p, b + "ffn_down.weight").type, wide) << i;
    for (const char* m : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"})
      EXPECT_EQ(find(p, b + m + ".weight").type, DType::Q4_K) << b << m;
    for (const char* m : {"attn_norm", "ffn_norm"}) EXPECT_EQ(find(p, b + m + ".weight").type, DType::F32);
    if (wide == DType::Q6_K) q6_layers.push_back(i);
  }
  // n/8 = 3, 7n/8 = 24: layers 0-2, 24-27, and 5, 8, ..., 23 (every third from 3).
  EXPECT_EQ(q6_layers, (std::vector<int>{0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27}));
  std::map<DType, int> count;
  for (const auto& t : p.tensors) ++count[t.type];
  EXPECT_EQ(count[DType::Q6_K], 1 + 2 * 14);
  EXPECT_EQ(count[DType::Q4_K], 5 * 28 + 2 * 14);
  EXPECT_EQ(count[DType::F32], 1 + 2 * 28 + 1);
}

TEST(SynthPlan, Llama32_3B_Q4_K_M_MatchesLlamaBenchOfTheRealShape) {
  // llama-bench's model_size is the sum of tensor bytes, model_n_params the element count, of a
  // Llama-3.2-3B-shaped Q4_K_M GGUF made by llama.cpp's own quantizer rules.
  const auto path = test::shared_dir() / "peers" / "llama-bench-cuda-h200-llama32-3b-q4km.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  const auto j = nlohmann::json::parse(std::ifstream(path));
  const SynthPlan p = plan_synth(synth_preset("llama-3.2-3b"), SynthQuant::Q4_K_M);
  uint64_t params = 0;
  for (const auto& t : p.tensors) {
    uint64_t e = 1;
    for (int64_t d : t.ne) e *= static_cast<uint64_t>(d);
    params += e;
  }
  EXPECT_EQ(p.tensor_bytes(), j[0]["model_size"].get<uint64_t>());
  EXPECT_EQ(params, j[0]["model_n_params"].get<uint64_t>());
}

TEST(SynthPlan, Smollm2_360M_FallsBackFor960WideRows) {
  const SynthPlan p = plan_synth(synth_preset("smollm2-360m"), SynthQuant::Q4_K_M);
  const int n = 32;
  EXPECT_EQ(find(p, "token_embd.weight").type, DType::Q8_0);  // Q6_K, but 960 % 256 != 0
  for (int i = 0; i < n; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    // Rows of 960 (n_embd) and of 960 (q_dim = 15 * 64) fall back; ffn_down rows are 2560 = 10 * 256.
    for (const char* m : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"})
      EXPECT_EQ(find(p, b + m + ".weight").type, DType::Q5_0) << b << m;
    EXPECT_EQ(find(p, b + "attn_v.weight").type, more_bits(i, n) ? DType::Q8_0 : DType::Q5_0) << i;
    EXPECT_EQ(find(p, b + "ffn_down.weight").type, more_bits(i, n) ? DType::Q6_K : DType::Q4_K) << i;
  }
  EXPECT_THROW(find(p, "rope_freqs.weight"), std::runtime_error);  // no llama3 scaling
}

TEST(SynthPlan, Q8_0AndF16MixesAndFileTypes) {
  for (SynthQuant q : {SynthQuant::Q8_0, SynthQuant::F16, SynthQuant::F32}) {
    const SynthPlan p = plan_synth(synth_preset("llama-3.1-8b"), q);
    const DType want = q == SynthQuant::Q8_0 ? DType::Q8_0 : q == SynthQuant::F16 ? DType::F16 : DType::F32;
    EXPECT_EQ(find(p, "output.weight").type, want);  // 8B is untied
    EXPECT_EQ(find(p, "token_embd.weight").type, want);
    for (const auto& t : p.tensors) {
      if (t.role == SynthRole::Matrix) EXPECT_EQ(t.type, want) << t.name;
      else EXPECT_EQ(t.type, DType::F32) << t.name;
    }
  }
  EXPECT_EQ(synth_file_type(SynthQuant::Q4_K_M), 15u);
  EXPECT_EQ(synth_file_type(SynthQuant::Q8_0), 7u);
  EXPECT_EQ(synth_file_type(SynthQuant::F16), 1u);
  EXPECT_EQ(synth_file_type(SynthQuant::F32), 0u);
  EXPECT_EQ(synth_quant_from_name("F32"), SynthQuant::F32);
  const SynthPlan u = plan_synth(synth_preset("llama-3.1-8b"), SynthQuant::Q4_K_M);
  EXPECT_EQ(find(u, "output.weight").type, DType::Q6_K);
  EXPECT_EQ(find(u, "token_embd.weight").type, DType::Q4_K);  // an untied embedding is a plain matrix
}

TEST(SynthPlan, PresetsHaveThePublishedShapes) {
  struct Want {
    const char* name;
    uint32_t e, l, h, kv, hd, ff, v, ctx;
    float base;
    bool tied;
    float llama3;
    const char* arch = "llama";
    float eps = 1e-5f;
  };
  const Want wants[] = {
      {"llama-3.2-3b", 3072, 28, 24, 8, 128, 8192, 128256, 131072, 500000, true, 32},
      {"llama-3.2-1b", 2048, 16, 32, 8, 64, 8192, 128256, 131072, 500000, true, 32},
      {"llama-3.1-8b", 4096, 32, 32, 8, 128, 14336, 128256, 131072, 500000, false, 8},
      {"smollm2-360m", 960, 32, 15, 5, 64, 2560, 49152, 8192, 100000, true, 0},
      {"smollm2-135m", 576, 30, 9, 3, 64, 1536, 49152, 8192, 100000, true, 0},
      {"qwen2.5-0.5b", 896, 24, 14, 2, 64, 4864, 151936, 32768, 1000000, true, 0, "qwen2", 1e-6f},
      {"qwen2.5-3b", 2048, 36, 16, 2, 128, 11008, 151936, 32768, 1000000, true, 0, "qwen2", 1e-6f},
      {"qwen3-0.6b", 1024, 28, 16, 8, 128, 3072, 151936, 40960, 1000000, true, 0, "qwen3", 1e-6f},  // head_dim != 1024 / 16
      {"qwen3-4b", 2560, 36, 32, 8, 128, 9728, 151936, 40960, 1000000, true, 0, "qwen3", 1e-6f},
      {"gemma-2-2b", 2304, 26, 8, 4, 256, 9216, 256000, 8192, 10000, true, 0, "gemma2", 1e-6f},  // head_dim != 2304 / 8
      {"gemma-3-1b", 1152, 26, 4, 1, 256, 6912, 262144, 32768, 1000000, true, 0, "gemma3", 1e-6f},
  };
  for (const Want& w : wants) {
    const HParams hp = synth_preset(w.name);
    EXPECT_EQ(hp.n_embd, w.e) << w.name;
    EXPECT_EQ(hp.n_layer, w.l) << w.name;
    EXPECT_EQ(hp.n_head, w.h) << w.name;
    EXPECT_EQ(hp.n_head_kv, w.kv) << w.name;
    EXPECT_EQ(hp.head_dim, w.hd) << w.name;
    EXPECT_EQ(hp.n_ff, w.ff) << w.name;
    EXPECT_EQ(hp.n_vocab, w.v) << w.name;
    EXPECT_EQ(hp.n_ctx_train, w.ctx) << w.name;
    EXPECT_EQ(hp.rope_base, w.base) << w.name;
    EXPECT_EQ(hp.rms_eps, w.eps) << w.name;
    EXPECT_EQ(hp.arch, w.arch) << w.name;
    EXPECT_EQ(hp.rope_layout, std::string(w.arch) == "llama" ? RopeLayout::Adjacent : RopeLayout::Halves) << w.name;
    EXPECT_EQ(hp.tied_output, w.tied) << w.name;
    if (w.llama3 > 0) {
      EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::Llama3) << w.name;
      EXPECT_EQ(hp.rope_scaling.factor, w.llama3) << w.name;
      EXPECT_EQ(hp.rope_scaling.low_freq_factor, 1.0f);
      EXPECT_EQ(hp.rope_scaling.high_freq_factor, 4.0f);
      EXPECT_EQ(hp.rope_scaling.original_context, 8192u);
    } else {
      EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::None) << w.name;
    }
  }
  EXPECT_THROW(synth_preset("llama-9b"), Error);
  EXPECT_THROW(synth_quant_from_name("Q3_K_S"), Error);
}

// Each architecture's tensors, from its table: qwen2 adds three biases a block, qwen3 two
// head norms; the names and the 1-D F32 shapes are those llama.cpp's loader asks for.
TEST(SynthPlan, QwenPresetsPlanTheirArchitecturesTensors) {
  const SynthPlan q2 = plan_synth(synth_preset("qwen2.5-0.5b"), SynthQuant::Q4_K_M);
  EXPECT_EQ(q2.tensors.size(), 2u + 24u * 12u);  // token_embd and output_norm (tied), 12 a block
  const SynthTensor& bk = find(q2, "blk.23.attn_k.bias");
  EXPECT_EQ(bk.type, DType::F32);
  EXPECT_EQ(bk.ne, std::vector<int64_t>{128});  // kv_dim = 2 x 64
  EXPECT_EQ(bk.role, SynthRole::Bias);
  EXPECT_EQ(find(q2, "blk.0.attn_q.bias").ne, std::vector<int64_t>{896});
  EXPECT_EQ(find(q2, "blk.0.attn_q.weight").type, DType::Q5_0);  // 896 is not a multiple of 256
  const SynthPlan q3 = plan_synth(synth_preset("qwen3-0.6b"), SynthQuant::Q4_K_M);
  EXPECT_EQ(q3.tensors.size(), 2u + 28u * 11u);
  const SynthTensor& qn = find(q3, "blk.5.attn_q_norm.weight");
  EXPECT_EQ(qn.ne, std::vector<int64_t>{128});
  EXPECT_EQ(qn.role, SynthRole::RandomNorm);
  EXPECT_EQ(find(q3, "blk.5.attn_q.weight").ne, (std::vector<int64_t>{1024, 2048}));  // q_dim 16 x 128
  EXPECT_EQ(find(q3, "blk.5.attn_output.weight").ne, (std::vector<int64_t>{2048, 1024}));
  for (const SynthTensor& t : q3.tensors) EXPECT_EQ(t.name.find(".bias"), std::string::npos) << t.name;
}

// Gemma's block from its table: the four norms (post-norms too) and, for gemma3, the q/k norms;
// norms random (their HF form is w - 1, and a reader that swapped two would decode otherwise).
// The window, layer pattern, local RoPE base and soft-caps are the published configs'.
TEST(SynthPlan, GemmaPresetsPlanTheirArchitecturesTensorsAndWindows) {
  const SynthPlan g2 = plan_synth(synth_preset("gemma-2-2b"), SynthQuant::Q4_K_M);
  EXPECT_EQ(g2.tensors.size(), 2u + 26u * 11u);  // token_embd and output_norm (tied), 11 a block
  for (const char* n : {"attn_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"}) {
    const SynthTensor& t = find(g2, std::string("blk.25.") + n + ".weight");
    EXPECT_EQ(t.ne, std::vector<int64_t>{2304}) << n;
    EXPECT_EQ(t.role, SynthRole::RandomNorm) << n;
  }
  EXPECT_EQ(find(g2, "output_norm.weight").role, SynthRole::RandomNorm);
  EXPECT_EQ(find(g2, "blk.0.attn_q.weight").ne, (std::vector<int64_t>{2304, 2048}));  // q_dim 8 x 256
  EXPECT_EQ(find(g2, "token_embd.weight").type, DType::Q6_K);  // tied: the output's type
  EXPECT_EQ(g2.hp.sliding_window, 4096u);
  EXPECT_EQ(g2.hp.sliding_window_pattern, 2u);
  EXPECT_EQ(g2.hp.attn_softcap, 50.0f);
  EXPECT_EQ(g2.hp.final_softcap, 30.0f);
  EXPECT_EQ(g2.hp.rope_base_local, 0.0f);
  const SynthPlan g3 = plan_synth(synth_preset("gemma-3-1b"), SynthQuant::Q4_K_M);
  EXPECT_EQ(g3.tensors.size(), 2u + 26u * 13u);
  EXPECT_EQ(find(g3, "blk.7.attn_k_norm.weight").ne, std::vector<int64_t>{256});
  EXPECT_EQ(find(g3, "blk.7.attn_q.weight").type, DType::Q5_0);  // 1152 is not a multiple of 256
  EXPECT_EQ(g3.hp.sliding_window, 512u);
  EXPECT_EQ(g3.hp.sliding_window_pattern, 6u);
  EXPECT_EQ(g3.hp.rope_base_local, 10000.0f);
  EXPECT_EQ(g3.hp.attn_softcap, 0.0f);
  EXPECT_EQ(g3.hp.final_softcap, 0.0f);
}

TEST(SynthPlan, Llama3RopeFactors) {
  const HParams hp = synth_preset("llama-3.2-3b");
  const auto f = llama3_rope_freq_factors(hp);
  ASSERT_EQ(f.size(), 64u);
  // Wavelength 2 pi base^(i/d): the fastest pairs (wavelength < 8192/4) are unscaled, the
  // slowest (wavelength > 8192) divided by the full factor, a smooth ramp between.
  EXPECT_EQ(f.front(), 1.0f);
  EXPECT_EQ(f.back(), 32.0f);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]);
  int ramp = 0;
  for (float x : f) ramp += (x > 1.0f && x < 32.0f);
  EXPECT_GT(ramp, 0);
}

TEST(SynthPlan, VocabularyIsValid) {
  const Vocabulary v = synth_vocabulary(49152);
  ASSERT_EQ(v.size(), 49152u);
  ASSERT_EQ(v.scores.size(), v.size());
  ASSERT_EQ(v.types.size(), v.size());
  EXPECT_EQ(v.tokens[v.bos_id], "<s>");
  EXPECT_EQ(v.tokens[v.eos_id], "</s>");
  EXPECT_EQ(v.tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(v.type_of(3 + 0xFF), TokenType::Byte);
  std::set<std::string> unique(v.tokens.begin(), v.tokens.end());
  EXPECT_EQ(unique.size(), v.size());
  EXPECT_THROW(synth_vocabulary(100), Error);
}

}  // namespace
}  // namespace p64
