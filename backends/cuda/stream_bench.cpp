#include "backends/cuda/stream_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "backends/cuda/bench_support.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/stream_chain.h"
#include "backends/cuda/stream_layout.h"
#include "backends/cuda/tiled_weights.h"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

struct ChainMatrix {
  StreamMatrixShape shape;
  std::vector<uint8_t> tiled;  // the same bytes in every layer
};

// int16 activations of width n as the decode step makes them (an RMSNorm kernel's output).
struct Activations {
  DeviceBuffer x, xf, xq, xd, xs;
  explicit Activations(int64_t n)
      : x(size_t(n) * 4), xf(size_t(n) * 4), xq(size_t(n) * 2), xd(size_t(n) / 8 + 64), xs(size_t(n) / 4 + 64) {
    std::vector<float> v(static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& e : v) e = nd(rng);
    P64_CUDA_CHECK(cudaMemcpy(x.get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice));
    launch_rmsnorm_quant(x.get<float>(), nullptr, 0.f, n, buffers(), nullptr);
  }
  ActBuffers buffers() const { return ActBuffers{xf.get<float>(), xq.get(), xd.get<float>(), xs.get<float>(), 16}; }
};

// The chain in one order of the streamed layout, on the device.
struct StreamedCopy {
  StreamPlan plan;
  DeviceBuffer bytes, begin;
  StreamedCopy(StreamPlan p, const std::vector<const uint8_t*>& tiled)
      : plan(std::move(p)), bytes(plan.bytes()), begin(plan.warp_begin.size() * 8) {
    std::vector<uint8_t> host(plan.bytes());
    pack_stream(plan, tiled, host.data());
    P64_CUDA_CHECK(cudaMemcpy(bytes.get(), host.data(), host.size(), cudaMemcpyHostToDevice));
    P64_CUDA_CHECK(cudaMemcpy(begin.get(), plan.warp_begin.data(), plan.warp_begin.size() * 8, cudaMemcpyHostToDevice));
  }
};

GemvChainRow time_chain(const std::string& variant, uint64_t bytes, const GemvChainRequest& req, cudaStream_t stream,
                        const std::function<void()>& chain) {
  chain();  // warm-up
  const std::vector<double> us = time_per_call_us(stream, req.repeats, req.iters, chain);
  return GemvChainRow{variant, bytes, us[us.size() / 2], us.front(), us.back()};
}

