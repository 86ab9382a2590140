// The architectures beyond Llama (qwen2, qwen3, phi3, gemma2, gemma3) through every reader: their
// tensors and hyperparameters survive GGUF -> P64 -> Model, a P64 that holds them is version 2
// (which a version 1 reader refuses), a missing or misshapen bias / q-k norm is refused naming
// the file and the tensor, an architecture without a table is refused naming it, and a backend
// that does not run a model refuses it (or "auto" passes it over). Tiny synth models, well
// under a second.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "decode_test_models.h"
#include "engine/common/error.h"
#include "engine/format/convert.h"
#include "engine/format/crc32c.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/format/gguf_writer.h"
#include "engine/format/hf_import.h"
#include "engine/format/p64_reader.h"
#include "engine/format/synth.h"
#include "app/common/register_backends.h"
#include "engine/runtime/backend.h"
#include "engine/runtime/backend_registry.h"
#include "fuzz/fuzz_samples.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

std::string write_gguf(const fs::path& dir, const SynthPlan& plan, const std::string& name) {
  SynthOptions o;
  o.threads = 1;
  o.sync = false;
  const std::string path = (dir / name).string();
  write_synth(plan, path, o);
  return path;
}

SynthPlan tiny_plan(const std::string& preset) { return plan_synth(synth_preset(preset), SynthQuant::Q8_0); }

std::string convert(const std::string& in, const fs::path& dir, const std::string& name) {
  const std::string out = (dir / name).string();
  convert_to_p64(in, out, {});
  return out;
}

void expect_same_bytes(const TensorView* got, const GgufTensorInfo* want) {
  ASSERT_NE(got, nullptr);
  ASSERT_NE(want, nullptr);
  ASSERT_EQ(got->bytes, want->bytes) << got->name;
  EXPECT_EQ(std::memcmp(got->data, want->data, got->bytes), 0) << got->name;
}

TEST(Architectures, Qwen2BiasesAndQwen3NormsSurviveGgufToP64ToModel) {
  test::TempDir dir;
  for (const std::string preset : {"tiny-qwen2", "tiny-qwen3"}) {
    const std::string gguf = write_gguf(dir.path(), tiny_plan(preset), preset + ".gguf");
    const std::string p64 = convert(gguf, dir.path(), preset + ".p64");
    const P64Contents c = inspect_p64(p64);
    const std::string arch = preset.substr(5);
    EXPECT_EQ(c.header.version, 2u) << "a version 1 reader must refuse a " << arch << " file";
    EXPECT_FALSE(c.header.flags & p64_flags::kCertifiedDecodeProfile) << "the GPU backends do not run " << arch;
    EXPECT_EQ(c.hparams.arch, arch);
    EXPECT_EQ(c.hparams.rope_layout, RopeLayout::Halves);  // llama.cpp's NEOX rope type for both

    const auto model = open_p64(p64);
    const GgufFile g = GgufFile::open(gguf);
    EXPECT_EQ(model->architecture().name, arch);
    const HParams& hp = model->hparams();
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
      const LayerWeights& w = model->layers()[l];
      const std::string b = "blk." + std::to_string(l) + ".";
      if (arch == "qwen2") {
        EXPECT_EQ(w.q_norm, nullptr);
        expect_same_bytes(w.bq, g.find_tensor(b + "attn_q.bias"));
        expect_same_bytes(w.bk, g.find_tensor(b + "attn_k.bias"));
        expect_same_bytes(w.bv, g.find_tensor(b + "attn_v.bias"));
        EXPECT_EQ(w.bq->ne[0], hp.q_dim());
        EXPECT_EQ(w.bk->ne[0], hp.kv_dim());
      } else {
        EXPECT_EQ(w.bq, nullptr);
        expect_same_bytes(w.q_norm, g.find_tensor(b + "attn_q_norm.weight"));
        expect_same_bytes(w.k_norm, g.find_tensor(b + "attn_k_norm.weight"));
        EXPECT_EQ(w.q_norm->ne[0], 32);  // head_dim, not n_embd / n_head = 16
        EXPECT_NE(hp.head_dim, hp.n_embd / hp.n_head);
      }
      expect_same_bytes(w.wq, g.find_tensor(b + "attn_q.weight"));  // GGUF's rows as they are: no permutation
    }
  }
  // A Llama is written exactly as before: version 1, certified.
  const std::string llama = convert(write_gguf(dir.path(), tiny_plan("tiny"), "tiny.gguf"), dir.path(), "tiny.p64");
  const P64Contents c = inspect_p64(llama);
  EXPECT_EQ(c.header.version, 1u);
  EXPECT_TRUE(c.header.flags & p64_flags::kCertifiedDecodeProfile);
  EXPECT_EQ(c.hparams.rope_layout, RopeLayout::Adjacent);
}

