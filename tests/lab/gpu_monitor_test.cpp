// The NVML reader against a stand-in library (tests/fake_nvml): no library, a library missing a
// function, a driver that will not start or a device not found all read as "no GPU figures" with
// the reason in words, never an error; each session it opens is shut down.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include "engine/lab/gpu_monitor.h"
#include "engine/lab/gpu_watch.h"
#include "engine/lab/nvml_api.h"
#include "support/scoped_env.h"

namespace p64 {
namespace {

DeviceFacts cuda_device(std::string bus_id = "0000:65:00.0") {
  DeviceFacts d;
  d.backend = "cuda";
  d.name = "fake GPU";
  d.pci_bus_id = std::move(bus_id);
  return d;
}

TEST(GpuMonitor, NoLibraryMeansNoFiguresAndSaysWhy) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  std::string why;
  EXPECT_EQ(GpuMonitor::open("0000:65:00.0", why), nullptr);
  EXPECT_NE(why.find("NVML not loaded"), std::string::npos) << why;
  const GpuSource s = gpu_source_for(cuda_device());
  EXPECT_FALSE(s.monitor);
  EXPECT_TRUE(s.wanted());
  EXPECT_NE(s.unavailable.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << s.unavailable;
}

TEST(GpuMonitor, OtherBackendsWantNoGpu) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  DeviceFacts cpu;
  cpu.backend = "cpu";
  EXPECT_FALSE(gpu_source_for(cpu).wanted());
  cpu.backend = "vulkan";
  EXPECT_FALSE(gpu_source_for(cpu).wanted());
}

TEST(GpuMonitor, ALibraryMissingOneFunctionCountsAsAbsent) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_NO_CLOCK_PATH);
  std::string why;
  EXPECT_EQ(GpuMonitor::open("0000:65:00.0", why), nullptr);
  EXPECT_NE(why.find("lacks nvmlDeviceGetClockInfo"), std::string::npos) << why;
}

TEST(GpuMonitor, ADriverThatWillNotStartCountsAsAbsent) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv steer("P64_FAKE_NVML", "init=9");
  std::string why;
  EXPECT_EQ(GpuMonitor::open("0000:65:00.0", why), nullptr);
  EXPECT_EQ(why, "nvmlInit_v2 failed: Driver Not Loaded");
}

TEST(GpuMonitor, FindsTheRunsGpuByBusIdOrTheOnlyOne) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  std::string why;
  {
    const test::ScopedEnv steer("P64_FAKE_NVML", "bus=0000:17:00.0");
    EXPECT_EQ(GpuMonitor::open("0000:65:00.0", why), nullptr);
    EXPECT_NE(why.find("nvmlDeviceGetHandleByPciBusId_v2(0000:65:00.0)"), std::string::npos) << why;
    auto m = GpuMonitor::open("0000:17:00.0", why);
    ASSERT_NE(m, nullptr) << why;
    EXPECT_EQ(m->device(), "PCI 0000:17:00.0");
    auto only = GpuMonitor::open("", why);  // a passport without a bus id, one GPU present
    ASSERT_NE(only, nullptr) << why;
    EXPECT_EQ(only->device(), "the only GPU");
  }
  const test::ScopedEnv steer("P64_FAKE_NVML", "count=2");
  EXPECT_EQ(GpuMonitor::open("", why), nullptr);  // two GPUs: which one ran is unknown
  EXPECT_EQ(why, "2 GPUs and no PCI bus id to tell which one the run used");
}

TEST(GpuMonitor, ReadsClocksPowerReasonsAndEnergy) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv steer("P64_FAKE_NVML", "sm=1755;mem=2619;power_mw=312500;energy_step_mj=250;reasons=0x41");
  std::string why;
  auto m = GpuMonitor::open("0000:65:00.0", why);
  ASSERT_NE(m, nullptr) << why;
  const GpuSample s = m->sample();
  EXPECT_DOUBLE_EQ(s.sm_mhz, 1755);
  EXPECT_DOUBLE_EQ(s.mem_mhz, 2619);
  EXPECT_DOUBLE_EQ(s.power_w, 312.5);
  EXPECT_TRUE(s.reasons_known);
  EXPECT_EQ(s.reasons, 0x41u);
  // Idle (0x1) is not a slowdown; HW thermal (0x40) is.
  EXPECT_EQ(slowdown_reasons(s.reasons), nvml::kReasonHwThermalSlowdown);
  EXPECT_EQ(slowdown_reason_names(s.reasons), std::vector<std::string>{"HW thermal slowdown"});
  const double e0 = m->energy_j().value(), e1 = m->energy_j().value();
  EXPECT_DOUBLE_EQ(e1 - e0, 0.25);
}

TEST(GpuMonitor, NoEnergyCounterOrReasonsReadAsUnknown) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv steer("P64_FAKE_NVML", "energy_step_mj=0;reasons=none");
  std::string why;
  auto m = GpuMonitor::open("0000:65:00.0", why);
  ASSERT_NE(m, nullptr) << why;
  EXPECT_FALSE(m->energy_j().has_value());
  EXPECT_FALSE(m->sample().reasons_known);
  const GpuLoad g = summarise_gpu({m->sample()}, m->device());
  EXPECT_FALSE(g.reasons_known);
  EXPECT_NE(gpu_line(g).find("throttle reasons unknown"), std::string::npos) << gpu_line(g);
}

TEST(GpuMonitor, EverySessionIsShutDown) {
  // Our own handle keeps the stand-in loaded between monitors, so its session count survives.
  void* fake = dlopen(P64_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto sessions = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_open_sessions"));
  ASSERT_NE(sessions, nullptr);
  {
    const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
    std::string why;
    auto m = GpuMonitor::open("0000:65:00.0", why);
    ASSERT_NE(m, nullptr) << why;
    EXPECT_EQ(sessions(), 1);
    EXPECT_EQ(GpuMonitor::open("0000:99:00.0", why), nullptr);  // a device not found shuts its session too
    EXPECT_EQ(sessions(), 1);
  }
  EXPECT_EQ(sessions(), 0);
  dlclose(fake);
}

}  // namespace
}  // namespace p64
