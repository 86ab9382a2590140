// decode-proxy's statistics and busy flag: stddev and CV beside the median and range, and a
// run flagged busy when its CV is high, when other work held the cores (provoked here by
// spinning threads on every core), or when the CPU clock drifted.
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/machine_load.h"
#include "lab/toy_backend.h"

namespace p64 {
namespace {

MinMedianMax steady() { return min_median_max(std::vector<double>{100, 101, 99.5, 100.5}); }

MachineLoad quiet_machine() {
  MachineLoad m;
  m.cores = 2;
  m.samples = 10;
  m.runnable_mean = 1.8;
  m.runnable_max = 3;
  m.load1 = 0.4;
  m.cpu_mhz_min = 2900;
  m.cpu_mhz_max = 3000;
  return m;
}

TEST(Stats, StddevAndCvBesideMedianAndRange) {
  const MinMedianMax m = min_median_max(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(m.median, 4.5);
  EXPECT_DOUBLE_EQ(m.mean, 5);
  EXPECT_DOUBLE_EQ(m.stddev, std::sqrt(32.0 / 7));  // sample (n - 1) deviation
  EXPECT_DOUBLE_EQ(m.cv, std::sqrt(32.0 / 7) / 5);
  const nlohmann::json j = m;
  EXPECT_DOUBLE_EQ(j["stddev"].get<double>(), m.stddev);
  EXPECT_DOUBLE_EQ(j["cv"].get<double>(), m.cv);
  const MinMedianMax back = j.get<MinMedianMax>();
  EXPECT_DOUBLE_EQ(back.cv, m.cv);
  // One run has no spread; a summary stored before these fields reads them as 0.
  EXPECT_DOUBLE_EQ(min_median_max(std::vector<double>{3}).stddev, 0);
  EXPECT_DOUBLE_EQ(nlohmann::json({{"median", 1.0}}).get<MinMedianMax>().stddev, 0);
  EXPECT_EQ(format_min_median_max(min_median_max(std::vector<double>{9, 10, 11}), 1), "10.0 [9.0-11.0] ± 1.0 (CV 10.0%)");
}

TEST(BusyFlag, EachReasonAloneFlagsTheRun) {
  EXPECT_FALSE(busy_flag(steady(), quiet_machine()).busy);
  EXPECT_EQ(busy_line(busy_flag(steady(), quiet_machine())), "quiet");

  const MinMedianMax scattered = min_median_max(std::vector<double>{100, 80, 120, 95});
  BusyFlag b = busy_flag(scattered, quiet_machine());
  ASSERT_TRUE(b.busy);
  ASSERT_EQ(b.reasons.size(), 1u);
  EXPECT_EQ(b.reasons[0].rfind("decode tok/s CV ", 0), 0u) << b.reasons[0];

  MachineLoad crowded = quiet_machine();
  crowded.runnable_mean = 3.2;  // more than 2 cores + half a core, on average
  b = busy_flag(steady(), crowded);
  ASSERT_EQ(b.reasons.size(), 1u);
  EXPECT_NE(b.reasons[0].find("3.2 tasks runnable on average"), std::string::npos) << b.reasons[0];
  EXPECT_NE(busy_line(b).find("BUSY: "), std::string::npos);
  crowded.runnable_mean = 2.4;  // within half a core of spare: short wake-ups of other tasks
  EXPECT_FALSE(busy_flag(steady(), crowded).busy);

  MachineLoad drifting = quiet_machine();
  drifting.cpu_mhz_min = 2000;  // a third below the top clock
  b = busy_flag(steady(), drifting);
  ASSERT_EQ(b.reasons.size(), 1u);
  EXPECT_NE(b.reasons[0].find("CPU clock moved between 2000 and 3000 MHz"), std::string::npos) << b.reasons[0];

  // Unknown figures (no /proc, no cpufreq) judge nothing.
  MachineLoad unknown;
  unknown.cores = 2;
  EXPECT_FALSE(busy_flag(steady(), unknown).busy);
}

TEST(BusyFlag, TheWatchSamplesUntilStoppedAndDiscountsItself) {
  std::atomic<int> calls{0};
  MachineWatch watch(
      [&] {
        MachineSample s;
        s.runnable = 4 + (calls++ % 2);  // the watcher reading, plus 3 or 4 others
        s.load1 = 1.5;
        s.cpu_mhz = calls % 2 ? 3000 : 2500;
        return s;
      },
      std::chrono::milliseconds(1));
  while (calls < 4) std::this_thread::yield();
  const MachineLoad m = watch.stop();
  EXPECT_EQ(m.samples, calls.load());
  EXPECT_GE(m.samples, 4);
  EXPECT_GT(m.runnable_mean, 3.0);
  EXPECT_LT(m.runnable_mean, 4.0);
  EXPECT_DOUBLE_EQ(m.runnable_max, 4);
  EXPECT_DOUBLE_EQ(m.load1, 1.5);
  EXPECT_DOUBLE_EQ(m.cpu_mhz_min, 2500);
  EXPECT_DOUBLE_EQ(m.cpu_mhz_max, 3000);
  EXPECT_EQ(watch.stop().samples, m.samples);  // stopping again changes nothing
}

// An injected machine that is crowded all along: the flag comes from the machine, whatever the
// runs' own spread, and reaches the JSON the store keeps.
TEST(BusyFlag, DecodeProxyReportsTheInjectedMachine) {
  auto model = test::make_toy_model();
  test::ToyBackend toy;
  toy.load(model, {});
  DecodeProxyParams p;
  p.decode_tokens = 4;
  p.prompt_tokens = 4;
  p.runs = 3;
  p.warmup = 1;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.machine_probe = [cores] {
    MachineSample s;
    s.runnable = 2 * cores + 1;
    return s;
  };
  const DecodeProxyResult r = run_decode_proxy(toy, *model, toy.passport(), p);
  EXPECT_TRUE(r.busy.busy);
  EXPECT_GE(r.machine.samples, 1);
  EXPECT_DOUBLE_EQ(r.machine.runnable_mean, 2.0 * cores);
  const nlohmann::json j = r;
  EXPECT_TRUE(j["busy"].get<bool>());
  ASSERT_FALSE(j["busy_reasons"].empty());
  EXPECT_NE(j["busy_reasons"].back().get<std::string>().find("tasks runnable"), std::string::npos);
  EXPECT_EQ(j["decode_tok_s"]["n"], 3);
  EXPECT_TRUE(j["decode_tok_s"].contains("stddev"));
  EXPECT_TRUE(j["decode_tok_s"].contains("cv"));
  EXPECT_EQ(j["machine"]["cores"], cores);

  // No probe: no watch, and nothing said about the machine.
  p.machine_probe = {};
  const DecodeProxyResult unwatched = run_decode_proxy(toy, *model, toy.passport(), p);
  EXPECT_EQ(unwatched.machine.samples, 0);
}

// The real thing: threads spinning on every core while the CPU backend decodes a tiny model.
// The kernel's runnable count sees them at once (no minute-long average to wait for).
TEST(BusyFlag, SpinningThreadsOnEveryCoreFlagACpuRunBusy) {
  if (read_machine_sample().runnable < 0) GTEST_SKIP() << "no /proc/loadavg on this system";
  std::unique_ptr<Backend> cpu;
  try {
    cpu = make_cpu_backend();
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  auto model = test::make_toy_model();  // F32, 2 layers of 32: a decode step takes microseconds
  BackendOptions o;
  o.max_context = 64;
  o.threads = 1;
  cpu->load(model, o);

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<bool> stop{false};
  std::atomic<int> spinning{0};
  std::vector<std::thread> spinners;
  for (int i = 0; i < 2 * cores; ++i)
    spinners.emplace_back([&] {
      ++spinning;
      volatile double x = 1;
      while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
    });
  while (spinning < 2 * cores) std::this_thread::yield();
  DecodeProxyParams p;
  p.decode_tokens = 8;
  p.prompt_tokens = 8;
  p.runs = 3;
  p.warmup = 0;
  // An empty passport: the busy flag needs none, and the CPU's measures its bandwidth (seconds).
  const DecodeProxyResult r = run_decode_proxy(*cpu, *model, Passport{}, p);
  stop = true;
  for (auto& t : spinners) t.join();

  EXPECT_TRUE(r.busy.busy) << nlohmann::json(r.machine).dump();
  bool load_reason = false;
  for (const auto& reason : r.busy.reasons) load_reason = load_reason || reason.find("tasks runnable") != std::string::npos;
  EXPECT_TRUE(load_reason) << busy_line(r.busy) << " " << nlohmann::json(r.machine).dump();
}

}  // namespace
}  // namespace p64
