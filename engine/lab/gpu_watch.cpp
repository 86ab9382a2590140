#include "engine/lab/gpu_watch.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/lab/nvml_api.h"

namespace p64 {
namespace {

void widen(double v, double& lo, double& hi) {
  if (v <= 0) return;
  lo = lo > 0 ? std::min(lo, v) : v;
  hi = std::max(hi, v);
}

std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * share);
  return b;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

}  // namespace

GpuLoad unavailable_gpu(std::string why) {
  GpuLoad g;
  g.unavailable = std::move(why);
  return g;
}

GpuLoad summarise_gpu(const std::vector<GpuSample>& samples, std::string device) {
  GpuLoad g;
  g.device = std::move(device);
  g.samples = static_cast<int>(samples.size());
  double power_sum = 0;
  int power_n = 0;
  // A clock read while the GPU sat idle (between kernels) tells nothing of a slowdown: the SM
  // range is taken over the samples that found it working, or over all when none did.
  auto idle = [](const GpuSample& s) { return s.reasons_known && (s.reasons & nvml::kReasonGpuIdle); };
  const bool any_working = std::any_of(samples.begin(), samples.end(), [&](const GpuSample& s) { return !idle(s); });
  for (const GpuSample& s : samples) {
    if (idle(s)) ++g.idle_samples;
    if (!any_working || !idle(s)) widen(s.sm_mhz, g.sm_mhz_min, g.sm_mhz_max);
    widen(s.mem_mhz, g.mem_mhz_min, g.mem_mhz_max);
    if (s.power_w >= 0) {
      power_sum += s.power_w;
      ++power_n;
      g.power_w_max = std::max(g.power_w_max, s.power_w);
    }
    if (s.reasons_known) {
      g.reasons_known = true;
      g.slowdown_reasons |= slowdown_reasons(s.reasons);
    }
  }
  if (power_n > 0) g.power_w_mean = power_sum / power_n;
  return g;
}

GpuWatch::GpuWatch(std::shared_ptr<const GpuMonitor> gpu, std::chrono::milliseconds every)
    : gpu_(std::move(gpu)), sampler_([gpu = gpu_] { return gpu->sample(); }, every) {}

GpuLoad GpuWatch::stop() {
  if (load_) return *load_;
  std::vector<GpuSample> samples = sampler_.stop();
  samples.push_back(gpu_->sample());
  load_ = summarise_gpu(samples, gpu_->device());
  return *load_;
}

std::vector<std::string> gpu_busy_reasons(const GpuLoad& gpu, double max_clock_drift) {
  std::vector<std::string> reasons;
  if (gpu.throttled())
    reasons.push_back("GPU clocks held down by " + joined(slowdown_reason_names(gpu.slowdown_reasons)));
  if (gpu.sm_mhz_max > 0 && gpu.sm_mhz_min > 0) {
    const double drift = (gpu.sm_mhz_max - gpu.sm_mhz_min) / gpu.sm_mhz_max;
    if (drift > max_clock_drift) {
      char line[160];
      std::snprintf(line, sizeof line, "GPU SM clock moved between %.0f and %.0f MHz (%s > %s)", gpu.sm_mhz_min,
                    gpu.sm_mhz_max, percent(drift).c_str(), percent(max_clock_drift).c_str());
      reasons.push_back(line);
    }
  }
  return reasons;
}

void to_json(nlohmann::json& j, const GpuLoad& g) {
  if (!g.unavailable.empty()) {
    j = nlohmann::json{{"available", false}, {"unavailable", g.unavailable}};
    return;
  }
  auto known = [](double v, bool ok) { return ok ? nlohmann::json(v) : nlohmann::json(); };
  j = nlohmann::json{{"available", true},
                     {"device", g.device},
                     {"samples", g.samples},
                     {"idle_samples", g.idle_samples},
                     {"sm_mhz_min", known(g.sm_mhz_min, g.sm_mhz_min > 0)},
                     {"sm_mhz_max", known(g.sm_mhz_max, g.sm_mhz_max > 0)},
                     {"mem_mhz_min", known(g.mem_mhz_min, g.mem_mhz_min > 0)},
                     {"mem_mhz_max", known(g.mem_mhz_max, g.mem_mhz_max > 0)},
                     {"power_w_mean", known(g.power_w_mean, g.power_w_mean >= 0)},
                     {"power_w_max", known(g.power_w_max, g.power_w_max >= 0)},
                     {"throttled", g.reasons_known ? nlohmann::json(g.throttled()) : nlohmann::json()},
                     {"throttle_reasons", slowdown_reason_names(g.slowdown_reasons)}};
}

std::string gpu_line(const GpuLoad& g) {
  if (!g.unavailable.empty()) return "no GPU figures (" + g.unavailable + ")";
  char b[256];
  int n = std::snprintf(b, sizeof b, "%s: ", g.device.c_str());
  auto put = [&](const char* fmt, auto... v) {
    if (n >= 0 && static_cast<size_t>(n) < sizeof b) n += std::snprintf(b + n, sizeof b - n, fmt, v...);
  };
  if (g.sm_mhz_max > 0) put("SM %.0f-%.0f MHz, ", g.sm_mhz_min, g.sm_mhz_max);
  if (g.mem_mhz_max > 0 && g.mem_mhz_min == g.mem_mhz_max) put("memory %.0f MHz, ", g.mem_mhz_max);
  else if (g.mem_mhz_max > 0) put("memory %.0f-%.0f MHz, ", g.mem_mhz_min, g.mem_mhz_max);
  if (g.power_w_mean >= 0) put("%.0f W mean (max %.0f W), ", g.power_w_mean, g.power_w_max);
  std::string s = b;
  if (!g.reasons_known) return s + "throttle reasons unknown";
  return s + (g.throttled() ? "THROTTLED: " + joined(slowdown_reason_names(g.slowdown_reasons)) : "not throttled");
}

}  // namespace p64
