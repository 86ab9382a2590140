#pragma once
// Calls a probe on its own thread from construction until stop(), every `every` (at least once),
// and keeps what it returns: the loop under the machine's and the GPU's watches.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace p64 {

template <class Sample>
class PeriodicSampler {
 public:
  PeriodicSampler(std::function<Sample()> probe, std::chrono::milliseconds every)
      : thread_([this, probe = std::move(probe), every] { loop(probe, every); }) {}
  ~PeriodicSampler() { stop(); }
  PeriodicSampler(const PeriodicSampler&) = delete;
  PeriodicSampler& operator=(const PeriodicSampler&) = delete;

  // Joins the thread and hands over the samples; later calls return none.
  std::vector<Sample> stop() {
    if (!thread_.joinable()) return {};
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    return std::move(samples_);
  }

 private:
  void loop(const std::function<Sample()>& probe, std::chrono::milliseconds every) {
    std::unique_lock lock(mu_);
    do {
      lock.unlock();
      Sample s = probe();
      lock.lock();
      samples_.push_back(std::move(s));
    } while (!wake_.wait_for(lock, every, [this] { return stopping_; }));
  }

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<Sample> samples_;
  std::thread thread_;  // last: it starts once everything it touches exists
};

}  // namespace p64
