// The CUDA backend against the CPU reference backend on the same models (the project's rule for
// every GPU backend): stories260K teacher-forced and greedy, tiny quantized mixes against the
// CPU on their dequantized twins, and batched prefill.

#include "backends/cpu/cpu_backend.h"
#include "cuda/cuda_test_support.h"
#include "engine/lab/quality_gate.h"
#include "support/shared_files.h"
#include "support/test_models.h"

namespace p64::test {
namespace {

constexpr uint32_t kContext = 256;

BackendOptions options(std::map<std::string, std::string> switches = {}) {
  BackendOptions o;
  o.max_context = kContext;
  o.switches = std::move(switches);
  return o;
}

QualityReport compare(std::shared_ptr<const Model> reference_model, std::shared_ptr<const Model> model,
                      const std::vector<int32_t>& tokens, const QualityThresholds& th,
                      const BackendOptions& cuda_options = options()) {
  auto cpu = make_cpu_backend();
  cpu->load(reference_model, options());
  auto gpu = make_cuda_backend();
  gpu->load(model, cuda_options);
  return teacher_forced_compare(*cpu, *gpu, tokens, th);
}

TEST(CudaQuality, Stories260kTeacherForcedMatchesCpu) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  auto cpu = make_cpu_backend();
  cpu->load(model, options());
  std::vector<int32_t> toks = {1};
  for (int i = 0; i < 127; ++i) toks.push_back(cpu->decode_argmax(toks.back(), i));
  auto gpu = make_cuda_backend();
  gpu->load(model, options());
  QualityReport r = teacher_forced_compare(*cpu, *gpu, toks, QualityThresholds::float_weights());
  std::printf("cuda vs cpu, stories260K, 128 positions: %s\n", r.summary().c_str());
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_LE(r.rms_rel_error, 1e-4);
}

TEST(CudaQuality, Stories260kGreedy200TokensIdenticalToCpu) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  for (const char* graphs : {"1", "0"}) {
    auto cpu = make_cpu_backend();
    cpu->load(model, options());
    auto gpu = make_cuda_backend();
    gpu->load(model, options({{"graphs", graphs}}));
    int32_t a = 1, b = 1;
    for (int pos = 0; pos < 200; ++pos) {
      a = cpu->decode_argmax(a, pos);
      b = gpu->decode_argmax(b, pos);
      ASSERT_EQ(a, b) << "greedy tokens diverge at position " << pos << " (graphs=" << graphs << ")";
    }
  }
}

// The quantized kernels against the CPU's float path on exactly the values they read.
TEST(CudaQuality, QuantizedMixesMatchCpuOnDequantizedTwins) {
  P64_REQUIRE_CUDA_DEVICE();
  for (const TinyTypes& t : {TinyTypes{}, soa_mix(), cpu_rows_mix(), all_types(DType::Q4_K), all_types(DType::Q6_K),
                             all_types(DType::Q8_0), all_types(DType::Q5_0), all_types(DType::F16)}) {
    auto model = make_tiny_model(t, 21);  // cpu_rows_mix: a CPU-layout file goes up as its plain blocks
    auto twin = make_tiny_model(t, 21, false, /*dequantized_twin=*/true);
    for (const char* act : {"f32", "int16"}) {
      QualityReport r = compare(twin, model, random_tokens(48, 384, 3), QualityThresholds{},
                                options({{"act_quant", act}}));
      EXPECT_TRUE(r.pass) << dtype_name(t.q) << " act_quant=" << act << ": " << r.summary();
    }
  }
}

TEST(CudaQuality, F32WeightsMatchCpuTightly) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(all_types(DType::F32), 22);
  QualityReport r = compare(model, model, random_tokens(32, 384, 4), QualityThresholds::float_weights());
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_LE(r.rms_rel_error, 1e-4);
}

TEST(CudaQuality, PrefillLeavesTheSameCacheAsDecodeSteps) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(TinyTypes{}, 23);
  auto twin = make_tiny_model(TinyTypes{}, 23, false, true);
  const auto toks = random_tokens(40, 384, 5);
  auto cpu = make_cpu_backend();
  cpu->load(twin, options());
  auto gpu = make_cuda_backend();
  gpu->load(model, options());
  EXPECT_EQ(cpu->prefill(toks, 0), gpu->prefill(toks, 0));
  // The next decode step reads the KV that prefill wrote.
  QualityAccumulator acc;
  const auto ref_span = cpu->decode_logits(7, 40);
  const std::vector<float> ref(ref_span.begin(), ref_span.end());
  const auto got = gpu->decode_logits(7, 40);
  acc.add_row(ref, got);
  QualityReport r = acc.finish(QualityThresholds{});
  EXPECT_TRUE(r.pass) << r.summary();
}

}  // namespace
}  // namespace p64::test
