#pragma once
// An NVIDIA GPU's clocks, power, energy and clocks-event (throttle) reasons, read through NVML
// opened at run time: the engine links no GPU library, and a machine without the driver (or a
// container without libnvidia-ml) simply has no GPU figures, never an error.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/passport.h"

namespace p64 {

struct GpuSample {
  double sm_mhz = 0;   // 0: unknown
  double mem_mhz = 0;  // 0: unknown
  double power_w = -1;  // board power; < 0: unknown
  uint64_t reasons = 0;  // NVML clocks-event reason bits (nvml_api.h)
  bool reasons_known = false;
};

class GpuMonitor {
 public:
  // NVML from $P64_NVML_LIBRARY when set (the tests' stand-in), else libnvidia-ml.so.1, on the
  // device at `pci_bus_id` (as CUDA names it, "0000:65:00.0"), or on the only GPU when it is
  // empty. nullptr, with `why` in words, when the library, a function it needs, the driver or
  // the device is not there.
  static std::unique_ptr<GpuMonitor> open(const std::string& pci_bus_id, std::string& why);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Safe from several threads at once (NVML is): a watcher samples while a run reads energy.
  GpuSample sample() const;
  // The board's energy counter in joules since the driver loaded (Volta and later); nullopt
  // where the GPU or the library has none.
  std::optional<double> energy_j() const;
  const std::string& device() const { return device_; }  // which GPU, e.g. "PCI 0000:65:00.0"
  // The board's product name ("NVIDIA H100 80GB HBM3"); "" where the library does not say.
  std::string name() const;
  // The power limit the driver enforces, in watts; nullopt where the library does not say.
  std::optional<double> power_limit_w() const;

 private:
  struct Api;
  GpuMonitor();
  std::unique_ptr<Api> api_;
  std::string device_;
};

// Where a run reads its GPU: a monitor, or why there is none.
struct GpuSource {
  std::shared_ptr<const GpuMonitor> monitor;
  std::string unavailable;  // set when a CUDA run has no monitor
  bool wanted() const { return monitor || !unavailable.empty(); }
};
// A CUDA device opens NVML on its PCI bus id; any other backend wants nothing ({}).
GpuSource gpu_source_for(const DeviceFacts& device);

// The reason bits that say the GPU ran below the clock it wanted for a cause outside the run
// (heat, a power cap, a hardware slowdown); idle, application clocks and sync boost are not.
uint64_t slowdown_reasons(uint64_t reasons);
std::vector<std::string> slowdown_reason_names(uint64_t reasons);  // e.g. "HW thermal slowdown"
// Every reason bit set, the ones not judged ("GPU idle", "applications clocks", "sync boost")
// included: what the GPU says of itself at one moment.
std::vector<std::string> clocks_event_reason_names(uint64_t reasons);

}  // namespace p64
