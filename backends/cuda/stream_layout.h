#pragma once
// The streamed GEMV chain's weight layout (stream_chain.cu). A persistent grid multiplies a
// chain of matrices; each of its warps reads its rows of the whole chain as one contiguous byte
// stream, in the order it multiplies them, so it can keep copies in flight into a shared-memory
// ring across matrix boundaries: weights depend on nothing, only the activations wait for the
// previous matrix.
//
// Rows come in groups of kStreamRows (the rows a warp owns at a time). Group g of a matrix with
// G groups goes to warp slot g mod S (S = blocks x warps per block; slot s is warp s / blocks of
// block s mod blocks, so consecutive groups land on different multiprocessors). A group of a
// width-n matrix is n / 1024 rounds; round j holds, for each row i of the group, the 512 quant
// bytes of sub-blocks 32j .. 32j+31 (tiled Q4_K, tiled_weights.h) at 512 i, then each row's four
// super-block headers at 512 kStreamRows + 64 i. Every round is kStreamRoundBytes long.
#include <cstdint>
#include <vector>

namespace p64::cuda {

constexpr int kStreamRows = 2;
constexpr int kStreamRoundBytes = kStreamRows * (512 + 64);

struct StreamMatrixShape {
  int64_t rows, n;
};

struct StreamPlan {
  int blocks = 0, warps = 0;
  std::vector<StreamMatrixShape> shapes;
  std::vector<uint64_t> warp_begin;  // [slots + 1]: byte offset of each slot's stream
  uint64_t bytes() const { return warp_begin.empty() ? 0 : warp_begin.back(); }
};

// Throws p64::Error for a shape the layout has no form for (n % 1024, rows % kStreamRows).
StreamPlan plan_stream(const std::vector<StreamMatrixShape>& shapes, int blocks, int warps);
// tiled[m]: matrix m of the plan in the tiled Q4_K form; dst: plan.bytes() bytes.
void pack_stream(const StreamPlan& plan, const std::vector<const uint8_t*>& tiled, uint8_t* dst);

}  // namespace p64::cuda
