// phi3 through every reader: the fused qkv and gate_up tensors and LongRope's short factors and
// attention factor survive GGUF -> P64 -> Model; a Hugging Face folder of the same model (written
// here from a synth GGUF as transformers saves one) decodes to the same logits bit for bit; the
// config's LongRope spellings give the hyperparameters transformers derives, its bad ones are
// refused naming the key; and a context past LongRope's original length is refused, not decoded
// with the wrong factors. The forward pass itself is held against a float64 reference in
// forward_reference_test.cpp and against llama.cpp in peer_perplexity_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "decode_test_models.h"
#include "engine/format/convert.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/hf_import.h"
#include "engine/format/p64_reader.h"
#include "engine/format/synth.h"
#include "engine/model/architecture.h"
#include "fuzz/fuzz_samples.h"
#include "support/cpu_logits.h"
#include "support/safetensors_writer.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

std::string synth_gguf(const fs::path& dir, SynthQuant quant, const std::string& name = "tiny-phi3.gguf") {
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  o.weight_std = 0.125f;
  const std::string path = (dir / name).string();
  write_synth(plan_synth(synth_preset("tiny-phi3"), quant), path, o);
  return path;
}

std::vector<float> floats_of(const GgufTensorInfo* t) {
  std::vector<float> v(static_cast<size_t>(t->elements()));
  std::memcpy(v.data(), t->data, v.size() * 4);
  return v;
}

void expect_same_bytes(const TensorView* got, const GgufTensorInfo* want) {
  ASSERT_NE(got, nullptr);
  ASSERT_NE(want, nullptr);
  ASSERT_EQ(got->bytes, want->bytes) << got->name;
  EXPECT_EQ(std::memcmp(got->data, want->data, got->bytes), 0) << got->name;
}

TEST(Phi3, FusedTensorsAndLongRopeSurviveGgufToP64ToModel) {
  test::TempDir dir;
  const std::string gguf = synth_gguf(dir.path(), SynthQuant::Q8_0);
  const std::string p64 = (dir / "m.p64").string();
  convert_to_p64(gguf, p64, {});
  const P64Contents c = inspect_p64(p64);
  EXPECT_EQ(c.header.version, 2u);
  EXPECT_FALSE(c.header.flags & p64_flags::kCertifiedDecodeProfile);
  for (const auto& t : c.tensors) EXPECT_EQ(t.name.find("rope_factors"), std::string::npos) << t.name << " is an hparam";

  const auto model = open_p64(p64);
  const HParams& hp = model->hparams();
  const GgufFile g = GgufFile::open(gguf);
  EXPECT_EQ(hp.arch, "phi3");
  EXPECT_EQ(hp.rope_layout, RopeLayout::Halves);  // llama.cpp's NEOX rope type
  EXPECT_EQ(hp.sliding_window, 32u);
  EXPECT_EQ(hp.sliding_window_pattern, 0u);  // every layer
  EXPECT_FALSE(hp.tied_output);
  EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(hp.rope_scaling.original_context, 4096u);
  EXPECT_EQ(hp.n_ctx_train, 131072u);
  EXPECT_EQ(hp.rope_freq_factors, floats_of(g.find_tensor("rope_factors_short.weight")));
  EXPECT_NE(hp.rope_freq_factors, floats_of(g.find_tensor("rope_factors_long.weight")));
  EXPECT_FLOAT_EQ(hp.rope_attn_factor, static_cast<float>(std::sqrt(1 + std::log(32.0) / std::log(4096.0))));
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& w = model->layers()[l];
    const std::string b = "blk." + std::to_string(l) + ".";
    expect_same_bytes(w.wqkv, g.find_tensor(b + "attn_qkv.weight"));
    expect_same_bytes(w.w_gate_up, g.find_tensor(b + "ffn_up.weight"));
    EXPECT_EQ(w.wqkv->ne[1], hp.q_dim() + 2 * hp.kv_dim());
    EXPECT_EQ(w.w_gate_up->ne[1], 2 * hp.n_ff);
    EXPECT_EQ(w.wq, nullptr);
    EXPECT_EQ(w.w_gate, nullptr);
    EXPECT_EQ(w.w_up, nullptr);
  }
  // inspect names the scaling (it once printed a type it did not know as "none").
  const test::CliRun r = test::run_p64("inspect --json " + p64, "", 10);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"rope_scaling\": \"longrope\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"rope_original_context\": 4096"), std::string::npos) << r.out;
}

