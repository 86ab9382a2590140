#pragma once
#include <vector>

#include "engine/runtime/gemv_bench.h"

namespace p64::cuda {

// The decode GEMV alone on each matrix of a model shape (engine/runtime/gemv_bench.h).
// Layouts: blocks (the SoA form the GPU files use), tiles (gemv_layout=tiles). Each matrix is
// uploaded in enough copies to cycle through four times the L2, so every launch reads DRAM.
std::vector<GemvBenchRow> run_gemv_bench(const GemvBenchRequest& req);

}  // namespace p64::cuda
