#pragma once
// The Vulkan entry points this backend calls, loaded at run time from libvulkan.so.1 so that
// one p64 binary runs on machines with and without a Vulkan loader (no link-time dependency).
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace p64::vk {

#define P64_VK_GLOBAL_FUNCS(X) \
  X(vkCreateInstance)          \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceVersion)

#define P64_VK_INSTANCE_FUNCS(X)                 \
  X(vkDestroyInstance)                           \
  X(vkEnumeratePhysicalDevices)                  \
  X(vkGetPhysicalDeviceProperties)               \
  X(vkGetPhysicalDeviceProperties2)              \
  X(vkGetPhysicalDeviceFeatures2)                \
  X(vkGetPhysicalDeviceMemoryProperties)         \
  X(vkGetPhysicalDeviceQueueFamilyProperties)    \
  X(vkEnumerateDeviceExtensionProperties)        \
  X(vkCreateDevice)                              \
  X(vkGetDeviceProcAddr)

// Instance entries that may be absent (null): debug utils, VK_NV_cooperative_matrix.
#define P64_VK_DEBUG_FUNCS(X)        \
  X(vkCreateDebugUtilsMessengerEXT)  \
  X(vkDestroyDebugUtilsMessengerEXT) \
  X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)

#define P64_VK_DEVICE_FUNCS(X)        \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkGetBufferMemoryRequirements)    \
  X(vkBindBufferMemory)               \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreatePipelineCache)            \
  X(vkDestroyPipelineCache)           \
  X(vkGetPipelineCacheData)           \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkResetDescriptorPool)            \
  X(vkAllocateDescriptorSets)         \
  X(vkUpdateDescriptorSets)           \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkAllocateCommandBuffers)         \
  X(vkFreeCommandBuffers)             \
  X(vkBeginCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkResetCommandBuffer)             \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdDispatch)                    \
  X(vkCmdPipelineBarrier)             \
  X(vkCmdCopyBuffer)                  \
  X(vkCmdFillBuffer)                  \
  X(vkCmdWriteTimestamp)              \
  X(vkCmdResetQueryPool)              \
  X(vkCreateQueryPool)                \
  X(vkDestroyQueryPool)               \
  X(vkGetQueryPoolResults)            \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkResetFences)                    \
  X(vkWaitForFences)                  \
  X(vkGetFenceStatus)                 \
  X(vkQueueSubmit)                    \
  X(vkQueueWaitIdle)                  \
  X(vkDeviceWaitIdle)

#define P64_VK_DECLARE(name) PFN_##name name = nullptr;

// One process-wide table; instance and device entries are filled when those are created.
struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  P64_VK_GLOBAL_FUNCS(P64_VK_DECLARE)
  P64_VK_INSTANCE_FUNCS(P64_VK_DECLARE)
  P64_VK_DEBUG_FUNCS(P64_VK_DECLARE)
  P64_VK_DEVICE_FUNCS(P64_VK_DECLARE)
};

// Loads libvulkan.so.1 once; returns nullptr and sets *why when there is no loader.
const Api* load_loader(std::string* why);
Api& api();  // the loaded table (load_loader must have succeeded)
void load_instance_funcs(VkInstance instance);
void load_device_funcs(VkDevice device);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* result_name(VkResult r);
// Throws p64::DeviceError "<what>: <result>" unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

}  // namespace p64::vk
