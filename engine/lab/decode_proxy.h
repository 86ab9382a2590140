#pragma once
// decode-proxy: the plan's §9 measurement contract. Warm-up, then per run a prefill of a
// fixed prompt and N greedy decode steps; decode tok/s counts decode steps over decode wall
// time only (tokens are tokens: never characters or provenance length).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/common/progress.h"
#include "engine/lab/compute_ceiling.h"
#include "engine/lab/decode_energy.h"
#include "engine/lab/rapl.h"
#include "engine/lab/gpu_monitor.h"
#include "engine/lab/machine_load.h"
#include "engine/lab/stats.h"
#include "engine/lab/store_types.h"
#include "engine/runtime/backend.h"

namespace p64 {

struct DecodeProxyParams {
  int decode_tokens = 32;
  int prompt_tokens = 32;
  int runs = 2;          // measured runs (>= 1; the A/B rule wants >= 2)
  int warmup = 1;        // untimed runs first (pipeline/JIT caches, page faults)
  int warm_repeats = 0;  // the plan's R6: repeat on the kept-loaded engine, compare to peak
  // Watches the machine over the measured runs (tests inject one); empty: no watch (an A/B
  // watches its interleaved runs as a whole).
  MachineProbe machine_probe = read_machine_sample;
  // The GPU of a CUDA run (gpu_source_for): watched with the machine, and its energy read around
  // each decode. Empty: no GPU figures (any other backend).
  GpuSource gpu;
  // The CPU packages' energy of a CPU run (cpu_energy_source_for), read around each decode.
  CpuEnergySource cpu_energy;
};

// The deterministic prompt every decode-proxy and A/B run uses, and how it was made.
struct ProxyPrompt {
  std::vector<int32_t> ids;
  std::string rule;  // e.g. "tokenized fixed text (SentencePiece), repeated to 32 ids"
};
// Tokenizes a fixed English text with the model's own tokenizer (BOS first when the
// vocabulary adds one), repeating it to n ids; when the vocabulary cannot tokenize it,
// fixed ids (1 + 7919 i) mod n_vocab. Same model, same n: same ids, always.
ProxyPrompt proxy_prompt(const Model& model, int n);

struct DecodeProxyResult {
  DecodeProxyParams params;
  ProxyPrompt prompt;
  std::vector<SampleRecord> samples;  // measured runs, then the warm repeats (warm = true)
  MinMedianMax decode_tok_s, prefill_tok_s, ttft_ms, effective_gbs, bandwidth_share;
  uint64_t peak_device_bytes = 0;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes_per_position = 0;
  bool kv_bytes_assumed = false;     // the backend did not say; fp16 K and V assumed
  double bytes_per_token = 0;        // weights + mean KV read per decode step
  double measured_read_gbs = 0;      // the passport's ceiling the share is taken of
  // The compute roofline (engine/lab/model_flops.h): FLOPs of a decode step at the same mean
  // positions as bytes_per_token, of the whole prompt's prefill, and the least bytes that prefill
  // reads (the weights once, the prompt's KV written once).
  double decode_flops_per_token = 0;
  double prefill_flops = 0;
  double prefill_bytes = 0;
  ComputeCeiling compute_ceiling;
  // Warm mode: steady state (median of the warm repeats) over the peak of all runs.
  MinMedianMax warm_decode_tok_s;
  double warm_over_peak = 0;
  bool warm_within_10pct = false;
  std::vector<int32_t> generated;    // greedy ids of the last run (same every run on a sound backend)
  // The machine over the measured runs, and whether it (or the runs' CV) says it was busy.
  MachineLoad machine;
  BusyFlag busy;
  std::optional<DecodeEnergy> energy;  // the measured runs' decode energy, where NVML or RAPL read it
  std::string energy_unavailable;      // why a CPU run has none (RAPL absent or unreadable)
};

// The backend is loaded with the model already. Progress is reported once per run;
// returning false cancels (throws p64::Cancelled).
DecodeProxyResult run_decode_proxy(Backend& backend, const Model& model, const Passport& passport,
                                   const DecodeProxyParams& params, const ProgressFn& progress = {});

void to_json(nlohmann::json& j, const DecodeProxyResult& r);

// "123.4 [120.1-125.0] ± 1.2 (CV 1.0%)": median [min-max] ± stddev (CV), for tables and progress.
std::string format_min_median_max(const MinMedianMax& m, int precision = 1);

}  // namespace p64
