#pragma once
// Times the ops of a step with CUDA events while a timeline sink is set, and reports each as a
// span once the stream has synchronized. Off, an op is its launch and nothing else (the graph
// capture runs with it off).
#include <cuda_runtime.h>

#include <vector>

#include "backends/cuda/cuda_check.h"
#include "engine/runtime/timeline.h"

namespace p64::cuda {

class OpTimer {
 public:
  OpTimer() = default;
  ~OpTimer() { release(); }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

  // The ops enqueued on `stream` next are timed when `on`. The first timed op records the event
  // every later span's start is measured from.
  void start(cudaStream_t stream, bool on);
  bool on() const { return on_; }

  template <class F>
  void op(const char* name, OpGroup group, int layer, F&& launch) {
    if (on_) {
      ensure_events(ops_.size() + 1);
      if (!base_) record_base();
      P64_CUDA_CHECK(cudaEventRecord(events_[2 * ops_.size()], stream_));
    }
    launch();
    if (on_) {
      P64_CUDA_CHECK(cudaEventRecord(events_[2 * ops_.size() + 1], stream_));
      ops_.push_back({name, group, layer});
    }
  }

  // After the stream synchronized: one span per op timed since start().
  void emit(TimelineSink& sink, bool prefill, int32_t step) const;
  void release() noexcept;

 private:
  void ensure_events(size_t ops);
  void record_base();

  struct TimedOp {
    const char* name;
    OpGroup group;
    int layer;
  };
  bool on_ = false;
  cudaStream_t stream_ = nullptr;
  std::vector<TimedOp> ops_;
  std::vector<cudaEvent_t> events_;
  cudaEvent_t base_ = nullptr;
};

}  // namespace p64::cuda
