// The Vulkan backend against the CPU reference backend on the same models: teacher-forced
// logits (quality gate), greedy text, and batched prefill.
#include <cstdio>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/lab/quality_gate.h"
#include "support/shared_files.h"
#include "vulkan_fixture.h"

namespace p64::test {
namespace {

class VulkanQuality : public VulkanTest {
 protected:
  // The reference is the CPU backend on `ref_model` (default: the same model).
  QualityReport compare(std::shared_ptr<const Model> model, const std::vector<int32_t>& tokens,
                        const QualityThresholds& th, const BackendOptions& vk_opts = {},
                        std::shared_ptr<const Model> ref_model = nullptr) {
    auto cpu = make_cpu_backend();
    BackendOptions co;
    co.max_context = 256;
    cpu->load(ref_model ? ref_model : model, co);
    auto vk = make_vulkan();
    BackendOptions vo = vk_opts;
    vo.max_context = 256;
    vk->load(model, vo);
    return teacher_forced_compare(*cpu, *vk, tokens, th);
  }
};

// Against the CPU backend on the quantized model itself. The CPU backend quantizes its
// activations to int8 for the quantized dot products; on this random tiny model that alone
// gives an RMS error near 2e-2 against exact arithmetic (the dequantized-twin test above shows
// the Vulkan side at <= 1e-4), so this records the figure with a bound that catches real breakage.
TEST_F(VulkanQuality, MixedQuantTypesMatchCpu) {
  auto model = make_tiny_model(TinyTypes{}, 11);  // Q4_K, Q5_0, Q6_K, Q8_0 matrices
  QualityReport r = compare(model, random_tokens(48, 384, 5), QualityThresholds{});
  std::printf("vulkan vs cpu (quantized model): %s\n", r.summary().c_str());
  EXPECT_TRUE(r.finite);
  EXPECT_LE(r.rms_rel_error, 5e-2) << r.summary();
  EXPECT_GE(r.top1_agreement, 0.95) << r.summary();
}

TEST_F(VulkanQuality, SoaQuantTypesMatchCpu) {
  auto model = make_tiny_model(soa_mix(), 12);
  auto twin = make_tiny_model(soa_mix(), 12, false, true);
  QualityReport r = compare(model, random_tokens(48, 384, 6), QualityThresholds{}, {}, twin);
  EXPECT_TRUE(r.pass) << r.summary();
}

// Each GEMV kernel (gemv_kernel switch) on every weight format it reads, SoA forms included,
// against the CPU on the dequantized twin.
class VulkanQualityPerKernel : public VulkanQuality, public ::testing::WithParamInterface<const char*> {
 protected:
  BackendOptions kernel_options() const {
    BackendOptions o;
    o.switches["gemv_kernel"] = GetParam();
    return o;
  }
};

TEST_P(VulkanQualityPerKernel, EachWeightTypeAloneMatchesCpu) {
  for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q8_0, DType::Q5_0, DType::F16, DType::BF16, DType::Q4_K_SOA,
                  DType::Q6_K_SOA, DType::Q8_0_SOA, DType::Q8_0_R16, DType::Q5_0_R16, DType::Q4_K_R16, DType::Q6_K_R16}) {
    auto model = make_tiny_model(all_types(t), 13, /*tied=*/true);
    auto twin = make_tiny_model(all_types(t), 13, true, true);
    QualityReport r = compare(model, random_tokens(24, 384, 7), QualityThresholds{}, kernel_options(), twin);
    EXPECT_LE(r.rms_rel_error, 1e-3) << dtype_name(t);
    EXPECT_TRUE(r.pass) << dtype_name(t) << ": " << r.summary();
  }
}

TEST_P(VulkanQualityPerKernel, F32WeightsMatchCpuTightly) {
  auto model = make_tiny_model(all_types(DType::F32), 14);
  QualityReport r = compare(model, random_tokens(32, 384, 8), QualityThresholds::float_weights(), kernel_options());
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_LE(r.rms_rel_error, 1e-4);
}

// The same quantized values as F32 on the CPU: isolates the Vulkan kernels' error from the
// CPU backend's own activation quantization (which the plain comparison above includes).
TEST_P(VulkanQualityPerKernel, QuantKernelsMatchCpuOnDequantizedTwin) {
  for (const TinyTypes& t : {TinyTypes{}, soa_mix(), cpu_rows_mix()}) {
    auto model = make_tiny_model(t, 17);
    auto twin = make_tiny_model(t, 17, false, /*dequantized_twin=*/true);
    QualityReport r = compare(model, random_tokens(48, 384, 5), QualityThresholds::float_weights(), kernel_options(), twin);
    EXPECT_TRUE(r.pass) << r.summary();
    EXPECT_LE(r.rms_rel_error, 1e-4) << r.summary();
  }
}

