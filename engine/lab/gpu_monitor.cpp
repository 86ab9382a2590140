#include "engine/lab/gpu_monitor.h"

#include <cstdlib>
#include <utility>

#include "engine/common/platform.h"
#include "engine/lab/nvml_api.h"

namespace p64 {

struct GpuMonitor::Api {
  platform::DynamicLibrary lib;  // first: closed after the session below has shut down
  bool initialised = false;
  nvmlDevice_t device = nullptr;
  nvmlInit_v2_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlDeviceGetCount_v2_fn count = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn by_index = nullptr;
  nvmlDeviceGetHandleByPciBusId_v2_fn by_bus_id = nullptr;
  nvmlDeviceGetClockInfo_fn clock = nullptr;
  nvmlDeviceGetPowerUsage_fn power = nullptr;
  // Optional: older drivers lack the energy counter and the new name of the reasons call.
  nvmlErrorString_fn error_string = nullptr;
  nvmlDeviceGetTotalEnergyConsumption_fn energy = nullptr;
  nvmlDeviceGetCurrentClocksReasons_fn reasons = nullptr;
  nvmlDeviceGetName_fn name = nullptr;
  nvmlDeviceGetEnforcedPowerLimit_fn power_limit = nullptr;

  ~Api() {
    if (initialised) shutdown();
  }
  std::string failed(const char* call, nvmlReturn_t rc) const {
    const char* text = error_string ? error_string(rc) : nullptr;
    return std::string(call) + " failed: " + (text ? text : "NVML error " + std::to_string(rc));
  }
};

GpuMonitor::GpuMonitor() : api_(std::make_unique<Api>()) {}
GpuMonitor::~GpuMonitor() = default;

namespace {

template <class Fn>
bool bind(const platform::DynamicLibrary& lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(lib.symbol(name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

}  // namespace

std::unique_ptr<GpuMonitor> GpuMonitor::open(const std::string& pci_bus_id, std::string& why) {
  std::unique_ptr<GpuMonitor> m(new GpuMonitor());
  Api& a = *m->api_;
  const char* chosen = std::getenv("P64_NVML_LIBRARY");
  const char* name = chosen && *chosen ? chosen : "libnvidia-ml.so.1";
  if (!a.lib.open({name})) {
    why = "NVML not loaded: " + a.lib.error();
    return nullptr;
  }
  std::string missing;
  bind(a.lib, "nvmlInit_v2", a.init, missing);
  bind(a.lib, "nvmlShutdown", a.shutdown, missing);
  bind(a.lib, "nvmlDeviceGetCount_v2", a.count, missing);
  bind(a.lib, "nvmlDeviceGetHandleByIndex_v2", a.by_index, missing);
  bind(a.lib, "nvmlDeviceGetHandleByPciBusId_v2", a.by_bus_id, missing);
  bind(a.lib, "nvmlDeviceGetClockInfo", a.clock, missing);
  bind(a.lib, "nvmlDeviceGetPowerUsage", a.power, missing);
  if (!missing.empty()) {
    why = std::string(name) + " lacks " + missing;
    return nullptr;
  }
  std::string optional;
  bind(a.lib, "nvmlErrorString", a.error_string, optional);
  bind(a.lib, "nvmlDeviceGetTotalEnergyConsumption", a.energy, optional);
  bind(a.lib, "nvmlDeviceGetName", a.name, optional);
  bind(a.lib, "nvmlDeviceGetEnforcedPowerLimit", a.power_limit, optional);
  if (!bind(a.lib, "nvmlDeviceGetCurrentClocksEventReasons", a.reasons, optional))
    bind(a.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.reasons, optional);

  if (nvmlReturn_t rc = a.init(); rc != nvml::kSuccess) {
    why = a.failed("nvmlInit_v2", rc);
    return nullptr;
  }
  a.initialised = true;
  if (!pci_bus_id.empty()) {
    if (nvmlReturn_t rc = a.by_bus_id(pci_bus_id.c_str(), &a.device); rc != nvml::kSuccess) {
      why = a.failed(("nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ")").c_str(), rc);
      return nullptr;
    }
    m->device_ = "PCI " + pci_bus_id;
    return m;
  }
  // No bus id to match (a passport from before it was recorded): only an unambiguous GPU.
  unsigned int n = 0;
  if (nvmlReturn_t rc = a.count(&n); rc != nvml::kSuccess) {
    why = a.failed("nvmlDeviceGetCount_v2", rc);
    return nullptr;
  }
  if (n != 1) {
    why = std::to_string(n) + " GPUs and no PCI bus id to tell which one the run used";
    return nullptr;
  }
  if (nvmlReturn_t rc = a.by_index(0, &a.device); rc != nvml::kSuccess) {
    why = a.failed("nvmlDeviceGetHandleByIndex_v2(0)", rc);
    return nullptr;
  }
  m->device_ = "the only GPU";
  return m;
}

GpuSample GpuMonitor::sample() const {
  const Api& a = *api_;
  GpuSample s;
  unsigned int v = 0;
  if (a.clock(a.device, nvml::kClockSm, &v) == nvml::kSuccess) s.sm_mhz = v;
  if (a.clock(a.device, nvml::kClockMem, &v) == nvml::kSuccess) s.mem_mhz = v;
  if (a.power(a.device, &v) == nvml::kSuccess) s.power_w = v / 1e3;
  unsigned long long bits = 0;
  if (a.reasons && a.reasons(a.device, &bits) == nvml::kSuccess) {
    s.reasons = bits;
    s.reasons_known = true;
  }
  return s;
}

std::optional<double> GpuMonitor::energy_j() const {
  const Api& a = *api_;
  unsigned long long mj = 0;
  if (!a.energy || a.energy(a.device, &mj) != nvml::kSuccess) return std::nullopt;
  return static_cast<double>(mj) / 1e3;
}

std::string GpuMonitor::name() const {
  const Api& a = *api_;
  char buf[nvml::kDeviceNameBufferSize] = {};
  if (!a.name || a.name(a.device, buf, sizeof buf) != nvml::kSuccess) return {};
  buf[sizeof buf - 1] = '\0';
  return buf;
}

std::optional<double> GpuMonitor::power_limit_w() const {
  const Api& a = *api_;
  unsigned int mw = 0;
  if (!a.power_limit || a.power_limit(a.device, &mw) != nvml::kSuccess) return std::nullopt;
  return mw / 1e3;
}

GpuSource gpu_source_for(const DeviceFacts& device) {
  GpuSource s;
  if (device.backend != "cuda") return s;
  std::string why;
  s.monitor = GpuMonitor::open(device.pci_bus_id, why);
  if (!s.monitor) s.unavailable = why.empty() ? "NVML not available" : why;
  return s;
}

uint64_t slowdown_reasons(uint64_t reasons) {
  return reasons & (nvml::kReasonSwPowerCap | nvml::kReasonHwSlowdown | nvml::kReasonSwThermalSlowdown |
                    nvml::kReasonHwThermalSlowdown | nvml::kReasonHwPowerBrakeSlowdown);
}

std::vector<std::string> slowdown_reason_names(uint64_t reasons) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {nvml::kReasonHwSlowdown, "HW slowdown"},
      {nvml::kReasonHwThermalSlowdown, "HW thermal slowdown"},
      {nvml::kReasonSwThermalSlowdown, "SW thermal slowdown"},
      {nvml::kReasonSwPowerCap, "power cap"},
      {nvml::kReasonHwPowerBrakeSlowdown, "HW power brake"},
  };
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) names.emplace_back(name);
  return names;
}

std::vector<std::string> clocks_event_reason_names(uint64_t reasons) {
  static const std::pair<uint64_t, const char*> kNotJudged[] = {
      {nvml::kReasonGpuIdle, "GPU idle"},
      {nvml::kReasonApplicationsClocksSetting, "applications clocks"},
      {nvml::kReasonSyncBoost, "sync boost"},
  };
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNotJudged)
    if (reasons & bit) names.emplace_back(name);
  for (std::string& name : slowdown_reason_names(reasons)) names.push_back(std::move(name));
  return names;
}

}  // namespace p64
