#pragma once
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <thread>
#include <vector>

namespace p64 {

// A fixed set of worker threads that run one parallel region at a time, the caller taking
// part. A decode step opens a few hundred regions, so workers spin briefly on an atomic
// generation counter before sleeping: waking a sleeping thread per region would cost more
// than the region itself. A region's size() slots are claimed, not assigned: whichever thread
// is running takes the next slot, so on a machine shared with other work a worker that the
// OS has not scheduled yet delays nothing — the caller runs its slot instead.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);  // total threads including the caller; 0 = all cores
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return n_threads_; }

  // Calls fn(slot, size()) once for every slot in [0, size()), each slot on one thread (so
  // per-slot scratch needs no lock), and returns when all have returned.
  template <class F>
  void run(F&& fn) {
    if (n_threads_ == 1) {
      fn(0u, 1u);
      return;
    }
    auto thunk = [](void* ctx, unsigned i, unsigned n) { (*static_cast<F*>(ctx))(i, n); };
    dispatch(thunk, &fn);
  }

  // Splits [0, n) into size() contiguous ranges (multiples of `grain` except the last) and
  // calls fn(begin, end) for each non-empty one.
  template <class F>
  void parallel_for(int64_t n, int64_t grain, F&& fn) {
    run([&](unsigned i, unsigned nt) {
      const int64_t units = (n + grain - 1) / grain;
      const int64_t b = units * i / nt * grain, e = std::min<int64_t>(n, units * (i + 1) / nt * grain);
      if (b < e) fn(b, e);
    });
  }

 private:
  using Thunk = void (*)(void*, unsigned, unsigned);
  void dispatch(Thunk thunk, void* ctx);
  void worker();
  void run_slots(uint64_t generation);

  unsigned n_threads_ = 1;
  std::vector<std::thread> workers_;
  Thunk thunk_ = nullptr;
  void* ctx_ = nullptr;
  // Region generation in the high 32 bits, the next unclaimed slot in the low 32: a claim is
  // one compare-exchange that fails for a thread still looking at an older region.
  std::atomic<uint64_t> work_{0};
  std::atomic<uint32_t> done_{0};  // slots of the current region that have returned
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace p64
