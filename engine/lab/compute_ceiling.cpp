#include "engine/lab/compute_ceiling.h"

#include <cstdio>
#include <fstream>
#include <regex>

namespace p64 {
namespace {

// fp32 lanes of the kernels' instruction set (the CPU passport's api_version names it).
int fp32_lanes(const std::string& isa) {
  if (isa == "avx512") return 16;
  if (isa == "avx2") return 8;
  if (isa == "scalar") return 1;
  return 0;
}

bool has_word(const std::string& words, const std::string& word) {
  return std::regex_search(words, std::regex("(^|\\s)" + word + "(\\s|$)"));
}

std::string number(double v, int precision) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

}  // namespace

CpuClock clock_from_cpu_model(const std::string& cpu_model) {
  std::smatch m;
  if (std::regex_search(cpu_model, m, std::regex("@\\s*([0-9]+(\\.[0-9]+)?)\\s*GHz", std::regex::icase)))
    return {std::stod(m[1].str()), "CPU model name"};
  return {};
}

CpuClock host_cpu_clock() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model, mhz;
  while (std::getline(cpuinfo, line) && (model.empty() || mhz.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(colon + 1);
    if (mhz.empty() && line.rfind("cpu MHz", 0) == 0) mhz = line.substr(colon + 1);
  }
  if (CpuClock c = clock_from_cpu_model(model); c.ghz > 0) return c;
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (max_freq >> khz && khz > 0) return {khz / 1e6, "cpufreq cpuinfo_max_freq"};
  try {
    if (!mhz.empty() && std::stod(mhz) > 0) return {std::stod(mhz) / 1e3, "/proc/cpuinfo cpu MHz"};
  } catch (const std::exception&) {
    // An unreadable figure is an unknown clock.
  }
  return {};
}

ComputeCeiling compute_ceiling(const Passport& p, const CpuClock& clock) {
  const DeviceFacts& d = p.device;
  if (d.peak_flops > 0)
    return {d.peak_flops, "passport: " + (d.peak_flops_source.empty() ? d.backend + " device figures" : d.peak_flops_source)};
  if (d.backend != "cpu") return {0, "none: the " + d.backend + " passport gives no peak FLOP/s"};
  if (const MeasuredCompute& m = p.compute; m.fp32_flops > 0) {
    // The int8 kernels multiply-accumulate int8 pairs, which the model's FLOP count counts as
    // 2 FLOP each: their roof is the int8 rate, the fp32 path's the FMA rate; the higher one
    // bounds every point.
    const bool int8_higher = m.int8_ops > m.fp32_flops;
    return {int8_higher ? m.int8_ops : m.fp32_flops,
            "measured: " + std::string(int8_higher ? "int8 dot products " : "fp32 FMA ") +
                number((int8_higher ? m.int8_ops : m.fp32_flops) / 1e9, 1) + " G/s (fp32 FMA " +
                number(m.fp32_flops / 1e9, 1) + " GFLOP/s, int8 " + number(m.int8_ops / 1e9, 1) + " Gop/s; " + m.isa +
                ", " + std::to_string(m.threads) + " threads, median of " + std::to_string(m.repeats) + ")"};
  }
  const int lanes = fp32_lanes(d.api_version);
  if (lanes == 0) return {0, "none: the CPU passport names no SIMD width (api_version '" + d.api_version + "')"};
  if (d.multiprocessors == 0) return {0, "none: the CPU passport gives no core count"};
  if (clock.ghz <= 0) return {0, "none: no CPU clock is known (the model name has none)"};
  const bool fma = d.api_version == "avx512" || has_word(p.host.cpu_features, "fma");
  ComputeCeiling c;
  c.flops = d.multiprocessors * double(lanes) * 2.0 * clock.ghz * 1e9;
  c.source = "nominal: " + std::to_string(d.multiprocessors) + " cores × " + std::to_string(lanes) +
             " fp32 lanes (" + d.api_version + ") × 2 (" + (fma ? "FMA" : "multiply + add") + ") × " +
             number(clock.ghz, 2) + " GHz (" + clock.source + ")";
  return c;
}

ComputeCeiling live_compute_ceiling(const Passport& p) {
  return compute_ceiling(p, p.device.backend == "cpu" ? host_cpu_clock() : CpuClock{});
}

ComputeCeiling stored_compute_ceiling(const Passport& p) {
  return compute_ceiling(p, clock_from_cpu_model(p.host.cpu_model));
}

}  // namespace p64
