#pragma once
// A backend's decode-GEMV microbenchmark (p64 bench-gemv): each matrix of a model shape timed
// alone, in each weight form the backend reads, as bytes per second. Backends that have one
// register it next to their factory; the CLI divides by the passport's measured read ceiling.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/hparams.h"

namespace p64 {

struct GemvBenchRequest {
  HParams shape;                    // the matrices: qkv, o, gate_up, down, logits of this model
  std::vector<std::string> dtypes;  // e.g. Q4_K, Q6_K, Q8_0
  std::vector<std::string> layouts; // the backend's names, e.g. blocks, tiles
  std::vector<int> rows_per_warp = {2};  // launch shapes to sweep (the backend's switches)
  std::vector<int> in_flight = {0};      // 0: the backend's auto
  std::vector<int> ring = {0};           // 1: loads refilled as units are consumed (the backend's gemv_ring)
  std::vector<int> split_rows = {0};     // rows per block of a block-split kernel; 0: none
  std::vector<int> prologue = {0};       // 1: the GEMV normalizes and quantizes its own fp32 input
  int iters = 100;                  // launches per timed repeat
  int repeats = 5;
};

struct GemvBenchRow {
  std::string op;      // qkv | o | gate_up | down | logits
  std::string dtype;
  std::string layout;
  int rows_per_warp = 0, in_flight = 0, ring = 0, split_rows = 0, prologue = 0;
  int64_t rows = 0, n = 0;
  uint64_t bytes = 0;  // weight bytes one launch reads
  double us_median = 0, us_min = 0, us_max = 0;  // per launch
  double gbs() const { return us_median > 0 ? double(bytes) / (us_median * 1e3) : 0; }
  // Barrier variants, from one probed chain (%globaltimer), means over the barriers in microseconds:
  // first to last block's arrival, last arrival to the mean leave, and a block's mean time inside.
  // Negative: not measured.
  double arrival_spread_us = -1, release_after_last_us = -1, block_wait_us = -1;
};

using GemvBench = std::function<std::vector<GemvBenchRow>(const GemvBenchRequest&)>;

void register_gemv_bench(std::string backend, GemvBench bench);
// nullptr when the backend has none.
const GemvBench* find_gemv_bench(std::string_view backend);

// The chain benchmark (p64 bench-stream): a model shape's q/k/v, o, gate/up and down matrices,
// layer after layer, multiplied once as the decode step launches them and once by a persistent
// kernel that streams the whole chain (each variant in the backend's words), with the outputs of
// the two compared.
struct GemvChainRequest {
  HParams shape;
  int layers = 0;                // 0: the shape's own
  std::vector<int> rings = {4, 8};  // rounds in flight per warp of the streamed kernel
  int iters = 10;                // chains per timed repeat
  int repeats = 5;
};

struct GemvChainRow {
  std::string variant;
  uint64_t bytes = 0;  // weight bytes one chain reads
  double us_median = 0, us_min = 0, us_max = 0;  // per chain
  double gbs() const { return us_median > 0 ? double(bytes) / (us_median * 1e3) : 0; }
  // Barrier variants, from one probed chain (%globaltimer), means over the barriers in microseconds:
  // first to last block's arrival, last arrival to the mean leave, and a block's mean time inside.
  // Negative: not measured.
  double arrival_spread_us = -1, release_after_last_us = -1, block_wait_us = -1;
};

struct GemvChainResult {
  int layers = 0, matrices = 0;
  std::string dtype;
  std::vector<GemvChainRow> rows;
  // the streamed outputs against the launched ones: outputs compared, bit-identical, largest
  // relative difference
  int64_t compared = 0, identical = 0;
  double max_rel_diff = 0;
};

using GemvChainBench = std::function<GemvChainResult(const GemvChainRequest&)>;

void register_gemv_chain_bench(std::string backend, GemvChainBench bench);
const GemvChainBench* find_gemv_chain_bench(std::string_view backend);

}  // namespace p64
