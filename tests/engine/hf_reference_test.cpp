// The Hugging Face import and the CPU forward pass against transformers itself: for each
// architecture, a small random model that transformers built and saved (save_pretrained) and
// the float32 logits it computed for a fixed token sequence, both made by
// scripts/hf_reference_logits.py and kept in tests/data/hf-reference/. p64 imports the same
// folder and decodes the same ids teacher-forced on the exact float path: relative RMS error
// at most 1e-4 at every position and the same top-1 token.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <span>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "decode_test_models.h"
#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

class HfReference : public ::testing::TestWithParam<const char*> {};

TEST_P(HfReference, TeacherForcedLogitsMatchTransformers) {
  const fs::path dir = fs::path(P64_SOURCE_DIR) / "tests" / "data" / "hf-reference" / GetParam();
  if (!fs::exists(dir / "logits.f32"))
    GTEST_SKIP() << dir.string() << " has no logits.f32: run scripts/hf_reference_logits.py where transformers is";
  std::vector<int32_t> tokens;
  {
    std::istringstream in(test::read_text_file((dir / "tokens.txt").string()));
    for (int32_t t; in >> t;) tokens.push_back(t);
  }
  ASSERT_FALSE(tokens.empty());
  const std::string bytes = test::read_text_file((dir / "logits.f32").string());
  test::TempDir tmp;
  const std::string p64 = (tmp / "model.p64").string();
  convert_to_p64(dir.string(), p64, {});
  const auto model = open_p64(p64);
  const size_t vocab = model->hparams().n_vocab;
  ASSERT_EQ(bytes.size(), tokens.size() * vocab * sizeof(float));
  std::vector<float> want(tokens.size() * vocab);
  std::memcpy(want.data(), bytes.data(), bytes.size());

  auto be = make_cpu_backend();
  BackendOptions opt;
  opt.threads = 2;
  opt.switches["int8_activations"] = "0";
  // The sequence's own length: phi3's LongRope refuses a cache past its original context (64 there).
  opt.max_context = static_cast<uint32_t>(tokens.size());
  be->load(model, opt);
  double worst = 0;
  int top1_differs = 0;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const std::span<const float> got = be->decode_logits(tokens[p], static_cast<int32_t>(p));
    const float* ref = &want[p * vocab];
    double err2 = 0, ref2 = 0;
    size_t top_got = 0, top_ref = 0;
    for (size_t i = 0; i < vocab; ++i) {
      err2 += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
      ref2 += double(ref[i]) * ref[i];
      if (got[i] > got[top_got]) top_got = i;
      if (ref[i] > ref[top_ref]) top_ref = i;
    }
    worst = std::max(worst, std::sqrt(err2 / ref2));
    top1_differs += top_got != top_ref;
  }
  std::printf("[ hf ] %s: %zu positions, worst relative RMS logit error %.3g, top-1 differs at %d\n", GetParam(),
              tokens.size(), worst, top1_differs);
  EXPECT_LE(worst, 1e-4);
  EXPECT_EQ(top1_differs, 0);
}

INSTANTIATE_TEST_SUITE_P(Architectures, HfReference, ::testing::Values("llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"));

}  // namespace
}  // namespace p64
