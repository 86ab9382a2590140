#include "engine/lab/gpu_facts.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace p64 {
namespace {

std::string number(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

}  // namespace

GpuFacts read_gpu_facts(const GpuMonitor& gpu) {
  GpuFacts f;
  f.device = gpu.device();
  f.name = gpu.name();
  f.power_limit_w = gpu.power_limit_w();
  f.now = gpu.sample();
  if (f.now.reasons_known) f.reasons = clocks_event_reason_names(f.now.reasons);
  return f;
}

std::optional<GpuFacts> read_gpu_facts(const DeviceFacts& device) {
  const GpuSource source = gpu_source_for(device);
  if (!source.wanted()) return std::nullopt;
  if (source.monitor) return read_gpu_facts(*source.monitor);
  GpuFacts f;
  f.unavailable = source.unavailable;
  return f;
}

std::string gpu_facts_line(const GpuFacts& f) {
  if (!f.unavailable.empty()) return "not available (" + f.unavailable + ")";
  std::string s = f.name.empty() ? f.device : f.name + " (" + f.device + ")";
  auto add = [&s](const std::string& part) { s += ", " + part; };
  add(f.power_limit_w ? number("power limit %.0f W", *f.power_limit_w) : "power limit unknown");
  if (f.now.sm_mhz > 0) add(number("SM %.0f MHz", f.now.sm_mhz));
  if (f.now.mem_mhz > 0) add(number("memory %.0f MHz", f.now.mem_mhz));
  if (f.now.power_w >= 0) add(number("%.0f W now", f.now.power_w));
  if (!f.now.reasons_known) {
    add("clocks-event reasons unknown");
  } else {
    std::string reasons;
    for (const std::string& r : f.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
    add("clocks-event reasons: " + (reasons.empty() ? std::string("none") : reasons));
  }
  return s;
}

void to_json(nlohmann::json& j, const GpuFacts& f) {
  if (!f.unavailable.empty()) {
    j = nlohmann::json{{"available", false}, {"unavailable", f.unavailable}};
    return;
  }
  auto known = [](double v, bool ok) { return ok ? nlohmann::json(v) : nlohmann::json(); };
  j = nlohmann::json{{"available", true},
                     {"device", f.device},
                     {"name", f.name},
                     {"power_limit_w", f.power_limit_w ? nlohmann::json(*f.power_limit_w) : nlohmann::json()},
                     {"sm_mhz", known(f.now.sm_mhz, f.now.sm_mhz > 0)},
                     {"mem_mhz", known(f.now.mem_mhz, f.now.mem_mhz > 0)},
                     {"power_w", known(f.now.power_w, f.now.power_w >= 0)},
                     {"clocks_event_reasons", f.now.reasons_known ? nlohmann::json(f.reasons) : nlohmann::json()}};
}

}  // namespace p64
