// A timeline's per-op spread over the decode steps (op_spread.h) against hand-computed figures,
// the bytes each op moved and the FLOPs it performed (op_work.h) against the model's own tensor
// sizes, and the trace file and summary that carry them.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/op_work.h"
#include "engine/lab/op_spread.h"
#include "engine/lab/timeline_run.h"
#include "lab/toy_backend.h"
#include "support/op_spans.h"
#include "support/shared_files.h"

namespace p64 {
namespace {

using test::op_span;

// Three decode steps of two layers; layer 1's gate_up is slow in step 2.
std::vector<OpSpan> three_steps() {
  std::vector<OpSpan> s;
  const double gate_up[2][3] = {{10, 12, 11}, {13, 14, 100}};
  for (int step = 0; step < 3; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      s.push_back(op_span("gate_up", OpGroup::Ffn, layer, step, 0, gate_up[layer][step]));
      s.push_back(op_span("rms_ffn", OpGroup::Rms, layer, step, 0, 1.0));
    }
    s.push_back(op_span("logits", OpGroup::Logits, -1, step, 0, 20.0 + step));
  }
  s.push_back(op_span("gate_up", OpGroup::Ffn, 0, 0, 0, 5000.0, 0, true));  // prefill: not in the spread
  return s;
}

TEST(OpSpread, PerOpAndPerLayerMinMedianMaxOverTheDecodeSteps) {
  const OpSpreadTable t = op_spread(three_steps());
  ASSERT_EQ(t.ops.size(), 3u);
  // Summed time: gate_up 160 us, logits 63, rms_ffn 6.
  EXPECT_EQ(t.ops[0].name, "gate_up");
  EXPECT_EQ(t.ops[1].name, "logits");
  EXPECT_EQ(t.ops[2].name, "rms_ffn");
  const OpSpread& g = t.ops[0];
  EXPECT_EQ(g.group, "FFN");
  EXPECT_EQ(g.layer, -1);
  EXPECT_EQ(g.us.n, 6);
  EXPECT_DOUBLE_EQ(g.us.min, 10);
  EXPECT_DOUBLE_EQ(g.us.median, 12.5);  // 10 11 12 13 14 100
  EXPECT_DOUBLE_EQ(g.us.max, 100);
  EXPECT_EQ(g.fastest_layer, 0);
  EXPECT_DOUBLE_EQ(g.fastest_layer_us, 11);  // 10 11 12
  EXPECT_EQ(g.slowest_layer, 1);
  EXPECT_DOUBLE_EQ(g.slowest_layer_us, 14);  // 13 14 100
  const OpSpread& logits = t.ops[1];
  EXPECT_EQ(logits.us.n, 3);
  EXPECT_DOUBLE_EQ(logits.us.median, 21);
  EXPECT_EQ(logits.fastest_layer, -1);  // outside blocks: no layers to compare

  // Per layer, in the order of the ops, then by layer; logits has none.
  ASSERT_EQ(t.layers.size(), 4u);
  EXPECT_EQ(t.layers[0].name, "gate_up");
  EXPECT_EQ(t.layers[0].layer, 0);
  EXPECT_DOUBLE_EQ(t.layers[1].us.min, 13);
  EXPECT_DOUBLE_EQ(t.layers[1].us.median, 14);
  EXPECT_DOUBLE_EQ(t.layers[1].us.max, 100);
  EXPECT_EQ(t.layers[2].name, "rms_ffn");

  // The summary carries the per-op rows, and so the stored run's summary_json.
  const TimelineSummary s = summarize_timeline(three_steps());
  ASSERT_EQ(s.spread.size(), 3u);
  const nlohmann::json j = s;
  EXPECT_DOUBLE_EQ(j["spread"][0]["us"]["median"].get<double>(), 12.5);
  EXPECT_EQ(j["spread"][0]["slowest_layer"]["layer"], 1);
}

TEST(OpBytes, ProjectionsReadTheirWeightsAttentionItsKvPositions) {
  auto model = test::make_toy_model();
  const LayerWeights& w = model->layers()[1];
  const uint64_t kv = 1024;  // K and V of one position, both layers
  EXPECT_EQ(op_bytes(*model, kv, op_span("qkv", OpGroup::Attn, 1, 7, 0, 1)), w.wq->bytes + w.wk->bytes + w.wv->bytes);
  EXPECT_EQ(op_bytes(*model, kv, op_span("o", OpGroup::Attn, 1, 7, 0, 1)), w.wo->bytes);
  EXPECT_EQ(op_bytes(*model, kv, op_span("gate_up", OpGroup::Ffn, 1, 7, 0, 1)), w.w_gate->bytes + w.w_up->bytes);
  EXPECT_EQ(op_bytes(*model, kv, op_span("down", OpGroup::Ffn, 1, 7, 0, 1)), w.w_down->bytes);
  EXPECT_EQ(op_bytes(*model, kv, op_span("logits", OpGroup::Logits, -1, 7, 0, 1)), model->output().bytes);
  // Position 7 attends over 8 positions of its layer's half of the KV bytes.
  EXPECT_EQ(op_bytes(*model, kv, op_span("sdpa", OpGroup::Attn, 1, 7, 0, 1)), 8u * 512u);
  EXPECT_EQ(op_bytes(*model, kv, op_span("kv_write", OpGroup::Attn, 1, 7, 0, 1)), 512u);
  // Unknown: a prefill's KV traffic, the KV size not given, activation-bound ops, a layer past the model's.
  EXPECT_EQ(op_bytes(*model, kv, op_span("sdpa", OpGroup::Attn, 1, 0, 0, 1, 0, true)), 0u);
  EXPECT_EQ(op_bytes(*model, 0, op_span("sdpa", OpGroup::Attn, 1, 7, 0, 1)), 0u);
  EXPECT_EQ(op_bytes(*model, kv, op_span("rms_attn", OpGroup::Rms, 1, 7, 0, 1)), 0u);
  EXPECT_EQ(op_bytes(*model, kv, op_span("qkv", OpGroup::Attn, 2, 7, 0, 1)), 0u);
}

TEST(OpFlops, ProjectionsTwoPerWeightAttentionFourPerQueryWidthAndPosition) {
  auto model = test::make_toy_model();
  const LayerWeights& w = model->layers()[1];
  auto two_per = [](std::initializer_list<const TensorView*> ts) {
    double n = 0;
    for (const TensorView* t : ts) n += 2.0 * static_cast<double>(t->elements());
    return n;
  };
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("qkv", OpGroup::Attn, 1, 7, 0, 1)), two_per({w.wq, w.wk, w.wv}));
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("o", OpGroup::Attn, 1, 7, 0, 1)), two_per({w.wo}));
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("gate_up", OpGroup::Ffn, 1, 7, 0, 1)), two_per({w.w_gate, w.w_up}));
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("down", OpGroup::Ffn, 1, 7, 0, 1)), two_per({w.w_down}));
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("logits", OpGroup::Logits, -1, 7, 0, 1)), two_per({&model->output()}));
  // The toy's 32 x 32 q projection: q_dim 32; position 7 attends over 8 positions, q·k then weights·v.
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("sdpa", OpGroup::Attn, 1, 7, 0, 1)), 4.0 * 32 * 8);
  // Unknown: a prefill span's batch, activation-bound ops, a layer past the model's.
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("qkv", OpGroup::Attn, 1, 0, 0, 1, 0, true)), 0);
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("rms_attn", OpGroup::Rms, 1, 7, 0, 1)), 0);
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("o", OpGroup::Attn, 2, 7, 0, 1)), 0);
}

