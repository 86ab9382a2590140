#pragma once
// The CPU speed benchmark: decode-proxy runs on synthetic models of real shapes and quant mixes
// (p64 synth -> convert -> .p64), interleaved across the models round by round so a noisy
// machine slows them all alike, reported as medians with the first (cold) rounds apart.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/common/progress.h"
#include "engine/lab/stats.h"

namespace p64 {

// "cpu-rows" where this CPU has the row-interleaved kernels, else "plain".
std::string default_cpu_bench_layout();

struct CpuBenchModel {
  std::string preset;  // synth preset, e.g. "smollm2-360m"
  std::string quant;   // "Q8_0", "Q4_K_M", "F16"
  std::string layout = default_cpu_bench_layout();  // "cpu-rows" (p64 convert --cpu-rows) or "plain" (GGUF's blocks)
  std::string label() const { return preset + " " + quant + " " + layout; }
};

// SmolLM2-360M Q8_0 and Q4_K_M, Llama-3.2-1B Q4_K_M: the shapes of issue 2's peer numbers.
std::vector<CpuBenchModel> default_cpu_bench_models();
// "PRESET:QUANT[:LAYOUT]", e.g. "smollm2-360m:Q8_0" or "smollm2-360m:Q8_0:plain".
CpuBenchModel parse_cpu_bench_model(const std::string& spec);

// The .p64 of a model in `dir`, synthesized (seed 1) and converted to its layout when it is not
// there yet; the intermediate GGUF is removed.
std::string ensure_cpu_bench_model(const std::string& dir, const CpuBenchModel& m, const ProgressFn& progress = {});

struct CpuBenchParams {
  uint32_t threads = 2;
  int rounds = 5;         // measured rounds; every round runs every model once
  int warmup_rounds = 1;  // rounds first whose figures are reported apart (page cache, clocks)
  int decode_tokens = 32;
  int prompt_tokens = 64;
};

struct CpuBenchRow {
  CpuBenchModel model;
  std::string path;
  uint64_t weight_bytes = 0;
  double bytes_per_token = 0;  // weights + mean KV read per decode step
  MinMedianMax decode_tok_s, prefill_tok_s, effective_gbs;  // measured rounds
  MinMedianMax bandwidth_share;  // effective GB/s over the passport's measured read bandwidth
  double measured_read_gbs = 0;  // that ceiling (host_bandwidth, all cores), 0 = not measured
  std::vector<double> warmup_decode_tok_s, warmup_prefill_tok_s;  // the warm-up rounds, in order
};

// Loads every model on the CPU backend, then runs rounds of one decode-proxy run per model,
// the model order rotated each round. Progress once per run; false cancels.
std::vector<CpuBenchRow> run_cpu_bench(const std::vector<CpuBenchModel>& models, const std::vector<std::string>& paths,
                                       const CpuBenchParams& params, const ProgressFn& progress = {});

}  // namespace p64
