#include "backends/vulkan/vk_op_timer.h"

#include <vector>

namespace p64::vulkan {
namespace {
constexpr uint32_t kQueries = 1024;
}  // namespace

void OpTimer::attach(vk::Context& ctx) {
  detach();
  ctx_ = &ctx;
  if (!ctx.timestamp_bits) return;
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = kQueries;
  vk::check(vk::api().vkCreateQueryPool(ctx.device, &qi, nullptr, &queries_), "vkCreateQueryPool");
}

void OpTimer::detach() {
  if (queries_) vk::api().vkDestroyQueryPool(ctx_->device, queries_, nullptr);
  queries_ = VK_NULL_HANDLE;
  ctx_ = nullptr;
  have_origin_ = false;
}

void OpTimer::emit(const vk::Recorder& r, bool prefill, int32_t step) {
  if (!sink_ || !r.timing() || r.query_count() < 2) return;
  std::vector<uint64_t> t(r.query_count());
  vk::check(vk::api().vkGetQueryPoolResults(ctx_->device, queries_, 0, r.query_count(), t.size() * 8, t.data(), 8,
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
  const uint64_t mask = ctx_->timestamp_bits >= 64 ? ~0ull : ((1ull << ctx_->timestamp_bits) - 1);
  const double ns = ctx_->props.limits.timestampPeriod;
  if (!have_origin_) {
    origin_ticks_ = t[0] & mask;
    have_origin_ = true;
  }
  auto us = [&](uint64_t ticks) { return static_cast<double>(static_cast<int64_t>((ticks & mask) - origin_ticks_)) * ns / 1000.0; };
  for (size_t i = 0; i < r.spans().size(); ++i) {
    const vk::SpanMeta& m = r.spans()[i];
    OpSpan s;
    s.name = m.name;
    s.group = m.group;
    s.layer = m.layer;
    s.prefill = prefill;
    s.step = step;
    s.start_us = us(t[i]);
    s.dur_us = static_cast<double>((t[i + 1] - t[i]) & mask) * ns / 1000.0;
    sink_->on_span(s);
  }
}

}  // namespace p64::vulkan
