// A stand-in for libnvidia-ml.so.1, so the lab's GPU monitor can be tested on a machine with no
// GPU: P64_NVML_LIBRARY points the monitor here, and P64_FAKE_NVML (read at nvmlInit_v2) steers
// what the "GPU" reports, as key=value pairs separated by ';':
//   init=N          nvmlInit_v2 returns N (0: success)
//   count=N         GPUs present (1)
//   bus=ID          the PCI bus id of GPU 0 (0000:65:00.0); any other id is not found
//   sm=A,B,...      SM clock in MHz, one value per read, the last repeated (1980)
//   mem=N           memory clock in MHz (2619)
//   power_mw=N      board power in milliwatts (300000)
//   energy_step_mj=N  each energy read advances the counter by N mJ; 0: not supported (500)
//   reasons=A,B,... clocks-event reason bits per read, the last repeated, decimal or 0x hex;
//                   "none": not supported (0)
//   name=TEXT       the board's name (NVIDIA H100 80GB HBM3); empty: not supported
//   power_limit_mw=N  the enforced power limit in milliwatts; 0: not supported (700000)
// Built a second time with P64_FAKE_NVML_WITHOUT_CLOCK_INFO: a library that lacks one function.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/lab/nvml_api.h"

namespace {

struct Steering {
  int init = 0;
  unsigned count = 1;
  std::string bus = "0000:65:00.0";
  std::vector<unsigned> sm{1980};
  unsigned mem = 2619;
  unsigned power_mw = 300000;
  unsigned long long energy_step_mj = 500;
  bool reasons_supported = true;
  std::vector<unsigned long long> reasons{0};
  std::string name = "NVIDIA H100 80GB HBM3";
  unsigned power_limit_mw = 700000;
};

Steering g_steer;
std::atomic<unsigned> g_sm_reads{0};
std::atomic<unsigned> g_reason_reads{0};
std::atomic<unsigned long long> g_energy_mj{1000000};
std::atomic<int> g_sessions{0};
char g_device_storage;
nvmlDevice_t device0() { return reinterpret_cast<nvmlDevice_t>(&g_device_storage); }

unsigned long long number(const std::string& v) { return std::strtoull(v.c_str(), nullptr, 0); }

std::vector<unsigned long long> numbers(const std::string& list) {
  std::vector<unsigned long long> out;
  for (size_t p = 0; p <= list.size();) {
    size_t comma = list.find(',', p);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(number(list.substr(p, comma - p)));
    p = comma + 1;
  }
  return out;
}

// The read-th value of a steered sequence: each in turn, then the last one for good.
template <class T>
T nth(const std::vector<T>& values, std::atomic<unsigned>& reads) {
  const unsigned n = reads++;
  return values[n < values.size() ? n : values.size() - 1];
}

Steering parse(const char* text) {
  Steering s;
  const std::string all = text ? text : "";
  size_t at = 0;
  while (at < all.size()) {
    size_t end = all.find(';', at);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(at, end - at);
    at = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "init") s.init = static_cast<int>(number(value));
    else if (key == "count") s.count = static_cast<unsigned>(number(value));
    else if (key == "bus") s.bus = value;
    else if (key == "mem") s.mem = static_cast<unsigned>(number(value));
    else if (key == "power_mw") s.power_mw = static_cast<unsigned>(number(value));
    else if (key == "energy_step_mj") s.energy_step_mj = number(value);
    else if (key == "name") s.name = value;
    else if (key == "power_limit_mw") s.power_limit_mw = static_cast<unsigned>(number(value));
    else if (key == "reasons" && value == "none") s.reasons_supported = false;
    else if (key == "reasons") s.reasons = numbers(value);
    else if (key == "sm") {
      s.sm.clear();
      for (unsigned long long mhz : numbers(value)) s.sm.push_back(static_cast<unsigned>(mhz));
    }
  }
  return s;
}

bool known(nvmlDevice_t d) { return d == device0(); }

}  // namespace

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  g_steer = parse(std::getenv("P64_FAKE_NVML"));
  g_sm_reads = 0;
  g_reason_reads = 0;
  if (g_steer.init != 0) return g_steer.init;
  ++g_sessions;
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  --g_sessions;
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  return rc == 9 ? "Driver Not Loaded" : rc == p64::nvml::kErrorNotFound ? "Not Found" : "Unknown Error";
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = g_steer.count;
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= g_steer.count) return p64::nvml::kErrorNotFound;
  *device = device0();  // every index answers as GPU 0: the tests read one GPU
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  if (g_steer.count == 0 || g_steer.bus != bus_id) return p64::nvml::kErrorNotFound;
  *device = device0();
  return p64::nvml::kSuccess;
}

#ifndef P64_FAKE_NVML_WITHOUT_CLOCK_INFO
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  if (type == p64::nvml::kClockMem) {
    *mhz = g_steer.mem;
    return p64::nvml::kSuccess;
  }
  if (type != p64::nvml::kClockSm) return p64::nvml::kErrorNotSupported;
  *mhz = nth(g_steer.sm, g_sm_reads);
  return p64::nvml::kSuccess;
}
static_assert(std::is_same_v<decltype(&nvmlDeviceGetClockInfo), nvmlDeviceGetClockInfo_fn>);
#endif

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  *milliwatts = g_steer.power_mw;
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  if (g_steer.energy_step_mj == 0) return p64::nvml::kErrorNotSupported;
  *mj = g_energy_mj += g_steer.energy_step_mj;
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  if (!g_steer.reasons_supported) return p64::nvml::kErrorNotSupported;
  *reasons = nth(g_steer.reasons, g_reason_reads);
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  if (g_steer.name.empty()) return p64::nvml::kErrorNotSupported;
  if (length <= g_steer.name.size()) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(name, g_steer.name.c_str(), g_steer.name.size() + 1);
  return p64::nvml::kSuccess;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* milliwatts) {
  if (!known(device)) return p64::nvml::kErrorNotFound;
  if (g_steer.power_limit_mw == 0) return p64::nvml::kErrorNotSupported;
  *milliwatts = g_steer.power_limit_mw;
  return p64::nvml::kSuccess;
}

// Not NVML: how many nvmlInit_v2 sessions are open, for the tests to see each one shut down.
FAKE_NVML_EXPORT int fake_nvml_open_sessions(void) { return g_sessions.load(); }

static_assert(std::is_same_v<decltype(&nvmlInit_v2), nvmlInit_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlShutdown), nvmlShutdown_fn>);
static_assert(std::is_same_v<decltype(&nvmlErrorString), nvmlErrorString_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetCount_v2), nvmlDeviceGetCount_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByIndex_v2), nvmlDeviceGetHandleByIndex_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByPciBusId_v2), nvmlDeviceGetHandleByPciBusId_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPowerUsage), nvmlDeviceGetPowerUsage_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTotalEnergyConsumption), nvmlDeviceGetTotalEnergyConsumption_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetCurrentClocksEventReasons), nvmlDeviceGetCurrentClocksReasons_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetName), nvmlDeviceGetName_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetEnforcedPowerLimit), nvmlDeviceGetEnforcedPowerLimit_fn>);
