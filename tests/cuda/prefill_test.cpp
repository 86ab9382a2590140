// The batched prefill (prefill=batched) against the CPU reference backend and against the
// CUDA backend's own token-by-token prefill (prefill=stepwise): the next-token argmax and the
// last token's logits for prompts of 1, 7, 64 and 300 tokens (300 also in chunks of 128; all
// also with the opt-in prefill_splitk=1 prefill_attn_group=4; 1 and 7 also below
// prefill_batch_min, through the decode graph), and decode continuing from the cache each
// prefill leaves.
//
// Bounds. Quantized weights: RMS(err)/RMS(logits) <= 1e-2, the project's quality gate. F32
// weights (stories260K): the batched path rounds weights and activations to f16 (unit
// roundoff 2^-11 = 4.9e-4) before the f32-accumulated tensor-core products; each logit is a
// chain of ~5 layers of such products, whose independent roundings add in quadrature to
// about 1e-3 of the logits' RMS. 5e-3 allows that with a 5x margin and still fails any real
// indexing, masking or scaling error (those show up at 1e-1 and above). The stepwise path
// stays f32 and is held to 1e-4 by quality_vs_cpu_test.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backends/cpu/cpu_backend.h"
#include "cuda/cuda_test_support.h"
#include "engine/lab/quality_gate.h"
#include "support/shared_files.h"
#include "support/test_models.h"