// Rewrites the header's version and its CRC, as a writer of that version would have.
void set_version(const std::string& path, uint32_t version) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::vector<char> header(512);
  f.read(header.data(), 512);
  std::memcpy(header.data() + 4, &version, 4);
  const uint32_t crc = crc32c(header.data(), 508);
  std::memcpy(header.data() + 508, &crc, 4);
  f.seekp(0);
  f.write(header.data(), 512);
}

TEST(Architectures, AVersion1FileMayHoldOnlyALlamaAndUnknownVersionsAreRefused) {
  test::TempDir dir;
  const std::string p64 = convert(write_gguf(dir.path(), tiny_plan("tiny-qwen3"), "q.gguf"), dir.path(), "q.p64");
  set_version(p64, 1);
  std::string e = test::error_of([&] { open_p64(p64); });
  EXPECT_NE(e.find(p64 + ": hparams at offset 512: architecture 'qwen3' needs format version 2, the header says 1"),
            std::string::npos)
      << e;
  set_version(p64, 3);
  e = test::error_of([&] { open_p64(p64); });
  EXPECT_NE(e.find(p64 + ": header at offset 4: version 3 is not supported (this build reads 1 and 2)"), std::string::npos) << e;
  set_version(p64, 2);
  EXPECT_NO_THROW(open_p64(p64));
}

// Gemma's post-norms and q/k norms reach the model's layers, and the hyperparameters its GGUF
// spells (window, soft-caps) or its architecture implies (layer pattern, local RoPE base) reach
// the P64 and come back from it; a Llama with a sliding window is version 2 and uncertified,
// since a version 1 reader would skip the window's key and decode it as a plain Llama.
TEST(Architectures, GemmaNormsAndWindowsSurviveGgufToP64ToModel) {
  test::TempDir dir;
  for (const std::string preset : {"tiny-gemma2", "tiny-gemma3"}) {
    const HParams want = synth_preset(preset);
    const std::string gguf = write_gguf(dir.path(), tiny_plan(preset), preset + ".gguf");
    const std::string p64 = convert(gguf, dir.path(), preset + ".p64");
    const P64Contents c = inspect_p64(p64);
    EXPECT_EQ(c.header.version, 2u);
    EXPECT_FALSE(c.header.flags & p64_flags::kCertifiedDecodeProfile);
    const auto model = open_p64(p64);
    const HParams& hp = model->hparams();
    EXPECT_EQ(hp.sliding_window, 8u) << preset;
    EXPECT_EQ(hp.sliding_window_pattern, preset == "tiny-gemma2" ? 2u : 6u);
    EXPECT_EQ(hp.rope_base_local, preset == "tiny-gemma2" ? 0.0f : 10000.0f);
    EXPECT_EQ(hp.attn_softcap, preset == "tiny-gemma2" ? 1.0f : 0.0f);  // the GGUF's, not the default 50
    EXPECT_EQ(hp.final_softcap, preset == "tiny-gemma2" ? 30.0f : 0.0f);
    EXPECT_EQ(hp.attn_scale(), want.attn_scale());  // 1/sqrt(head_dim): llama.cpp's rule below the 27B models
    EXPECT_TRUE(hp.tied_output);
    const GgufFile g = GgufFile::open(gguf);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
      const LayerWeights& w = model->layers()[l];
      const std::string b = "blk." + std::to_string(l) + ".";
      expect_same_bytes(w.post_attn_norm, g.find_tensor(b + "post_attention_norm.weight"));
      expect_same_bytes(w.ffn_norm, g.find_tensor(b + "ffn_norm.weight"));
      expect_same_bytes(w.post_ffn_norm, g.find_tensor(b + "post_ffw_norm.weight"));
      if (preset == "tiny-gemma3") expect_same_bytes(w.q_norm, g.find_tensor(b + "attn_q_norm.weight"));
      else EXPECT_EQ(w.q_norm, nullptr);
    }
  }
  HParams hp = synth_preset("tiny");
  hp.sliding_window = 4;
  SynthPlan plan = plan_synth(hp, SynthQuant::Q8_0);
  const std::string p64 = convert(write_gguf(dir.path(), plan, "mistral.gguf"), dir.path(), "mistral.p64");
  const P64Contents c = inspect_p64(p64);
  EXPECT_EQ(c.header.version, 2u);
  EXPECT_FALSE(c.header.flags & p64_flags::kCertifiedDecodeProfile);
  EXPECT_EQ(c.hparams.sliding_window, 4u);
  EXPECT_EQ(c.hparams.sliding_window_pattern, 0u);  // every layer local
  set_version(p64, 1);
  const std::string e = test::error_of([&] { open_p64(p64); });
  EXPECT_NE(e.find("architecture 'llama' with a sliding window needs format version 2, the header says 1"), std::string::npos) << e;
}

