#include <algorithm>
#include <cstdlib>
#include <vector>

#include "backends/vulkan/vulkan_backend_impl.h"
#include "engine/common/error.h"

namespace p64::vulkan {
namespace {

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa";
    default: return "vendor 0x" + [&] { char b[16]; std::snprintf(b, sizeof b, "%x", id); return std::string(b); }();
  }
}

std::string version_str(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

DeviceFacts device_facts(const vk::Context& ctx) {
  DeviceFacts d;
  d.backend = "vulkan";
  d.name = ctx.props.deviceName;
  d.vendor = vendor_name(ctx.props.vendorID);
  d.driver_version = std::string(ctx.driver.driverName) + " " + ctx.driver.driverInfo;
  d.api_version = version_str(ctx.props.apiVersion);
  d.device_type = vk::device_type_name(ctx.props.deviceType);
  d.memory_bytes = ctx.device_local_bytes;
  d.subgroup_size = ctx.subgroup.subgroupSize;
  d.timestamp_period_ns = ctx.props.limits.timestampPeriod;
  return d;
}

// Buffers several times any last-level cache (1 GiB on GPUs; 64 MiB on CPU devices, where
// the figure is host memory and a big buffer only costs time), timed by timestamps.
MeasuredBandwidth measure_bandwidth(vk::Context& ctx, vk::Pipelines& pipes) {
  MeasuredBandwidth mb;
  if (!ctx.timestamp_bits) return mb;
  vk::Api& a = vk::api();
  uint64_t size = ctx.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? (64ull << 20) : (1ull << 30);
  size = std::min<uint64_t>({size, ctx.device_local_bytes / 8, ctx.props.limits.maxStorageBufferRange});
  size = size / 256 * 256;
  vk::Buffer src = ctx.create_buffer(size, false, "bandwidth source");
  vk::Buffer dst = ctx.create_buffer(size, false, "bandwidth destination");
  vk::Buffer sink = ctx.create_buffer(256, false, "bandwidth sink");
  VkQueryPool qp;
  VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = 1024;
  vk::check(a.vkCreateQueryPool(ctx.device, &qi, nullptr, &qp), "vkCreateQueryPool");
  VkCommandBuffer cmd = ctx.allocate_command_buffer();
  const uint32_t reps = 7;
  std::vector<double> read, copy;
  try {
    vk::Recorder r(ctx, pipes, sink.buf, reps + 1);
    r.begin(cmd, qp);
    // Non-zero contents: the copy and read see real data.
    a.vkCmdFillBuffer(cmd, src.buf, 0, VK_WHOLE_SIZE, 0x3C5A9E17u);
    r.barrier();
    r.mark("fill", OpGroup::Other, -1);
    for (uint32_t i = 0; i < reps; ++i) {
      r.copy(src.buf, dst.buf, size);
      r.barrier();
      r.mark("copy", OpGroup::Other, -1);
    }
    VkPipeline p = pipes.get("bw_read", {});
    const uint32_t groups = ctx.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 64 : 8192;
    struct { uint32_t n; } pc{static_cast<uint32_t>(size / 16)};
    for (uint32_t i = 0; i < reps; ++i) {
      r.dispatch(p, {{0, src.buf}, {3, sink.buf}}, pc, groups);
      r.barrier();
      r.mark("read", OpGroup::Other, -1);
    }
    r.end();
    ctx.submit_and_wait(cmd);
    std::vector<uint64_t> t(r.query_count());
    vk::check(a.vkGetQueryPoolResults(ctx.device, qp, 0, r.query_count(), t.size() * 8, t.data(), 8,
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
    const uint64_t mask = ctx.timestamp_bits >= 64 ? ~0ull : ((1ull << ctx.timestamp_bits) - 1);
    for (size_t i = 0; i < r.spans().size(); ++i) {
      const double sec = static_cast<double>((t[i + 1] - t[i]) & mask) * ctx.props.limits.timestampPeriod * 1e-9;
      if (sec <= 0) continue;
      if (r.spans()[i].name == "copy") copy.push_back(2.0 * size / sec / 1e9);
      if (r.spans()[i].name == "read") read.push_back(1.0 * size / sec / 1e9);
    }
  } catch (...) {
    ctx.free_command_buffer(cmd);
    a.vkDestroyQueryPool(ctx.device, qp, nullptr);
    ctx.destroy(src);
    ctx.destroy(dst);
    ctx.destroy(sink);
    throw;
  }
  ctx.free_command_buffer(cmd);
  a.vkDestroyQueryPool(ctx.device, qp, nullptr);
  ctx.destroy(src);
  ctx.destroy(dst);
  ctx.destroy(sink);
  mb.read_gbs = median(read);
  mb.copy_gbs = median(copy);
  mb.buffer_bytes = size;
  mb.repeats = reps;
  return mb;
}

Passport VulkanBackend::passport() {
  if (!ctx_) {
    const char* e = std::getenv("P64_VULKAN_DEVICE");
    ensure_context(e ? e : "");
  }
  if (!passport_) {
    Passport p;
    p.host = collect_host_facts();
    p.build = collect_build_facts();
    p.device = device_facts(*ctx_);
    p.measured = measure_bandwidth(*ctx_, *pipes_);
    passport_ = p;
  }
  return *passport_;
}

}  // namespace p64::vulkan
