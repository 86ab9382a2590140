#pragma once
#include "engine/runtime/gemv_bench.h"

namespace p64::cuda {

// A model shape's per-layer matrices in tiled Q4_K, layer after layer: launched as the decode
// step launches its GEMVs (one kernel each, PDL, one CUDA graph) and streamed by the persistent
// kernel (stream_chain.h) with and without barriers between matrices (engine/runtime/gemv_bench.h).
GemvChainResult run_gemv_chain_bench(const GemvChainRequest& req);

}  // namespace p64::cuda
