#include "backends/cuda/op_timer.h"

namespace p64::cuda {

void OpTimer::start(cudaStream_t stream, bool on) {
  on_ = on;
  stream_ = stream;
  ops_.clear();
}

void OpTimer::record_base() {
  P64_CUDA_CHECK(cudaEventCreate(&base_));
  P64_CUDA_CHECK(cudaEventRecord(base_, stream_));
}

void OpTimer::ensure_events(size_t ops) {
  while (events_.size() < 2 * ops) {
    cudaEvent_t e;
    P64_CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
}

void OpTimer::emit(TimelineSink& sink, bool prefill, int32_t step) const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    float start = 0, dur = 0;
    P64_CUDA_CHECK(cudaEventElapsedTime(&start, base_, events_[2 * i]));
    P64_CUDA_CHECK(cudaEventElapsedTime(&dur, events_[2 * i], events_[2 * i + 1]));
    OpSpan s;
    s.name = ops_[i].name;
    s.group = ops_[i].group;
    s.layer = ops_[i].layer;
    s.prefill = prefill;
    s.step = step;
    s.start_us = double(start) * 1000.0;
    s.dur_us = double(dur) * 1000.0;
    sink.on_span(s);
  }
}

void OpTimer::release() noexcept {
  for (auto e : events_) cudaEventDestroy(e);
  events_.clear();
  if (base_) cudaEventDestroy(base_);
  base_ = nullptr;
  ops_.clear();
  on_ = false;
}

}  // namespace p64::cuda