// llama.cpp's loader gives a Phi-3 GGUF without phi3.attention.sliding_window the published
// model's window by its shape; a file that has the key keeps its own.
TEST(Phi3, AGgufWithoutAWindowKeyGetsTheWindowLlamaCppAssumes) {
  test::TempDir dir;
  struct Shape {
    uint32_t n_layer, n_head_kv, n_ctx_train, window_key, want;
  };
  for (const Shape& s : {Shape{32, 2, 4096, 0, 2047}, Shape{40, 2, 4096, 0, 2047}, Shape{32, 32, 131072, 0, 262144},
                         Shape{40, 2, 131072, 0, 131072}, Shape{32, 2, 131072, 0, 0}, Shape{2, 2, 4096, 0, 0},
                         Shape{32, 2, 4096, 100, 100}}) {
    HParams hp = synth_preset("tiny-phi3");
    hp.n_layer = s.n_layer;
    hp.n_head = std::max(hp.n_head, s.n_head_kv);
    hp.n_head_kv = s.n_head_kv;
    hp.n_ctx_train = s.n_ctx_train;
    hp.sliding_window = s.window_key;  // 0: synth writes no key
    SynthOptions o;
    o.threads = 1;
    o.sync = false;
    const std::string gguf = (dir / "w.gguf").string();
    fs::remove(gguf);
    write_synth(plan_synth(hp, SynthQuant::F16), gguf, o);
    EXPECT_EQ(gguf_hparams(GgufFile::open(gguf)).sliding_window, s.want)
        << s.n_layer << " layers, " << s.n_head_kv << " KV heads, " << s.n_ctx_train << " positions";
  }
}

TEST(Phi3, AMisshapenFusedTensorIsRefusedNamingFileAndTensor) {
  test::TempDir dir;
  SynthPlan plan = plan_synth(synth_preset("tiny-phi3"), SynthQuant::F32);
  for (SynthTensor& t : plan.tensors)
    if (t.name == "blk.1.attn_qkv.weight") t.ne[1] = 64, t.bytes = 64 * 64 * 4;  // q rows only
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  const std::string gguf = (dir / "bad.gguf").string();
  write_synth(plan, gguf, o);
  const std::string e = test::error_of([&] { convert_to_p64(gguf, (dir / "bad.p64").string(), {}); });
  EXPECT_EQ(e, gguf + ": tensor 'blk.1.attn_qkv.weight' has shape [64, 64], expected [64, 128]");
}

TEST(Phi3, AContextPastTheOriginalLengthIsRefusedNotDecodedWithShortFactors) {
  test::TempDir dir;
  const std::string p64 = (dir / "m.p64").string();
  convert_to_p64(synth_gguf(dir.path(), SynthQuant::Q8_0), p64, {});
  const auto model = open_p64(p64);
  auto be = make_cpu_backend();
  BackendOptions opt;
  opt.threads = 1;
  opt.max_context = 4097;
  const std::string e = test::error_of([&] { be->load(model, opt); });
  EXPECT_EQ(e, "cpu backend: " + p64 + ": a context of 4097 positions is past the 4096 that this phi3 model's short "
               "LongRope factors serve, and its long factors are not implemented; lower max_context (--ctx) to at most 4096");
  opt.max_context = 4096;
  EXPECT_NO_THROW(be->load(model, opt));
  EXPECT_EQ(be->max_context(), 4096u);
}

