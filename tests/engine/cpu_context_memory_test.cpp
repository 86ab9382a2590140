// The CPU backend zeroes its KV cache at load (so decode does not fault pages in); a context
// whose cache could never be backed is refused first, with a message that says what to lower,
// and the backend can then be loaded with a context that fits.
#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/runtime/host_memory.h"
#include "support/test_models.h"

namespace p64 {
namespace {

TEST(CpuContextMemory, AContextTooLargeForThisHostIsRefusedThenASmallOneLoads) {
  if (available_host_memory() == 0) GTEST_SKIP() << "no MemAvailable on this host: the check cannot run";
  // no trained context: max_context alone sizes the cache (2 KiB per position here: ~8 TB)
  auto model = test::make_tiny_model(test::all_types(DType::Q8_0), 3, false, false, /*n_ctx_train=*/0);
  auto cpu = make_cpu_backend();
  BackendOptions huge;
  huge.max_context = 4000000000u;
  try {
    cpu->load(model, huge);
    FAIL() << "a KV cache of ~8 TB was accepted";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("4000000000 positions"), std::string::npos) << m;
    EXPECT_NE(m.find("available (MemAvailable)"), std::string::npos) << m;
    EXPECT_NE(m.find("margin"), std::string::npos) << m;
    EXPECT_NE(m.find("lower max_context (--ctx) to at most "), std::string::npos) << m;
  }
  // refused means unloaded: a decode is an error, not a read of a cache that was never made
  EXPECT_THROW(cpu->decode_argmax(1, 0), Error);
  EXPECT_EQ(cpu->max_context(), 0u);
  BackendOptions small;
  small.max_context = 64;
  cpu->load(model, small);
  EXPECT_EQ(cpu->max_context(), 64u);
  const int32_t a = cpu->decode_argmax(1, 0);
  EXPECT_GE(a, 0);
  EXPECT_LT(a, 384);
}

}  // namespace
}  // namespace p64
