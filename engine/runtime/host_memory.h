#pragma once
// How much memory the host can still give this process, for allocations that would otherwise
// succeed on overcommit and end in the OOM killer once touched (the CPU backend's KV cache).
#include <cstdint>
#include <string_view>

namespace p64 {

// MemAvailable from the text of /proc/meminfo, in bytes; 0 when the line is missing or malformed.
uint64_t parse_mem_available(std::string_view meminfo);
// This host's MemAvailable; 0 when unknown (not Linux, or /proc unreadable).
uint64_t available_host_memory();

}  // namespace p64
