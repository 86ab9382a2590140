#include "backends/vulkan/vk_recorder.h"

namespace p64::vk {

Recorder::Recorder(Context& ctx, Pipelines& pipes, VkBuffer dummy, uint32_t sets)
    : ctx_(ctx), pipes_(pipes), dummy_(dummy) {
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, sets * kBindings};
  VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  ci.maxSets = sets;
  ci.poolSizeCount = 1;
  ci.pPoolSizes = &size;
  check(api().vkCreateDescriptorPool(ctx.device, &ci, nullptr, &pool_), "vkCreateDescriptorPool");
}

Recorder::~Recorder() {
  if (pool_) api().vkDestroyDescriptorPool(ctx_.device, pool_, nullptr);
}

void Recorder::reset() {
  check(api().vkResetDescriptorPool(ctx_.device, pool_, 0), "vkResetDescriptorPool");
  spans_.clear();
  queries_used_ = 0;
}

void Recorder::begin(VkCommandBuffer cmd, VkQueryPool queries) {
  cmd_ = cmd;
  queries_ = queries;
  queries_used_ = 0;
  spans_.clear();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(api().vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  if (queries_) {
    api().vkCmdResetQueryPool(cmd, queries_, 0, 1024);
    api().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, queries_used_++);
  }
}

void Recorder::end() { check(api().vkEndCommandBuffer(cmd_), "vkEndCommandBuffer"); }

void Recorder::dispatch_raw(VkPipeline pipe, std::initializer_list<Binding> b, const void* pc, uint32_t pc_bytes,
                            uint32_t gx, uint32_t gy, uint32_t gz) {
  Api& a = api();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = 1;
  VkDescriptorSetLayout layout = pipes_.set_layout();
  ai.pSetLayouts = &layout;
  VkDescriptorSet set;
  check(a.vkAllocateDescriptorSets(ctx_.device, &ai, &set), "vkAllocateDescriptorSets");
  std::array<VkDescriptorBufferInfo, kBindings> infos;
  for (auto& i : infos) i = {dummy_, 0, VK_WHOLE_SIZE};
  for (const Binding& x : b) infos[x.slot] = {x.buf ? x.buf : dummy_, 0, VK_WHOLE_SIZE};
  std::array<VkWriteDescriptorSet, kBindings> w;
  for (uint32_t i = 0; i < kBindings; ++i) {
    w[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[i].dstSet = set;
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[i].pBufferInfo = &infos[i];
  }
  a.vkUpdateDescriptorSets(ctx_.device, kBindings, w.data(), 0, nullptr);
  a.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  a.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipes_.layout(), 0, 1, &set, 0, nullptr);
  uint8_t bytes[kPushBytes] = {};
  std::memcpy(bytes, pc, pc_bytes);
  a.vkCmdPushConstants(cmd_, pipes_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes, bytes);
  a.vkCmdDispatch(cmd_, gx, gy, gz);
}

void Recorder::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  api().vkCmdPipelineBarrier(cmd_, st, st, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Recorder::barrier_to_host() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  api().vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Recorder::copy(VkBuffer src, VkBuffer dst, uint64_t bytes) {
  VkBufferCopy c{0, 0, bytes};
  api().vkCmdCopyBuffer(cmd_, src, dst, 1, &c);
}

void Recorder::fill_zero(VkBuffer dst) { api().vkCmdFillBuffer(cmd_, dst, 0, VK_WHOLE_SIZE, 0); }

void Recorder::mark(const std::string& name, OpGroup group, int32_t layer) {
  if (!queries_ || queries_used_ >= 1024) return;
  api().vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, queries_used_++);
  spans_.push_back({name, group, layer});
}

}  // namespace p64::vk
