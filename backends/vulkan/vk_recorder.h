#pragma once
// Records dispatches into one command buffer: a descriptor set per dispatch (from the
// recorder's pool), push constants, global compute barriers, and optional timestamp spans.
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vulkan/vk_pipelines.h"
#include "engine/runtime/timeline.h"

namespace p64::vk {

struct Binding {
  uint32_t slot;
  VkBuffer buf;
};

struct SpanMeta {
  std::string name;
  OpGroup group;
  int32_t layer;
};

class Recorder {
 public:
  // `sets`: the most dispatches this recorder will see; `query_pool` may be null (no timing).
  Recorder(Context& ctx, Pipelines& pipes, VkBuffer dummy, uint32_t sets);
  ~Recorder();

  void begin(VkCommandBuffer cmd, VkQueryPool queries);
  void end();
  // Frees all descriptor sets so the recorder can record again.
  void reset();

  template <typename PC>
  void dispatch(VkPipeline pipe, std::initializer_list<Binding> b, const PC& pc, uint32_t gx, uint32_t gy = 1,
                uint32_t gz = 1) {
    static_assert(sizeof(PC) <= kPushBytes);
    dispatch_raw(pipe, b, &pc, sizeof(PC), gx, gy, gz);
  }
  void dispatch_raw(VkPipeline pipe, std::initializer_list<Binding> b, const void* pc, uint32_t pc_bytes, uint32_t gx,
                    uint32_t gy, uint32_t gz = 1);
  void barrier();               // compute/transfer writes -> compute/transfer reads and writes
  void barrier_to_host();       // device writes -> host reads after the fence
  void copy(VkBuffer src, VkBuffer dst, uint64_t bytes);
  void fill_zero(VkBuffer dst);

  // Timing: mark() after an op's dispatches closes the span opened by the previous mark().
  void mark(const std::string& name, OpGroup group, int32_t layer);
  const std::vector<SpanMeta>& spans() const { return spans_; }
  uint32_t query_count() const { return queries_used_; }
  bool timing() const { return queries_ != VK_NULL_HANDLE; }

 private:
  Context& ctx_;
  Pipelines& pipes_;
  VkBuffer dummy_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t queries_used_ = 0;
  std::vector<SpanMeta> spans_;
};

}  // namespace p64::vk
