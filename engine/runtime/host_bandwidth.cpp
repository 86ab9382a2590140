#include "engine/runtime/host_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/thread_barrier.h"
#include "engine/runtime/host_caches.h"

#ifdef _WIN32
#include <malloc.h>
#else
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace p64 {
namespace {

// Sums 8 independent 64-bit lanes so the loop is bound by loads, not by one add chain.
uint64_t read_stream(const uint64_t* p, size_t n) {
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) a[k] += p[i + static_cast<size_t>(k)];
  for (; i < n; ++i) a[0] += p[i];
  uint64_t s = 0;
  for (uint64_t v : a) s ^= v;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

uint64_t host_last_level_cache_bytes() {
  const uint64_t bytes = host_caches().last_level_bytes();
  return bytes ? bytes : (32ull << 20);
}

MeasuredBandwidth measure_host_bandwidth(uint32_t threads, uint32_t repeats) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  repeats = std::max(1u, repeats);
  uint64_t bytes = std::max<uint64_t>(4 * host_last_level_cache_bytes(), 64ull << 20);
#ifndef _WIN32
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) bytes = std::min<uint64_t>(bytes, static_cast<uint64_t>(pages) * page / 8);
#endif
  bytes -= bytes % (uint64_t{128} * threads);  // whole cache lines per thread and per half
  const size_t words = bytes / sizeof(uint64_t);
  // Huge pages where the kernel gives them on request: faulting in gigabytes of 4 KiB pages
  // took seconds of system time on a VM, longer than the passes themselves.
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t alloc_bytes = (bytes + kHuge - 1) / kHuge * kHuge;
#ifdef _WIN32
  std::unique_ptr<uint64_t, void (*)(void*)> buf(static_cast<uint64_t*>(_aligned_malloc(alloc_bytes, kHuge)),
                                                 _aligned_free);
#else
  std::unique_ptr<uint64_t, void (*)(void*)> buf(static_cast<uint64_t*>(std::aligned_alloc(kHuge, alloc_bytes)),
                                                 std::free);
#endif
  if (!buf) throw DeviceError("host bandwidth: cannot allocate " + std::to_string(bytes >> 20) + " MiB");
#ifdef MADV_HUGEPAGE
  madvise(buf.get(), bytes, MADV_HUGEPAGE);
#endif

  // Workers and the timer meet at a barrier before and after each pass, so the timed
  // interval is the slowest thread's pass; the threads are started once, not per pass.
  enum class Pass { Touch, Read, Copy, Quit };
  Pass pass = Pass::Touch;
  ThreadBarrier sync(threads + 1);
  std::vector<uint64_t> sinks(threads * 8);
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const size_t chunk = words / threads, half_chunk = words / 2 / threads;
      for (;;) {
        sync.arrive_and_wait();
        if (pass == Pass::Quit) return;
        uint64_t* mine = buf.get() + t * chunk;
        if (pass == Pass::Touch) {
          for (size_t i = 0; i < chunk; ++i) mine[i] = i * 0x9E3779B97F4A7C15ull + t;  // first touch by the reader
        } else if (pass == Pass::Read) {
          sinks[t * 8] += read_stream(mine, chunk);
        } else {
          const uint64_t* src = buf.get() + t * half_chunk;
          uint64_t* dst = buf.get() + words / 2 + t * half_chunk;
          std::memcpy(dst, src, half_chunk * sizeof(uint64_t));
        }
        sync.arrive_and_wait();
      }
    });
  }
  auto timed = [&](Pass p) {
    pass = p;
    sync.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    sync.arrive_and_wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  timed(Pass::Touch);
  timed(Pass::Read);  // warm: TLB and prefetchers settle before the timed passes
  std::vector<double> read_gbs, copy_gbs;
  for (uint32_t r = 0; r < repeats; ++r) {
    read_gbs.push_back(static_cast<double>(bytes) / timed(Pass::Read) / 1e9);
    copy_gbs.push_back(static_cast<double>(bytes) / timed(Pass::Copy) / 1e9);  // half read + half written
  }
  pass = Pass::Quit;
  sync.arrive_and_wait();
  for (auto& th : pool) th.join();

  MeasuredBandwidth m;
  m.read_gbs = median(read_gbs);
  m.copy_gbs = median(copy_gbs);
  m.buffer_bytes = bytes;
  m.repeats = repeats;
  // The sum is folded into the result's identity so the read loop cannot be optimised away.
  volatile uint64_t keep = 0;
  for (uint64_t s : sinks) keep = keep ^ s;
  (void)keep;
  return m;
}

}  // namespace p64
