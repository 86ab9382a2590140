#pragma once
// Compute pipelines built from the SPIR-V embedded at build time (glslc, see CMakeLists.txt),
// one per (shader variant, specialization constants), all sharing one descriptor-set layout
// of kBindings storage buffers and one push-constant range.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/vulkan/vk_context.h"

namespace p64::vk {

constexpr uint32_t kBindings = 8;
constexpr uint32_t kPushBytes = 64;

struct SpirvModule {
  const char* name;  // e.g. "mv_q4_k_sg", "attn"
  const uint32_t* words;
  size_t word_count;
};
const SpirvModule* find_spirv(std::string_view name);  // generated file
const std::vector<SpirvModule>& all_spirv();

class Pipelines {
 public:
  explicit Pipelines(Context& ctx);
  ~Pipelines();

  // Specialization constants as (constant_id, value) pairs. `full_subgroups` asks the driver
  // for whole subgroups (the GEMV's row reduction assumes them).
  VkPipeline get(const std::string& shader, const std::vector<std::pair<uint32_t, uint32_t>>& spec,
                 bool full_subgroups = false);
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  size_t created() const { return pipelines_.size(); }
  double create_ms() const { return create_ms_; }  // wall time spent creating pipelines

 private:
  Context& ctx_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<std::string, VkShaderModule> modules_;
  std::map<std::string, VkPipeline> pipelines_;
  double create_ms_ = 0;
};

}  // namespace p64::vk
