#pragma once
// Per-op spans of the Vulkan backend from the device's own clock: a timestamp query pool while
// a model is loaded, the sink set_timeline() gave, and the first timestamp seen as the origin of
// the timeline. Recordings are timed only while a sink is set (no cost otherwise).
#include <cstdint>

#include "backends/vulkan/vk_recorder.h"
#include "engine/runtime/timeline.h"

namespace p64::vulkan {

class OpTimer {
 public:
  OpTimer() = default;
  ~OpTimer() { detach(); }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

  void attach(vk::Context& ctx);  // a query pool, where the compute queue has timestamps
  void detach();                  // the pool destroyed, the origin forgotten
  void set_sink(TimelineSink* sink) {
    sink_ = sink;
    have_origin_ = false;
  }
  bool on() const { return sink_ && queries_; }
  VkQueryPool queries() const { return queries_; }
  // The spans of a timed recording that has run, to the sink.
  void emit(const vk::Recorder& r, bool prefill, int32_t step);

 private:
  vk::Context* ctx_ = nullptr;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  TimelineSink* sink_ = nullptr;
  bool have_origin_ = false;
  uint64_t origin_ticks_ = 0;
};

}  // namespace p64::vulkan