// The GGUF's tensors under their HF names in one model.safetensors (matrices F16 byte for byte,
// norms F32), without the rope_factors tensors, which HF keeps in config.json.
void write_hf_tensors(const GgufFile& g, const Architecture& arch, const fs::path& out) {
  std::vector<test::SafetensorsEntry> entries;
  for (const GgufTensorInfo& t : g.tensors()) {
    if (t.name.rfind("rope_factors_", 0) == 0) continue;
    std::string hf;
    for (const ArchTensor& a : arch.globals)
      if (t.name == a.gguf) hf = std::string(a.hf);
    const size_t dot = t.name.find('.', 4);
    for (const ArchTensor& a : arch.block)
      if (t.name.rfind("blk.", 0) == 0 && t.name.substr(dot + 1) == a.gguf)
        hf = "model.layers." + t.name.substr(4, dot - 4) + "." + std::string(a.hf);
    ASSERT_FALSE(hf.empty()) << t.name;
    std::vector<int64_t> shape;
    for (uint32_t d = t.n_dims; d-- > 0;) shape.push_back(int64_t(t.ne[d]));
    entries.push_back({hf, t.dtype == DType::F32 ? "F32" : "F16", shape,
                       std::string(reinterpret_cast<const char*>(t.data), t.bytes)});
  }
  test::write_safetensors(out, entries);
}

std::string json_list(const std::vector<float>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v[i]));
    s += (i ? "," : "") + std::string(buf);
  }
  return s + "]";
}

// config.json as Phi-3.5-mini's: the original length at the top level, LongRope's factors in
// rope_scaling, no attention factor (transformers derives it).
std::string phi3_config(const HParams& hp, const std::vector<float>& short_f, const std::vector<float>& long_f) {
  return R"({"model_type":"phi3","architectures":["Phi3ForCausalLM"],"hidden_size":)" + std::to_string(hp.n_embd) +
         R"(,"num_hidden_layers":)" + std::to_string(hp.n_layer) + R"(,"num_attention_heads":)" + std::to_string(hp.n_head) +
         R"(,"num_key_value_heads":)" + std::to_string(hp.n_head_kv) + R"(,"intermediate_size":)" + std::to_string(hp.n_ff) +
         R"(,"vocab_size":)" + std::to_string(hp.n_vocab) + R"(,"max_position_embeddings":)" + std::to_string(hp.n_ctx_train) +
         R"(,"original_max_position_embeddings":)" + std::to_string(hp.rope_scaling.original_context) +
         R"(,"rms_norm_eps":1e-05,"rope_theta":10000.0,"hidden_act":"silu","tie_word_embeddings":false,"sliding_window":)" +
         std::to_string(hp.sliding_window) + R"(,"rope_scaling":{"type":"longrope","short_factor":)" + json_list(short_f) +
         R"(,"long_factor":)" + json_list(long_f) + "}}";
}


TEST(Phi3, HfFolderAndGgufOfOneModelGiveTheSameLogits) {
  test::TempDir dir;
  const std::string gguf = synth_gguf(dir.path(), SynthQuant::F16);
  const GgufFile g = GgufFile::open(gguf);
  const HParams want = gguf_hparams(g);
  const fs::path hf = dir / "hf";
  fs::create_directories(hf);
  write_hf_tensors(g, architecture("phi3", "test"), hf / "model.safetensors");
  std::ofstream(hf / "config.json") << phi3_config(want, floats_of(g.find_tensor("rope_factors_short.weight")),
                                                   floats_of(g.find_tensor("rope_factors_long.weight")));
  std::ofstream(hf / "tokenizer.json") << fuzz::tiny_tokenizer_json();

  const HParams got = load_hf_directory(hf.string()).hparams;
  EXPECT_EQ(got.arch, "phi3");
  EXPECT_EQ(got.rope_layout, RopeLayout::Halves);
  EXPECT_EQ(got.rope_dim, want.rope_dim);
  EXPECT_EQ(got.sliding_window, want.sliding_window);
  EXPECT_EQ(got.rope_scaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(got.rope_scaling.original_context, want.rope_scaling.original_context);
  EXPECT_EQ(got.rope_freq_factors, want.rope_freq_factors);
  EXPECT_EQ(got.rope_attn_factor, want.rope_attn_factor);  // derived here, read from the GGUF there
  EXPECT_FALSE(got.tied_output);

  // 40 positions: past the window of 32.
  std::vector<int32_t> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back((i * 53 + 7) % 320);
  const std::vector<float> from_gguf = test::cpu_teacher_forced_logits(gguf, tokens, 64), from_hf = test::cpu_teacher_forced_logits(hf.string(), tokens, 64);
  ASSERT_EQ(from_gguf.size(), from_hf.size());
  size_t differ = 0;
  for (size_t i = 0; i < from_gguf.size(); ++i) differ += from_gguf[i] != from_hf[i];
  EXPECT_EQ(differ, 0u) << "of " << from_gguf.size() << " logits";
}

std::string config_with(const std::string& extra) {
  return R"({"model_type":"phi3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "intermediate_size":128,"vocab_size":320,"max_position_embeddings":16384,"rope_theta":10000.0)" + extra + "}";
}

