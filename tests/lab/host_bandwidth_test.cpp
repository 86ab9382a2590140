#include "engine/runtime/host_bandwidth.h"

#include <gtest/gtest.h>

namespace p64 {
namespace {

TEST(HostBandwidth, MeasuresOverABufferLargerThanTheCache) {
  const uint64_t llc = host_last_level_cache_bytes();
  EXPECT_GT(llc, 0u);
  MeasuredBandwidth m = measure_host_bandwidth(0, 3);
  EXPECT_EQ(m.repeats, 3u);
  EXPECT_GE(m.buffer_bytes, std::min<uint64_t>(4 * llc, 64ull << 20) / 2);
  // Plausibility only (no speed assertions in unit tests): a real machine streams more than
  // 0.1 GB/s and less than 100 TB/s; a broken timer gives 0 or infinity.
  EXPECT_GT(m.read_gbs, 0.1);
  EXPECT_LT(m.read_gbs, 1e5);
  EXPECT_GT(m.copy_gbs, 0.1);
  EXPECT_LT(m.copy_gbs, 1e5);
}

}  // namespace
}  // namespace p64
