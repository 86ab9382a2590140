#include "engine/runtime/host_caches.h"

#include <fstream>

#include <nlohmann/json.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace p64 {
namespace {

std::string read_word(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string s;
  in >> s;
  return s;
}

// sysfs writes e.g. "48K", "1024K" or "32M"; 0 for anything else.
uint64_t parse_size(const std::string& text) {
  uint64_t v = 0;
  size_t i = 0;
  while (i < text.size() && i < 12 && text[i] >= '0' && text[i] <= '9') v = v * 10 + uint64_t(text[i++] - '0');
  if (i == 0) return 0;
  if (i == text.size()) return v;
  if (i + 1 != text.size()) return 0;
  if (text[i] == 'K' || text[i] == 'k') return v << 10;
  if (text[i] == 'M' || text[i] == 'm') return v << 20;
  if (text[i] == 'G' || text[i] == 'g') return v << 30;
  return 0;
}

uint64_t* level_slot(HostCaches& c, int level) {
  return level == 1 ? &c.l1d_bytes : level == 2 ? &c.l2_bytes : level == 3 ? &c.l3_bytes : nullptr;
}

std::string size_text(uint64_t bytes) {
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

#if defined(__x86_64__) || defined(__i386__)
// Deterministic cache parameters (Intel leaf 4, AMD leaf 0x8000001D share the layout):
// ways × partitions × line size × sets for each data or unified cache.
bool read_cache_leaf(unsigned leaf, HostCaches& c) {
  bool any = false;
  for (unsigned i = 0; i < 8; ++i) {
    unsigned a = 0, b = 0, cx = 0, d = 0;
    __cpuid_count(leaf, i, a, b, cx, d);
    const unsigned type = a & 31u;
    if (type == 0) break;
    if (type == 2) continue;  // instruction cache
    const uint64_t bytes = uint64_t((b >> 22) + 1) * (((b >> 12) & 1023u) + 1) * ((b & 4095u) + 1) * (uint64_t(cx) + 1);
    if (uint64_t* slot = level_slot(c, int((a >> 5) & 7u))) {
      *slot = bytes;
      any = true;
    }
  }
  return any;
}
#endif

}  // namespace

HostCaches caches_from_sysfs(const std::filesystem::path& dir) {
  HostCaches c;
  for (int idx = 0; idx < 16; ++idx) {
    const std::filesystem::path index = dir / ("index" + std::to_string(idx));
    const std::string type = read_word(index / "type");
    if (type.empty()) continue;
    if (type != "Data" && type != "Unified") continue;
    const std::string level = read_word(index / "level");
    if (level.size() != 1 || level[0] < '1' || level[0] > '3') continue;
    *level_slot(c, level[0] - '0') = parse_size(read_word(index / "size"));
  }
  if (c.l1d_bytes || c.l2_bytes || c.l3_bytes) c.source = "sysfs";
  return c;
}

HostCaches caches_from_cpuid() {
  HostCaches c;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &cx, &d)) return c;
  const bool amd = b == 0x68747541u;  // "Auth"enticAMD
  unsigned max_ext = 0;
  if (__get_cpuid(0x80000000, &max_ext, &b, &cx, &d) && amd && max_ext >= 0x8000001D &&
      __get_cpuid(0x80000001, &a, &b, &cx, &d) && (cx >> 22 & 1u) && read_cache_leaf(0x8000001D, c)) {
    c.source = "cpuid 0x8000001D";
  } else if (!amd && a >= 4 && read_cache_leaf(4, c)) {
    c.source = "cpuid 4";
  } else if (max_ext >= 0x80000006) {
    // The legacy AMD leaves: L1d KiB in 0x80000005 ECX[31:24], L2 KiB in 0x80000006 ECX[31:16],
    // L3 in 512 KiB units in EDX[31:18].
    if (max_ext >= 0x80000005 && __get_cpuid(0x80000005, &a, &b, &cx, &d) && amd)
      c.l1d_bytes = uint64_t(cx >> 24) << 10;
    if (__get_cpuid(0x80000006, &a, &b, &cx, &d)) {
      c.l2_bytes = uint64_t(cx >> 16) << 10;
      c.l3_bytes = uint64_t(d >> 18) * (512u << 10);
    }
    if (c.l1d_bytes || c.l2_bytes || c.l3_bytes) c.source = "cpuid 0x80000005/6";
  }
#endif
  return c;
}

HostCaches sanity_checked(HostCaches c) {
  struct Range {
    const char* name;
    uint64_t* value;
    uint64_t lo, hi;
  };
  const Range ranges[] = {{"L1d", &c.l1d_bytes, 4ull << 10, 2ull << 20},
                          {"L2", &c.l2_bytes, 64ull << 10, 64ull << 20},
                          {"L3", &c.l3_bytes, 1ull << 20, 4096ull << 20}};
  for (const Range& r : ranges) {
    if (*r.value == 0 || (*r.value >= r.lo && *r.value <= r.hi)) continue;
    c.note += std::string(c.note.empty() ? "" : "; ") + r.name + " " + std::to_string(*r.value) +
              " bytes dropped (outside " + size_text(r.lo) + "-" + size_text(r.hi) + ")";
    *r.value = 0;
  }
  return c;
}

HostCaches host_caches() {
  HostCaches sys = caches_from_sysfs("/sys/devices/system/cpu/cpu0/cache");
  HostCaches id = caches_from_cpuid();
  // Where both tell a level and disagree, the larger wins: virtual machines have shown sysfs
  // 32 MiB beside cpuid 320 MiB, and a bandwidth probe sized by the smaller read the cache.
  bool used_cpuid = false;
  for (int level = 1; level <= 3; ++level) {
    uint64_t* mine = level_slot(sys, level);
    const uint64_t theirs = *level_slot(id, level);
    if (theirs <= *mine) continue;
    if (*mine != 0)
      sys.note += std::string(sys.note.empty() ? "" : "; ") + "L" + std::to_string(level) + ": sysfs " +
                  size_text(*mine) + ", " + id.source + " " + size_text(theirs) + ", the larger kept";
    *mine = theirs;
    used_cpuid = true;
  }
  if (used_cpuid) sys.source = sys.source.empty() ? id.source : sys.source + " + " + id.source;
  return sanity_checked(sys);
}

std::string describe_caches(const HostCaches& c) {
  std::string out;
  const auto add = [&](const char* name, uint64_t bytes) {
    if (bytes) out += std::string(out.empty() ? "" : ", ") + name + " " + size_text(bytes);
  };
  add("L1d", c.l1d_bytes);
  add("L2", c.l2_bytes);
  add("L3", c.l3_bytes);
  return out.empty() ? "unknown" : out;
}

void to_json(nlohmann::json& j, const HostCaches& c) {
  j = nlohmann::json{{"l1d_bytes", c.l1d_bytes}, {"l2_bytes", c.l2_bytes}, {"l3_bytes", c.l3_bytes},
                     {"source", c.source}, {"note", c.note}};
}

void from_json(const nlohmann::json& j, HostCaches& c) {
  c.l1d_bytes = j.value("l1d_bytes", uint64_t{0});
  c.l2_bytes = j.value("l2_bytes", uint64_t{0});
  c.l3_bytes = j.value("l3_bytes", uint64_t{0});
  c.source = j.value("source", "");
  c.note = j.value("note", "");
}

}  // namespace p64