TEST(Phi3HfConfig, LongRopeSpellingsAndTheirRefusals) {
  test::TempDir dir;
  const std::string eight = "[1,1.5,2,2.5,3,3.5,4,4.5]", six = "[1,1.5,2,2.5,3,3.5]";
  // Phi-3's "su", factors for the 16 dims of a head, the original length in the block.
  HParams hp = read_hf_config(test::write_file(dir, "config.json", config_with(R"(,"rope_scaling":{"type":"su","short_factor":)" + eight +
                                                            R"(,"long_factor":)" + eight +
                                                            R"(,"original_max_position_embeddings":4096})")));
  EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::LongRope);
  EXPECT_EQ(hp.rope_scaling.original_context, 4096u);
  EXPECT_EQ(hp.rope_freq_factors, (std::vector<float>{1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4.5f}));
  EXPECT_FLOAT_EQ(hp.rope_attn_factor, static_cast<float>(std::sqrt(1 + std::log(4.0) / std::log(4096.0))));  // 16384 / 4096
  EXPECT_EQ(hp.sliding_window, 0u);
  // transformers' rope_type spelling with an explicit attention factor, and Phi-4-mini's
  // partial rotation: 3/4 of 16 dims, so six factors.
  hp = read_hf_config(test::write_file(dir, "config.json", config_with(R"(,"partial_rotary_factor":0.75,"original_max_position_embeddings":4096,
    "sliding_window":2047,"rope_scaling":{"rope_type":"longrope","attention_factor":1.25,"short_factor":)" + six +
                                                    R"(,"long_factor":)" + six + "}")));
  EXPECT_EQ(hp.rope_dim, 12u);
  EXPECT_EQ(hp.rope_attn_factor, 1.25f);
  EXPECT_EQ(hp.sliding_window, 2047u);
  // No scaling block: plain RoPE (Phi-3-mini-4k).
  hp = read_hf_config(test::write_file(dir, "config.json", config_with(R"(,"rope_scaling":null)")));
  EXPECT_EQ(hp.rope_scaling.type, RopeScalingType::None);
  EXPECT_EQ(hp.rope_attn_factor, 1.0f);
  EXPECT_TRUE(hp.rope_freq_factors.empty());

  struct Bad {
    std::string extra, want;
  };
  for (const Bad& b : {Bad{R"(,"rope_scaling":{"type":"longrope","short_factor":)" + six + R"(,"long_factor":)" + eight + "}",
                           "rope_scaling.short_factor: has 6 entries; rotating 16 dimensions of each head needs 8"},
                       Bad{R"(,"rope_scaling":{"type":"longrope","short_factor":)" + eight + "}",
                           "rope_scaling.long_factor: missing (a list of 8 numbers)"},
                       Bad{R"(,"rope_scaling":{"type":"longrope","short_factor":[1,1,1,1,1,1,1,"x"],"long_factor":)" + eight + "}",
                           "rope_scaling.short_factor: holds \"x\", not a number"},
                       Bad{R"(,"partial_rotary_factor":0.3)", "partial_rotary_factor: is 0.3; head_dim 16 times it must be an even number"},
                       Bad{R"(,"hidden_act":"gelu")", "hidden_act: is \"gelu\"; a phi3 model with it is not supported (silu)"},
                       Bad{R"(,"rope_scaling":{"type":"yarn","factor":4})", "rope_scaling: type 'yarn' is not supported (llama3, linear, longrope)"}}) {
    const std::string path = test::write_file(dir, "config.json", config_with(b.extra));
    const std::string e = test::error_of([&] { read_hf_config(path); });
    EXPECT_NE(e.find(path + ": config at offset 0: " + b.want), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace p64
