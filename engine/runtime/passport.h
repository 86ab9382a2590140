#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/runtime/host_caches.h"
#include "engine/runtime/host_compute.h"

namespace p64 {

struct HostFacts {
  std::string cpu_model;     // the model name the OS gives (a VM may give only "AMD EPYC")
  std::string cpu_id;        // vendor, family, model, stepping: names the part when the model name does not
  uint32_t logical_cores = 0;
  uint64_t memory_bytes = 0;
  std::string os;
  std::string kernel;
  std::string cpu_features;  // e.g. "avx2 fma avx512f avx512bw avx512vnni"
  HostCaches caches;
};

struct DeviceFacts {
  std::string backend;             // cpu | cuda | vulkan
  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string api_version;         // CUDA runtime / Vulkan API version
  std::string compute_capability;  // "9.0" (CUDA)
  std::string device_type;         // Vulkan: discrete-gpu, cpu, ...; CUDA: gpu; CPU: cpu
  uint32_t multiprocessors = 0;    // SMs / compute units / cores
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;           // last-level cache
  uint32_t subgroup_size = 0;      // warp / subgroup width (1 on CPU)
  double timestamp_period_ns = 0;  // Vulkan timestampPeriod; 0 when not applicable
  double peak_bandwidth_gbs = 0;   // from the device's own figures (0 when it gives none)
  double peak_flops = 0;           // compute ceiling used by the roofline (0 when unknown)
  std::string peak_flops_source;   // how peak_flops was counted (empty in passports stored before it was said)
  std::string pci_bus_id;          // CUDA: "0000:65:00.0", how NVML finds the same card; else empty
};

// Measured ceilings, medians of repeats over buffers several times the last-level cache.
struct MeasuredBandwidth {
  double read_gbs = 0;        // read-only stream: the decode roofline
  double copy_gbs = 0;        // device-to-device copy, bytes read + written
  uint64_t buffer_bytes = 0;  // size of the buffer each was measured over
  uint32_t repeats = 0;
};

struct BuildFacts {
  std::string version;
  std::string git_revision;
  std::string compiler;
  std::string flags;
  std::vector<std::string> backends;  // enabled at build time
};

// The hardware passport: recorded with every run so any number can be traced to what made it.
struct Passport {
  HostFacts host;
  DeviceFacts device;
  MeasuredBandwidth measured;
  MeasuredCompute compute;  // measured on the CPU backend; GPUs give peak_flops from their attributes
  BuildFacts build;
};

HostFacts collect_host_facts();
BuildFacts collect_build_facts();

void to_json(nlohmann::json& j, const Passport& p);
void from_json(const nlohmann::json& j, Passport& p);

}  // namespace p64
