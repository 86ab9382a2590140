#pragma once
// How much memory the host can still give this process, for allocations that would otherwise
// succeed on overcommit and end in the OOM killer once touched (the CPU backend's KV cache).
#include <cstdint>
#include <string>
#include <string_view>

namespace p64 {

// MemAvailable from the text of /proc/meminfo, in bytes; 0 when the line is missing or malformed.
uint64_t parse_mem_available(std::string_view meminfo);
// This host's MemAvailable (on Windows, GlobalMemoryStatusEx's available physical memory); 0
// when unknown (another system, or /proc unreadable).
uint64_t available_host_memory();

// The bytes of MemAvailable one load may plan to fill. MemAvailable is the kernel's estimate of
// what it can hand out without swapping, reclaimable page cache included; filling all of it
// leaves nothing for the rest of this process or the host, and the page cache it counts holds
// the mapped weights the decode reads. A margin of 1/8 of it, at least 512 MiB, stays free.
uint64_t usable_host_memory(uint64_t mem_available);

// "" when `need` bytes fit in usable_host_memory(mem_available), or when mem_available is 0
// (unknown: nothing to judge by). Otherwise what is needed and what is available, in GiB and
// bytes: "need 21.50 GiB (...) but this host has 21.00 GiB available (MemAvailable), 18.38 GiB
// of it usable after a 2.62 GiB margin".
std::string host_memory_shortfall(uint64_t need, uint64_t mem_available);

}  // namespace p64