TEST(Architectures, AMissingOrMisshapenBiasOrQkNormIsRefusedNamingFileAndTensor) {
  test::TempDir dir;
  struct Damage {
    std::string preset, tensor;
    int64_t ne0;  // 0: the tensor is left out
    std::string want;
  };
  for (const Damage& d : {Damage{"tiny-qwen2", "blk.1.attn_k.bias", 0, "tensor 'blk.1.attn_k.bias' is missing (a qwen2 model needs it)"},
                          Damage{"tiny-qwen2", "blk.0.attn_v.bias", 64, "tensor 'blk.0.attn_v.bias' has shape [64], expected [32]"},
                          Damage{"tiny-qwen3", "blk.0.attn_q_norm.weight", 0,
                                 "tensor 'blk.0.attn_q_norm.weight' is missing (a qwen3 model needs it)"},
                          Damage{"tiny-qwen3", "blk.1.attn_k_norm.weight", 16,
                                 "tensor 'blk.1.attn_k_norm.weight' has shape [16], expected [32]"}}) {
    SynthPlan plan = tiny_plan(d.preset);
    auto it = std::find_if(plan.tensors.begin(), plan.tensors.end(), [&](const SynthTensor& t) { return t.name == d.tensor; });
    ASSERT_NE(it, plan.tensors.end()) << d.tensor;
    if (d.ne0 == 0) {
      plan.tensors.erase(it);
    } else {
      it->ne = {d.ne0};
      it->bytes = static_cast<uint64_t>(d.ne0) * 4;
    }
    const std::string gguf = write_gguf(dir.path(), plan, d.preset + "-" + d.tensor + ".gguf");
    const std::string out = (dir / "out.p64").string();
    const std::string e = test::error_of([&] { convert_to_p64(gguf, out, {}); });
    EXPECT_EQ(e, gguf + ": " + d.want);
    EXPECT_FALSE(fs::exists(out));
    // The same through the CLI, which opens a GGUF by converting it.
    const test::CliRun r = test::run_p64("generate --model " + gguf + " --backend cpu --temp 0 --tokens 2", "", 30);
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(gguf + ": " + d.want), std::string::npos) << r.err;
  }
}

TEST(Architectures, AnArchitectureWithoutATableIsRefusedNamingIt) {
  test::TempDir dir;
  // GGUF: general.architecture is read before anything else of the model.
  GgufWriter w;
  w.add_string("general.architecture", "falcon");
  w.add_u32("falcon.embedding_length", 64);
  const std::string gguf = (dir / "falcon.gguf").string();
  w.write(gguf);
  std::string e = test::error_of([&] { gguf_hparams(GgufFile::open(gguf)); });
  EXPECT_NE(e.find(gguf + ": metadata at offset"), std::string::npos) << e;
  EXPECT_NE(e.find("general.architecture 'falcon' is not supported (llama, qwen2, qwen3, phi3, gemma2, gemma3)"),
            std::string::npos)
      << e;

  // HF: config.json's model_type.
  const fs::path hf = dir / "starcoder2";
  fs::create_directories(hf);
  std::string config = fuzz::tiny_llama_config();
  config.replace(config.find("\"llama\""), 7, "\"starcoder2\"");
  std::ofstream(hf / "config.json") << config;
  e = test::error_of([&] { load_hf_directory(hf.string()); });
  EXPECT_NE(e.find((hf / "config.json").string() +
                   ": config at offset 0: model_type: 'starcoder2' is not supported (llama, qwen2, qwen3, phi3, gemma2, gemma3)"),
            std::string::npos)
      << e;

  // P64: an arch this reader has no table for is refused in the hparams section.
  HParams hp = synth_preset("tiny");
  hp.arch = "falcon";
  e = test::error_of([&] { validate(hp, "x.p64"); });
  EXPECT_EQ(e, "x.p64: hyperparameters: architecture 'falcon' is not supported (llama, qwen2, qwen3, phi3, gemma2, gemma3)");

  const test::CliRun r = test::run_p64("convert -q " + gguf + " " + (dir / "out.p64").string(), "", 30);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("p64: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("'falcon' is not supported (llama, qwen2, qwen3, phi3, gemma2, gemma3)"), std::string::npos) << r.err;
}

// A .safetensors file of F32 tensors with the given values (shapes in PyTorch order).
std::string safetensors_of(const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes,
                           std::vector<std::vector<float>>& values, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.5f);
  std::string data;
  values.clear();
  for (const auto& [name, shape] : shapes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = g(rng);
    data.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    values.push_back(std::move(v));
  }
  std::string file = fuzz::safetensors_bytes(shapes);
  file.replace(file.size() - data.size(), data.size(), data);  // the zeros it was laid out with
  return file;
}

