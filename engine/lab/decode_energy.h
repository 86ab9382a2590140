#pragma once
// Energy of the decode steps alone, read around each run's decode loop (outside its timed
// span), so tokens per joule does not carry the prefill or the gaps between runs.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/gpu_monitor.h"
#include "engine/lab/rapl.h"
#include "engine/lab/stats.h"

namespace p64 {

// The board's energy counter before and after when it has one; else its power at both ends
// times the decode's seconds (a coarser figure: NVML may average power over up to a second).
// On the CPU, the packages' RAPL counters before and after.
class DecodeEnergyMeter {
 public:
  explicit DecodeEnergyMeter(const GpuMonitor& gpu);
  explicit DecodeEnergyMeter(const RaplCounter& cpu);
  void begin();
  double end(double decode_seconds);  // joules; < 0 when unknown (a read failed, or the counter did not move)
  const std::string& source() const { return source_; }

 private:
  std::function<std::optional<double>()> counter_;  // joules; empty: power x time
  std::function<double()> power_w_;                 // < 0: unknown
  std::string source_;
  double start_j_ = -1;
  double start_w_ = -1;
};

struct DecodeEnergy {
  std::string source;          // DecodeEnergyMeter::source()
  std::vector<double> joules;  // per measured run, in order; < 0: unknown
  MinMedianMax tok_per_j;      // decode tokens per joule over the runs whose energy is known
};

DecodeEnergy summarise_decode_energy(std::string source, std::vector<double> joules, int decode_tokens);

void to_json(nlohmann::json& j, const DecodeEnergy& e);

}  // namespace p64
