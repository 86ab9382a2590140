#pragma once
// Measured host memory ceilings for the CPU backend's passport (the decode roofline on a CPU
// is the read-only stream: a decode step reads every weight once and writes almost nothing).
#include <cstdint>

#include "engine/runtime/passport.h"

namespace p64 {

// Last-level cache of this host in bytes (host_caches(); 32 MiB when nothing tells).
uint64_t host_last_level_cache_bytes();

// Read-only stream and copy (bytes read + written) over a buffer of max(4 x LLC, 64 MiB),
// capped at 1/8 of physical memory, split across `threads` (0 = all logical cores), each
// the median of `repeats` timed passes after one untimed pass that faults the pages in.
MeasuredBandwidth measure_host_bandwidth(uint32_t threads = 0, uint32_t repeats = 7);

}  // namespace p64