TEST(OpWork, ALocalLayerAttendsOnlyOverItsWindow) {
  test::ToyShape shape;
  shape.sliding_window = 4;
  shape.sliding_window_pattern = 2;  // layer 0 local, layer 1 global
  auto model = test::make_toy_model(shape);
  const uint64_t kv = 1024;
  EXPECT_EQ(op_bytes(*model, kv, op_span("sdpa", OpGroup::Attn, 0, 7, 0, 1)), 4u * 512u);
  EXPECT_EQ(op_bytes(*model, kv, op_span("sdpa", OpGroup::Attn, 1, 7, 0, 1)), 8u * 512u);
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("sdpa", OpGroup::Attn, 0, 7, 0, 1)), 4.0 * 32 * 4);
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("sdpa", OpGroup::Attn, 0, 2, 0, 1)), 4.0 * 32 * 3);  // inside the window
  EXPECT_DOUBLE_EQ(op_flops(*model, op_span("sdpa", OpGroup::Attn, 1, 7, 0, 1)), 4.0 * 32 * 8);
}

TEST(OpWork, TheSummaryGivesEachOpItsFlopsPerStepAndRate) {
  std::vector<OpSpan> spans;
  for (int step = 0; step < 2; ++step)
    for (int layer = 0; layer < 2; ++layer) {
      OpSpan s = op_span("down", OpGroup::Ffn, layer, step, 0, 50.0);  // 50 us
      s.bytes = 2'000'000;
      s.flops = 4e6;
      spans.push_back(s);
    }
  const TimelineSummary t = summarize_timeline(spans);
  ASSERT_EQ(t.top_ops.size(), 1u);
  const OpTotal& down = t.top_ops[0];
  EXPECT_DOUBLE_EQ(down.ms, 0.1);      // two layers of 50 us per step
  EXPECT_DOUBLE_EQ(down.mflop, 8.0);   // two layers of 4 MFLOP per step
  EXPECT_DOUBLE_EQ(down.gflops(), 80.0);
  EXPECT_DOUBLE_EQ(down.intensity(), 2.0);  // 8 MFLOP over 4 MB
  const nlohmann::json j = t;
  EXPECT_DOUBLE_EQ(j["ops"][0]["gflops"].get<double>(), 80.0);
}

