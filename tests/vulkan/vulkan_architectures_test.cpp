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
    const std::string name = describe_switches(sw);
    std::printf("%s vulkan vs cpu %s: %s\n", GetParam().preset, name.c_str(), r.summary().c_str());
    EXPECT_TRUE(r.pass) << name << r.summary();
    EXPECT_LE(r.rms_rel_error, 1e-4) << name << r.summary();
  }
}

TEST_P(VulkanArchitecture, GreedyTokensIdenticalToCpu) {
  const auto m = model();
  const std::vector<int32_t> want = greedy_from_token_one(*cpu_float_reference(m), 48);
  // With overlap=1 the extra dispatch sits between real barriers in a step otherwise ordered by
  // flags; with attention split from position 8 on, the splits share a sliding window.
  for (const std::map<std::string, std::string>& sw : std::vector<std::map<std::string, std::string>>{
           {}, {{"overlap", "1"}}, {{"attn_splits", "4"}, {"attn_split_from", "8"}}}) {
    EXPECT_EQ(greedy_from_token_one(*vulkan(m, sw), 48), want) << describe_switches(sw);
  }
}

TEST_P(VulkanArchitecture, BatchedPrefillMatchesCpu) {
  const auto m = model();
  const uint32_t n_vocab = m->hparams().n_vocab;
  const auto toks = random_tokens(40, n_vocab, 43);
  const PrefillOutcome ref = prefill_then_decode(*cpu_float_reference(m), toks);
  // One batch, and three chunks of <= 16 tokens; with the GEMM's f16 tiles (prefill_f16, where
  // the device has them) in the bounds for quantized kernels, and in f32 in those for floats.
  for (const char* ubatch : {"512", "16"})
    for (const char* f16 : {"auto", "0"}) {
      const std::string name = std::string("ubatch ") + ubatch + " prefill_f16=" + f16;
      const QualityThresholds th = std::string(f16) == "0" ? QualityThresholds::float_weights() : QualityThresholds{};
      const PrefillOutcome got = prefill_then_decode(*vulkan(m, {{"prefill_ubatch", ubatch}, {"prefill_f16", f16}}), toks,
                                                     ref.next);
      // f16 tiles may tip a near-tie (which the gate leaves out of top-1 agreement).
      if (std::string(f16) == "0") EXPECT_EQ(got.next, ref.next) << name;
      QualityReport r = compare_logits(ref.logits, got.logits, n_vocab, th);
      EXPECT_TRUE(r.pass) << "prefill, " << name << ": " << r.summary();
      // Decode goes on from the K and V the prefill wrote.
      QualityReport r2 = compare_logits(ref.logits_after_next, got.logits_after_next, n_vocab, th);
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
  expect_unrun_architectures_refused(*make_vulkan(), "vulkan");
}

}  // namespace
}  // namespace p64::test
