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
// Spins before a worker sleeps (or the caller yields): longer than the gap between the
// regions of one step, short enough not to burn a core that other work is waiting for
// (one pause is 10-140 cycles depending on the CPU).
constexpr int kSpins = 4000;
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  n_threads_ = threads;
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  // A new generation with no slot left to claim: the workers wake, see stop_ and return.
  work_.store((((work_.load() >> 32) + 1) << 32) | n_threads_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_slots(uint64_t generation) {
  for (;;) {
    uint64_t w = work_.load(std::memory_order_acquire);
    if ((w >> 32) != generation || (w & 0xFFFFFFFFu) >= n_threads_) return;
    if (!work_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel)) continue;
    // A successful claim means this region is still current: its thunk and context stay put
    // until every slot, this one included, has returned.
    thunk_(ctx_, static_cast<unsigned>(w & 0xFFFFFFFFu), n_threads_);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::dispatch(Thunk thunk, void* ctx) {
  thunk_ = thunk;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  const uint64_t generation = (work_.load(std::memory_order_relaxed) >> 32) + 1;
  // seq_cst pairs with the worker's sleepers_ increment: either we see it asleep and wake it,
  // or it sees the new generation before it sleeps.
  work_.store(generation << 32);
  if (sleepers_.load() != 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  run_slots(generation);
  // Only slots a worker claimed and has not finished are left to wait for.
  for (int spin = 0; done_.load(std::memory_order_acquire) != n_threads_; ++spin) {
    if (spin < kSpins) {
      P64_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::worker() {
  // Generation 0 is the pool's state before any region; starting from it (not from the
  // counter's value when this thread first runs) means a region dispatched before the thread
  // was scheduled is still seen as new.
  uint64_t seen = 0;
  for (;;) {
    uint64_t g;
    int spin = 0;
    while ((g = work_.load(std::memory_order_acquire) >> 32) == seen) {
      if (++spin < kSpins) {
        P64_CPU_RELAX();
      } else {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return (work_.load() >> 32) != seen; });
        sleepers_.fetch_sub(1);
      }
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    run_slots(g);
  }
}

}  // namespace p64
