#include "engine/runtime/passport.h"

#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "p64/build_info.h"

#ifdef _WIN32
#include <cpuid.h>
#include <cstring>
#include <windows.h>
#else
#include <sys/utsname.h>
#include <unistd.h>
#endif

namespace p64 {
namespace {

#ifndef _WIN32
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
#endif

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

#ifdef _WIN32
// Windows has no /proc/cpuinfo: the same fields, from cpuid itself.
struct CpuidFields {
  std::string brand, vendor, family, model, stepping, flags;
};

CpuidFields cpuid_fields() {
  CpuidFields f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  f.vendor = vendor;

  unsigned max_ext = 0;
  if (__get_cpuid(0x80000000, &max_ext, &b, &c, &d) && max_ext >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      unsigned r[4] = {};
      __get_cpuid(0x80000002 + i, &r[0], &r[1], &r[2], &r[3]);
      std::memcpy(brand + 16 * i, r, 16);
    }
    f.brand = brand;
    f.brand.erase(0, f.brand.find_first_not_of(' '));  // Intel pads the brand on the left
    f.brand.erase(f.brand.find_last_not_of(' ') + 1);
  }

  // Family and model as Linux prints them: the extended fields folded in (Intel SDM, leaf 1).
  __get_cpuid(1, &a, &b, &c, &d);
  const unsigned base_family = a >> 8 & 0xF, base_model = a >> 4 & 0xF;
  const unsigned family = base_family == 0xF ? base_family + (a >> 20 & 0xFF) : base_family;
  const unsigned model = base_family == 0x6 || base_family == 0xF ? base_model + ((a >> 16 & 0xF) << 4) : base_model;
  f.family = std::to_string(family);
  f.model = std::to_string(model);
  f.stepping = std::to_string(a & 0xF);

  // The /proc/cpuinfo names of the bits simd_features() looks for.
  const auto flag = [&](bool on, const char* name) {
    if (on) f.flags += std::string(f.flags.empty() ? "" : " ") + name;
  };
  flag(c >> 12 & 1, "fma");
  flag(c >> 29 & 1, "f16c");
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    flag(b >> 5 & 1, "avx2");
    flag(b >> 16 & 1, "avx512f");
    flag(b >> 30 & 1, "avx512bw");
    flag(b >> 31 & 1, "avx512vl");
    flag(c >> 11 & 1, "avx512_vnni");
    __cpuid_count(7, 1, a, b, c, d);
    flag(a >> 4 & 1, "avx_vnni");
  }
  return f;
}

// RtlGetVersion, unlike GetVersionEx, tells the real version to a program without a manifest.
std::string windows_version() {
  using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW*);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (!ntdll) return "Windows";
  const auto get = reinterpret_cast<RtlGetVersionFn>(reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion")));
  OSVERSIONINFOW v{};
  v.dwOSVersionInfoSize = sizeof(v);
  if (!get || get(&v) != 0) return "Windows";
  return "Windows " + std::to_string(v.dwMajorVersion) + "." + std::to_string(v.dwMinorVersion) + " build " +
         std::to_string(v.dwBuildNumber);
}

// Wine's ntdll exports wine_get_version: a run under wine is not a run on Windows.
std::string wine_version() {
  using WineGetVersionFn = const char*(CDECL*)();
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  const auto get = ntdll ? reinterpret_cast<WineGetVersionFn>(
                               reinterpret_cast<void*>(GetProcAddress(ntdll, "wine_get_version")))
                         : nullptr;
  return get ? std::string("wine ") + get() : std::string();
}
#endif

}  // namespace

HostFacts collect_host_facts() {
  HostFacts h;
  h.logical_cores = std::thread::hardware_concurrency();
#ifdef _WIN32
  const CpuidFields cpu = cpuid_fields();
  h.cpu_model = cpu.brand;
  h.cpu_id = cpu_identity(cpu.vendor, cpu.family, cpu.model, cpu.stepping);
  h.caches = host_caches();
  h.cpu_features = simd_features(cpu.flags);
  MEMORYSTATUSEX m{};
  m.dwLength = sizeof(m);
  if (GlobalMemoryStatusEx(&m)) h.memory_bytes = m.ullTotalPhys;
  h.os = windows_version();
  h.kernel = wine_version();
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
                                                peak_flops, peak_flops_source, pci_bus_id)
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
