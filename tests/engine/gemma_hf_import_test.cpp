// Gemma from a Hugging Face folder against the same model from GGUF. Each test writes the
// folder from a synth GGUF (F16 matrices, random norms) the way transformers saves one: HF
// tensor names, PyTorch shapes, each norm weight as w where the GGUF holds 1 + w, and a
// config.json in transformers 4's spelling (gemma2) or 5's (gemma3: layer_types, one
// rope_parameters block per layer type). The two imports must decode to the same logits, bit
// for bit; the config's other spellings and its refusals are checked on their own.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "decode_test_models.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/hf_import.h"
#include "engine/format/synth.h"
#include "engine/model/architecture.h"
#include "fuzz/fuzz_samples.h"
#include "support/cpu_logits.h"
#include "support/safetensors_writer.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

std::string synth_f16_gguf(const fs::path& dir, const std::string& preset) {
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  o.weight_std = 0.125f;
  const std::string path = (dir / (preset + ".gguf")).string();
  write_synth(plan_synth(synth_preset(preset), SynthQuant::F16), path, o);
  return path;
}

// The GGUF's tensors under their HF names in one model.safetensors: matrices byte for byte
// (F16), norms as w = stored - 1 in F32.
void write_hf_tensors(const GgufFile& g, const Architecture& arch, const fs::path& out) {
  std::vector<test::SafetensorsEntry> entries;
  for (const GgufTensorInfo& t : g.tensors()) {
    std::string hf;
    bool norm = false;
    for (const ArchTensor& a : arch.globals)
      if (t.name == a.gguf) hf = std::string(a.hf), norm = a.rms_weight();
    const size_t dot = t.name.find('.', 4);
    for (const ArchTensor& a : arch.block)
      if (t.name.rfind("blk.", 0) == 0 && t.name.substr(dot + 1) == a.gguf)
        hf = "model.layers." + t.name.substr(4, dot - 4) + "." + std::string(a.hf), norm = a.rms_weight();
    ASSERT_FALSE(hf.empty()) << t.name;
    ASSERT_TRUE(t.dtype == (norm ? DType::F32 : DType::F16)) << t.name;
    std::string bytes(reinterpret_cast<const char*>(t.data), t.bytes);
    if (norm)
      for (size_t i = 0; i < bytes.size(); i += 4) {
        float w;
        std::memcpy(&w, &bytes[i], 4);
        w -= 1.0f;
        std::memcpy(&bytes[i], &w, 4);
      }
    std::vector<int64_t> shape;
    for (uint32_t d = t.n_dims; d-- > 0;) shape.push_back(int64_t(t.ne[d]));
    entries.push_back({hf, norm ? "F32" : "F16", shape, bytes});
  }
  test::write_safetensors(out, entries);
}

// config.json as transformers 4 writes a Gemma 2 and transformers 5 a Gemma 3 (text) model.
std::string hf_config(const HParams& hp) {
  std::string c = R"({"hidden_size":)" + std::to_string(hp.n_embd) + R"(,"num_hidden_layers":)" +
                  std::to_string(hp.n_layer) + R"(,"num_attention_heads":)" + std::to_string(hp.n_head) +
                  R"(,"num_key_value_heads":)" + std::to_string(hp.n_head_kv) + R"(,"head_dim":)" +
                  std::to_string(hp.head_dim) + R"(,"intermediate_size":)" + std::to_string(hp.n_ff) +
                  R"(,"vocab_size":)" + std::to_string(hp.n_vocab) + R"(,"max_position_embeddings":)" +
                  std::to_string(hp.n_ctx_train) + R"(,"rms_norm_eps":1e-06,"sliding_window":)" +
                  std::to_string(hp.sliding_window) + R"(,"query_pre_attn_scalar":)" + std::to_string(hp.head_dim) +
                  R"(,"hidden_activation":"gelu_pytorch_tanh","attention_bias":false,"tie_word_embeddings":true)";
  if (hp.arch == "gemma2")
    return c + R"(,"model_type":"gemma2","rope_theta":10000.0,"attn_logit_softcapping":)" + std::to_string(hp.attn_softcap) +
           R"(,"final_logit_softcapping":)" + std::to_string(hp.final_softcap) + "}";
  std::string types;
  for (uint32_t l = 0; l < hp.n_layer; ++l)
    types += std::string(l ? "," : "") + ((l + 1) % 6 ? "\"sliding_attention\"" : "\"full_attention\"");
  return c + R"(,"model_type":"gemma3_text","attn_logit_softcapping":null,"final_logit_softcapping":null,"layer_types":[)" +
         types +
         R"(],"rope_parameters":{"full_attention":{"rope_type":"default","rope_theta":1000000.0},)"
         R"("sliding_attention":{"rope_type":"default","rope_theta":10000.0}}})";
}


