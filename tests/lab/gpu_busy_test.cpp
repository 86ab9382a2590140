// A CUDA run's GPU in decode-proxy and A/B, on a toy backend whose passport names a CUDA device
// and a stand-in NVML (tests/fake_nvml): steady clocks leave the run quiet and give tok/J from
// the energy counter; a thermal slowdown or a 30% SM clock drop flags it busy, saying which; no
// NVML (or one missing a function) gives no GPU figures and no flag, with the reason kept.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/decode_test_models.h"
#include "engine/lab/ab.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/experiment.h"
#include "engine/lab/store.h"
#include "lab/toy_backend.h"
#include "support/scoped_env.h"

namespace p64 {
namespace {

constexpr int kDecodeTokens = 4;
constexpr int kRuns = 3;

DeviceFacts cuda_device() {
  DeviceFacts d;
  d.backend = "cuda";
  d.name = "fake GPU";
  d.device_type = "gpu";
  d.pci_bus_id = "0000:65:00.0";  // the stand-in's default bus id
  return d;
}

// A machine whose figures are all unknown: only the GPU (or the CV) can flag the run.
MachineSample unknown_machine() { return MachineSample{}; }

// decode-proxy of the toy model, its passport naming `device`, with NVML from `library` steered by `steer`.
DecodeProxyResult measure(const DeviceFacts& device, const char* library, const std::string& steer) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", library);
  const test::ScopedEnv fake("P64_FAKE_NVML", steer);
  auto model = test::make_toy_model();
  test::ToyBackend toy("toy", device);
  toy.load(model, {});
  DecodeProxyParams p;
  p.decode_tokens = kDecodeTokens;
  p.prompt_tokens = 4;
  p.runs = kRuns;
  p.warmup = 1;
  p.machine_probe = unknown_machine;
  const Passport passport = toy.passport();
  p.gpu = gpu_source_for(passport.device);
  return run_decode_proxy(toy, *model, passport, p);
}

std::vector<std::string> gpu_reasons(const BusyFlag& b) {
  std::vector<std::string> out;
  for (const std::string& r : b.reasons)
    if (r.rfind("GPU", 0) == 0) out.push_back(r);
  return out;
}

MinMedianMax steady() { return min_median_max(std::vector<double>{100, 101, 99.5, 100.5}); }

TEST(GpuBusy, NoNvmlGivesNoGpuFiguresAndNoFlag) {
  const DecodeProxyResult r = measure(cuda_device(), "/nonexistent/libnvidia-ml.so.1", "");
  ASSERT_TRUE(r.machine.gpu.has_value());
  EXPECT_NE(r.machine.gpu->unavailable.find("NVML not loaded"), std::string::npos) << r.machine.gpu->unavailable;
  EXPECT_FALSE(r.energy.has_value());
  EXPECT_TRUE(gpu_reasons(r.busy).empty());
  EXPECT_FALSE(busy_flag(steady(), r.machine).busy);
  const nlohmann::json j = r;
  EXPECT_FALSE(j["machine"]["gpu"]["available"].get<bool>());
  EXPECT_NE(j["machine"]["gpu"]["unavailable"].get<std::string>().find("libnvidia-ml"), std::string::npos);
  EXPECT_FALSE(j["machine"]["gpu"].contains("sm_mhz_min"));
  EXPECT_FALSE(j.contains("energy"));
}

TEST(GpuBusy, ALibraryMissingAFunctionIsTreatedAsAbsent) {
  const DecodeProxyResult r = measure(cuda_device(), P64_FAKE_NVML_NO_CLOCK_PATH, "reasons=0x40");
  ASSERT_TRUE(r.machine.gpu.has_value());
  EXPECT_NE(r.machine.gpu->unavailable.find("nvmlDeviceGetClockInfo"), std::string::npos);
  EXPECT_FALSE(r.energy.has_value());
  EXPECT_TRUE(gpu_reasons(r.busy).empty());  // its thermal reason is never read
}

TEST(GpuBusy, SteadyClocksAreQuietAndTokPerJouleComesFromTheEnergyCounter) {
  const DecodeProxyResult r =
      measure(cuda_device(), P64_FAKE_NVML_PATH, "sm=1980;mem=2619;power_mw=300000;energy_step_mj=500;reasons=0x1");
  ASSERT_TRUE(r.machine.gpu.has_value());
  const GpuLoad& g = *r.machine.gpu;
  EXPECT_TRUE(g.unavailable.empty()) << g.unavailable;
  EXPECT_GE(g.samples, 2);  // the watch's first sample and the one when it stops
  EXPECT_DOUBLE_EQ(g.sm_mhz_min, 1980);
  EXPECT_DOUBLE_EQ(g.sm_mhz_max, 1980);
  EXPECT_DOUBLE_EQ(g.mem_mhz_max, 2619);
  EXPECT_DOUBLE_EQ(g.power_w_mean, 300);
  EXPECT_FALSE(g.throttled());  // GPU idle is no slowdown
  EXPECT_TRUE(gpu_reasons(r.busy).empty()) << busy_line(r.busy);
  EXPECT_FALSE(busy_flag(steady(), r.machine).busy);

  // Each decode is read before and after: the stand-in's counter moves 500 mJ per read.
  ASSERT_TRUE(r.energy.has_value());
  EXPECT_EQ(r.energy->source, "NVML energy counter");
  EXPECT_EQ(r.energy->joules, std::vector<double>(kRuns, 0.5));
  EXPECT_EQ(r.energy->tok_per_j.n, kRuns);
  EXPECT_DOUBLE_EQ(r.energy->tok_per_j.median, kDecodeTokens / 0.5);

  const nlohmann::json j = r;
  EXPECT_TRUE(j["machine"]["gpu"]["available"].get<bool>());
  EXPECT_FALSE(j["machine"]["gpu"]["throttled"].get<bool>());
  EXPECT_DOUBLE_EQ(j["machine"]["gpu"]["sm_mhz_min"].get<double>(), 1980);
  EXPECT_DOUBLE_EQ(j["machine"]["gpu"]["power_w_mean"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(j["energy"]["tok_per_j"]["median"].get<double>(), 8);
  EXPECT_EQ(j["energy"]["decode_j"].size(), static_cast<size_t>(kRuns));
}

TEST(GpuBusy, ThermalSlowdownOrPowerCapFlagsTheRunNamingIt) {
  DecodeProxyResult r = measure(cuda_device(), P64_FAKE_NVML_PATH, "reasons=0x40");
  EXPECT_TRUE(r.busy.busy);
  EXPECT_EQ(gpu_reasons(r.busy), std::vector<std::string>{"GPU clocks held down by HW thermal slowdown"});
  const nlohmann::json j = r;
  EXPECT_TRUE(j["busy"].get<bool>());
  EXPECT_TRUE(j["machine"]["gpu"]["throttled"].get<bool>());
  EXPECT_EQ(j["machine"]["gpu"]["throttle_reasons"], nlohmann::json::array({"HW thermal slowdown"}));
  EXPECT_NE(gpu_line(*r.machine.gpu).find("THROTTLED: HW thermal slowdown"), std::string::npos);

  r = measure(cuda_device(), P64_FAKE_NVML_PATH, "reasons=0x4");
  EXPECT_EQ(gpu_reasons(r.busy), std::vector<std::string>{"GPU clocks held down by power cap"});
}

TEST(GpuBusy, ASmClockDropOfThirtyPercentFlagsTheRun) {
  // The first read (the watch's first sample) at 2000 MHz, every later one at 1400.
  DecodeProxyResult r = measure(cuda_device(), P64_FAKE_NVML_PATH, "sm=2000,1400");
  EXPECT_TRUE(r.busy.busy);
  EXPECT_EQ(gpu_reasons(r.busy),
            std::vector<std::string>{"GPU SM clock moved between 1400 and 2000 MHz (30.0% > 10.0%)"});
  // 5% is within the rule.
  r = measure(cuda_device(), P64_FAKE_NVML_PATH, "sm=2000,1900");
  EXPECT_TRUE(gpu_reasons(r.busy).empty()) << busy_line(r.busy);
  // A clock that fell while the GPU sat idle between kernels is no slowdown.
  r = measure(cuda_device(), P64_FAKE_NVML_PATH, "sm=2000,1400;reasons=0,0x1");
  EXPECT_TRUE(gpu_reasons(r.busy).empty()) << busy_line(r.busy);
  ASSERT_TRUE(r.machine.gpu.has_value());
  EXPECT_EQ(r.machine.gpu->idle_samples, r.machine.gpu->samples - 1);
  EXPECT_DOUBLE_EQ(r.machine.gpu->sm_mhz_min, 2000);
}

TEST(GpuBusy, WithoutAnEnergyCounterPowerTimesDecodeTimeStandsIn) {
  const DecodeProxyResult r = measure(cuda_device(), P64_FAKE_NVML_PATH, "power_mw=250000;energy_step_mj=0");
  ASSERT_TRUE(r.energy.has_value());
  EXPECT_EQ(r.energy->source, "NVML power x decode time");
  ASSERT_EQ(r.energy->joules.size(), static_cast<size_t>(kRuns));
  for (int k = 0; k < kRuns; ++k) {
    // 250 W over the run's decode seconds (tokens / tok/s).
    const double decode_s = kDecodeTokens / r.samples[k].decode_tok_s;
    EXPECT_NEAR(r.energy->joules[k], 250 * decode_s, 1e-9 * 250 * decode_s);
  }
}

TEST(GpuBusy, OtherBackendsChangeNothing) {
  DeviceFacts cpu;  // the toy's own: backend "toy"
  const DecodeProxyResult r = measure(cpu, P64_FAKE_NVML_PATH, "reasons=0x40");
  EXPECT_FALSE(r.machine.gpu.has_value());
  EXPECT_FALSE(r.energy.has_value());
  EXPECT_TRUE(gpu_reasons(r.busy).empty());
  const nlohmann::json j = r;
  EXPECT_FALSE(j["machine"].contains("gpu"));
  EXPECT_FALSE(j.contains("energy"));
}

// Through the one engine call, a CUDA run's GPU figures and tok/J land in the stored run.
TEST(GpuBusy, TheStoredRunKeepsItsGpuFiguresAndEnergy) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv fake("P64_FAKE_NVML", "sm=1500;power_mw=200000;energy_step_mj=500;reasons=0x20");
  test::register_toy_backend("toy-nvml-store", cuda_device());
  test::TempDir dir;
  Store::Options no_import;
  no_import.import_plan_history = false;
  ExperimentRequest req;
  req.model_path = test::stories260k_p64();
  req.config = LabConfig::parse("backend=toy-nvml-store");
  req.decode_tokens = kDecodeTokens;
  req.prompt_tokens = 4;
  req.runs = 2;
  req.warmup = 0;
  req.machine_probe = unknown_machine;
  req.store_path = (dir / "lab.db").string();
  Store::open(req.store_path, no_import);
  const ExperimentOutcome out = run_experiment(req);
  ASSERT_GT(out.run_id, 0);

  const std::optional<RunRecord> run = Store::open(req.store_path, no_import)->run(out.run_id);
  ASSERT_TRUE(run);
  const nlohmann::json summary = nlohmann::json::parse(run->summary_json);
  EXPECT_TRUE(summary["busy"].get<bool>());
  EXPECT_EQ(summary["machine"]["gpu"]["device"], "PCI 0000:65:00.0");
  EXPECT_DOUBLE_EQ(summary["machine"]["gpu"]["sm_mhz_max"].get<double>(), 1500);
  EXPECT_DOUBLE_EQ(summary["machine"]["gpu"]["power_w_mean"].get<double>(), 200);
  EXPECT_EQ(summary["machine"]["gpu"]["throttle_reasons"], nlohmann::json::array({"SW thermal slowdown"}));
  EXPECT_EQ(summary["energy"]["source"], "NVML energy counter");
  EXPECT_DOUBLE_EQ(summary["energy"]["tok_per_j"]["median"].get<double>(), kDecodeTokens / 0.5);
}

// An A/B of a CPU-like side against a CUDA side: the GPU's slowdown is B's alone, and only B
// gets a decode energy.
TEST(GpuBusy, AbJudgesOnlyTheCudaSideByItsGpu) {
  const test::ScopedEnv lib("P64_NVML_LIBRARY", P64_FAKE_NVML_PATH);
  const test::ScopedEnv fake("P64_FAKE_NVML", "reasons=0x40;energy_step_mj=500");
  test::register_toy_backend("toy-nvml-plain");
  test::register_toy_backend("toy-nvml-gpu", cuda_device());
  AbParams p = test::quick_ab_params(8);
  p.reference = LabConfig::parse("backend=toy-nvml-plain");
  p.machine_probe = unknown_machine;
  const AbResult r = run_ab(LabConfig::parse("backend=toy-nvml-plain"), LabConfig::parse("backend=toy-nvml-gpu"),
                            test::make_toy_model(), p);
  ASSERT_TRUE(r.machine.gpu.has_value());
  EXPECT_TRUE(r.machine.gpu->throttled());
  EXPECT_TRUE(gpu_reasons(r.a.busy).empty()) << busy_line(r.a.busy);
  EXPECT_EQ(gpu_reasons(r.b.busy), std::vector<std::string>{"GPU clocks held down by HW thermal slowdown"});
  EXPECT_FALSE(r.a.energy.has_value());
  ASSERT_TRUE(r.b.energy.has_value());
  EXPECT_EQ(r.b.energy->tok_per_j.n, p.runs);
  EXPECT_DOUBLE_EQ(r.b.energy->tok_per_j.median, p.decode_tokens / 0.5);

  const nlohmann::json j = ab_to_json(r, judge_ab(r, std::nullopt));
  EXPECT_TRUE(j["machine"]["gpu"]["throttled"].get<bool>());
  EXPECT_TRUE(j["b"]["busy"]["busy"].get<bool>());
  EXPECT_DOUBLE_EQ(j["b"]["energy"]["tok_per_j"]["median"].get<double>(), p.decode_tokens / 0.5);
  EXPECT_FALSE(j["a"].contains("energy"));
}

}  // namespace
}  // namespace p64
