#pragma once
// What the GPU did while a CUDA run was measured: a watcher samples its clocks, power and
// clocks-event reasons every 50 ms (one sample costs a few NVML calls, tens of microseconds),
// plus one sample when stopped so even a run shorter than the period is seen at both ends.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/gpu_monitor.h"
#include "engine/lab/periodic_sampler.h"

namespace p64 {

struct GpuLoad {
  std::string device;       // which GPU was read, e.g. "PCI 0000:65:00.0"
  std::string unavailable;  // why there are no figures (no NVML, no driver); "" when there are
  int samples = 0;
  int idle_samples = 0;  // samples that found the GPU idle (its clocks-event reason says so)
  double sm_mhz_min = 0, sm_mhz_max = 0;    // over the samples that found it working; 0: unknown
  double mem_mhz_min = 0, mem_mhz_max = 0;  // 0: unknown
  double power_w_mean = -1, power_w_max = -1;  // < 0: unknown
  bool reasons_known = false;
  uint64_t slowdown_reasons = 0;  // slowdown reason bits (gpu_monitor.h) seen in any sample
  bool throttled() const { return slowdown_reasons != 0; }
};

// A GPU without figures, and why.
GpuLoad unavailable_gpu(std::string why);
GpuLoad summarise_gpu(const std::vector<GpuSample>& samples, std::string device);

class GpuWatch {
 public:
  explicit GpuWatch(std::shared_ptr<const GpuMonitor> gpu,
                    std::chrono::milliseconds every = std::chrono::milliseconds(50));
  GpuLoad stop();  // a last sample, then the summary; later calls return the same

 private:
  std::shared_ptr<const GpuMonitor> gpu_;
  PeriodicSampler<GpuSample> sampler_;
  std::optional<GpuLoad> load_;
};

// Why a GPU says a run is not what the card can do, one line each: a slowdown reason seen, or
// the SM clock moving by more than `max_clock_drift` of its top over the run. None when the
// figures are unknown.
std::vector<std::string> gpu_busy_reasons(const GpuLoad& gpu, double max_clock_drift);

void to_json(nlohmann::json& j, const GpuLoad& g);

// "SM 1980-1980 MHz, memory 2619 MHz, 312 W mean (max 330 W), not throttled" for tables.
std::string gpu_line(const GpuLoad& g);

}  // namespace p64
