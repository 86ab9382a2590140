#include "backends/cuda/gemv_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "backends/cuda/bench_support.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/tiled_weights.h"
#include "engine/common/error.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64::cuda {
namespace {

struct OpShape {
  const char* op;
  int64_t rows, n;
  GemvMode mode;
};

// The weight bytes in `layout`, or empty where the layout has no form for the dtype.
std::vector<uint8_t> in_layout(DType aos, const std::string& layout, const std::vector<uint8_t>& blocks,
                               int64_t rows, int64_t n) {
  std::vector<uint8_t> out(blocks.size());
  if (layout == "tiles") {
    if (!tiled_dtype_for(aos, n)) return {};
    pack_tiled(aos, blocks.data(), out.data(), rows, n);
  } else if (layout == "blocks") {
    soa_pack(aos, blocks.data(), out.data(), rows * n / dtype_info(aos)->block_elems);
  } else {
    throw Error("bench-gemv: unknown CUDA layout '" + layout + "' (blocks, tiles)");
  }
  return out;
}

uint32_t device_dtype(DType aos, const std::string& layout, int64_t n) {
  return layout == "tiles" ? tiled_dtype_for(aos, n) : uint32_t(dtype_soa_of(aos));
}

struct Variant {
  std::string layout;
  int rows_per_warp, in_flight, ring, split_rows, prologue;
};

GemvBenchRow time_one(const OpShape& s, DType aos, const Variant& v, const GemvBenchRequest& req, size_t l2_bytes) {
  const std::string& layout = v.layout;
  // the prologue kernels exist at 2 rows per warp, without the block split
  if (v.prologue && (v.rows_per_warp != 2 || v.split_rows)) return {};
  // the ring refills are the warp kernel's, with two units in flight
  if (v.ring && (v.split_rows || v.prologue || v.in_flight == 1 || v.rows_per_warp != 2)) return {};
  const int64_t mats = s.mode == GemvMode::SwiGLU ? 2 : 1;
  // SwiGLU's gate and up are two tensors (SoA and tiled field arrays are sized per tensor)
  std::vector<uint8_t> host;
  for (int64_t m = 0; m < mats; ++m) {
    const std::vector<uint8_t> t = in_layout(aos, layout, random_blocks(aos, s.rows, s.n, 42 + m), s.rows, s.n);
    if (t.empty()) return {};
    host.insert(host.end(), t.begin(), t.end());
  }
  const size_t one = host.size() / size_t(mats);
  const size_t copies = std::max<size_t>(2, (4 * l2_bytes + host.size() - 1) / host.size());
  std::vector<std::unique_ptr<DeviceBuffer>> w;
  for (size_t c = 0; c < copies; ++c) {
    w.push_back(std::make_unique<DeviceBuffer>(host.size()));
    P64_CUDA_CHECK(cudaMemcpy(w.back()->get(), host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  // the activations as the decode step makes them: int16 per 32 from an RMSNorm kernel
  std::vector<float> x(size_t(s.n));
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& v : x) v = nd(rng);
  DeviceBuffer x_in(x.size() * 4), xf(x.size() * 4), xq(x.size() * 2), xd(x.size() / 8 + 64), xs(x.size() / 4 + 64);
  DeviceBuffer out(size_t(s.rows) * 4), out2(size_t(s.rows) * 4), norm(x.size() * 4);
  P64_CUDA_CHECK(cudaMemcpy(x_in.get(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  for (auto& v : x) v = 1.f + 0.1f * nd(rng);
  P64_CUDA_CHECK(cudaMemcpy(norm.get(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  const ActBuffers act{xf.get<float>(), xq.get(), xd.get<float>(), xs.get<float>(), 16};
  launch_rmsnorm_quant(x_in.get<float>(), nullptr, 0.f, s.n, act, nullptr);

  GemvLaunch g;
  g.dtype = device_dtype(aos, layout, s.n);
  g.n = s.n;
  g.xf = act.xf;
  g.xq = act.xq;
  g.xd = act.xd;
  g.xs = act.xs;
  g.mode = s.mode;
  g.act_bits = 16;
  g.rows_per_warp = v.rows_per_warp;
  g.cap_registers = true;
  g.units_in_flight = v.in_flight ? v.in_flight : aos == DType::Q8_0 ? 2 : 1;  // 0: the backend's auto
  if (v.ring) {
    g.units_in_flight = 2;
    g.ring_refill = true;
  }
  g.split_rows = v.split_rows;
  if (v.prologue) g.prologue = GemvPrologue{x_in.get<float>(), norm.get<float>(), 1e-5f};
  const int64_t nb = s.rows * s.n / dtype_info(aos)->block_elems;
  cudaStream_t stream;
  P64_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto launch = [&](size_t c) {
    g.nseg = int(mats);
    g.seg[0] = GemvSegment{w[c]->get(), out.get<float>(), s.rows, nb};
    if (mats == 2) g.seg[1] = GemvSegment{w[c]->get() + one, out2.get<float>(), s.rows, nb};
    launch_gemv(g, stream);
  };
  set_dependent_launch(true);  // as the decode step launches its kernels
  for (size_t c = 0; c < copies; ++c) launch(c);
  size_t next = 0;
  const std::vector<double> us = time_per_call_us(stream, req.repeats, req.iters, [&] { launch(next++ % copies); });
  cudaStreamDestroy(stream);
  GemvBenchRow row;
  row.op = s.op;
  row.dtype = std::string(dtype_name(aos));
  row.layout = layout;
  row.rows_per_warp = g.rows_per_warp;
  row.in_flight = g.units_in_flight;
  row.ring = v.ring;
  row.split_rows = g.split_rows;
  row.prologue = v.prologue;
  row.rows = s.rows * mats;
  row.n = s.n;
  row.bytes = host.size();
  row.us_median = us[us.size() / 2];
  row.us_min = us.front();
  row.us_max = us.back();
  return row;
}

}  // namespace

std::vector<GemvBenchRow> run_gemv_bench(const GemvBenchRequest& req) {
  std::string why;
  if (!cuda_device_available(&why)) throw Error("bench-gemv: " + why);
  if (req.iters < 1 || req.repeats < 1) throw Error("bench-gemv: iters and repeats must be at least 1");
  for (int r : req.rows_per_warp)
    if (r != 1 && r != 2 && r != 4) throw Error("bench-gemv: rows per warp must be 1, 2 or 4 (got " + std::to_string(r) + ")");
  for (int r : req.split_rows)
    if (r != 0 && r != 2 && r != 4) throw Error("bench-gemv: split rows must be 0, 2 or 4 (got " + std::to_string(r) + ")");
  for (int p : req.prologue)
    if (p != 0 && p != 1) throw Error("bench-gemv: prologue must be 0 or 1 (got " + std::to_string(p) + ")");
  for (int f : req.in_flight)
    if (f < 0 || f > 2) throw Error("bench-gemv: units in flight must be 0 (auto), 1 or 2 (got " + std::to_string(f) + ")");
  for (int r : req.ring)
    if (r != 0 && r != 1) throw Error("bench-gemv: ring must be 0 or 1 (got " + std::to_string(r) + ")");
  int l2 = 0;
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const HParams& h = req.shape;
  const int64_t E = h.n_embd, Q = h.q_dim(), KV = h.kv_dim(), F = h.n_ff;
  const OpShape shapes[] = {{"qkv", Q + 2 * KV, E, GemvMode::Store}, {"o", E, Q, GemvMode::AddTo},
                            {"gate_up", F, E, GemvMode::SwiGLU},     {"down", E, F, GemvMode::AddTo},
                            {"logits", h.n_vocab, E, GemvMode::Store}};
  std::vector<GemvBenchRow> rows;
  for (const OpShape& s : shapes)
    for (const std::string& dt : req.dtypes) {
      const auto aos = dtype_from_name(dt);
      if (!aos || (*aos != DType::Q4_K && *aos != DType::Q6_K && *aos != DType::Q8_0))
        throw Error("bench-gemv: dtype '" + dt + "' is not one of Q4_K, Q6_K, Q8_0");
      for (const std::string& layout : req.layouts)
        for (int rpw : req.rows_per_warp)
          for (int inf : req.in_flight)
            for (int ring : req.ring)
              for (int split : req.split_rows)
                for (int pro : req.prologue) {
                  GemvBenchRow r = time_one(s, *aos, Variant{layout, rpw, inf, ring, split, pro}, req, size_t(l2));
                  if (r.bytes) rows.push_back(std::move(r));
                }
    }
  return rows;
}

}  // namespace p64::cuda
