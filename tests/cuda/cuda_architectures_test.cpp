// The architectures beyond Llama that the CUDA backend runs (qwen2's qkv bias, qwen3's q/k norm,
// phi3's fused matrices, LongRope attention factor and sliding window, gemma's embedding scale,
// GeGLU, post-norms, soft-caps, alternating local layers and gemma3's local RoPE base, all with
// RoPE over halves), against the CPU reference on the tiny synth models the Vulkan test uses:
// teacher-forced logits, greedy tokens, and batched prefill against the CPU and against the
// backend's own stepwise prefill, over more positions than the presets' windows (8 for gemma,
// 32 for phi3). The timeline shows the extra kernels run for these models and not for a Llama.
// An architecture it does not run, or a LongRope context its short factors do not serve, is
// refused at load, naming the file and the architecture.
#include <algorithm>
#include <cstdio>
#include <map>

#include "cuda/cuda_test_support.h"
#include "engine/format/synth.h"
#include "engine/lab/quality_gate.h"
#include "engine/model/architecture.h"
#include "engine/runtime/timeline.h"
#include "support/shared_files.h"
#include "support/synth_arch_models.h"
#include "support/test_models.h"

namespace p64::test {
namespace {

using Switches = std::map<std::string, std::string>;

// The GEMVs on dequantized weights times fp32 activations and an fp32 KV cache: the values the
// CPU's float path reads, so only summation order (and libm) differs.
const Switches kFloatPath = {{"act_quant", "f32"}, {"kv_type", "f32"}};

Switches with(Switches a, const Switches& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

class OpCounts : public TimelineSink {
 public:
  void on_span(const OpSpan& s) override { ++count[s.name]; }
  std::map<std::string, int> count;
};

class CudaArchitecture : public ::testing::TestWithParam<ArchCase> {
 protected:
  void SetUp() override { P64_REQUIRE_CUDA_DEVICE(); }
  std::shared_ptr<const Model> model() { return synth_arch_model(dir_, GetParam().preset, GetParam().quant); }
  bool float_weights() const { return GetParam().quant == SynthQuant::F32; }
  std::unique_ptr<Backend> cuda(const std::shared_ptr<const Model>& m, const Switches& switches = {}) {
    return loaded_for_comparison(make_cuda_backend(), m, switches);
  }
  TempDir dir_;
};

TEST_P(CudaArchitecture, TeacherForcedLogitsMatchCpu) {
  const auto m = model();
  ASSERT_NE(m->architecture().name, "llama");
  auto cpu = cpu_float_reference(m);
  const auto toks = random_tokens(48, m->hparams().n_vocab, 41);
  // The float path in the float bounds; the defaults (int16 activations and an f16 cache for
  // quantized weights) and the switches that change which kernels a layer takes in the
  // quantized-kernel bounds: unfused q/k/v, gate/up and RoPE, the warp-row and lane attention
  // kernels, the attention tail merge beside the combine pass of the scored layers, and the
  // fused paths (fuse_norm, gemv_prologue, swiglu_quant) that fall back for these models.
  struct Variant {
    Switches sw;
    bool tight;
  };
  const std::vector<Variant> variants = {
      {kFloatPath, true},
      {{}, float_weights()},
      {{{"graphs", "0"}, {"pdl", "0"}}, float_weights()},
      {{{"qkv_fused", "0"}, {"fused_gate_up", "0"}, {"qkv_rope", "0"}}, float_weights()},
      {{{"attn_stream", "0"}}, float_weights()},
      {{{"attn_stream", "0"}, {"attn_lanes", "1"}, {"attn_chunk", "32"}}, float_weights()},
      {{{"attn_stream", "0"}, {"attn_tail_combine", "1"}}, float_weights()},
      {{{"fuse_norm", "1"}}, float_weights()},
      {{{"gemv_prologue", "1"}}, float_weights()},
      {{{"swiglu_quant", "1"}}, float_weights()},
  };
  for (const Variant& v : variants) {
    const std::string name = describe_switches(v.sw);
    auto gpu = cuda(m, v.sw);
    const QualityThresholds th = v.tight ? QualityThresholds::float_weights() : QualityThresholds{};
    QualityReport r = teacher_forced_compare(*cpu, *gpu, toks, th);
    std::printf("%s %s cuda vs cpu %s: %s\n", GetParam().preset, std::string(synth_quant_name(GetParam().quant)).c_str(),
                name.c_str(), r.summary().c_str());
    EXPECT_TRUE(r.pass) << name << r.summary();
    if (v.sw == kFloatPath) {
      EXPECT_LE(r.rms_rel_error, 1e-4) << name << r.summary();
    }
  }
}

TEST_P(CudaArchitecture, GreedyTokensIdenticalToCpu) {
  const auto m = model();
  const std::vector<int32_t> want = greedy_from_token_one(*cpu_float_reference(m), 48);
  // Through the captured graph and the eager launches, with attention split finely enough that
  // the splits share a sliding window.
  for (const Switches& sw : {kFloatPath, with(kFloatPath, {{"graphs", "0"}}),
                             with(kFloatPath, {{"attn_chunk", "16"}, {"attn_stream", "0"}})}) {
    EXPECT_EQ(greedy_from_token_one(*cuda(m, sw), 48), want) << describe_switches(sw);
  }
}

TEST_P(CudaArchitecture, BatchedPrefillMatchesCpuAndStepwise) {
  const auto m = model();
  const uint32_t n_vocab = m->hparams().n_vocab;
  constexpr int kTokens = 100;  // past every preset's window; two chunks of prefill_chunk=64
  const auto toks = random_tokens(kTokens, n_vocab, 43);
  const PrefillOutcome ref = prefill_then_decode(*cpu_float_reference(m), toks);

  auto stepwise = cuda(m, with(kFloatPath, {{"prefill", "stepwise"}}));
  EXPECT_EQ(stepwise->prefill(toks, 0), ref.next) << "stepwise prefill";
  const std::vector<float> step_logits(stepwise->logits().begin(), stepwise->logits().end());
  QualityReport rs = compare_logits(ref.logits, step_logits, n_vocab, QualityThresholds::float_weights());
  EXPECT_TRUE(rs.pass) << "stepwise prefill: " << rs.summary();

  // The batched GEMMs read f16 activation tiles: the quantized-kernel bounds.
  for (const char* chunk : {"512", "64"}) {
    const std::string name = std::string("batched prefill, prefill_chunk=") + chunk;
    auto gpu = cuda(m, with(kFloatPath, {{"prefill", "batched"}, {"prefill_batch_min", "1"}, {"prefill_chunk", chunk}}));
    const PrefillOutcome got = prefill_then_decode(*gpu, toks, ref.next);
    // prefill returns the argmax of the logits it leaves (before gemma2's final cap, which keeps it)
    EXPECT_EQ(got.next, int32_t(std::max_element(got.logits.begin(), got.logits.end()) - got.logits.begin())) << name;
    QualityReport r = compare_logits(ref.logits, got.logits, n_vocab, QualityThresholds{});
    EXPECT_TRUE(r.pass) << name << " vs cpu: " << r.summary();
    QualityReport rb = compare_logits(step_logits, got.logits, n_vocab, QualityThresholds{});
    EXPECT_TRUE(rb.pass) << name << " vs stepwise: " << rb.summary();
    // Decode goes on from the K and V the batched prefill wrote.
    QualityReport r2 = compare_logits(ref.logits_after_next, got.logits_after_next, n_vocab, QualityThresholds{});
    EXPECT_TRUE(r2.pass) << "decode after " << name << ": " << r2.summary();
  }
}

// The extra kernels run where the model has the steps, once a layer, and the RoPE kernel they
// replace does not.
TEST_P(CudaArchitecture, StepRunsTheArchitectureKernels) {
  const auto m = model();
  const HParams& hp = m->hparams();
  auto gpu = cuda(m, {{"qkv_rope", "0"}});
  OpCounts ops;
  gpu->set_timeline(&ops);
  gpu->decode_argmax(1, 0);
  gpu->set_timeline(nullptr);
  const int layers = int(hp.n_layer);
  EXPECT_EQ(ops.count["qkv_heads"], layers);
  EXPECT_EQ(ops.count["rope"], 0);
  const bool post_norms = m->architecture().has(ArchRole::PostAttnNorm);
  EXPECT_EQ(ops.count["post_attn_norm"], post_norms ? layers : 0);
  EXPECT_EQ(ops.count["post_ffn_norm"], post_norms ? layers : 0);
}

INSTANTIATE_TEST_SUITE_P(Synth, CudaArchitecture,
                         ::testing::Values(ArchCase{"tiny-qwen2", SynthQuant::F32}, ArchCase{"tiny-qwen2", SynthQuant::Q8_0},
                                           ArchCase{"tiny-qwen3", SynthQuant::F32}, ArchCase{"tiny-qwen3", SynthQuant::Q8_0},
                                           ArchCase{"tiny-phi3", SynthQuant::F32}, ArchCase{"tiny-phi3", SynthQuant::Q8_0},
                                           ArchCase{"tiny-gemma2", SynthQuant::F32}, ArchCase{"tiny-gemma2", SynthQuant::Q8_0},
                                           ArchCase{"tiny-gemma3", SynthQuant::F32}, ArchCase{"tiny-gemma3", SynthQuant::Q8_0}),
                         arch_case_name);

// A Llama's step has none of the architecture kernels: its launches are the ones it had.
TEST(CudaArchitectureLlama, StepHasNoArchitectureKernels) {
  P64_REQUIRE_CUDA_DEVICE();
  auto gpu = make_cuda_backend();
  BackendOptions o;
  o.max_context = 256;
  o.switches["qkv_rope"] = "0";
  gpu->load(make_tiny_model(all_types(DType::Q8_0), 51), o);
  OpCounts ops;
  gpu->set_timeline(&ops);
  gpu->decode_argmax(1, 0);
  gpu->set_timeline(nullptr);
  EXPECT_EQ(ops.count["rope"], 2);  // the tiny model's two layers
  for (const char* name : {"qkv_heads", "post_attn_norm", "post_ffn_norm"}) EXPECT_EQ(ops.count[name], 0) << name;
}

// Each architecture of the table is either one the synth cases above decode or refused at load.
TEST(CudaArchitectureRefusal, AnArchitectureItDoesNotRunIsRefusedAtLoadByFileAndName) {
  P64_REQUIRE_CUDA_DEVICE();
  expect_unrun_architectures_refused(*make_cuda_backend(), "cuda");
}

// tiny-phi3's short LongRope factors serve 4096 positions; its long ones are not implemented.
TEST(CudaArchitectureRefusal, LongRopeContextPastTheShortFactorsIsRefusedAtLoad) {
  P64_REQUIRE_CUDA_DEVICE();
  TempDir dir;
  const auto m = synth_arch_model(dir, "tiny-phi3", SynthQuant::Q8_0);
  ASSERT_EQ(m->hparams().rope_scaling.type, RopeScalingType::LongRope);
  const uint32_t served = m->hparams().rope_scaling.original_context;
  auto gpu = make_cuda_backend();
  BackendOptions o;
  o.max_context = served + 1;
  const std::string e = error_of([&] { gpu->load(m, o); });
  EXPECT_NE(e.find(m->source()), std::string::npos) << e;
  EXPECT_NE(e.find("phi3"), std::string::npos) << e;
  EXPECT_NE(e.find("LongRope"), std::string::npos) << e;
  o.max_context = served;
  EXPECT_NO_THROW(gpu->load(m, o));
}

}  // namespace
}  // namespace p64::test
