#include "engine/runtime/host_memory.h"

#include <fstream>
#include <sstream>
#include <string>

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
  std::ifstream f("/proc/meminfo");
  if (!f) return 0;
  std::ostringstream text;
  text << f.rdbuf();
  return parse_mem_available(text.str());
}

}  // namespace p64
