#pragma once
// The host's data caches per level, for the passport and for sizing the bandwidth probe.
// sysfs is read where the kernel exposes it, cpuid otherwise (virtual machines often hide sysfs
// cache data). A value outside what any shipping CPU has is dropped and the note says so, so a
// hypervisor's garbage never reaches a roofline or a passport as a fact.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace p64 {

struct HostCaches {
  uint64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per core for L1d/L2 as the CPU reports them; 0 = unknown
  std::string source;                                  // "sysfs", "cpuid 0x8000001D", ...
  std::string note;                                    // values dropped by the sanity check, and why
  uint64_t last_level_bytes() const { return l3_bytes ? l3_bytes : l2_bytes; }
};

// Reads <dir>/index*/{level,type,size} (Linux: /sys/devices/system/cpu/cpu0/cache).
HostCaches caches_from_sysfs(const std::filesystem::path& dir);
// The CPU's own cache descriptors (x86 only; empty elsewhere).
HostCaches caches_from_cpuid();
// Keeps each level only inside the range real CPUs span (L1d 4 KiB-2 MiB, L2 64 KiB-64 MiB,
// L3 1-4096 MiB) and notes what it dropped.
HostCaches sanity_checked(HostCaches c);
// This host: per level the larger of sysfs and cpuid (noted where they disagree), sanity-checked.
HostCaches host_caches();

// "L1d 48 KiB, L2 1 MiB, L3 508 MiB" (levels that are unknown are left out; "unknown" when none is).
std::string describe_caches(const HostCaches& c);

void to_json(nlohmann::json& j, const HostCaches& c);
void from_json(const nlohmann::json& j, HostCaches& c);

}  // namespace p64