namespace p64::test {
namespace {

constexpr uint32_t kContext = 512;
constexpr double kQuantBound = 1e-2, kF32Bound = 5e-3;

BackendOptions options(std::map<std::string, std::string> switches = {}) {
  BackendOptions o;
  o.max_context = kContext;
  o.switches = std::move(switches);
  return o;
}

// The CUDA backend with every prompt batched unless a test says otherwise (prefill_batch_min
// would send the short prompts through the decode graph).
BackendOptions cuda_options(std::map<std::string, std::string> switches = {}) {
  switches.emplace("prefill_batch_min", "1");
  return options(std::move(switches));
}

// The tiny models are declared with a 256-token context; the same tensors with room for 512.
std::shared_ptr<const Model> with_context(std::shared_ptr<const Model> m, uint32_t ctx) {
  HParams hp = m->hparams();
  hp.n_ctx_train = ctx;
  return Model::from_parts(m->source(), hp, m->vocab(), m->tensors(), m);
}

struct Subject {
  std::string name;
  std::shared_ptr<const Model> reference;  // what the CPU runs (the dequantized twin for quantized models)
  std::shared_ptr<const Model> model;      // what CUDA runs
  double bound;
};

std::vector<Subject> subjects() {
  std::vector<Subject> s;
  s.push_back({"tiny mixed (Q8_0/Q4_K/Q5_0/Q6_K)", with_context(make_tiny_model(TinyTypes{}, 41, false, true), 1024),
               with_context(make_tiny_model(TinyTypes{}, 41), 1024), kQuantBound});
  s.push_back({"tiny SoA (Q4_K_SOA/Q6_K_SOA/Q8_0_SOA)", with_context(make_tiny_model(soa_mix(), 42, false, true), 1024),
               with_context(make_tiny_model(soa_mix(), 42), 1024), kQuantBound});
  if (auto st = load_stories260k()) s.push_back({"stories260K (F32)", st, st, kF32Bound});
  return s;
}

// The CPU's top-2 margin is within 1e-3 of its logit range: either answer is right.
bool near_tie(std::span<const float> logits) {
  float a = -INFINITY, b = -INFINITY, lo = INFINITY, hi = -INFINITY;
  for (float v : logits) {
    if (v > a) { b = a; a = v; }
    else if (v > b) b = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return a - b <= 1e-3f * (hi - lo);
}

double rel_rms(std::span<const float> ref, std::span<const float> got) {
  QualityAccumulator acc;
  acc.add_row(ref, got);
  return acc.finish(QualityThresholds{}).rms_rel_error;
}

TEST(CudaPrefill, BatchedMatchesCpuOnLastTokenAndArgmax) {
  P64_REQUIRE_CUDA_DEVICE();
  for (const Subject& s : subjects()) {
    const uint32_t vocab = s.model->hparams().n_vocab;
    auto cpu = make_cpu_backend();
    cpu->load(s.reference, options());
    const std::vector<std::map<std::string, std::string>> variants = {
        {}, {{"prefill_chunk", "128"}}, {{"prefill_splitk", "1"}, {"prefill_attn_group", "4"}},
        {{"gemv_layout", "blocks"}}, {{"prefill_batch_min", "8"}}};
    for (const auto& sw : variants) {
      std::string tag;
      for (const auto& [k, v] : sw) tag += " " + k + "=" + v;
      auto gpu = make_cuda_backend();
      gpu->load(s.model, cuda_options(sw));
      for (size_t n : {1, 7, 64, 300}) {
        if (sw.count("prefill_chunk") && n < 300) continue;  // chunking only matters past a chunk
        if (sw.count("prefill_batch_min") && n > 7) continue;  // 1 and 7 go through the decode graph
        SCOPED_TRACE(s.name + ", " + std::to_string(n) + " tokens" + tag);
        const auto toks = random_tokens(n, vocab, 100 + n);
        const int32_t want = cpu->prefill(toks, 0);
        const auto ref_span = cpu->logits();
        const std::vector<float> ref(ref_span.begin(), ref_span.end());
        const int32_t got = gpu->prefill(toks, 0);
        const double err = rel_rms(ref, gpu->logits());
        std::printf("batched prefill %-40s %4zu tokens%s: argmax cpu %d cuda %d, rms rel err %.2e\n", s.name.c_str(), n,
                    tag.c_str(), want, got, err);
        EXPECT_LE(err, s.bound);
        if (!near_tie(ref)) EXPECT_EQ(want, got);
        // prefill returns the argmax of the logits it leaves
        const auto l = gpu->logits();
        EXPECT_EQ(got, int32_t(std::max_element(l.begin(), l.end()) - l.begin()));
      }
    }
  }
}

// Decode after a batched prefill reads the cache it wrote: teacher-forced decode steps after
// it must match the same steps after a stepwise prefill (and a prefill split in two calls
// must continue the cache of the first).
TEST(CudaPrefill, DecodeAfterBatchedMatchesDecodeAfterStepwise) {
  P64_REQUIRE_CUDA_DEVICE();
  for (const Subject& s : subjects()) {
    const uint32_t vocab = s.model->hparams().n_vocab;
    for (size_t n : {7, 64, 300}) {
      SCOPED_TRACE(s.name + ", prompt of " + std::to_string(n));
      const auto toks = random_tokens(n, vocab, 7 + n);
      auto step = make_cuda_backend();
      step->load(s.model, options({{"prefill", "stepwise"}}));
      auto batch = make_cuda_backend();
      batch->load(s.model, cuda_options({{"prefill_chunk", "128"}}));
      auto split = make_cuda_backend();
      split->load(s.model, cuda_options());
      const int32_t a = step->prefill(toks, 0);
      const int32_t b = batch->prefill(toks, 0);
      const size_t half = n / 2;
      if (half > 0) split->prefill(std::span<const int32_t>(toks).first(half), 0);
      const int32_t c = split->prefill(std::span<const int32_t>(toks).subspan(half), int32_t(half));
      if (!near_tie(step->logits())) {
        EXPECT_EQ(a, b);
        EXPECT_EQ(a, c);
      }
      QualityAccumulator acc_b, acc_c;
      int32_t next = a;
      for (int i = 0; i < 16; ++i) {
        const int32_t pos = int32_t(n) + i;
        const auto r = step->decode_logits(next, pos);
        const std::vector<float> ref(r.begin(), r.end());
        acc_b.add_row(ref, batch->decode_logits(next, pos));
        acc_c.add_row(ref, split->decode_logits(next, pos));
        next = int32_t(std::max_element(ref.begin(), ref.end()) - ref.begin());
      }
      QualityThresholds th;
      th.max_rms_rel_error = s.bound;
      const QualityReport rb = acc_b.finish(th), rc = acc_c.finish(th);
      std::printf("decode after prefill %-40s %4zu tokens: batched %s | split %s\n", s.name.c_str(), n,
                  rb.summary().c_str(), rc.summary().c_str());
      EXPECT_TRUE(rb.pass) << rb.summary();
      EXPECT_TRUE(rc.pass) << rc.summary();
      EXPECT_EQ(rb.top1_agreement, 1.0) << rb.summary();
    }
  }
}

TEST(CudaPrefill, SwitchValuesAreChecked) {
  P64_REQUIRE_CUDA_DEVICE();
  auto model = make_tiny_model(TinyTypes{}, 43);
  auto gpu = make_cuda_backend();
  EXPECT_THROW(gpu->load(model, options({{"prefill", "sideways"}})), Error);
  EXPECT_THROW(gpu->load(model, options({{"prefill_chunk", "0"}})), Error);
  EXPECT_THROW(gpu->load(model, options({{"prefill_attn_group", "3"}})), Error);
  EXPECT_THROW(gpu->load(model, options({{"prefill_batch_min", "0"}})), Error);
  EXPECT_THROW(gpu->load(model, options({{"prefill_batch_min", "65"}})), Error);
  gpu->load(model, options({{"prefill", "stepwise"}}));
  EXPECT_THROW(gpu->prefill(std::vector<int32_t>{1, 384}, 0), Error);  // 384 is past the vocabulary
  gpu->load(model, options());
  EXPECT_THROW(gpu->prefill(std::vector<int32_t>{1, 384}, 0), Error);
  EXPECT_THROW(gpu->prefill(std::vector<int32_t>(8, 1), 250), Error);  // past the 256-position cache
}

}  // namespace
}  // namespace p64::test