TEST(OpBytes, ARecordedTimelineCarriesBytesIntoItsTrace) {
  auto model = test::make_toy_model();
  test::ToyBackend toy;
  toy.load(model, {});
  TimelineParams p;
  p.decode_tokens = 2;
  p.prompt_tokens = 2;
  const TimelineResult r = run_timeline(toy, *model, p);
  const LayerWeights& w0 = model->layers()[0];
  int qkv = 0;
  for (const OpSpan& s : r.spans)
    if (s.name == "qkv" && s.layer == 0) {
      EXPECT_EQ(s.bytes, w0.wq->bytes + w0.wk->bytes + w0.wv->bytes);
      EXPECT_DOUBLE_EQ(s.flops, s.prefill ? 0 : op_flops(*model, s));
      EXPECT_EQ(s.flops > 0, !s.prefill);
      ++qkv;
    }
  EXPECT_EQ(qkv, 4);  // the toy prefills token by token: two prefill steps, two decode steps

  test::TempDir dir;
  const std::string path = (dir / "trace.json").string();
  write_chrome_trace(path, r.spans, "toy", OutputPolicy{});
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  bool found = false;
  for (const auto& e : trace["traceEvents"])
    if (e.value("name", "") == "qkv L0") {
      EXPECT_EQ(e["args"]["bytes"], w0.wq->bytes + w0.wk->bytes + w0.wv->bytes);
      if (e["args"]["step"] == 3) EXPECT_GT(e["args"]["flops"].get<double>(), 0);  // a decode step
      found = true;
    }
  EXPECT_TRUE(found);
  // The writer keeps to its policy: never over a file the command reads.
  OutputPolicy store_read;
  store_read.reads(path, "the lab store this command reads");
  EXPECT_THROW(write_chrome_trace(path, r.spans, "toy", store_read), Error);
}

}  // namespace
}  // namespace p64
