// The architectures beyond Llama that the Vulkan backend runs (qwen2's qkv bias, qwen3's q/k
// norm, phi3's fused matrices, LongRope attention factor and sliding window, gemma's embedding
// scale, GeGLU, post-norms, soft-caps, alternating local layers and gemma3's local RoPE base, all
// with RoPE over halves), against the CPU reference on tiny synth models written as GGUF and
// converted to P64: teacher-forced logits, greedy tokens, and batched prefill, over more
// positions than the presets' windows (8 for gemma, 32 for phi3). An architecture it does not
// run is refused at load, naming the file and the architecture.
#include <algorithm>
#include <cstdio>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/format/synth.h"
#include "engine/lab/quality_gate.h"
#include "engine/model/architecture.h"
#include "support/shared_files.h"
#include "support/synth_arch_models.h"
#include "vulkan_fixture.h"

namespace p64::test {
namespace {

class VulkanArchitecture : public VulkanTest, public ::testing::WithParamInterface<ArchCase> {
 protected:
  std::shared_ptr<const Model> model() { return synth_arch_model(dir_, GetParam().preset, GetParam().quant); }
  std::unique_ptr<Backend> vulkan(const std::shared_ptr<const Model>& m,
                                  const std::map<std::string, std::string>& switches = {}) {
    return loaded_for_comparison(make_vulkan(), m, switches);
  }
  TempDir dir_;
};

TEST_P(VulkanArchitecture, TeacherForcedLogitsMatchCpu) {
  const auto m = model();
  ASSERT_NE(m->architecture().name, "llama");
  auto cpu = cpu_float_reference(m);
  // The defaults, the other GEMV kernel, and the step with its norms and SwiGLU unfused.
  for (const std::map<std::string, std::string>& sw : std::vector<std::map<std::string, std::string>>{
           {}, {{"gemv_kernel", "scalar"}}, {{"fuse_norm", "0"}, {"fused_gate_up", "0"}}}) {
    auto vk = vulkan(m, sw);
    QualityReport r = teacher_forced_compare(*cpu, *vk, random_tokens(48, m->hparams().n_vocab, 41),
                                             QualityThresholds::float_weights());
    std::string name;
    for (const auto& [k, v] : sw) name += k + "=" + v + " ";
    std::printf("%s vulkan vs cpu %s: %s\n", GetParam().preset, name.c_str(), r.summary().c_str());
    EXPECT_TRUE(r.pass) << name << r.summary();
    EXPECT_LE(r.rms_rel_error, 1e-4) << name << r.summary();
  }
}

TEST_P(VulkanArchitecture, GreedyTokensIdenticalToCpu) {
  const auto m = model();
  auto cpu = cpu_float_reference(m);
  std::vector<int32_t> want = {1};
  for (int pos = 0; pos < 48; ++pos) want.push_back(cpu->decode_argmax(want.back(), pos));
  // With overlap=1 the extra dispatch sits between real barriers in a step otherwise ordered by
  // flags; with attention split from position 8 on, the splits share a sliding window.
  for (const std::map<std::string, std::string>& sw : std::vector<std::map<std::string, std::string>>{
           {}, {{"overlap", "1"}}, {{"attn_splits", "4"}, {"attn_split_from", "8"}}}) {
    std::string name;
    for (const auto& [k, v] : sw) name += k + "=" + v + " ";
    auto vk = vulkan(m, sw);
    int32_t t = 1;
    for (int pos = 0; pos < 48; ++pos) {
      t = vk->decode_argmax(t, pos);
      ASSERT_EQ(want[pos + 1], t) << name << ": greedy tokens diverge at position " << pos;
    }
  }
}

TEST_P(VulkanArchitecture, BatchedPrefillMatchesCpu) {
  const auto m = model();
  const uint32_t n_vocab = m->hparams().n_vocab;
  const auto toks = random_tokens(40, n_vocab, 43);
  auto cpu = cpu_float_reference(m);
  const int32_t cpu_next = cpu->prefill(toks, 0);
  const std::vector<float> ref(cpu->logits().begin(), cpu->logits().end());
  const auto c2 = cpu->decode_logits(cpu_next, 40);
  const std::vector<float> ref2(c2.begin(), c2.end());
  // One batch, and three chunks of <= 16 tokens; with the GEMM's f16 tiles (prefill_f16, where
  // the device has them) in the bounds for quantized kernels, and in f32 in those for floats.
  for (const char* ubatch : {"512", "16"})
    for (const char* f16 : {"auto", "0"}) {
      const std::string name = std::string("ubatch ") + ubatch + " prefill_f16=" + f16;
      const QualityThresholds th = std::string(f16) == "0" ? QualityThresholds::float_weights() : QualityThresholds{};
      auto vk = vulkan(m, {{"prefill_ubatch", ubatch}, {"prefill_f16", f16}});
      const int32_t vk_next = vk->prefill(toks, 0);
      // f16 tiles may tip a near-tie (which the gate leaves out of top-1 agreement).
      if (std::string(f16) == "0") EXPECT_EQ(vk_next, cpu_next) << name;
      QualityReport r = compare_logits(ref, std::vector<float>(vk->logits().begin(), vk->logits().end()), n_vocab, th);
      EXPECT_TRUE(r.pass) << "prefill, " << name << ": " << r.summary();
      // Decode goes on from the K and V the prefill wrote.
      const auto v2 = vk->decode_logits(cpu_next, 40);
      QualityReport r2 = compare_logits(ref2, std::vector<float>(v2.begin(), v2.end()), n_vocab, th);
      EXPECT_TRUE(r2.pass) << "decode after prefill, " << name << ": " << r2.summary();
    }
}

INSTANTIATE_TEST_SUITE_P(Synth, VulkanArchitecture,
                         ::testing::Values(ArchCase{"tiny-qwen2", SynthQuant::F32}, ArchCase{"tiny-qwen2", SynthQuant::Q8_0},
                                           ArchCase{"tiny-qwen3", SynthQuant::F32}, ArchCase{"tiny-qwen3", SynthQuant::Q8_0},
                                           ArchCase{"tiny-phi3", SynthQuant::F32}, ArchCase{"tiny-phi3", SynthQuant::Q8_0},
                                           ArchCase{"tiny-gemma2", SynthQuant::F32}, ArchCase{"tiny-gemma2", SynthQuant::Q8_0},
                                           ArchCase{"tiny-gemma3", SynthQuant::F32}, ArchCase{"tiny-gemma3", SynthQuant::Q8_0}),
                         arch_case_name);

class VulkanArchitectureRefusal : public VulkanTest {};

// Each architecture of the table is either one the synth cases above decode or refused at load.
TEST_F(VulkanArchitectureRefusal, AnArchitectureItDoesNotRunIsRefusedAtLoadByFileAndName) {
  const std::vector<std::string> decoded = {"llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"};
  auto vk = make_vulkan();
  std::string runs;
  for (const Architecture& a : architectures())
    if (vk->runs_architecture(a.name)) runs += (runs.empty() ? "" : ", ") + std::string(a.name);
  TempDir dir;
  for (const Architecture& a : architectures()) {
    const std::string arch(a.name);
    if (vk->runs_architecture(arch)) {
      EXPECT_NE(std::find(decoded.begin(), decoded.end(), arch), decoded.end()) << arch << " is claimed, not tested";
      continue;
    }
    const auto m = synth_arch_model(dir, "tiny-" + arch, SynthQuant::Q8_0);
    BackendOptions o;
    o.max_context = 64;
    const std::string e = error_of([&] { vk->load(m, o); });
    EXPECT_EQ(e, m->source() + ": a " + arch + " model; the vulkan backend runs " + runs + " (the cpu backend runs " +
                     arch + ")");
  }
}

}  // namespace
}  // namespace p64::test
