#include "engine/runtime/host_memory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#ifdef _WIN32
#include <windows.h>  // libstdc++ defines NOMINMAX on mingw-w64, so std::min stays usable
#endif

namespace p64 {

uint64_t parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  size_t at = 0;
  while (at < meminfo.size()) {
    const size_t end = std::min(meminfo.find('\n', at), meminfo.size());
    const std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    size_t i = kKey.size();
    while (i < line.size() && line[i] == ' ') ++i;
    uint64_t kib = 0;
    size_t digits = 0;
    for (; i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 15; ++i, ++digits)
      kib = kib * 10 + static_cast<uint64_t>(line[i] - '0');
    while (i < line.size() && line[i] == ' ') ++i;
    if (digits == 0 || line.substr(i) != "kB") return 0;
    return kib * 1024;
  }
  return 0;
}

uint64_t available_host_memory() {
#ifdef _WIN32
  // Windows' counterpart of MemAvailable: physical memory that is free or on the standby list.
  // (Under wine, /proc/meminfo would open too, through drive Z:, but Windows has no such file.)
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof status;
  return GlobalMemoryStatusEx(&status) ? status.ullAvailPhys : 0;
#else
  std::ifstream f("/proc/meminfo");
  if (!f) return 0;
  std::ostringstream text;
  text << f.rdbuf();
  return parse_mem_available(text.str());
#endif
}

uint64_t usable_host_memory(uint64_t mem_available) {
  const uint64_t margin = std::max<uint64_t>(uint64_t{512} << 20, mem_available / 8);
  return mem_available > margin ? mem_available - margin : 0;
}

std::string host_memory_shortfall(uint64_t need, uint64_t mem_available) {
  const uint64_t usable = usable_host_memory(mem_available);
  if (mem_available == 0 || need <= usable) return {};
  auto gib = [](uint64_t bytes) {
    char b[64];
    std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / double(uint64_t{1} << 30));
    return std::string(b);
  };
  return "need " + gib(need) + " (" + std::to_string(need) + " bytes) but this host has " + gib(mem_available) +
         " available (MemAvailable), " + gib(usable) + " of it usable after a " + gib(mem_available - usable) +
         " margin";
}

}  // namespace p64
