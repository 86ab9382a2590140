#pragma once
// A reusable barrier for a fixed number of threads: arrive_and_wait() returns once all of them
// have arrived, and the barrier is ready for the next phase. std::barrier does the same, but
// libstdc++ 12 waits on it through its atomic-wait fallback where there is no futex (mingw-w64,
// Windows), and there it lost a wake-up: every thread of the bandwidth probe slept for good
// (seen under wine, 2 runs in 5). A mutex and a condition variable have no such fallback.
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace p64 {

class ThreadBarrier {
 public:
  explicit ThreadBarrier(uint32_t threads) : threads_(threads) {}
  ThreadBarrier(const ThreadBarrier&) = delete;
  ThreadBarrier& operator=(const ThreadBarrier&) = delete;

  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    const uint64_t phase = phase_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++phase_;
      lock.unlock();
      all_arrived_.notify_all();
      return;
    }
    all_arrived_.wait(lock, [&] { return phase_ != phase; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  const uint32_t threads_;
  uint32_t arrived_ = 0;
  uint64_t phase_ = 0;
};

}  // namespace p64
