// `p64 passport --backend cuda`'s NVML line against the stand-in library (tests/fake_nvml): the
// GPU's name, power limit, clocks and clocks-event reasons now; unknown parts said as unknown;
// no NVML said with its reason; nothing at all for a device that is not CUDA's.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/lab/gpu_facts.h"
#include "support/scoped_env.h"

namespace p64 {
namespace {

DeviceFacts cuda_device() {
  DeviceFacts d;
  d.backend = "cuda";
  d.pci_bus_id = "0000:65:00.0";
  return d;
}

TEST(GpuFacts, PassportLineNamesTheGpuItsPowerLimitClocksAndReasons) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv steer("P64_FAKE_NVML",
                              "name=NVIDIA H100 80GB HBM3;power_limit_mw=700000;sm=345;mem=2619;power_mw=71500;reasons=0x5");
  const std::optional<GpuFacts> f = read_gpu_facts(cuda_device());
  ASSERT_TRUE(f);
  EXPECT_EQ(gpu_facts_line(*f),
            "NVIDIA H100 80GB HBM3 (PCI 0000:65:00.0), power limit 700 W, SM 345 MHz, memory 2619 MHz, 72 W now, "
            "clocks-event reasons: GPU idle, power cap");
  const nlohmann::json j = *f;
  EXPECT_EQ(j["available"], true);
  EXPECT_DOUBLE_EQ(j["power_limit_w"].get<double>(), 700.0);
  EXPECT_EQ(j["clocks_event_reasons"], (nlohmann::json{"GPU idle", "power cap"}));
}

TEST(GpuFacts, WhatTheLibraryDoesNotSayReadsAsUnknown) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv steer("P64_FAKE_NVML", "name=;power_limit_mw=0;reasons=none;sm=1980");
  const std::optional<GpuFacts> f = read_gpu_facts(cuda_device());
  ASSERT_TRUE(f);
  const std::string line = gpu_facts_line(*f);
  EXPECT_EQ(line.rfind("PCI 0000:65:00.0, power limit unknown, SM 1980 MHz", 0), 0u) << line;
  EXPECT_NE(line.find("clocks-event reasons unknown"), std::string::npos) << line;
  const nlohmann::json j = *f;
  EXPECT_TRUE(j["power_limit_w"].is_null());
  EXPECT_TRUE(j["clocks_event_reasons"].is_null());
}

TEST(GpuFacts, NoNvmlIsSaidWithItsReasonAndOtherBackendsHaveNoLine) {
  {
    const test::ScopedEnv lib("P64_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    const std::optional<GpuFacts> f = read_gpu_facts(cuda_device());
    ASSERT_TRUE(f);
    EXPECT_EQ(gpu_facts_line(*f).rfind("not available (NVML not loaded: ", 0), 0u) << gpu_facts_line(*f);
    EXPECT_EQ(nlohmann::json(*f)["available"], false);
  }
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  DeviceFacts cpu;
  cpu.backend = "cpu";
  EXPECT_FALSE(read_gpu_facts(cpu));
}

}  // namespace
}  // namespace p64