TEST(Architectures, HfQwenFoldersKeepTheirRowsAndBiasesAndRefuseSlidingWindows) {
  test::TempDir dir;
  for (const std::string arch : {"qwen2", "qwen3"}) {
    const fs::path hf = dir / arch;
    fs::create_directories(hf);
    // 8 wide, 2 heads of 8 (qwen3: head_dim 8 is not 8 / 2), 1 KV head.
    const std::string l = "model.layers.0.";
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"model.embed_tokens.weight", {13, 8}},        {"model.norm.weight", {8}},
        {l + "input_layernorm.weight", {8}},           {l + "self_attn.q_proj.weight", {16, 8}},
        {l + "self_attn.k_proj.weight", {8, 8}},       {l + "self_attn.v_proj.weight", {8, 8}},
        {l + "self_attn.o_proj.weight", {8, 16}},      {l + "post_attention_layernorm.weight", {8}},
        {l + "mlp.gate_proj.weight", {16, 8}},         {l + "mlp.up_proj.weight", {16, 8}},
        {l + "mlp.down_proj.weight", {8, 16}}};
    if (arch == "qwen2")
      for (auto [name, n] : {std::pair{"q_proj", 16}, {"k_proj", 8}, {"v_proj", 8}})
        shapes.push_back({l + "self_attn." + name + ".bias", {n}});
    else
      for (const char* name : {"q_norm", "k_norm"}) shapes.push_back({l + "self_attn." + name + ".weight", {8}});
    std::vector<std::vector<float>> values;
    std::ofstream(hf / "model.safetensors", std::ios::binary) << safetensors_of(shapes, values, 7);
    std::ofstream(hf / "tokenizer.json") << fuzz::tiny_tokenizer_json();
    const std::string config = R"({"model_type":")" + arch + R"(","hidden_size":8,"num_hidden_layers":1,
      "num_attention_heads":2,"num_key_value_heads":1,"head_dim":8,"intermediate_size":16,"vocab_size":13,
      "rms_norm_eps":1e-06,"max_position_embeddings":64,"rope_theta":1000000.0,"tie_word_embeddings":true)";
    std::ofstream(hf / "config.json") << config + R"(,"use_sliding_window":false})";

    const SourceModel src = load_hf_directory(hf.string());
    EXPECT_EQ(src.hparams.arch, arch);
    EXPECT_EQ(src.hparams.head_dim, 8u);
    EXPECT_EQ(src.hparams.rope_layout, RopeLayout::Halves);  // as HF rotates them, and as their GGUFs hold them
    EXPECT_TRUE(src.hparams.tied_output);
    const std::string p64 = convert(hf.string(), dir.path(), arch + ".p64");
    const auto model = open_p64(p64);
    // Every tensor holds the checkpoint's values in the checkpoint's row order.
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::string gguf;
      for (const ArchTensor& t : model->architecture().globals)
        if (shapes[i].first == t.hf) gguf = std::string(t.gguf);
      for (const ArchTensor& t : model->architecture().block)
        if (shapes[i].first == l + std::string(t.hf)) gguf = "blk.0." + std::string(t.gguf);
      const TensorView* v = model->find(gguf);
      ASSERT_NE(v, nullptr) << shapes[i].first;
      ASSERT_EQ(v->dtype, DType::F32);
      ASSERT_EQ(v->bytes, values[i].size() * 4);
      EXPECT_EQ(std::memcmp(v->data, values[i].data(), v->bytes), 0) << shapes[i].first << " -> " << gguf;
    }

    std::ofstream(hf / "config.json") << config + R"(,"sliding_window":4,"use_sliding_window":true})";  // replaced
    const std::string e = test::error_of([&] { load_hf_directory(hf.string()); });
    EXPECT_NE(e.find("use_sliding_window: is true; a " + arch + " model with it is not supported"), std::string::npos) << e;
  }
}

