// The streamed GEMV chain: its layout holds every weight byte once, where the layout says
// (host only), and the persistent kernel's outputs are the decode GEMV's (on a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "backends/cuda/stream_chain.h"
#include "backends/cuda/stream_layout.h"
#include "backends/cuda/tiled_weights.h"
#include "cuda/cuda_test_support.h"
#include "cuda/gemv_test_support.h"
#include "engine/common/error.h"

namespace p64 {
namespace {

using cuda::kStreamRoundBytes;
using cuda::kStreamRows;
using cuda::StreamMatrixShape;

// Walks the documented layout back: for every byte of the stream, the matrix byte it must be.
// Every matrix byte is claimed exactly once and holds its value.
void check_layout(const cuda::StreamPlan& plan, const std::vector<std::vector<uint8_t>>& tiled,
                  const std::vector<uint8_t>& stream) {
  std::vector<std::vector<int>> seen;
  for (const auto& t : tiled) seen.emplace_back(t.size(), 0);
  const int64_t slots = int64_t(plan.blocks) * plan.warps;
  std::vector<int> claimed(stream.size(), 0);
  for (int64_t s = 0; s < slots; ++s) {
    for (size_t m = 0; m < plan.shapes.size(); ++m) {
      const StreamMatrixShape& sh = plan.shapes[m];
      const int64_t supers = sh.n / 256, nb = sh.rows * supers;
      // the slot's (group, round) pairs: every slots-th group whole, or balanced its share of the
      // group-major rounds
      std::vector<std::pair<int64_t, int64_t>> mine;
      const int64_t J = sh.n / 1024, total = sh.rows / kStreamRows * J;
      if (plan.balanced)
        for (int64_t r = s * total / slots; r < (s + 1) * total / slots; ++r) mine.emplace_back(r / J, r % J);
      else
        for (int64_t g = s; g < sh.rows / kStreamRows; g += slots)
          for (int64_t j = 0; j < J; ++j) mine.emplace_back(g, j);
      int64_t t = 0;
      for (const auto& [g, j] : mine) {
        const uint64_t at = plan.interleaved ? uint64_t(((plan.round_base[m] + t) * slots + s) * kStreamRoundBytes)
                                             : plan.round_offset(m, s, t);
        ASSERT_LE(at + kStreamRoundBytes, stream.size());
        for (int b = 0; b < kStreamRoundBytes; ++b) ASSERT_EQ(claimed[at + b]++, 0) << "two rounds share bytes";
        for (int i = 0; i < kStreamRows; ++i) {
          const int64_t row = g * kStreamRows + i;
          for (int b = 0; b < 512; ++b) {
            const size_t src = size_t((row * (sh.n / 32) + 32 * j) * 16 + b);
            ASSERT_EQ(stream[at + 512 * i + b], tiled[m][src]) << "slot " << s << " matrix " << m << " row " << row;
            ++seen[m][src];
          }
          for (int b = 0; b < 64; ++b) {
            const size_t src = size_t(128 * nb + (row * supers + 4 * j) * 16 + b);
            ASSERT_EQ(stream[at + 512 * kStreamRows + 64 * i + b], tiled[m][src]);
            ++seen[m][src];
          }
        }
        ++t;
      }
    }
    if (!plan.interleaved)
      EXPECT_EQ(plan.round_offset(plan.shapes.size() - 1, s, plan.slot_rounds(plan.shapes.size() - 1, s)),
                plan.warp_begin[size_t(s) + 1])
          << "slot " << s << " has bytes its plan does not account for";
  }
  for (size_t m = 0; m < seen.size(); ++m)
    EXPECT_TRUE(std::all_of(seen[m].begin(), seen[m].end(), [](int c) { return c == 1; })) << "matrix " << m;
}

TEST(StreamLayout, EveryWeightByteLandsOnceWhereTheLayoutSays) {
  std::mt19937 rng(3);
  // more groups than slots (wrap-around), fewer (idle slots), and two widths
  const std::vector<StreamMatrixShape> shapes = {{14, 1024}, {4, 2048}, {30, 1024}};
  std::vector<std::vector<uint8_t>> tiled;
  std::vector<const uint8_t*> ptrs;
  uint64_t total = 0;
  for (const StreamMatrixShape& s : shapes) {
    tiled.emplace_back(size_t(s.rows * s.n / 256 * 144));
    for (auto& b : tiled.back()) b = uint8_t(rng());
    ptrs.push_back(tiled.back().data());
    total += tiled.back().size();
  }
  for (int order = 0; order < 3; ++order) {
    const bool interleaved = order == 1, balanced = order == 2;
    SCOPED_TRACE(interleaved ? "interleaved" : balanced ? "balanced" : "per warp");
    const cuda::StreamPlan plan = cuda::plan_stream(shapes, 3, 2, interleaved, balanced);
    if (!interleaved) EXPECT_EQ(plan.bytes(), total) << "the per-warp order adds no padding to these shapes";
    else EXPECT_GE(plan.bytes(), total);
    std::vector<uint8_t> stream(plan.bytes(), 0);
    cuda::pack_stream(plan, ptrs, stream.data());
    check_layout(plan, tiled, stream);
  }
}

TEST(StreamLayout, RejectsShapesItHasNoFormFor) {
  for (StreamMatrixShape bad : {StreamMatrixShape{4, 960}, StreamMatrixShape{3, 1024}, StreamMatrixShape{0, 1024}}) {
    try {
      cuda::plan_stream({bad}, 4, 2);
      ADD_FAILURE() << bad.rows << " x " << bad.n << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad.n)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(cuda::plan_stream({{4, 1024}}, 0, 2), Error);
  EXPECT_THROW(cuda::plan_stream({{4, 1024}}, 1, 2, /*interleaved=*/true, /*balanced=*/true), Error);
}

// The chain on the device against launch_gemv on the same tiled matrices and activations.
TEST(StreamChain, MatchesTheDecodeGemvOnEveryMatrix) {
  P64_REQUIRE_CUDA_DEVICE();
  std::mt19937 rng(21);
  const std::vector<StreamMatrixShape> shapes = {{512, 3072}, {96, 1024}, {2048, 2048}, {3072, 1024}, {64, 8192}};
  std::vector<test::HostMatrix> host;
  std::vector<std::vector<uint8_t>> tiled;
  std::vector<const uint8_t*> ptrs;
  for (const StreamMatrixShape& s : shapes) {
    host.push_back(test::make_matrix(DType::Q4_K, s.rows, s.n, rng));
    tiled.emplace_back(host.back().bytes.size());
    cuda::pack_tiled(DType::Q4_K, host.back().bytes.data(), tiled.back().data(), s.rows, s.n);
    ptrs.push_back(tiled.back().data());
  }
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<std::unique_ptr<test::ActOnDevice>> acts;
  std::vector<std::unique_ptr<test::DeviceVec<uint8_t>>> weights;
  int64_t out_rows = 0;
  for (size_t m = 0; m < shapes.size(); ++m) {
    std::vector<float> x(size_t(shapes[m].n));
    for (auto& v : x) v = nd(rng);
    acts.push_back(std::make_unique<test::ActOnDevice>(x, 16));
    weights.push_back(std::make_unique<test::DeviceVec<uint8_t>>(tiled[m]));
    out_rows += shapes[m].rows;
  }
  test::DeviceVec<float> expected(static_cast<size_t>(out_rows)), got(static_cast<size_t>(out_rows));
  std::vector<cuda::StreamChainOp> ops;
  int64_t at = 0;
  for (size_t m = 0; m < shapes.size(); ++m) {
    const StreamMatrixShape& s = shapes[m];
    cuda::GemvLaunch g;
    g.dtype = cuda::kTiledQ4_K;
    g.n = s.n;
    g.xq = acts[m]->xq.get();
    g.xd = acts[m]->xd.get();
    g.xs = acts[m]->xs.get();
    g.xf = acts[m]->xf.get();
    g.act_bits = 16;
    g.rows_per_warp = 2;
    g.seg[0] = {weights[m]->get(), expected.get() + at, s.rows, s.rows * s.n / 256};
    cuda::launch_gemv(g, nullptr);
    ops.push_back({acts[m]->xq.get(), acts[m]->xd.get(), acts[m]->xs.get(), got.get() + at, s.rows, s.n, 0});
    at += s.rows;
  }
  const std::vector<float> want = expected.download();

  int sms = 0;
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int blocks : {3, sms})
    for (int warps : {16, 32})
    for (int ring : {4, 8})
      for (bool barriers : {true, false})
      for (bool bulk : {false, true})
      for (int order = 0; order < 3; ++order)
      for (bool stage : {false, true})
      for (bool red : {false, true}) {  // barrier arrivals by release reductions
        const bool interleaved = order == 1, balanced = order == 2;
        if (warps == 32 && ring != 4) continue;
        if (red && (!barriers || stage || bulk)) continue;
        SCOPED_TRACE("blocks " + std::to_string(blocks) + " warps " + std::to_string(warps) + " ring " + std::to_string(ring) +
                     (barriers ? " barriers" : " no barriers") + (bulk ? " bulk copies" : " cp.async") + (interleaved ? " interleaved" : balanced ? " balanced" : " per warp") + (stage ? " staged input" : "") + (red ? " red arrivals" : ""));
        const cuda::StreamPlan plan = cuda::plan_stream(shapes, blocks, warps, interleaved, balanced);
        for (size_t m = 0; m < ops.size(); ++m) ops[m].round_base = plan.round_base[m];
        std::vector<uint8_t> bytes(plan.bytes());
        cuda::pack_stream(plan, ptrs, bytes.data());
        test::DeviceVec<uint8_t> stream(bytes);
        test::DeviceVec<uint64_t> begin(plan.warp_begin);
        test::DeviceVec<cuda::StreamChainOp> ops_dev(ops);
        test::DeviceVec<unsigned> flags(std::vector<unsigned>{0, 0});
        cuda::StreamChainLaunch l;
        l.ops = ops_dev.get();
        l.nops = int(ops.size());
        l.stream = stream.get();
        l.warp_begin = begin.get();
        l.barrier = flags.get();
        l.fault = reinterpret_cast<int*>(flags.get() + 1);
        l.blocks = blocks;
        l.ring = ring;
        l.barriers = barriers;
        l.bulk = bulk;
        l.interleaved = interleaved;
        l.balanced = balanced;
        l.warps = warps;
        l.stage_act = stage;
        l.max_n = 8192;
        l.red_arrive = red;
        const int nbar = int(shapes.size()) - 1;
        test::DeviceVec<uint64_t> probe(std::vector<uint64_t>(size_t(nbar) * blocks * 2, 0));
        l.probe = barriers ? probe.get() : nullptr;
        if (balanced) P64_CUDA_CHECK(cudaMemset(got.get(), 0, size_t(out_rows) * 4));  // the parts add up
        else got.poison();
        cuda::launch_stream_chain(l, nullptr);
        const std::vector<float> out = got.download();
        const std::vector<unsigned> f = flags.download();
        EXPECT_EQ(f[1], 0u) << "a barrier timed out";
        if (barriers) EXPECT_EQ(f[0], unsigned(blocks * (int(shapes.size()) - 1))) << "every block passed every barrier";
        if (barriers) {  // the barrier clocks: no block leaves before the last one has arrived
          const std::vector<uint64_t> t = probe.download();
          for (int k = 0; k < nbar; ++k) {
            uint64_t last_arrival = 0;
            for (int b = 0; b < blocks; ++b) last_arrival = std::max(last_arrival, t[(size_t(k) * blocks + b) * 2]);
            for (int b = 0; b < blocks; ++b) {
              ASSERT_GT(t[(size_t(k) * blocks + b) * 2], 0u) << "barrier " << k << " block " << b << " stamped its arrival";
              ASSERT_GE(t[(size_t(k) * blocks + b) * 2 + 1], last_arrival) << "barrier " << k << " block " << b;
            }
          }
        }
        int64_t identical = 0;
        float worst = 0.f, scale = 0.f;
        for (size_t i = 0; i < out.size(); ++i) {
          identical += out[i] == want[i];
          worst = std::max(worst, std::isfinite(out[i]) ? std::fabs(out[i] - want[i]) : INFINITY);
          scale = std::max(scale, std::fabs(want[i]));
        }
        EXPECT_LE(worst, 1e-5f * scale) << identical << " of " << out.size() << " bit-identical";
      }
}

}  // namespace
}  // namespace p64
