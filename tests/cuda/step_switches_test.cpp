// The decode-step switches that change how kernels are launched, fused and fed (pdl, fuse_norm,
// gemv_regs, l2_prefetch, gemv_fill, combine_batch, rms_batched, argmax_batch, attn_early,
// gemv_prologue, attn_splits, attn_lanes, attn_stream)
// against the CPU reference, through the graph replay that decode-proxy times and through the
// eager path the timeline uses; the timeline also shows that the fused step really drops the
// separate norm and quantization kernels.

#include <set>

#include "backends/cpu/cpu_backend.h"
#include "cuda/cuda_test_support.h"
#include "engine/lab/quality_gate.h"
#include "engine/runtime/timeline.h"
#include "support/shared_files.h"
#include "support/test_models.h"

namespace p64::test {
namespace {

BackendOptions with(std::map<std::string, std::string> switches) {
  BackendOptions o;
  o.max_context = 256;
  o.switches = std::move(switches);
  return o;
}

class OpNames : public TimelineSink {
 public:
  void on_span(const OpSpan& s) override { names.insert(s.name); }
  std::set<std::string> names;
};

const std::map<std::string, std::string> kVariants[] = {
    {{"pdl", "1"}}, {{"fuse_norm", "1"}}, {{"pdl", "1"}, {"fuse_norm", "1"}},
    {{"pdl", "1"}, {"fuse_norm", "1"}, {"gemv_rows", "1"}}, {{"fuse_norm", "1"}, {"gemv_rows", "4"}},
    {{"pdl", "1"}, {"graphs", "0"}},
    {{"pdl", "1"}, {"attn_chunk", "16"}, {"gemv_regs", "cap"}, {"l2_prefetch", "1"}},
    {{"gemv_regs", "cap"}, {"gemv_rows", "1"}, {"l2_prefetch", "1"}},
    {{"pdl", "0"}, {"gemv_regs", "free"}, {"attn_chunk", "32"}},  // the defaults before 2026-12-03
    {{"qkv_rope", "1"}, {"attn_grid", "16"}}, {{"qkv_rope", "1"}, {"gemv_rows", "4"}, {"graphs", "0"}},
    {{"attn_grid", "16"}, {"attn_chunk", "16"}, {"fuse_norm", "1"}},
    {{"gemv_in_flight", "2"}}, {{"gemv_in_flight", "2"}, {"gemv_rows", "1"}, {"gemv_regs", "free"}},
    {{"gemv_in_flight", "1"}, {"gemv_rows", "1"}, {"gemv_regs", "free"}}, {{"gemv_in_flight", "1"}, {"fuse_norm", "1"}},
    {{"gemv_ring", "1"}}, {{"gemv_ring", "1"}, {"gemv_rows", "4"}, {"graphs", "0"}},
    {{"gemv_ring", "1"}, {"swiglu_quant", "1"}}, {{"gemv_gate_up_in_flight", "2"}, {"gemv_in_flight", "1"}},
    {{"gemv_fill", "8"}}, {{"gemv_fill", "64"}, {"gemv_rows", "4"}}, {{"gemv_fill", "64"}, {"qkv_rope", "0"}},
    {{"combine_batch", "8"}}, {{"combine_batch", "8"}, {"attn_grid", "16"}, {"graphs", "0"}},
    {{"rms_batched", "1"}}, {{"rms_batched", "1"}, {"combine_batch", "1"}, {"graphs", "0"}},
    {{"argmax_batch", "16"}}, {{"argmax_batch", "16"}, {"graphs", "0"}},
    {{"attn_early", "1"}}, {{"attn_early", "1"}, {"graphs", "0"}}, {{"attn_early", "1"}, {"attn_grid", "16"}},
    {{"attn_early", "0"}}, {{"attn_early", "0"}, {"graphs", "0"}},
    {{"gemv_prologue", "1"}}, {{"gemv_prologue", "1"}, {"graphs", "0"}}, {{"gemv_prologue", "1"}, {"gemv_rows", "4"}},
    {{"q5_0_int16", "1"}}, {{"q5_0_int16", "0"}}, {{"q5_0_int16", "0"}, {"graphs", "0"}},
    {{"attn_tail_combine", "1"}}, {{"attn_tail_combine", "1"}, {"graphs", "0"}},
    {{"attn_tail_combine", "1"}, {"attn_grid", "16"}, {"combine_batch", "1"}},
    {{"attn_splits", "2"}}, {{"attn_splits", "2"}, {"graphs", "0"}}, {{"attn_splits", "2"}, {"attn_tail_combine", "1"}},
    {{"attn_lanes", "1"}}, {{"attn_lanes", "1"}, {"attn_splits", "2"}, {"graphs", "0"}},
    {{"attn_lanes", "1"}, {"attn_splits", "2"}, {"attn_tail_combine", "1"}},
    {{"attn_stream", "1"}}, {{"attn_stream", "1"}, {"attn_splits", "2"}, {"graphs", "0"}},
    {{"attn_stream", "1"}, {"attn_tail_combine", "1"}}, {{"attn_stream", "1"}, {"attn_early", "0"}}};

std::string describe(const std::map<std::string, std::string>& sw) {
  std::string s;
  for (const auto& [k, v] : sw) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

TEST(CudaStepSwitches, QuantizedMixesMatchCpuOnDequantizedTwins) {
  P64_REQUIRE_CUDA_DEVICE();
  for (const TinyTypes& t : {soa_mix(), all_types(DType::Q4_K), all_types(DType::Q6_K), all_types(DType::Q8_0),
                             all_types(DType::Q5_0)}) {
    auto model = make_tiny_model(t, 31);
    auto twin = make_tiny_model(t, 31, false, /*dequantized_twin=*/true);
    const std::vector<int32_t> tokens = random_tokens(40, 384, 5);
    for (const auto& sw : kVariants) {
      auto cpu = make_cpu_backend();
      cpu->load(twin, with({}));
      auto gpu = make_cuda_backend();
      gpu->load(model, with(sw));
      const QualityReport r = teacher_forced_compare(*cpu, *gpu, tokens, QualityThresholds{});
      EXPECT_TRUE(r.pass) << dtype_name(t.q) << " " << describe(sw) << ": " << r.summary();
    }
  }
}

TEST(CudaStepSwitches, FusedNormStepHasNoSeparateNormKernelsInside) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(all_types(DType::Q4_K), 32);
  for (const char* fuse : {"0", "1"}) {
    auto gpu = make_cuda_backend();
    gpu->load(model, with({{"fuse_norm", fuse}, {"pdl", "1"}}));
    OpNames ops;
    gpu->set_timeline(&ops);
    gpu->decode_argmax(1, 0);
    gpu->set_timeline(nullptr);
    const bool fused = std::string(fuse) == "1";
    EXPECT_EQ(ops.names.count("rms_ffn"), fused ? 0u : 1u) << "fuse_norm=" << fuse;
    EXPECT_EQ(ops.names.count("ffn_quant"), fused ? 0u : 1u) << "fuse_norm=" << fuse;
    EXPECT_EQ(ops.names.count("rms_final"), fused ? 0u : 1u) << "fuse_norm=" << fuse;
    EXPECT_EQ(ops.names.count("rms_attn"), 1u) << "layer 0 keeps its norm kernel (fuse_norm=" << fuse << ")";
  }
}

TEST(CudaStepSwitches, GemvPrologueStepHasNoNormOrQuantizeKernels) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(all_types(DType::Q4_K), 32);
  for (const char* on : {"0", "1"}) {
    auto gpu = make_cuda_backend();
    gpu->load(model, with({{"gemv_prologue", on}}));
    OpNames ops;
    gpu->set_timeline(&ops);
    gpu->decode_argmax(1, 0);
    gpu->set_timeline(nullptr);
    const size_t want = std::string(on) == "1" ? 0u : 1u;
    for (const char* name : {"rms_attn", "rms_ffn", "ffn_quant", "rms_final"})
      EXPECT_EQ(ops.names.count(name), want) << name << " with gemv_prologue=" << on;
  }
}

TEST(CudaStepSwitches, RopeInQkvEpilogueDropsTheRopeKernel) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(soa_mix(), 35);
  for (const char* on : {"0", "1"}) {
    auto gpu = make_cuda_backend();
    gpu->load(model, with({{"qkv_rope", on}}));
    OpNames ops;
    gpu->set_timeline(&ops);
    gpu->decode_argmax(1, 0);
    gpu->set_timeline(nullptr);
    EXPECT_EQ(ops.names.count("rope"), std::string(on) == "1" ? 0u : 1u) << "qkv_rope=" << on;
  }
}