class GemmaHf : public ::testing::TestWithParam<const char*> {};

TEST_P(GemmaHf, FolderAndGgufOfOneModelGiveTheSameLogits) {
  test::TempDir dir;
  const std::string gguf = synth_f16_gguf(dir.path(), GetParam());
  const GgufFile g = GgufFile::open(gguf);
  const HParams want = gguf_hparams(g);
  const fs::path hf = dir / "hf";
  fs::create_directories(hf);
  write_hf_tensors(g, architecture(want.arch, "test"), hf / "model.safetensors");
  std::ofstream(hf / "config.json") << hf_config(want);
  std::ofstream(hf / "tokenizer.json") << fuzz::tiny_tokenizer_json();

  const HParams got = load_hf_directory(hf.string()).hparams;
  EXPECT_EQ(got.arch, want.arch);
  EXPECT_EQ(got.sliding_window, want.sliding_window);
  EXPECT_EQ(got.sliding_window_pattern, want.sliding_window_pattern);
  EXPECT_EQ(got.rope_base, want.rope_base);
  EXPECT_EQ(got.rope_base_local, want.rope_base_local);
  EXPECT_EQ(got.attn_softcap, want.attn_softcap);
  EXPECT_EQ(got.final_softcap, want.final_softcap);
  EXPECT_EQ(got.attn_scale(), want.attn_scale());
  EXPECT_EQ(got.rope_layout, RopeLayout::Halves);
  EXPECT_TRUE(got.tied_output);

  // 24 positions: past the window of 8, through local and global layers.
  std::vector<int32_t> tokens;
  for (int i = 0; i < 24; ++i) tokens.push_back((i * 53 + 7) % 320);
  const std::vector<float> from_gguf = test::cpu_teacher_forced_logits(gguf, tokens), from_hf = test::cpu_teacher_forced_logits(hf.string(), tokens);
  ASSERT_EQ(from_gguf.size(), from_hf.size());
  size_t differ = 0;
  for (size_t i = 0; i < from_gguf.size(); ++i) differ += from_gguf[i] != from_hf[i];
  EXPECT_EQ(differ, 0u) << "of " << from_gguf.size() << " logits";
}

INSTANTIATE_TEST_SUITE_P(Architectures, GemmaHf, ::testing::Values("tiny-gemma2", "tiny-gemma3"), [](const auto& info) {
  return std::string(info.param).substr(5);
});

std::string gemma3_config(const std::string& extra) {
  return R"({"model_type":"gemma3_text","hidden_size":64,"num_hidden_layers":12,"num_attention_heads":4,
    "num_key_value_heads":2,"head_dim":32,"intermediate_size":128,"vocab_size":320,"rms_norm_eps":1e-06,
    "query_pre_attn_scalar":24,"sliding_window":8)" +
         extra + "}";
}

