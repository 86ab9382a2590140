// MemAvailable parsing and the margin kept under it (the CPU backend refuses a KV cache that
// would not fit before touching it).
#include <string>

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

// The probe's case: a 23 GB host with 22 GB in MemAvailable (page cache included) let a 21.5 GB
// KV cache through. Planned against MemAvailable less a margin, it is refused, and the reason
// says what was needed and what was available.
TEST(HostMemory, ANeedThatFillsMemAvailableIsRefusedSayingNeedAndAvailable) {
  const uint64_t available = parse_mem_available(
      "MemTotal:       23000000 kB\nMemFree:         2000000 kB\nMemAvailable:   22000000 kB\nCached:  20000000 kB\n");
  ASSERT_EQ(available, uint64_t{22000000} * 1024);
  const uint64_t need = 21500000000;  // 20.02 GiB, below MemAvailable's 20.98 GiB
  const std::string why = host_memory_shortfall(need, available);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.find("need 20.02 GiB (21500000000 bytes)"), std::string::npos) << why;
  EXPECT_NE(why.find("20.98 GiB available (MemAvailable)"), std::string::npos) << why;
  EXPECT_NE(why.find("18.36 GiB of it usable after a 2.62 GiB margin"), std::string::npos) << why;
  EXPECT_EQ(usable_host_memory(available), available - available / 8);
}

TEST(HostMemory, WhatFitsUnderTheMarginPassesAndASmallHostKeepsHalfAGibibyte) {
  const uint64_t gib = uint64_t{1} << 30;
  EXPECT_EQ(host_memory_shortfall(10 * gib, 22 * gib), "");
  EXPECT_EQ(host_memory_shortfall(uint64_t(22 * gib * 7 / 8), 22 * gib), "");  // exactly the usable part
  EXPECT_NE(host_memory_shortfall(uint64_t(22 * gib * 7 / 8) + 1, 22 * gib), "");
  EXPECT_EQ(usable_host_memory(gib), gib / 2);  // 1/8 would leave too little: 512 MiB stay free
  EXPECT_EQ(usable_host_memory(256 << 20), 0u);
  EXPECT_NE(host_memory_shortfall(1, 256 << 20), "");
  EXPECT_EQ(host_memory_shortfall(uint64_t{1} << 50, 0), "");  // unknown: nothing to judge by
}

TEST(HostMemory, ThisHostReportsSomething) {
#if defined(__linux__) || defined(_WIN32)
  EXPECT_GT(available_host_memory(), uint64_t{1} << 20);
#else
  GTEST_SKIP() << "MemAvailable is read from /proc/meminfo (Linux) or GlobalMemoryStatusEx (Windows)";
#endif
}

}  // namespace
}  // namespace p64
