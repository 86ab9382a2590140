// The compute roofline's figures: FLOPs counted from tensor shapes (and from a stored model
// record, for runs stored before the counts were), the compute ceiling with its source, and the
// decode-proxy summary that carries both.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/compute_ceiling.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/model_flops.h"
#include "lab/toy_backend.h"

namespace p64 {
namespace {

TEST(ModelFlops, CountsProjectionsClassifierAndAttentionFromShapes) {
  auto model = test::make_toy_model();  // 32 wide, 2 layers, 4 heads (2 KV) of 8, FFN 64, vocab 96
  const ModelFlops f = model_flops(*model);
  const double per_layer = 32 * 32 + 2 * 32 * 16 + 32 * 32 + 3 * 32 * 64;  // q, k+v, o, gate+up+down
  EXPECT_DOUBLE_EQ(f.block_params, 2 * per_layer);
  EXPECT_DOUBLE_EQ(f.output_params, 96 * 32);
  EXPECT_DOUBLE_EQ(f.attention_width, 2 * 32);
  EXPECT_DOUBLE_EQ(f.decode_token(10), 2 * (2 * per_layer + 96 * 32) + 4 * 64 * 10);
  // A 3-token prefill: projections for each token, the classifier once, attention over 1+2+3.
  EXPECT_DOUBLE_EQ(f.prefill(3), 2 * 3 * 2 * per_layer + 2 * 96 * 32 + 4 * 64 * 6);
  EXPECT_EQ(f.prefill(0), 0);
}

// Gemma's local layers attend over the last sliding_window positions: past the window their
// attention work stops growing, the global layers' goes on.
TEST(ModelFlops, LocalLayersAttendOverTheirWindowOnly) {
  test::ToyShape shape;
  shape.n_layer = 4;
  shape.sliding_window = 8;
  shape.sliding_window_pattern = 2;  // layers 0 and 2 local, 1 and 3 global
  const ModelFlops f = model_flops(*test::make_toy_model(shape));
  EXPECT_DOUBLE_EQ(f.attention_width, 2 * 32);
  EXPECT_DOUBLE_EQ(f.local_attention_width, 2 * 32);
  EXPECT_DOUBLE_EQ(f.sliding_window, 8);
  const double fixed = 2 * (f.block_params + f.output_params);
  EXPECT_DOUBLE_EQ(f.decode_token(5), fixed + 4 * (64 * 5 + 64 * 5));  // inside the window: as if all global
  EXPECT_DOUBLE_EQ(f.decode_token(100), fixed + 4 * (64 * 100 + 64 * 8));
  // A 10-token prefill: the global layers attend over 1+2+...+10 = 55 positions, the local ones
  // over 1+...+8 then 8 and 8 = 52.
  EXPECT_DOUBLE_EQ(f.prefill(10), 2 * 10 * f.block_params + 2 * f.output_params + 4 * (64 * 55 + 64 * 52));
  EXPECT_DOUBLE_EQ(f.prefill(8), 2 * 8 * f.block_params + 2 * f.output_params + 4 * (64 * 36 + 64 * 36));
}

TEST(ModelFlops, StoredHyperparametersGiveTheSameCount) {
  test::ToyShape shape;
  shape.n_head_kv = 4;
  auto model = test::make_toy_model(shape);
  ModelRecord rec;
  rec.name = "toy";
  rec.n_layer = 2;
  rec.n_embd = 32;
  rec.n_head = 4;
  rec.n_head_kv = 4;
  rec.n_ff = 64;
  rec.n_vocab = 96;
  const ModelFlops a = model_flops(*model), b = model_flops(rec);
  EXPECT_DOUBLE_EQ(a.block_params, b.block_params);
  EXPECT_DOUBLE_EQ(a.output_params, b.output_params);
  EXPECT_DOUBLE_EQ(a.attention_width, b.attention_width);
  rec.n_ff = 0;
  try {
    model_flops(rec);
    FAIL() << "a record without n_ff was counted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("n_ff"), std::string::npos) << e.what();
  }
}

Passport cpu_passport(const std::string& isa, uint32_t cores, const std::string& features) {
  Passport p;
  p.device.backend = "cpu";
  p.device.api_version = isa;
  p.device.multiprocessors = cores;
  p.host.cpu_features = features;
  return p;
}

TEST(ComputeCeiling, PassportPeakFirstThenNominalCpuThenNoneWithTheReason) {
  Passport gpu;
  gpu.device.backend = "cuda";
  gpu.device.peak_flops = 6.7e13;
  const ComputeCeiling g = compute_ceiling(gpu, {});
  EXPECT_EQ(g.flops, 6.7e13);
  EXPECT_NE(g.source.find("passport"), std::string::npos) << g.source;
  // A passport that says how its peak was counted passes that on; the JSON keeps it.
  gpu.device.peak_flops_source = "fp16 tensor cores, dense, f32 accumulate: 4096 FLOP per SM and clock";
  EXPECT_EQ(compute_ceiling(gpu, {}).source, "passport: " + gpu.device.peak_flops_source);
  EXPECT_EQ(nlohmann::json(gpu).get<Passport>().device.peak_flops_source, gpu.device.peak_flops_source);

  const ComputeCeiling c = compute_ceiling(cpu_passport("avx512", 4, "fma avx2 avx512f"), {2.5, "CPU model name"});
  EXPECT_DOUBLE_EQ(c.flops, 4 * 16 * 2 * 2.5e9);
  for (const char* word : {"nominal", "4 cores", "16 fp32 lanes", "FMA", "2.50 GHz", "CPU model name"})
    EXPECT_NE(c.source.find(word), std::string::npos) << word << " missing from: " << c.source;
  EXPECT_DOUBLE_EQ(compute_ceiling(cpu_passport("avx2", 2, "avx2 fma"), {3.0, "x"}).flops, 2 * 8 * 2 * 3e9);

  const ComputeCeiling no_clock = compute_ceiling(cpu_passport("avx2", 2, "fma"), {});
  EXPECT_EQ(no_clock.flops, 0);
  EXPECT_NE(no_clock.source.find("clock"), std::string::npos) << no_clock.source;
  Passport vk;
  vk.device.backend = "vulkan";
  const ComputeCeiling none = compute_ceiling(vk, {3.0, "x"});
  EXPECT_EQ(none.flops, 0);
  EXPECT_NE(none.source.find("vulkan passport gives no peak"), std::string::npos) << none.source;
}

TEST(ComputeCeiling, ClockFromTheCpuModelName) {
  EXPECT_DOUBLE_EQ(clock_from_cpu_model("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz").ghz, 3.2);
  EXPECT_EQ(clock_from_cpu_model("Intel(R) Xeon(R) Processor").ghz, 0);
  EXPECT_EQ(clock_from_cpu_model("AMD Ryzen 9 7950X 16-Core Processor").ghz, 0);
  const CpuClock here = host_cpu_clock();
  if (here.ghz > 0) EXPECT_FALSE(here.source.empty());
}

TEST(DecodeProxy, SummaryCarriesFlopsAndTheComputeCeiling) {
  auto model = test::make_toy_model();
  test::ToyBackend toy;
  toy.load(model, {});
  DecodeProxyParams p;
  p.decode_tokens = 4;
  p.prompt_tokens = 6;
  p.runs = 1;
  p.warmup = 0;
  const DecodeProxyResult r = run_decode_proxy(toy, *model, toy.passport(), p);
  const ModelFlops f = model_flops(*model);
  EXPECT_DOUBLE_EQ(r.decode_flops_per_token, f.decode_token(6 + 2.5));  // the same mean positions as the bytes
  EXPECT_DOUBLE_EQ(r.prefill_flops, f.prefill(6));
  EXPECT_DOUBLE_EQ(r.prefill_bytes, model->weight_bytes() + 6.0 * r.kv_bytes_per_position);
  EXPECT_EQ(r.compute_ceiling.flops, 0);  // the toy's passport is neither a CPU's nor has a peak
  EXPECT_FALSE(r.compute_ceiling.source.empty());
  const nlohmann::json j = r;
  EXPECT_DOUBLE_EQ(j["flops"]["prefill"].get<double>(), r.prefill_flops);
  EXPECT_DOUBLE_EQ(j["flops"]["decode_per_token"].get<double>(), r.decode_flops_per_token);
  EXPECT_EQ(j["compute_ceiling"]["source"], r.compute_ceiling.source);
}

}  // namespace
}  // namespace p64
