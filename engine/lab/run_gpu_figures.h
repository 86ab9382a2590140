#pragma once
// The three GPU figures a run's row shows beside its tok/s (the scoreboard, the A/B sides):
// decode tokens per joule, the board's mean power and whether the GPU throttled. Each is absent
// where the run did not record it (no NVML, not a CUDA run, a store from before NVML).
#include <optional>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

struct DecodeEnergy;
struct GpuLoad;

struct RunGpuFigures {
  std::optional<double> tok_per_j;     // median over the measured runs whose energy was read
  std::optional<double> power_w_mean;  // over the whole run (both sides of an A/B)
  std::optional<bool> throttled;       // any clocks-event reason that slows the GPU, in any sample
  bool empty() const { return !tok_per_j && !power_w_mean && !throttled; }
};

// From a stored run's summary: its "energy" (or, with `side` "a" or "b", that side's) and its
// "machine.gpu". Anything malformed reads as absent.
RunGpuFigures run_gpu_figures(const nlohmann::json& summary, const char* side = nullptr);

// From a result still in memory: the side's energy and the run's GPU load.
RunGpuFigures run_gpu_figures(const std::optional<DecodeEnergy>& energy, const std::optional<GpuLoad>& gpu);

}  // namespace p64
