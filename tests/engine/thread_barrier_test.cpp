// The barrier the host probes (bandwidth, compute) start and end their passes with. Under wine,
// std::barrier from mingw-w64's libstdc++ 12 lost a wake-up in about half the probe runs and
// every thread slept for good; these phases, many threads over many rounds, hung with it.
#include "engine/common/thread_barrier.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace p64 {
namespace {

TEST(ThreadBarrier, NoThreadStartsAPhaseBeforeEveryThreadEndedTheLastOne) {
  constexpr uint32_t kThreads = 6;
  constexpr int kPhases = 3000;
  ThreadBarrier sync(kThreads);
  std::atomic<int> arrivals{0};
  std::atomic<int> early{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < kThreads; ++t)
    pool.emplace_back([&] {
      for (int phase = 0; phase < kPhases; ++phase) {
        arrivals.fetch_add(1);
        sync.arrive_and_wait();
        // Past the barrier of phase p, all threads have arrived p + 1 times.
        if (arrivals.load() < (phase + 1) * int(kThreads)) early.fetch_add(1);
        sync.arrive_and_wait();  // no one arrives for the next phase before all have checked
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(arrivals.load(), kPhases * int(kThreads));
  EXPECT_EQ(early.load(), 0);
}

}  // namespace
}  // namespace p64
