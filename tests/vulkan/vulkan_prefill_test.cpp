// The batched prefill (prefill=batched: tiled GEMMs, one attention dispatch per layer) against
// the CPU's exact path: the last token's logits after prompts of several lengths, on every
// weight format its GEMM reads and on the real stories260K and llama-2-tiny-random files; and
// decode after it against decode after the stepwise prefill.
#include <cstdio>

#include "backends/cpu/cpu_backend.h"
#include "engine/decode_test_models.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/quality_gate.h"
#include "vulkan_fixture.h"

namespace p64::test {
namespace {

using Switches = std::map<std::string, std::string>;

std::string describe(const Switches& s) {
  std::string out;
  for (const auto& [k, v] : s) out += k + "=" + v + " ";
  return out;
}

class VulkanPrefill : public VulkanTest {
 protected:
  // For each prompt length (a prefix of `tokens`): the CPU's logits after prefill on `ref`
  // (the same weights as F32 where `model` is quantized) against the Vulkan backend's on `model`.
  // f32 tiles are held to the tolerance of the other Vulkan-vs-CPU float comparisons (RMS 1e-4);
  // f16 tiles (prefill_f16=1, prefill_coopmat=1) to the quality gate's defaults.
  void expect_lengths_match(std::shared_ptr<const Model> model, std::shared_ptr<const Model> ref,
                            const std::vector<int32_t>& tokens, const std::vector<size_t>& lengths, Switches sw,
                            uint32_t max_context = 256) {
    auto cpu = make_cpu_backend();
    BackendOptions o;
    o.max_context = max_context;
    cpu->load(ref, o);
    auto vk = make_vulkan();
    BackendOptions vo = o;
    sw.emplace("prefill_batch_min", "1");  // short prompts batched too
    vo.switches = sw;
    vk->load(model, vo);
    auto on = [&](const char* k) { return sw.count(k) && sw.at(k) == "1"; };
    const bool f16 = on("prefill_f16") || on("prefill_coopmat");
    const uint32_t n_vocab = model->hparams().n_vocab;
    for (size_t len : lengths) {
      ASSERT_LE(len, tokens.size());
      const std::span<const int32_t> prompt(tokens.data(), len);
      const int32_t cpu_next = cpu->prefill(prompt, 0);
      const std::vector<float> want(cpu->logits().begin(), cpu->logits().end());
      const int32_t vk_next = vk->prefill(prompt, 0);
      const std::vector<float> got(vk->logits().begin(), vk->logits().end());
      const QualityReport r =
          compare_logits(want, got, n_vocab, f16 ? QualityThresholds{} : QualityThresholds::float_weights());
      std::printf("%s%zu tokens: %s\n", describe(sw).c_str(), len, r.summary().c_str());
      EXPECT_TRUE(r.pass) << describe(sw) << len << " tokens: " << r.summary();
      if (!f16) EXPECT_LE(r.rms_rel_error, 1e-4) << describe(sw) << len << " tokens: " << r.summary();
      EXPECT_EQ(cpu_next, vk_next) << describe(sw) << len << " tokens";
    }
  }
};

// The mixed quantized model (Q4_K, Q5_0, Q6_K, Q8_0 matrices): lengths that take each tile width
// (32, 64 tokens), tiles partly empty, and 600 tokens: two chunks of the default 512, the second
// attending over the first's cache.
TEST_F(VulkanPrefill, PromptLengthsMatchCpuOnQuantizedModel) {
  auto model = make_tiny_model(TinyTypes{}, 21, false, false, /*n_ctx_train=*/0);
  auto twin = make_tiny_model(TinyTypes{}, 21, false, true, 0);
  const auto toks = random_tokens(600, 384, 31);
  expect_lengths_match(model, twin, toks, {1, 7, 20, 33, 100, 600}, {{"prefill_f16", "0"}, {"prefill_split_k", "8"}},
                       1024);
  expect_lengths_match(model, twin, toks, {7, 600}, {{"prefill_f16", "1"}, {"prefill_split_k", "8"}}, 1024);
}

// Groups of 3 query heads per KV head (as Llama 3.2 3B's): attention workgroups of 16 query rows
// then start and end mid-token; and queries of 384 wider than n_embd (the O GEMM's rows of 384).
TEST_F(VulkanPrefill, GroupsOfThreeMatchCpu) {
  auto model = make_tiny_model(TinyTypes{}, 26, false, false, 256, /*n_head=*/6);
  auto twin = make_tiny_model(TinyTypes{}, 26, false, true, 256, 6);
  const auto toks = random_tokens(100, 384, 38);
  expect_lengths_match(model, twin, toks, {1, 7, 33, 100}, {{"prefill_f16", "0"}, {"prefill_split_k", "8"}});
}

// Every other format the GEMM's tile reader decodes: the SoA forms, F16, BF16 and F32
// (whose 32-element steps may end past the row).
TEST_F(VulkanPrefill, EachWeightFormatMatchesCpu) {
  const auto toks = random_tokens(40, 384, 32);
  for (const TinyTypes& t : {soa_mix(), all_types(DType::F16), all_types(DType::BF16), all_types(DType::F32)}) {
    auto model = make_tiny_model(t, 22);
    auto twin = make_tiny_model(t, 22, false, true);
    expect_lengths_match(model, twin, toks, {40}, {{"prefill_f16", "0"}});
  }
}

// Tile shapes other than the defaults, chunks of 16 (a 45-token prompt in three), split K at 2
// and 8 (lavapipe's default is off; at 8 these small grids split 4 ways for q/k/v and o, whose
// rows of 256 are 8 k-steps, and 8 ways for FFN down).
TEST_F(VulkanPrefill, TileSwitchesMatchCpu) {
  auto model = make_tiny_model(TinyTypes{}, 23);
  auto twin = make_tiny_model(TinyTypes{}, 23, false, true);
  const auto toks = random_tokens(45, 384, 33);
  for (const Switches& sw : std::vector<Switches>{{{"prefill_tile_rows", "64"}, {"prefill_tile_tokens", "64"}},
                                                  {{"prefill_tile_tokens", "32"}, {"prefill_ubatch", "16"}},
                                                  {{"prefill_split_k", "8"}},
                                                  {{"prefill_split_k", "2"}, {"prefill_tile_rows", "64"}},
                                                  {{"prefill", "stepwise"}}}) {
    Switches s = sw;
    s["prefill_f16"] = "0";
    expect_lengths_match(model, twin, toks, {45}, s);
  }
}

// stories260K: F32 weights, head_dim 8, FFN rows of 172 (a last k-step of 12), chunks of 64.
TEST_F(VulkanPrefill, Stories260kPromptLengthsMatchCpu) {
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  const auto toks = random_tokens(150, 512, 34);
  for (const char* f16 : {"0", "1"})
    expect_lengths_match(model, model, toks, {1, 7, 33, 100, 150}, {{"prefill_f16", f16}, {"prefill_ubatch", "64"}});
}

// llama-2-tiny-random (llama.cpp's file): F16 matrices with rows of 8 (one partial k-step),
// head_dim 4, the real 32000-token vocabulary; 300 tokens are two chunks of 256.
TEST_F(VulkanPrefill, TinyRandomLlamaPromptLengthsMatchCpu) {
  if (!std::filesystem::exists(shared_model("llama-2-tiny-random.gguf")))
    GTEST_SKIP() << "llama-2-tiny-random.gguf not in " << shared_dir();
  auto model = open_p64(tiny_random_p64());
  const auto toks = random_tokens(300, model->hparams().n_vocab, 35);
  for (const char* f16 : {"0", "1"})
    expect_lengths_match(model, model, toks, {1, 7, 33, 100, 300}, {{"prefill_f16", f16}, {"prefill_ubatch", "256"}},
                         512);
}

// prefill_coopmat=1 (NV cooperative matrices) where the device has them; elsewhere (lavapipe) a
// clear error naming the device and what it lacks.
TEST_F(VulkanPrefill, CooperativeMatrixGemmMatchesCpuOrIsRefused) {
  auto model = make_tiny_model(TinyTypes{}, 24, false, false, 0);
  auto twin = make_tiny_model(TinyTypes{}, 24, false, true, 0);
  {
    auto vk = make_vulkan();
    BackendOptions o;
    o.switches["prefill_coopmat"] = "1";
    const std::string err = error_of([&] { vk->load(model, o); });
    if (!err.empty()) {
      EXPECT_NE(err.find("prefill_coopmat=1 needs VK_NV_cooperative_matrix"), std::string::npos) << err;
      EXPECT_NE(err.find("device '"), std::string::npos) << err;
      GTEST_SKIP() << err;
    }
  }
  const auto toks = random_tokens(600, 384, 37);
  expect_lengths_match(model, twin, toks, {1, 7, 33, 100, 600}, {{"prefill_coopmat", "1"}, {"prefill_split_k", "8"}},
                       1024);
  expect_lengths_match(model, twin, toks, {40}, {{"prefill_coopmat", "1"}, {"prefill_split_k", "1"}}, 1024);
  for (const TinyTypes& t : {soa_mix(), all_types(DType::F16), all_types(DType::F32)}) {
    auto m = make_tiny_model(t, 25);
    auto tw = make_tiny_model(t, 25, false, true);
    expect_lengths_match(m, tw, toks, {40}, {{"prefill_coopmat", "1"}});
  }
}

// The KV cache the batched prefill leaves is the one decode expects: greedy decoding after it
// gives the tokens that greedy decoding after the stepwise prefill gives.
TEST_F(VulkanPrefill, DecodeAfterBatchedPrefillMatchesStepwise) {
  auto model = load_stories260k();
  if (!model) GTEST_SKIP() << "stories260K.bin / tok512.bin not in " << shared_dir();
  const auto prompt = random_tokens(40, 512, 36);
  auto greedy = [&](const Switches& sw) {
    auto vk = make_vulkan();
    BackendOptions o;
    o.max_context = 256;
    o.switches = sw;
    vk->load(model, o);
    std::vector<int32_t> out = {vk->prefill(prompt, 0)};
    for (int32_t pos = 40; pos < 64; ++pos) out.push_back(vk->decode_argmax(out.back(), pos));
    return out;
  };
  const auto want = greedy({{"prefill", "stepwise"}});
  for (const Switches& sw : std::vector<Switches>{{{"prefill_f16", "0"}, {"prefill_ubatch", "32"}},
                                                  {{"prefill_f16", "1"}}}) {
    const auto got = greedy(sw);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(want[i], got[i]) << describe(sw) << ": greedy tokens diverge " << i << " tokens after the prompt";
  }
}

}  // namespace
}  // namespace p64::test
