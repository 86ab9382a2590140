#include "engine/runtime/passport.h"

#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "p64/build_info.h"

#ifndef _WIN32
#include <sys/utsname.h>
#include <unistd.h>
#endif

namespace p64 {
namespace {

// The value of the first "key<tabs>: value" line of /proc/cpuinfo whose key is exactly `key`.
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);  // npos + 1 == 0 clears an all-blank name
    if (name != key) continue;
    const auto value = line.find_first_not_of(" \t", colon + 1);
    return value == std::string::npos ? std::string() : line.substr(value);
  }
  return {};
}

std::string simd_features(const std::string& flags) {
  std::istringstream words(flags);
  std::string w, out;
  while (words >> w)
    if (w == "avx2" || w == "fma" || w == "f16c" || w == "avx512f" || w == "avx512bw" || w == "avx512vl" ||
        w == "avx512_vnni" || w == "avx512vnni" || w == "avx_vnni" || w == "neon" || w == "asimd")
      out += (out.empty() ? "" : " ") + w;
  return out;
}

// AMD's families name their core generation; Intel's family 6 spans a decade of models, so it
// is left as numbers.
std::string cpu_identity(const std::string& vendor, const std::string& family, const std::string& model,
                         const std::string& stepping) {
  if (vendor.empty() || family.empty()) return {};
  std::string id = vendor + " family " + family + " model " + model + " stepping " + stepping;
  if (vendor == "AuthenticAMD") {
    if (family == "23") id += ", Zen, Zen+ or Zen 2";
    if (family == "25") id += ", Zen 3 or Zen 4";
    if (family == "26") id += ", Zen 5";
  }
  return id;
}

}  // namespace

HostFacts collect_host_facts() {
  HostFacts h;
  h.logical_cores = std::thread::hardware_concurrency();
#ifdef _WIN32
  h.os = "Windows";
#else
  h.cpu_model = cpuinfo_field("model name");
  h.cpu_id = cpu_identity(cpuinfo_field("vendor_id"), cpuinfo_field("cpu family"), cpuinfo_field("model"),
                          cpuinfo_field("stepping"));
  h.caches = host_caches();
  h.cpu_features = simd_features(cpuinfo_field("flags"));
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) h.memory_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  struct utsname u{};
  if (uname(&u) == 0) {
    h.kernel = std::string(u.sysname) + " " + u.release;
  }
  std::ifstream os("/etc/os-release");
  std::string line;
  while (std::getline(os, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      h.os = line.substr(12);
      if (h.os.size() >= 2 && h.os.front() == '"') h.os = h.os.substr(1, h.os.size() - 2);
    }
#endif
  return h;
}

BuildFacts collect_build_facts() {
  BuildFacts b;
  b.version = build::version;
  b.git_revision = build::git_revision;
  b.compiler = build::compiler;
  b.flags = build::flags;
  b.backends.push_back("cpu");
  if (build::cuda) b.backends.push_back("cuda");
  if (build::vulkan) b.backends.push_back("vulkan");
  return b;
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostFacts, cpu_model, cpu_id, logical_cores, memory_bytes, os,
                                                kernel, cpu_features, caches)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DeviceFacts, backend, name, vendor, driver_version, api_version,
                                                compute_capability, device_type, multiprocessors, memory_bytes,
                                                l2_bytes, subgroup_size, timestamp_period_ns, peak_bandwidth_gbs,
                                                peak_flops, pci_bus_id)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MeasuredBandwidth, read_gbs, copy_gbs, buffer_bytes, repeats)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BuildFacts, version, git_revision, compiler, flags, backends)

void to_json(nlohmann::json& j, const Passport& p) {
  j = nlohmann::json{{"host", p.host},
                     {"device", p.device},
                     {"measured", p.measured},
                     {"compute", p.compute},
                     {"build", p.build}};
}

void from_json(const nlohmann::json& j, Passport& p) {
  p = Passport{};
  if (j.contains("host")) j.at("host").get_to(p.host);
  if (j.contains("device")) j.at("device").get_to(p.device);
  if (j.contains("measured")) j.at("measured").get_to(p.measured);
  if (j.contains("compute")) j.at("compute").get_to(p.compute);
  if (j.contains("build")) j.at("build").get_to(p.build);
}

}  // namespace p64
