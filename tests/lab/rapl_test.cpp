// CPU energy from Linux's powercap (RAPL) counters: package zones only, summed, wrap-around undone;
// a missing interface or an unreadable counter named; a CPU decode-proxy stores tokens per joule
// when the counter moves and the reason when there is none (a fake powercap tree stands in for
// /sys/class/powercap, through P64_POWERCAP_ROOT).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/decode_test_models.h"
#include "engine/lab/rapl.h"
#include "support/scoped_env.h"

namespace p64 {
namespace {
namespace fs = std::filesystem;

// Whole at once (a temporary file renamed over it), as a sysfs read sees a counter.
void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  const fs::path tmp = p.string() + ".tmp";
  std::ofstream(tmp) << text << "\n";
  fs::rename(tmp, p);
}

// Two packages (one with a core sub-zone, which must not count twice) and a psys zone.
void fake_tree(const fs::path& root, double pkg0_uj, double pkg1_uj) {
  write(root / "intel-rapl:0" / "name", "package-0");
  write(root / "intel-rapl:0" / "energy_uj", std::to_string(static_cast<long long>(pkg0_uj)));
  write(root / "intel-rapl:0" / "max_energy_range_uj", "1000000");
  write(root / "intel-rapl:0:0" / "name", "core");
  write(root / "intel-rapl:0:0" / "energy_uj", "999999");
  write(root / "intel-rapl:1" / "name", "package-1");
  write(root / "intel-rapl:1" / "energy_uj", std::to_string(static_cast<long long>(pkg1_uj)));
  write(root / "intel-rapl:1" / "max_energy_range_uj", "1000000");
  write(root / "intel-rapl:2" / "name", "psys");
  write(root / "intel-rapl:2" / "energy_uj", "5");
}

TEST(Rapl, PackagesAreSummedAndAWrapIsUndone) {
  test::TempDir dir;
  fake_tree(dir.path(), 100, 200);
  std::string why;
  auto c = RaplCounter::open(why, dir.path().string());
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->source(), "RAPL package energy (2 packages)");
  EXPECT_DOUBLE_EQ(*c->energy_j(), 0);
  write(dir / "intel-rapl:0" / "energy_uj", "600100");  // +0.6 J
  write(dir / "intel-rapl:1" / "energy_uj", "400200");  // +0.4 J
  EXPECT_NEAR(*c->energy_j(), 1.0, 1e-9);
  write(dir / "intel-rapl:0" / "energy_uj", "100");  // wrapped at 1,000,000: +0.4 J
  EXPECT_NEAR(*c->energy_j(), 1.4, 1e-9);
  fs::remove(dir / "intel-rapl:1" / "energy_uj");
  EXPECT_FALSE(c->energy_j().has_value());
}

TEST(Rapl, AMissingInterfaceOrCounterIsNamed) {
  test::TempDir dir;
  std::string why;
  EXPECT_FALSE(RaplCounter::open(why, (dir / "absent").string()));
  EXPECT_NE(why.find("powercap interface is not exposed here"), std::string::npos) << why;
  write(dir / "intel-rapl:0" / "name", "package-0");
  EXPECT_FALSE(RaplCounter::open(why, dir.path().string()));
  const std::string counter = (fs::path("intel-rapl:0") / "energy_uj").string();
  EXPECT_NE(why.find(counter + " is not readable"), std::string::npos) << why;
  test::TempDir only_psys;
  write(only_psys / "intel-rapl:0" / "name", "psys");
  write(only_psys / "intel-rapl:0" / "energy_uj", "1");
  EXPECT_FALSE(RaplCounter::open(why, only_psys.path().string()));
  EXPECT_NE(why.find("no package zone"), std::string::npos) << why;
}

TEST(RaplDecodeProxy, ACpuRunStoresTokPerJouleOrWhyNot) {
  test::TempDir dir;
  const std::string db = (dir / "lab.db").string();
  {
    // no powercap at all: the run stores why
    const test::ScopedEnv env("P64_POWERCAP_ROOT", (dir / "absent").string());
    const test::CliRun r = test::run_p64("decode-proxy " + test::stories260k_p64() +
                                         " --backend cpu --tokens 8 --runs 2 --warmup 0 --json --db " + db);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j.contains("energy"));
    EXPECT_NE(j.value("energy_unavailable", std::string()).find("not exposed here"), std::string::npos) << r.out;
  }
  // a counter that climbs while the runs decode: tokens per joule stored per run
  const fs::path root = dir / "powercap";
  fake_tree(root, 0, 0);
  std::atomic<bool> stop{false};
  std::thread ticker([&] {
    long long uj = 0;
    while (!stop) {
      uj += 1000;  // 1 mJ a tick
      write(root / "intel-rapl:0" / "energy_uj", std::to_string(uj % 1000000));
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const test::ScopedEnv env("P64_POWERCAP_ROOT", root.string());
  const test::CliRun r = test::run_p64("decode-proxy " + test::stories260k_p64() +
                                       " --backend cpu --tokens 64 --runs 2 --warmup 0 --json --db " + db);
  stop = true;
  ticker.join();
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("energy")) << r.out;
  EXPECT_EQ(j["energy"]["source"], "RAPL package energy (2 packages)");
  EXPECT_GT(j["energy"]["tok_per_j"]["n"].get<int>(), 0) << j["energy"].dump();
  EXPECT_GT(j["energy"]["tok_per_j"]["median"].get<double>(), 0);
  EXPECT_FALSE(j.contains("energy_unavailable"));
}

}  // namespace
}  // namespace p64
