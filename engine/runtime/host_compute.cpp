#include "engine/runtime/host_compute.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/thread_barrier.h"

namespace p64 {
namespace {

using Clock = std::chrono::steady_clock;

struct Loop {
  double (*run)(uint64_t rounds);  // returns a value derived from the result, so nothing is dropped
  double work_per_round;
};

template <class Fn>
double seconds_of(Fn&& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Rounds that take about `target` seconds on one thread, so every pass is long against the
// timer and against thread start-up.
uint64_t calibrated_rounds(const Loop& loop, double target) {
  uint64_t rounds = 1 << 12;
  for (;;) {
    const double s = seconds_of([&] { loop.run(rounds); });
    if (s >= target / 4 || rounds >= (uint64_t{1} << 40)) return std::max<uint64_t>(1, uint64_t(rounds * target / std::max(s, 1e-9)));
    rounds *= 4;
  }
}

// Work per second over `threads` threads that start each pass together; the pass ends when the
// slowest thread ends. The median of `repeats` passes.
double measure_rate(const Loop& loop, uint32_t threads, uint32_t repeats) {
  const uint64_t rounds = calibrated_rounds(loop, 0.03);
  ThreadBarrier sync(threads + 1);
  std::atomic<bool> quit{false};
  std::atomic<double> sink{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (;;) {
        sync.arrive_and_wait();
        if (quit) return;
        const double v = loop.run(rounds);
        sink.store(v, std::memory_order_relaxed);
        sync.arrive_and_wait();
      }
    });
  std::vector<double> rates;
  for (uint32_t r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(double(rounds) * loop.work_per_round * threads / s);
  }
  quit = true;
  sync.arrive_and_wait();
  for (auto& th : pool) th.join();
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

MeasuredCompute measure_host_compute(const std::string& isa, uint32_t threads, uint32_t repeats) {
  using namespace host_compute;
  MeasuredCompute m;
  m.threads = std::max(1u, threads);
  m.repeats = std::max(1u, repeats);
  Loop fp32{}, int8{};
  if (isa == "avx512") {
    fp32 = {[](uint64_t n) { return double(fp32_rounds_avx512(n)); }, kFp32FlopPerRoundAvx512};
    int8 = {[](uint64_t n) { return double(int8_rounds_avx512(n)); }, kInt8OpsPerRoundAvx512};
  } else if (isa == "avx2") {
    fp32 = {[](uint64_t n) { return double(fp32_rounds_avx2(n)); }, kFp32FlopPerRoundAvx2};
    int8 = {[](uint64_t n) { return double(int8_rounds_avx2(n)); }, kInt8OpsPerRoundAvx2};
  } else {
    m.isa = "none (no SIMD loop for '" + isa + "')";
    return m;
  }
  m.isa = isa;
  m.fp32_flops = measure_rate(fp32, m.threads, m.repeats);
  m.int8_ops = measure_rate(int8, m.threads, m.repeats);
  return m;
}

void to_json(nlohmann::json& j, const MeasuredCompute& m) {
  j = nlohmann::json{{"fp32_flops", m.fp32_flops}, {"int8_ops", m.int8_ops}, {"isa", m.isa},
                     {"threads", m.threads}, {"repeats", m.repeats}};
}

void from_json(const nlohmann::json& j, MeasuredCompute& m) {
  m.fp32_flops = j.value("fp32_flops", 0.0);
  m.int8_ops = j.value("int8_ops", 0.0);
  m.isa = j.value("isa", "");
  m.threads = j.value("threads", 0u);
  m.repeats = j.value("repeats", 0u);
}

}  // namespace p64