// A model the fusion cannot serve (F16 matrices have no integer path) runs unfused and right.
TEST(CudaStepSwitches, FusedNormFallsBackWhereNoIntegerPath) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(all_types(DType::F16), 33);
  auto cpu = make_cpu_backend();
  cpu->load(model, with({}));
  auto gpu = make_cuda_backend();
  gpu->load(model, with({{"fuse_norm", "1"}, {"pdl", "1"}}));
  const QualityReport r = teacher_forced_compare(*cpu, *gpu, random_tokens(24, 384, 6), QualityThresholds{});
  EXPECT_TRUE(r.pass) << r.summary();
}

TEST(CudaStepSwitches, Stories260kGreedyWithDependentLaunchIdenticalToCpu) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  auto cpu = make_cpu_backend();
  cpu->load(model, with({}));
  auto gpu = make_cuda_backend();
  gpu->load(model, with({{"pdl", "1"}, {"fuse_norm", "1"}}));
  int32_t a = 1, b = 1;
  for (int pos = 0; pos < 200; ++pos) {
    a = cpu->decode_argmax(a, pos);
    b = gpu->decode_argmax(b, pos);
    ASSERT_EQ(a, b) << "greedy tokens diverge at position " << pos;
  }
}

}  // namespace
}  // namespace p64::test
