// The CPU passport's own facts: caches per level that a reader can believe, the part named, and
// a compute ceiling measured rather than assumed.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/common/cpu_isa.h"
#include "engine/lab/compute_ceiling.h"
#include "engine/lab/software_device.h"
#include "engine/runtime/host_caches.h"
#include "engine/runtime/host_compute.h"
#include "engine/runtime/passport.h"
#include "tests/support/shared_files.h"

namespace p64 {
namespace {

void write_cache_index(const std::filesystem::path& dir, int index, const char* level, const char* type,
                       const char* size) {
  const auto d = dir / ("index" + std::to_string(index));
  std::filesystem::create_directories(d);
  std::ofstream(d / "level") << level << "\n";
  std::ofstream(d / "type") << type << "\n";
  std::ofstream(d / "size") << size << "\n";
}

TEST(HostCaches, SysfsLevelsAreReadAndTheInstructionCacheIgnored) {
  test::TempDir dir;
  write_cache_index(dir.path(), 0, "1", "Data", "48K");
  write_cache_index(dir.path(), 1, "1", "Instruction", "32K");
  write_cache_index(dir.path(), 2, "2", "Unified", "1024K");
  write_cache_index(dir.path(), 3, "3", "Unified", "32M");
  const HostCaches c = caches_from_sysfs(dir.path());
  EXPECT_EQ(c.l1d_bytes, 48u << 10);
  EXPECT_EQ(c.l2_bytes, 1u << 20);
  EXPECT_EQ(c.l3_bytes, 32u << 20);
  EXPECT_EQ(c.source, "sysfs");
  EXPECT_EQ(describe_caches(c), "L1d 48 KiB, L2 1 MiB, L3 32 MiB");
  EXPECT_EQ(c.last_level_bytes(), 32u << 20);
}

TEST(HostCaches, GarbageSizesAreDroppedAndNamedNotReported) {
  test::TempDir dir;
  write_cache_index(dir.path(), 0, "1", "Data", "banana");
  write_cache_index(dir.path(), 1, "2", "Unified", "99999999999999999999K");
  write_cache_index(dir.path(), 2, "9", "Unified", "8M");
  const HostCaches parsed = caches_from_sysfs(dir.path());
  EXPECT_EQ(parsed.l1d_bytes, 0u);
  EXPECT_EQ(parsed.l2_bytes, 0u);  // more digits than any size has: not a number

  HostCaches vm;
  vm.l1d_bytes = 48 << 10;
  vm.l2_bytes = 508ull << 20;  // what a hypervisor's cpuid once put where L2 belongs
  vm.l3_bytes = 64ull << 30;
  const HostCaches checked = sanity_checked(vm);
  EXPECT_EQ(checked.l1d_bytes, 48u << 10);
  EXPECT_EQ(checked.l2_bytes, 0u);
  EXPECT_EQ(checked.l3_bytes, 0u);
  EXPECT_NE(checked.note.find("L2 532676608 bytes dropped (outside 64 KiB-64 MiB)"), std::string::npos)
      << checked.note;
  EXPECT_NE(checked.note.find("L3"), std::string::npos) << checked.note;
  EXPECT_EQ(describe_caches(HostCaches{}), "unknown");
}

TEST(HostCaches, ThisHostsCachesAreOrderedAndInRange) {
  const HostCaches c = host_caches();
  if (c.source.empty()) GTEST_SKIP() << "neither sysfs nor cpuid describes this host's caches";
  if (c.l1d_bytes && c.l2_bytes) EXPECT_LT(c.l1d_bytes, c.l2_bytes) << describe_caches(c);
  if (c.l2_bytes && c.l3_bytes) EXPECT_LT(c.l2_bytes, c.l3_bytes) << describe_caches(c);
  EXPECT_LE(c.l3_bytes, 4096ull << 20);
}

TEST(HostCompute, TheKernelsIsaIsMeasuredAndAnUnknownOneSaysSo) {
  const std::string isa(isa_name(best_isa()));
  const MeasuredCompute none = measure_host_compute("scalar", 1, 1);
  EXPECT_EQ(none.fp32_flops, 0);
  EXPECT_NE(none.isa.find("none"), std::string::npos) << none.isa;
  if (isa != "avx512" && isa != "avx2") GTEST_SKIP() << "no SIMD loop for this host's kernels (" << isa << ")";
  const MeasuredCompute m = measure_host_compute(isa, 1, 1);
  EXPECT_EQ(m.isa, isa);
  // Plausibility only: more than one FLOP per ns, less than any CPU core's peak times 100.
  EXPECT_GT(m.fp32_flops, 1e9);
  EXPECT_LT(m.fp32_flops, 1e13);
  EXPECT_GT(m.int8_ops, 1e9);
  EXPECT_LT(m.int8_ops, 1e14);
}

TEST(ComputeCeiling, AMeasuredCpuRateBeatsTheNominalAndTheHigherOfTheTwoIsTheRoof) {
  Passport p;
  p.device.backend = "cpu";
  p.device.api_version = "avx512";
  p.device.multiprocessors = 2;
  p.compute = {1.5e11, 4.0e11, "avx512", 2, 5};
  const ComputeCeiling c = compute_ceiling(p, {2.0, "x"});
  EXPECT_DOUBLE_EQ(c.flops, 4.0e11);
  for (const char* word : {"measured", "int8 dot products", "fp32 FMA 150.0 GFLOP/s", "int8 400.0 Gop/s", "2 threads"})
    EXPECT_NE(c.source.find(word), std::string::npos) << word << " missing from: " << c.source;
  p.compute.int8_ops = 0;
  EXPECT_DOUBLE_EQ(compute_ceiling(p, {2.0, "x"}).flops, 1.5e11);
}

TEST(Passport, HostFactsNameThePartAndRoundTripThroughJson) {
  Passport p;
  p.host = collect_host_facts();
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
  EXPECT_FALSE(p.host.cpu_id.empty());
  EXPECT_NE(p.host.cpu_id.find(" family "), std::string::npos) << p.host.cpu_id;
#endif
  p.compute = {1e11, 2e11, "avx2", 2, 3};
  const Passport back = nlohmann::json(p).get<Passport>();
  EXPECT_EQ(back.host.cpu_id, p.host.cpu_id);
  EXPECT_EQ(back.host.caches.l3_bytes, p.host.caches.l3_bytes);
  EXPECT_EQ(back.compute.int8_ops, 2e11);
  // A passport stored before these facts existed still reads.
  const Passport old = nlohmann::json::parse(R"({"host":{"cpu_model":"x"},"device":{"backend":"cpu"}})").get<Passport>();
  EXPECT_EQ(old.host.cpu_model, "x");
  EXPECT_EQ(old.compute.fp32_flops, 0);
}

TEST(Passport, AVulkanDeviceThatIsTheCpuIsCalledSoftware) {
  Passport p;
  p.device.backend = "vulkan";
  p.device.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  p.device.device_type = "cpu";
  EXPECT_NE(software_device_note(p).find("'llvmpipe (LLVM 15.0.6, 256 bits)' is a software implementation"),
            std::string::npos)
      << software_device_note(p);
  p.device.device_type = "discrete-gpu";
  EXPECT_EQ(software_device_note(p), "");
  p.device.backend = "cpu";
  p.device.device_type = "cpu";
  EXPECT_EQ(software_device_note(p), "");  // the CPU backend is meant to run on the CPU
}

}  // namespace
}  // namespace p64