TEST(GemmaHfConfig, Transformers4And5SpellingsGiveTheSameHyperparameters) {
  test::TempDir dir;
  const HParams v4 = read_hf_config(test::write_file(dir, "config.json", gemma3_config(R"(,"sliding_window_pattern":6,
    "rope_theta":1000000.0,"rope_local_base_freq":10000.0,"rope_scaling":{"rope_type":"linear","factor":8.0})")));
  std::string types;
  for (int l = 0; l < 12; ++l) types += std::string(l ? "," : "") + (l == 5 || l == 11 ? "\"full_attention\"" : "\"sliding_attention\"");
  const HParams v5 = read_hf_config(test::write_file(dir, "config.json", gemma3_config(R"(,"layer_types":[)" + types + R"(],
    "rope_parameters":{"full_attention":{"rope_type":"linear","factor":8.0,"rope_theta":1000000.0},
    "sliding_attention":{"rope_type":"default","rope_theta":10000.0}})")));
  for (const HParams& hp : {v4, v5}) {
    EXPECT_EQ(hp.arch, "gemma3");
    EXPECT_EQ(hp.sliding_window, 8u);
    EXPECT_EQ(hp.sliding_window_pattern, 6u);
    EXPECT_TRUE(hp.layer_is_local(4));
    EXPECT_FALSE(hp.layer_is_local(5));
    EXPECT_EQ(hp.rope_base, 1e6f);
    EXPECT_EQ(hp.rope_base_local, 1e4f);
    EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::Linear);  // global layers only (the CPU backend's branch)
    EXPECT_EQ(hp.rope_scaling.factor, 8.0f);
    EXPECT_EQ(hp.query_pre_attn_scalar, 24.0f);
    EXPECT_EQ(hp.attn_softcap, 0.0f);  // gemma3 has none unless its config names one
    EXPECT_EQ(hp.final_softcap, 0.0f);
  }
  // gemma2 without the soft-cap keys takes transformers' defaults (50, 30); an explicit null is none.
  const std::string g2 = R"({"model_type":"gemma2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "head_dim":16,"intermediate_size":128,"vocab_size":320,"query_pre_attn_scalar":16)";
  HParams hp = read_hf_config(test::write_file(dir, "config.json", g2 + "}"));
  EXPECT_EQ(hp.attn_softcap, 50.0f);
  EXPECT_EQ(hp.final_softcap, 30.0f);
  EXPECT_EQ(hp.sliding_window, 4096u);
  EXPECT_EQ(hp.sliding_window_pattern, 2u);
  hp = read_hf_config(test::write_file(dir, "config.json", g2 + R"(,"final_logit_softcapping":null})"));
  EXPECT_EQ(hp.final_softcap, 0.0f);
  EXPECT_EQ(hp.attn_softcap, 50.0f);
}

TEST(GemmaHfConfig, LayerMixesAndActivationsTheForwardPassLacksAreRefusedByName) {
  test::TempDir dir;
  std::string types;
  for (int l = 0; l < 12; ++l) types += std::string(l ? "," : "") + (l == 5 || l == 9 ? "\"full_attention\"" : "\"sliding_attention\"");
  const std::string path = test::write_file(dir, "config.json", gemma3_config(R"(,"layer_types":[)" + types + "]"));
  std::string e = test::error_of([&] { read_hf_config(path); });
  EXPECT_NE(e.find(path + ": config at offset 0: layer_types: layer 9 is full_attention; the engine runs a global "
                          "layer every n-th layer (here n = 6) and no other mix"),
            std::string::npos)
      << e;
  test::write_file(dir, "config.json", gemma3_config(R"(,"hidden_activation":"gelu")"));
  e = test::error_of([&] { read_hf_config(path); });
  EXPECT_NE(e.find("hidden_activation: is \"gelu\"; a gemma3_text model with it is not supported (gelu_pytorch_tanh)"),
            std::string::npos)
      << e;
  test::write_file(dir, "config.json", gemma3_config(R"(,"layer_types":["sliding_attention"])"));
  e = test::error_of([&] { read_hf_config(path); });
  EXPECT_NE(e.find("layer_types: has 1 entries for 12 layers"), std::string::npos) << e;
}

}  // namespace
}  // namespace p64