// The probed chain's barrier clocks ([barriers][blocks][arrive, leave] in ns) summed up in `row`.
void account_barriers(const DeviceBuffer& probe, int barriers, int blocks, GemvChainRow& row) {
  if (barriers <= 0) return;
  std::vector<uint64_t> t(size_t(barriers) * size_t(blocks) * 2);
  P64_CUDA_CHECK(cudaMemcpy(t.data(), probe.get(), t.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  double spread = 0, after_last = 0, wait = 0;
  for (int k = 0; k < barriers; ++k) {
    const uint64_t* b = t.data() + size_t(k) * blocks * 2;
    uint64_t first = UINT64_MAX, last = 0;
    double leave = 0, inside = 0;
    for (int i = 0; i < blocks; ++i) {
      first = std::min(first, b[2 * i]);
      last = std::max(last, b[2 * i]);
      leave += double(b[2 * i + 1]);
      inside += double(b[2 * i + 1]) - double(b[2 * i]);
    }
    spread += double(last - first);
    after_last += leave / blocks - double(last);
    wait += inside / blocks;
  }
  row.arrival_spread_us = spread / barriers / 1e3;
  row.release_after_last_us = after_last / barriers / 1e3;
  row.block_wait_us = wait / barriers / 1e3;
}

// Adds the streamed outputs' agreement with the launched ones to `res`.
void compare(const std::vector<float>& launched, const std::vector<float>& streamed,
             const std::vector<StreamMatrixShape>& shapes, GemvChainResult& res) {
  size_t at = 0;
  for (const StreamMatrixShape& s : shapes) {
    float scale = 0.f;
    for (int64_t i = 0; i < s.rows; ++i) scale = std::max(scale, std::fabs(launched[at + size_t(i)]));
    for (int64_t i = 0; i < s.rows; ++i, ++at) {
      const float x = launched[at], y = streamed[at];
      ++res.compared;
      if (x == y) ++res.identical;
      const double rel = std::isfinite(y) ? std::fabs(double(y) - x) / std::max(scale, 1e-30f) : INFINITY;
      res.max_rel_diff = std::max(res.max_rel_diff, rel);
    }
  }
}

// The 3B-shaped chain a request asks for: each layer's q/k/v, o, gate_up and down as tiled Q4_K
// of random blocks (the same bytes in every layer).
struct Chain {
  std::vector<ChainMatrix> mats;  // one layer's
  std::vector<StreamMatrixShape> shapes;  // every layer's, in order
  std::vector<const uint8_t*> tiled;
  uint64_t layer_bytes = 0;
  int layers = 0;
  uint64_t bytes() const { return layer_bytes * uint64_t(layers); }
  // Every layer's matrices end to end into `dst` (bytes() of it).
  void upload_layers(const DeviceBuffer& dst) const {
    uint64_t at = 0;
    for (int l = 0; l < layers; ++l)
      for (const ChainMatrix& m : mats) {
        P64_CUDA_CHECK(cudaMemcpy(dst.get() + at, m.tiled.data(), m.tiled.size(), cudaMemcpyHostToDevice));
        at += m.tiled.size();
      }
  }
};

Chain make_chain(const GemvChainRequest& req) {
  if (req.iters < 1 || req.repeats < 1) throw Error("bench-stream: iters and repeats must be at least 1");
  for (int r : req.rings)
    if (r != 4 && r != 8) throw Error("bench-stream: ring must be 4 or 8 rounds (got " + std::to_string(r) + ")");
  const HParams& h = req.shape;
  Chain c;
  c.layers = req.layers ? req.layers : int(h.n_layer);
  if (c.layers < 1 || c.layers > 1024)
    throw Error("bench-stream: layers must be 1 to 1024 (got " + std::to_string(c.layers) + ")");
  const int64_t E = h.n_embd, Q = h.q_dim(), KV = h.kv_dim(), F = h.n_ff;
  // gate and up as one matrix of 2F rows: the same bytes the SwiGLU GEMV reads
  c.mats = {{{Q + 2 * KV, E}, {}}, {{E, Q}, {}}, {{2 * F, E}, {}}, {{E, F}, {}}};
  for (size_t m = 0; m < c.mats.size(); ++m) {
    const StreamMatrixShape& s = c.mats[m].shape;
    if (!tiled_dtype_for(DType::Q4_K, s.n))
      throw Error("bench-stream: width " + std::to_string(s.n) + " has no tiled Q4_K form");
    const std::vector<uint8_t> blocks = random_blocks(DType::Q4_K, s.rows, s.n, 42 + m);
    c.mats[m].tiled.resize(blocks.size());
    pack_tiled(DType::Q4_K, blocks.data(), c.mats[m].tiled.data(), s.rows, s.n);
    c.layer_bytes += c.mats[m].tiled.size();
  }
  for (int l = 0; l < c.layers; ++l)
    for (const ChainMatrix& m : c.mats) {
      c.shapes.push_back(m.shape);
      c.tiled.push_back(m.tiled.data());
    }
  return c;
}

// The chain as the decode step launches it (one GEMV per matrix, pdl, in a graph) on `weights`
// (every layer its own copy), into `out`; `ops` gets the streamed kernel's op per matrix, writing
// into `streamed_out`.
cudaGraphExec_t capture_launched_chain(const Chain& c, const DeviceBuffer& weights, const Activations* const act_of[4],
                                       float* out, float* streamed_out, cudaStream_t stream,
                                       std::vector<StreamChainOp>& ops) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  set_dependent_launch(true);  // as the decode step launches its kernels
  P64_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  uint64_t at = 0;
  int64_t row_at = 0;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const StreamMatrixShape& s = c.shapes[i];
    const ActBuffers act = act_of[i % 4]->buffers();
    GemvLaunch g;
    g.dtype = kTiledQ4_K;
    g.n = s.n;
    g.xf = act.xf;
    g.xq = act.xq;
    g.xd = act.xd;
    g.xs = act.xs;
    g.mode = GemvMode::Store;
    g.act_bits = 16;
    g.rows_per_warp = 2;
    g.cap_registers = true;
    g.units_in_flight = 1;
    g.seg[0] = GemvSegment{weights.get() + at, out + row_at, s.rows, s.rows * s.n / 256};
    launch_gemv(g, stream);
    ops.push_back(StreamChainOp{act.xq, act.xd, act.xs, streamed_out + row_at, s.rows, s.n, 0});
    at += c.mats[i % 4].tiled.size();
    row_at += s.rows;
  }
  P64_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  P64_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  P64_CUDA_CHECK(cudaGraphDestroy(graph));  // the instance keeps what it needs
  return exec;
}

}  // namespace

