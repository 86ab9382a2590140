#pragma once
// Was the machine quiet while a measurement ran? A watcher thread samples, every 50 ms over the
// measured runs, how many tasks the kernel has runnable (the fourth field of /proc/loadavg: this
// moment, where the 1-minute average lags a minute behind and still holds this process's own
// model load and any run just before) and each CPU's current clock (cpufreq scaling_cur_freq,
// where the kernel exposes it). busy_flag() judges a run busy from that and from the run's CV.
// A sample costs two small file reads: the watcher takes well under 0.1% of one core. A run on
// a GPU adds what its GPU did (gpu_watch.h), judged by the same flag.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/lab/gpu_watch.h"
#include "engine/lab/periodic_sampler.h"
#include "engine/lab/stats.h"

namespace p64 {

struct MachineSample {
  double runnable = -1;  // tasks runnable system-wide now, the reader included; < 0: unknown
  double load1 = -1;     // the 1-minute load average; < 0: unknown
  double cpu_mhz = 0;    // mean current clock over the CPUs; 0: unknown (no cpufreq, e.g. most VMs)
};
// /proc/loadavg and /sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq; unknown fields where
// they are absent (not Linux).
MachineSample read_machine_sample();
using MachineProbe = std::function<MachineSample()>;

// The samples of one watch, summed up.
struct MachineLoad {
  int cores = 0;                // logical CPUs of this host
  int samples = 0;
  double runnable_mean = -1;    // runnable tasks besides the watcher, mean over the samples; < 0: unknown
  double runnable_max = -1;
  double load1 = -1;            // 1-minute load average at the first sample (shown, not judged: it lags)
  double cpu_mhz_min = 0, cpu_mhz_max = 0;  // 0: unknown
  std::optional<GpuLoad> gpu;   // a CUDA run's GPU (figures, or why there are none); else none
};

// Samples through `probe` on its own thread from construction until stop() (at least once).
class MachineWatch {
 public:
  explicit MachineWatch(MachineProbe probe, std::chrono::milliseconds every = std::chrono::milliseconds(50));
  ~MachineWatch();
  MachineWatch(const MachineWatch&) = delete;
  MachineWatch& operator=(const MachineWatch&) = delete;
  MachineLoad stop();  // joins the watcher; later calls return the same summary

 private:
  PeriodicSampler<MachineSample> sampler_;
  std::optional<MachineLoad> load_;
};

struct BusyRules {
  double max_cv = 0.05;          // run-to-run CV of decode tok/s above this: the runs disagree
  // Runnable tasks beyond the core count tolerated on average: short daemon wake-ups are not a
  // busy machine, half a core taken all along is.
  double spare_runnable = 0.5;
  double max_clock_drift = 0.10;  // (max - min) / max of the CPUs' mean clock over the runs
  double max_gpu_clock_drift = 0.10;  // (max - min) / max of the GPU's SM clock over the runs
};

struct BusyFlag {
  bool busy = false;
  std::vector<std::string> reasons;  // one line each, e.g. "decode tok/s CV 12.0% > 5%"
};

// Busy when the runs' CV is high, when more tasks were runnable than the host has cores (other
// work took cores the run's threads wanted: with the run's T threads running, others exceeded
// cores - T), when the CPU clock drifted, or when the GPU slowed down (a throttle reason, or its
// SM clock drifted). Unknown machine figures judge nothing.
BusyFlag busy_flag(const MinMedianMax& tok_s, const MachineLoad& load, const BusyRules& rules = {});

void to_json(nlohmann::json& j, const MachineLoad& m);
void to_json(nlohmann::json& j, const BusyFlag& b);  // {"busy": bool, "reasons": [...]}

// "BUSY: reason; reason" or "quiet" for tables and logs.
std::string busy_line(const BusyFlag& b);

}  // namespace p64
