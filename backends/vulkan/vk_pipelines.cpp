#include "backends/vulkan/vk_pipelines.h"

#include <chrono>

#include "engine/common/error.h"

namespace p64::vk {

Pipelines::Pipelines(Context& ctx) : ctx_(ctx) {
  Api& a = api();
  VkDescriptorSetLayoutBinding b[kBindings];
  for (uint32_t i = 0; i < kBindings; ++i)
    b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dci.bindingCount = kBindings;
  dci.pBindings = b;
  check(a.vkCreateDescriptorSetLayout(ctx.device, &dci, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = 1;
  lci.pSetLayouts = &set_layout_;
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &pcr;
  check(a.vkCreatePipelineLayout(ctx.device, &lci, nullptr, &layout_), "vkCreatePipelineLayout");
}

Pipelines::~Pipelines() {
  Api& a = api();
  for (auto& [k, p] : pipelines_) a.vkDestroyPipeline(ctx_.device, p, nullptr);
  for (auto& [k, m] : modules_) a.vkDestroyShaderModule(ctx_.device, m, nullptr);
  if (layout_) a.vkDestroyPipelineLayout(ctx_.device, layout_, nullptr);
  if (set_layout_) a.vkDestroyDescriptorSetLayout(ctx_.device, set_layout_, nullptr);
}

VkPipeline Pipelines::get(const std::string& shader, const std::vector<std::pair<uint32_t, uint32_t>>& spec,
                          bool full_subgroups) {
  std::string key = shader;
  for (auto [id, v] : spec) key += ":" + std::to_string(id) + "=" + std::to_string(v);
  if (full_subgroups) key += ":full";
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;

  auto t0 = std::chrono::steady_clock::now();
  Api& a = api();
  VkShaderModule mod;
  if (auto it = modules_.find(shader); it != modules_.end()) {
    mod = it->second;
  } else {
    const SpirvModule* m = find_spirv(shader);
    if (!m) throw Error("Vulkan backend: no embedded shader '" + shader + "' (build bug)");
    VkShaderModuleCreateInfo sci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sci.codeSize = m->word_count * 4;
    sci.pCode = m->words;
    check(a.vkCreateShaderModule(ctx_.device, &sci, nullptr, &mod), ("vkCreateShaderModule " + shader).c_str());
    modules_[shader] = mod;
  }
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> data;
  for (auto [id, v] : spec) {
    entries.push_back({id, static_cast<uint32_t>(data.size() * 4), 4});
    data.push_back(v);
  }
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), data.size() * 4, data.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = mod;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  if (full_subgroups && ctx_.full_subgroups) ci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  ci.layout = layout_;
  VkPipeline p;
  check(a.vkCreateComputePipelines(ctx_.device, ctx_.pipeline_cache(), 1, &ci, nullptr, &p),
        ("vkCreateComputePipelines " + key).c_str());
  pipelines_[key] = p;
  create_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace p64::vk
