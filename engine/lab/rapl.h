#pragma once
// The CPU packages' energy counters of Linux's powercap interface (Intel RAPL; AMD's Zen parts
// appear under the same "intel-rapl" name on kernels that support them), read from sysfs. A
// machine without them (most VMs) or where they are root-only (Linux 5.10 and later, after
// CVE-2020-8694) has no CPU energy figures, with the reason in words, never an error.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/passport.h"

namespace p64 {

class RaplCounter {
 public:
  // The package domains under `root` ($P64_POWERCAP_ROOT when set, for tests, else
  // /sys/class/powercap): each top-level intel-rapl:N whose name starts with "package". nullptr,
  // with `why`, when there is none or one cannot be read.
  static std::unique_ptr<RaplCounter> open(std::string& why, std::string root = "");

  // Joules over every package since open(), the counters' wrap-around undone (call more often
  // than a counter wraps: minutes at full load). nullopt when a read fails.
  std::optional<double> energy_j() const;
  std::string source() const;  // "RAPL package energy (2 packages)"

 private:
  struct Domain {
    std::string energy_file;
    double range_uj = 0;  // max_energy_range_uj: where the counter wraps to 0
    double last_uj = 0;
    double total_uj = 0;
  };
  RaplCounter() = default;
  mutable std::vector<Domain> domains_;
  mutable std::mutex mutex_;
};

// Where a CPU run reads its energy: a counter, or why there is none.
struct CpuEnergySource {
  std::shared_ptr<const RaplCounter> counter;
  std::string unavailable;  // set when a CPU run has no counter
  bool wanted() const { return counter || !unavailable.empty(); }
};
// The CPU backend opens RAPL; any other backend wants nothing ({}).
CpuEnergySource cpu_energy_source_for(const DeviceFacts& device);

}  // namespace p64
