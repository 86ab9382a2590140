#pragma once
// What NVML says of a CUDA passport's GPU at one moment, for `p64 passport`: its name, the power
// limit the driver enforces, its clocks, power and clocks-event (throttle) reasons now. A run's
// own figures are sampled over the run (gpu_watch.h); these say what the card is set to.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/gpu_monitor.h"

namespace p64 {

struct GpuFacts {
  std::string device;       // GpuMonitor::device(), e.g. "PCI 0000:65:00.0"
  std::string unavailable;  // why there are no facts (no NVML, no driver); "" when there are
  std::string name;         // "" where NVML does not say
  std::optional<double> power_limit_w;
  GpuSample now;
  std::vector<std::string> reasons;  // clocks_event_reason_names(now.reasons) when known
};

// Facts of the GPU the passport names (NVML opened on its PCI bus id, gpu_source_for); none
// (nullopt) for a device that is not CUDA's.
std::optional<GpuFacts> read_gpu_facts(const DeviceFacts& device);
GpuFacts read_gpu_facts(const GpuMonitor& gpu);

// "NVIDIA H100 80GB HBM3 (PCI 0000:65:00.0), power limit 700 W, SM 1980 MHz, memory 2619 MHz,
// 72 W now, clocks-event reasons: GPU idle", or "not available (why)".
std::string gpu_facts_line(const GpuFacts& f);

void to_json(nlohmann::json& j, const GpuFacts& f);

}  // namespace p64