GemvChainResult run_gemv_chain_bench(const GemvChainRequest& req) {
  std::string why;
  if (!cuda_device_available(&why)) throw Error("bench-stream: " + why);
  const Chain chain = make_chain(req);
  const std::vector<StreamMatrixShape>& shapes = chain.shapes;
  const std::vector<const uint8_t*>& tiled = chain.tiled;
  const int64_t E = req.shape.n_embd, Q = req.shape.q_dim(), F = req.shape.n_ff;
  int sms = 0;
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const uint64_t chain_bytes = chain.bytes();

  // the launched chain's weights: every layer its own copy, so every matrix comes from DRAM
  DeviceBuffer weights(chain_bytes);
  chain.upload_layers(weights);
  const StreamedCopy per_warp(plan_stream(shapes, sms, kStreamWarps, false), tiled);
  const StreamedCopy per_warp32(plan_stream(shapes, sms, 32, false), tiled);
  const StreamedCopy balanced(plan_stream(shapes, sms, kStreamWarps, false, true), tiled);
  const StreamedCopy balanced32(plan_stream(shapes, sms, 32, false, true), tiled);

  const Activations act_e(E), act_q(Q), act_f(F);
  const Activations* act_of[4] = {&act_e, &act_q, &act_e, &act_f};
  P64_CUDA_CHECK(cudaDeviceSynchronize());  // made on the default stream; the chains run on their own
  int64_t out_rows = 0;
  for (const StreamMatrixShape& s : shapes) out_rows += s.rows;
  DeviceBuffer out_launched(size_t(out_rows) * 4), out_streamed(size_t(out_rows) * 4);

  cudaStream_t stream;
  P64_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<StreamChainOp> ops;
  const cudaGraphExec_t exec =
      capture_launched_chain(chain, weights, act_of, out_launched.get<float>(), out_streamed.get<float>(), stream, ops);
  DeviceBuffer ops_dev(ops.size() * sizeof(StreamChainOp)), barrier(64);
  P64_CUDA_CHECK(cudaMemset(barrier.get(), 0, 64));

  GemvChainResult res;
  res.layers = chain.layers;
  res.matrices = int(shapes.size());
  res.dtype = "Q4_K (tiled)";
  res.rows.push_back(time_chain("launches (graph, pdl)", chain_bytes, req, stream,
                                [&] { P64_CUDA_CHECK(cudaGraphLaunch(exec, stream)); }));
  std::vector<float> launched(static_cast<size_t>(out_rows)), got(static_cast<size_t>(out_rows));
  P64_CUDA_CHECK(cudaStreamSynchronize(stream));
  P64_CUDA_CHECK(cudaMemcpy(launched.data(), out_launched.get(), launched.size() * 4, cudaMemcpyDeviceToHost));

  StreamChainLaunch l;
  l.ops = ops_dev.get<StreamChainOp>();
  l.nops = int(ops.size());
  l.barrier = barrier.get<unsigned>();
  l.fault = barrier.get<int>() + 1;
  l.blocks = sms;
  int64_t max_n = 0;
  for (const StreamMatrixShape& sh : shapes) max_n = std::max(max_n, sh.n);
  l.max_n = max_n;
  DeviceBuffer probe(size_t(std::max<int64_t>(1, l.nops - 1)) * size_t(sms) * 2 * sizeof(uint64_t));
  auto run_streamed = [&](const StreamedCopy& copy, const std::string& name, int ring, bool barriers, bool bulk,
                          bool weights = true, bool stage = false, bool red = false) {
    l.red_arrive = red;
    l.stage_act = stage;
    l.stream = copy.bytes.get();
    l.warp_begin = copy.begin.get<uint64_t>();
    l.interleaved = copy.plan.interleaved;
    l.balanced = copy.plan.balanced;
    l.warps = copy.plan.warps;
    for (size_t i = 0; i < ops.size(); ++i) ops[i].round_base = copy.plan.round_base[i];
    P64_CUDA_CHECK(cudaMemcpy(ops_dev.get(), ops.data(), ops.size() * sizeof(StreamChainOp), cudaMemcpyHostToDevice));
    l.ring = ring;
    l.barriers = barriers;
    l.bulk = bulk;
    l.weights = weights;
    // NaN until written; the balanced share adds into zeroed outputs (a 4-byte memset per row of the
    // chain inside the timed launch: about 1 us for the 3B's 0.8 M rows)
    P64_CUDA_CHECK(cudaMemset(out_streamed.get(), l.balanced ? 0 : 0xFF, size_t(out_rows) * 4));
    auto launch_once = [&] {
      P64_CUDA_CHECK(cudaMemsetAsync(l.barrier, 0, 4, stream));
      if (l.balanced) P64_CUDA_CHECK(cudaMemsetAsync(out_streamed.get(), 0, size_t(out_rows) * 4, stream));
      launch_stream_chain(l, stream);
    };
    res.rows.push_back(time_chain(name, chain_bytes, req, stream, launch_once));
    if (l.balanced) launch_once();  // the timed launches added up: one more from zero for the comparison
    P64_CUDA_CHECK(cudaStreamSynchronize(stream));
    int fault = 0;
    P64_CUDA_CHECK(cudaMemcpy(&fault, l.fault, 4, cudaMemcpyDeviceToHost));
    if (fault) throw Error("bench-stream: a grid barrier timed out (" + name + "): the blocks were not all resident");
    P64_CUDA_CHECK(cudaMemcpy(got.data(), out_streamed.get(), got.size() * 4, cudaMemcpyDeviceToHost));
    if (weights) compare(launched, got, shapes, res);
    if (barriers) {  // one more chain with the barriers' clocks on
      l.probe = probe.get<uint64_t>();
      launch_once();
      P64_CUDA_CHECK(cudaStreamSynchronize(stream));
      l.probe = nullptr;
      account_barriers(probe, l.nops - 1, sms, res.rows.back());
    }
  };
  // the per-warp order (the interleaved one measured slower on the H100), whole groups per warp or
  // the balanced share, inputs read through L1 or staged in shared memory per op
  for (const StreamedCopy* copy : {&per_warp, &per_warp32, &balanced, &balanced32})
    for (bool stage : {false, true}) {
      const std::string how = std::to_string(copy->plan.warps) + "w" + (copy->plan.balanced ? " balanced" : "") +
                              (stage ? " staged input" : "");
      const int ring = copy->plan.warps == 32 ? 4 : req.rings.back();
      run_streamed(*copy, how + " ring " + std::to_string(ring) + ", barriers", ring, true, false, true, stage);
      run_streamed(*copy, how + " ring " + std::to_string(ring) + ", no barriers", ring, false, false, true, stage);
    }
  const int ring = req.rings.back();
  run_streamed(per_warp, "16w ring " + std::to_string(ring) + ", red barriers", ring, true, false, true, false, true);
  run_streamed(per_warp, "barriers only", ring, true, false, false);
  res.rows.back().bytes = 0;  // moves no weights
  run_streamed(per_warp, "red barriers only", ring, true, false, false, false, true);
  res.rows.back().bytes = 0;
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(stream);
  return res;
}

}  // namespace p64::cuda
