#pragma once
#include <algorithm>
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

  // Calls fn(begin, end) over chunks that cover [0, n) once (multiples of `grain` except the
  // last). Chunks are claimed as threads get to them, about four per thread: on a machine
  // shared with other work, a thread the OS has paused holds back one small chunk, not a
  // fixed share of the rows.
  template <class F>
  void parallel_for(int64_t n, int64_t grain, F&& fn) {
    const int64_t units = (n + grain - 1) / grain;
    if (n_threads_ == 1 || units <= 1) {
      if (n > 0) fn(int64_t{0}, n);
      return;
    }
    const int64_t chunk = std::max<int64_t>(1, units / (4 * static_cast<int64_t>(n_threads_)));
    std::atomic<int64_t> next{0};
    run([&](unsigned, unsigned) {
      for (int64_t u; (u = next.fetch_add(chunk, std::memory_order_relaxed)) < units;)
        fn(u * grain, std::min<int64_t>(n, (u + chunk) * grain));
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
