#pragma once
// One Vulkan instance + logical device + compute queue, with the buffer, submit and pipeline
// cache helpers every part of the backend uses.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/vulkan/vk_api.h"

namespace p64::vk {

// How the instance is created. Tests turn validation on and fail on any message.
struct InstanceOptions {
  bool validation = false;  // VK_LAYER_KHRONOS_validation (when installed) + debug messenger
  // Called for every validation warning or error (severity >= warning).
  std::function<void(const std::string& message)> on_message;
};

struct DeviceSummary {
  uint32_t index = 0;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint64_t device_local_bytes = 0;
};

// Lists the Vulkan devices present. Throws p64::DeviceError when there is no loader or the
// instance cannot be created.
std::vector<DeviceSummary> list_devices();
const char* device_type_name(VkPhysicalDeviceType t);  // "discrete-gpu", "cpu", ...

struct Buffer {
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  uint64_t size = 0;
  void* mapped = nullptr;  // host-visible buffers stay mapped
};

class Context {
 public:
  // `device_spec`: empty = best device (discrete > integrated > virtual > cpu), digits = index
  // in enumeration order, otherwise a case-insensitive substring of the device name.
  Context(const InstanceOptions& opts, const std::string& device_spec);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t device_index = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceIDProperties ids{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t min_subgroup = 0, max_subgroup = 0;
  bool subgroup_arithmetic = false;  // compute stage has subgroup add/max
  bool full_subgroups = false;       // computeFullSubgroups + subgroupSizeControl enabled
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix advertised (not used yet)
  bool float16 = false;              // shaderFloat16, enabled on the device when present
  // VK_NV_cooperative_matrix with 16x16x16 f16 x f16 -> f32 subgroup matrices, subgroups of 32
  // and the Vulkan memory model (its shaders declare it): all enabled when present.
  bool nv_coopmat = false;
  std::string nv_coopmat_why;        // why nv_coopmat is false
  uint32_t timestamp_bits = 0;       // of the compute queue; 0 = no timestamps
  uint64_t device_local_bytes = 0;   // largest device-local heap

  // Buffers are storage + transfer src/dst. host_visible = mapped, coherent (staging, step
  // parameters, readback); otherwise device-local. Throws DeviceError naming `what`.
  Buffer create_buffer(uint64_t size, bool host_visible, const std::string& what);
  void destroy(Buffer& b);
  uint64_t allocated_bytes() const { return allocated_; }
  uint64_t peak_bytes() const { return peak_; }

  // A primary command buffer from the context's pool, and a blocking submit of it.
  VkCommandBuffer allocate_command_buffer();
  void free_command_buffer(VkCommandBuffer cmd);
  void submit_and_wait(VkCommandBuffer cmd, bool poll = false);  // poll: spin on the fence for up to 20 ms first

  // The on-disk pipeline cache ($XDG_CACHE_HOME/p64lab/vulkan-pipelines-<uuid>.bin).
  VkPipelineCache pipeline_cache() const { return cache_; }
  const std::string& pipeline_cache_path() const { return cache_path_; }
  bool pipeline_cache_was_warm() const { return cache_warm_; }
  void save_pipeline_cache();

  std::string uuid_hex() const;
  int validation_messages() const { return validation_messages_; }

 private:
  void release();
  void create_instance(const InstanceOptions& opts);
  void pick_device(const std::string& spec);
  void create_device();
  void open_pipeline_cache();
  uint32_t find_memory_type(uint32_t bits, bool host_visible) const;

  InstanceOptions opts_;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  bool cache_warm_ = false;
  uint64_t allocated_ = 0, peak_ = 0;
  int validation_messages_ = 0;
};

}  // namespace p64::vk
