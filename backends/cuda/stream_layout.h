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
//
// Balanced: instead of whole groups, slot s takes the rounds [s T / S, (s + 1) T / S) of the
// matrix's T rounds in group-major order, so every warp streams the same bytes of each matrix
// (within a round) and a barrier waits for no straggler; a group split between slots is summed
// by each of them into its output (which starts at zero).
//
// Two orders of the rounds in memory. Per warp: slot s's rounds one after another from
// warp_begin[s], so each warp reads its own contiguous region (thousands of regions read at once).
// Interleaved: round t of slot s in matrix m at position (round_base[m] + t) * S + s, where
// round_base[m] sums the earlier matrices' largest round count of any slot; so at any moment the
// grid reads one dense window, at the price of holes where a slot has fewer rounds of a matrix.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace p64::cuda {

constexpr int kStreamRows = 2;
constexpr int kStreamRoundBytes = kStreamRows * (512 + 64);

#ifdef __CUDACC__
#define P64_STREAM_HD __host__ __device__
#else
#define P64_STREAM_HD
#endif
// Rounds slot `slot` of `slots` multiplies of a rows x n matrix (its groups slot, slot + slots, ...,
// or balanced its share of the rounds); the host plan, the packer and the kernel count with these
// two rules.
P64_STREAM_HD inline int64_t stream_slot_rounds(int64_t rows, int64_t n, int64_t slot, int64_t slots,
                                                bool balanced = false) {
  const int64_t groups = rows / kStreamRows;
  if (balanced) return ((slot + 1) * groups * (n / 1024)) / slots - (slot * groups * (n / 1024)) / slots;
  return (groups > slot ? (groups - slot + slots - 1) / slots : 0) * (n / 1024);
}
// The group and the round within it of the slot's first round; later rounds follow with
// j + 1, and past the group's last round j = 0 of the next group (balanced) or of the group
// `slots` further on.
struct StreamRound {
  int64_t group, j;
};
P64_STREAM_HD inline StreamRound stream_first_round(int64_t rows, int64_t n, int64_t slot, int64_t slots,
                                                    bool balanced) {
  if (!balanced) return StreamRound{slot, 0};
  const int64_t first = (slot * (rows / kStreamRows) * (n / 1024)) / slots;
  return StreamRound{first / (n / 1024), first % (n / 1024)};
}
P64_STREAM_HD inline void stream_next_round(StreamRound& r, int64_t n, int64_t slots, bool balanced) {
  if (++r.j < n / 1024) return;
  r.j = 0;
  r.group += balanced ? 1 : slots;
}

struct StreamMatrixShape {
  int64_t rows, n;
};

struct StreamPlan {
  int blocks = 0, warps = 0;
  bool interleaved = false;
  bool balanced = false;
  std::vector<StreamMatrixShape> shapes;
  // [slots + 1]: running sum of each slot's bytes (per warp: the byte offset of its stream)
  std::vector<uint64_t> warp_begin;
  std::vector<int64_t> round_base;  // interleaved: [shapes] (see above)
  uint64_t interleaved_bytes = 0;
  uint64_t bytes() const { return interleaved ? interleaved_bytes : warp_begin.empty() ? 0 : warp_begin.back(); }
  int64_t slots() const { return int64_t(blocks) * warps; }
  // Rounds slot `slot` multiplies of matrix m.
  int64_t slot_rounds(size_t m, int64_t slot) const;
  // Byte offset of slot `slot`'s round t of matrix m.
  uint64_t round_offset(size_t m, int64_t slot, int64_t t) const;
};

// Throws p64::Error for a shape the layout has no form for (n % 1024, rows % kStreamRows), and for
// the balanced share in the interleaved order (not built).
StreamPlan plan_stream(const std::vector<StreamMatrixShape>& shapes, int blocks, int warps, bool interleaved = false,
                       bool balanced = false);
// tiled[m]: matrix m of the plan in the tiled Q4_K form; dst: plan.bytes() bytes.
void pack_stream(const StreamPlan& plan, const std::vector<const uint8_t*>& tiled, uint8_t* dst);

}  // namespace p64::cuda
