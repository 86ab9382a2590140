#pragma once
// The compute ceiling a roofline draws, with where it came from. A passport that gives a peak
// FLOP/s (the CUDA backend computes one from the device's clock and SMs) is used as it is. A CPU
// passport carries measured fp32 FMA and int8 dot-product rates (host_compute.h); the higher is
// the ceiling. A CPU passport stored before those were measured falls back to the nominal cores
// × fp32 SIMD lanes × 2 (FMA) × clock, labelled "nominal": one FMA unit per core is assumed, so
// the real peak may be twice it, and the int8 kernels do not run on fp32 lanes. Otherwise there is
// no ceiling, and `source` says why; no number is ever made up.
#include <string>

#include "engine/runtime/passport.h"

namespace p64 {

struct CpuClock {
  double ghz = 0;      // 0 = unknown
  std::string source;  // e.g. "CPU model name", "cpufreq cpuinfo_max_freq", "/proc/cpuinfo cpu MHz"
};

// The "@ 2.90GHz" that Intel model names end with; ghz 0 when the name has none.
CpuClock clock_from_cpu_model(const std::string& cpu_model);
// This host's clock: the model name's, else cpufreq's maximum, else /proc/cpuinfo's current
// "cpu MHz" (what a virtual machine reports).
CpuClock host_cpu_clock();

struct ComputeCeiling {
  double flops = 0;    // 0 = no ceiling
  std::string source;  // where the figure came from, or why there is none
};

// `clock` is used only for a CPU passport without a peak.
ComputeCeiling compute_ceiling(const Passport& passport, const CpuClock& clock);
// The ceiling of a passport measured by this process on this host: such a CPU passport takes
// this host's clock (host_cpu_clock).
ComputeCeiling live_compute_ceiling(const Passport& passport);
// The ceiling of a passport read back from the store: such a CPU passport takes the clock its
// CPU model name gives (clock_from_cpu_model), never this host's.
ComputeCeiling stored_compute_ceiling(const Passport& passport);

}  // namespace p64
