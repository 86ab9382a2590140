#include "engine/runtime/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define P64_CPU_RELAX() _mm_pause()
#else
#define P64_CPU_RELAX() std::this_thread::yield()
#endif

namespace p64 {
namespace {
// About 50-100 us of spinning before a worker sleeps: longer than the gap between the
// regions of one step, short enough not to burn a shared core between steps.
constexpr int kSpins = 20000;
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  n_threads_ = threads;
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::dispatch(Thunk thunk, void* ctx) {
  thunk_ = thunk;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  // seq_cst pairs with the worker's sleepers_ increment: either we see it asleep and wake it,
  // or it sees the new generation before it sleeps.
  generation_.fetch_add(1);
  if (sleepers_.load() != 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  thunk(ctx, 0, n_threads_);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpins) {
      P64_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker(unsigned index) {
  uint32_t seen = generation_.load(std::memory_order_acquire);
  for (;;) {
    uint32_t g;
    int spin = 0;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spin < kSpins) {
        P64_CPU_RELAX();
      } else {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    thunk_(ctx_, index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace p64