class LlamaOnlyBackend final : public Backend {
 public:
  std::string name() const override { return "gpu"; }
  Passport passport() override { return {}; }
  std::vector<SwitchInfo> switches() const override { return {}; }
  void load(std::shared_ptr<const Model>, const BackendOptions&) override {}
  uint32_t max_context() const override { return 0; }
  int32_t prefill(std::span<const int32_t>, int32_t) override { return 0; }
  int32_t decode_argmax(int32_t, int32_t) override { return 0; }
  std::span<const float> decode_logits(int32_t, int32_t) override { return {}; }
  std::span<const float> logits() override { return {}; }
  void set_timeline(TimelineSink*) override {}
  uint64_t device_memory_peak() const override { return 0; }
};

TEST(Architectures, ABackendThatRunsOnlyLlamaRefusesAQwenModelByName) {
  test::TempDir dir;
  for (const std::string arch : {"qwen2", "phi3", "gemma2", "gemma3"}) {
    const std::string p64 = convert(write_gguf(dir.path(), tiny_plan("tiny-" + arch), arch + ".gguf"), dir.path(), arch + ".p64");
    const auto model = open_p64(p64);
    const std::string e = test::error_of([&] { check_backend_runs(LlamaOnlyBackend(), *model); });
    EXPECT_EQ(e, p64 + ": a " + arch + " model; the gpu backend runs llama (the cpu backend runs " + arch + ")");
    EXPECT_NO_THROW(check_backend_runs(*make_cpu_backend(), *model));
  }
  // A Llama with a sliding window: the architecture is the GPU's, the window is not.
  HParams hp = synth_preset("tiny");
  hp.sliding_window = 4;
  const auto model = open_p64(convert(write_gguf(dir.path(), plan_synth(hp, SynthQuant::Q8_0), "m.gguf"), dir.path(), "m.p64"));
  const std::string e = test::error_of([&] { check_backend_runs(LlamaOnlyBackend(), *model); });
  EXPECT_EQ(e, model->source() + ": a llama model with a sliding window of 4 positions; the gpu backend has no "
                                 "sliding-window attention (the cpu backend has)");
  EXPECT_NO_THROW(check_backend_runs(*make_cpu_backend(), *model));
}

// "auto" used to take the best-ranked backend that can run here and then refuse the model it
// does not run; it now passes over it (a stand-in ranked above the CPU backend, in a list of
// the test's own rather than the process's registry), and a backend named outright still refuses.
TEST(Architectures, AutoPassesOverABackendThatDoesNotRunTheModel) {
  auto available = [](std::string*) { return true; };
  const BackendFactory factories[] = {
      {"llama-only", 1000, available, [] { return std::make_unique<LlamaOnlyBackend>(); }, {}},
      {"cpu", 0, available, [] { return make_cpu_backend(); }, {}}};
  test::TempDir dir;
  const auto gemma = open_p64(convert(write_gguf(dir.path(), tiny_plan("tiny-gemma3"), "g.gguf"), dir.path(), "g.p64"));
  const auto llama = open_p64(convert(write_gguf(dir.path(), tiny_plan("tiny"), "l.gguf"), dir.path(), "l.p64"));
  EXPECT_EQ(first_backend_running(factories, *gemma)->name(), "cpu");
  EXPECT_EQ(first_backend_running(factories, *llama)->name(), "gpu");  // LlamaOnlyBackend's name
  const std::string e = test::error_of([&] { first_backend_running(std::span(factories, 1), *gemma); });
  EXPECT_EQ(e, gemma->source() + ": no backend that can run here runs a gemma3 model");
  register_all_backends();
  EXPECT_EQ(create_backend_for("auto", *gemma)->name(), "cpu");  // whatever GPU this build has
  const std::string named = test::error_of([&] { create_backend_for("cpu", *gemma); });
  EXPECT_TRUE(named.empty()) << named;
}

}  // namespace
}  // namespace p64
