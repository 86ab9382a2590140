// MemAvailable parsing (the CPU backend refuses a KV cache larger than it before touching it).
#include <gtest/gtest.h>

#include "engine/runtime/host_memory.h"

namespace p64 {
namespace {

TEST(HostMemory, ReadsMemAvailableInBytes) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24608648 kB\nMemFree:         1000 kB\nMemAvailable:   20971520 kB\n"),
            uint64_t{20971520} * 1024);
  EXPECT_EQ(parse_mem_available("MemAvailable: 7 kB"), uint64_t{7} * 1024);
}

TEST(HostMemory, MissingOrMalformedLineIsUnknown) {
  EXPECT_EQ(parse_mem_available(""), 0u);
  EXPECT_EQ(parse_mem_available("MemTotal: 100 kB\nMemFree: 50 kB\n"), 0u);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots kB\n"), 0u);
  EXPECT_EQ(parse_mem_available("MemAvailable: 100 MB\n"), 0u);
  EXPECT_EQ(parse_mem_available("XMemAvailable: 100 kB\n"), 0u);
}

TEST(HostMemory, ThisHostReportsSomething) {
#ifdef __linux__
  EXPECT_GT(available_host_memory(), uint64_t{1} << 20);
#else
  GTEST_SKIP() << "MemAvailable is read from /proc/meminfo (Linux only)";
#endif
}

}  // namespace
}  // namespace p64