// stories260K's FFN rows (172) are no multiple of 32: the wide kernel leaves those matrices to
// the scalar one, so this also covers both kernels in one step.
TEST_P(VulkanQualityPerKernel, Stories260kTeacherForcedMatchesCpu) {
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  // The CPU's own greedy continuation from BOS: realistic text, not random ids.
  auto cpu = make_cpu_backend();
  BackendOptions o;
  o.max_context = 256;
  cpu->load(model, o);
  std::vector<int32_t> toks = {1};
  for (int i = 0; i < 63; ++i) toks.push_back(cpu->decode_argmax(toks.back(), i));
  auto vk = make_vulkan();
  BackendOptions vo = kernel_options();
  vo.max_context = 256;
  vk->load(model, vo);
  QualityReport r = teacher_forced_compare(*cpu, *vk, toks, QualityThresholds::float_weights());
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_LE(r.rms_rel_error, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(GemvKernels, VulkanQualityPerKernel, ::testing::Values("scalar", "wide"));

TEST_F(VulkanQuality, Stories260kGreedy200TokensIdenticalToCpu) {
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  BackendOptions o;
  o.max_context = 256;
  auto cpu = make_cpu_backend();
  cpu->load(model, o);
  std::vector<int32_t> want = {1};
  for (int pos = 0; pos < 200; ++pos) want.push_back(cpu->decode_argmax(want.back(), pos));
  // The defaults, the step without barriers (flag waits between its dispatches), and attention
  // split over workgroups from position 100 on (the step switches programs mid-run; up to 200
  // positions: several chunks of 128 and merges of splits).
  for (const std::map<std::string, std::string>& v : std::vector<std::map<std::string, std::string>>{
           {}, {{"overlap", "1"}}, {{"attn_splits", "4"}, {"attn_split_from", "100"}}}) {
    BackendOptions vo = o;
    vo.switches = v;
    std::string name;
    for (const auto& [k, val] : v) name += k + "=" + val + " ";
    auto vk = make_vulkan();
    vk->load(model, vo);
    int32_t b = 1;
    for (int pos = 0; pos < 200; ++pos) {
      b = vk->decode_argmax(b, pos);
      ASSERT_EQ(want[pos + 1], b) << name << ": greedy tokens diverge at position " << pos;
    }
  }
}

TEST_F(VulkanQuality, OverlapNeedsTheFusedStep) {
  auto model = make_tiny_model(TinyTypes{}, 16);
  for (const char* off : {"fuse_norm", "fused_gate_up", "subgroup_reduce"}) {
    BackendOptions o;
    o.switches = {{"overlap", "1"}, {off, "0"}};
    auto vk = make_vulkan();
    try {
      vk->load(model, o);
      ADD_FAILURE() << "overlap=1 with " << off << "=0 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("overlap=1 needs"), std::string::npos) << e.what();
    }
  }
}

TEST_F(VulkanQuality, BatchedPrefillMatchesCpu) {
  auto model = make_tiny_model(TinyTypes{}, 15);
  auto twin = make_tiny_model(TinyTypes{}, 15, false, true);
  const auto toks = random_tokens(40, 384, 9);
  BackendOptions o;
  o.max_context = 256;
  auto cpu = make_cpu_backend();
  cpu->load(twin, o);
  const int32_t cpu_next = cpu->prefill(toks, 0);
  std::vector<float> ref(cpu->logits().begin(), cpu->logits().end());
  // One batch, and three chunks of <= 16 (the last token's logits at an input offset).
  for (auto [ubatch, kernel] : {std::pair{"512", "scalar"}, {"16", "scalar"}, {"16", "wide"}}) {
    auto vk = make_vulkan();
    BackendOptions vo = o;
    vo.switches["prefill_ubatch"] = ubatch;
    vo.switches["gemv_kernel"] = kernel;
    vk->load(model, vo);
    const int32_t vk_next = vk->prefill(toks, 0);
    std::vector<float> got(vk->logits().begin(), vk->logits().end());
    QualityReport r = compare_logits(ref, got, model->hparams().n_vocab);
    EXPECT_TRUE(r.pass) << "ubatch " << ubatch << " " << kernel << ": " << r.summary();
    EXPECT_EQ(cpu_next, vk_next) << "ubatch " << ubatch;
    // Decode continues from the KV the prefill wrote.
    const auto c2 = cpu->decode_logits(cpu_next, 40);
    std::vector<float> ref2(c2.begin(), c2.end());
    const auto v2 = vk->decode_logits(cpu_next, 40);
    QualityReport r2 = compare_logits(ref2, std::vector<float>(v2.begin(), v2.end()), model->hparams().n_vocab);
    EXPECT_TRUE(r2.pass) << "decode after prefill, ubatch " << ubatch << " " << kernel << ": " << r2.summary();
  }
}

// mantissa_fields (on by default) against the path it replaced, on every layout it reads.
TEST_F(VulkanQuality, MantissaFieldsMatchCpu) {
  const auto toks = random_tokens(16, 384, 12);
  for (const TinyTypes& t : {TinyTypes{}, soa_mix(), all_types(DType::Q4_K), all_types(DType::Q6_K)}) {
    auto model = make_tiny_model(t, 17);
    auto twin = make_tiny_model(t, 17, false, true);
    for (const std::map<std::string, std::string>& v : std::vector<std::map<std::string, std::string>>{
             {{"mantissa_fields", "0"}},
             {{"mantissa_fields", "1"}},
             {{"mantissa_fields", "1"}, {"rows_per_group", "2"}, {"units_in_flight", "4"}},
             {{"mantissa_fields", "1"}, {"threads_per_row", "4"}, {"units_in_flight", "1"}}}) {
      BackendOptions o;
      o.switches = v;
      o.switches["gemv_kernel"] = "wide";
      QualityReport r = compare(model, toks, QualityThresholds{}, o, twin);
      std::string name;
      for (const auto& [k, val] : o.switches) name += k + "=" + val + " ";
      EXPECT_TRUE(r.pass) << name << ": " << r.summary();
      EXPECT_LE(r.rms_rel_error, 1e-4) << name << ": " << r.summary();
    }
  }
}

TEST_F(VulkanQuality, SwitchVariantsMatchCpu) {
  auto model = make_tiny_model(TinyTypes{}, 16);
  auto twin = make_tiny_model(TinyTypes{}, 16, false, true);
  const auto toks = random_tokens(16, 384, 10);
  const std::map<std::string, std::string> wide = {{"gemv_kernel", "wide"}};
  auto with_wide = [&](std::map<std::string, std::string> v) {
    v.insert(wide.begin(), wide.end());
    return v;
  };
  const std::vector<std::map<std::string, std::string>> variants = {
      {{"subgroup_reduce", "0"}},
      {{"rows_per_workgroup", "1"}},
      {{"rows_per_workgroup", "4"}},
      {{"rows_per_workgroup", "16"}},
      {{"threads_per_row", "64"}},
      {{"fused_gate_up", "0"}},
      {{"fuse_norm", "0"}},
      wide,
      // Every wide parameter, and each with the paths that change its reduction or input.
      with_wide({{"units_in_flight", "2"}}),
      {{"max_workgroup_threads", "0"}},
      with_wide({{"units_in_flight", "4"}, {"rows_per_group", "2"}}),
      with_wide({{"units_in_flight", "8"}, {"threads_per_row", "8"}}),
      with_wide({{"units_in_flight", "1"}, {"threads_per_row", "4"}}),  // several rounds per row
      with_wide({{"units_in_flight", "2"}, {"threads_per_row", "4"}, {"rows_per_group", "2"}}),
      with_wide({{"rows_per_group", "4"}, {"rows_per_workgroup", "4"}}),
      with_wide({{"rows_per_group", "2"}, {"rows_per_workgroup", "1"}}),  // clamped to the rows
      with_wide({{"rows_per_group", "2"}, {"rows_per_workgroup", "32"}}),
      with_wide({{"rows_per_group", "2"}, {"subgroup_reduce", "0"}}),
      with_wide({{"threads_per_row", "64"}, {"rows_per_group", "2"}}),
      with_wide({{"threads_per_row", "16"}, {"units_in_flight", "4"}}),
      with_wide({{"fused_gate_up", "0"}}),
      with_wide({{"fuse_norm", "0"}, {"rows_per_group", "2"}}),
      {{"overlap", "1"}},
      {{"overlap", "1"}, {"rows_per_workgroup", "1"}},
      with_wide({{"overlap", "1"}}),
      with_wide({{"overlap", "1"}, {"rows_per_workgroup", "16"}}),
      {{"attn_splits", "1"}},
      {{"attn_splits", "2"}, {"attn_split_from", "1"}},
      {{"attn_splits", "32"}, {"attn_split_from", "1"}},  // more splits than positions: empty ones
      {{"attn_splits", "8"}, {"attn_split_from", "4"}, {"overlap", "1"}},
      {{"attn_value_batch", "8"}},
      {{"max_workgroup_threads", "256"}},
      with_wide({{"max_workgroup_threads", "32"}}),  // one row per workgroup, two for RoPE
      {{"attn_value_batch", "16"}, {"attn_splits", "2"}, {"attn_split_from", "1"}},
      {{"max_units_per_thread", "0"}},
      {{"fence_poll", "1"}},
      {{"threads_per_row", "4"}, {"max_units_per_thread", "1"}},  // raised per matrix
      with_wide({{"threads_per_row", "4"}, {"max_units_per_thread", "1"}}),
  };
  for (const auto& v : variants) {
    BackendOptions o;
    o.switches = v;
    QualityReport r = compare(model, toks, QualityThresholds{}, o, twin);
    std::string name;
    for (const auto& [k, val] : v) name += k + "=" + val + " ";
    EXPECT_TRUE(r.pass) << name << ": " << r.summary();
    EXPECT_LE(r.rms_rel_error, 1e-4) << name << ": " << r.summary();
  }
}

}  // namespace
}  // namespace p64::test
