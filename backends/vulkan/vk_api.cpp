#include "backends/vulkan/vk_api.h"

#include <dlfcn.h>

#include <mutex>

#include "engine/common/error.h"

namespace p64::vk {
namespace {

Api g_api;
void* g_lib = nullptr;
std::string g_why;

}  // namespace

const Api* load_loader(std::string* why) {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"libvulkan.so.1", "libvulkan.so"}) {
      g_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (g_lib) break;
    }
    if (!g_lib) {
      const char* e = dlerror();
      g_why = std::string("no Vulkan loader (libvulkan.so.1 could not be opened: ") + (e ? e : "?") +
              "); install libvulkan1 and a Vulkan driver";
      return;
    }
    g_api.vkGetInstanceProcAddr =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(g_lib, "vkGetInstanceProcAddr"));
    if (!g_api.vkGetInstanceProcAddr) {
      g_why = "libvulkan.so.1 has no vkGetInstanceProcAddr";
      g_lib = nullptr;
      return;
    }
#define P64_VK_LOAD_GLOBAL(name) \
  g_api.name = reinterpret_cast<PFN_##name>(g_api.vkGetInstanceProcAddr(nullptr, #name));
    P64_VK_GLOBAL_FUNCS(P64_VK_LOAD_GLOBAL)
#undef P64_VK_LOAD_GLOBAL
    if (!g_api.vkCreateInstance) {
      g_why = "the Vulkan loader exports no vkCreateInstance";
      g_lib = nullptr;
    }
  });
  if (!g_lib) {
    if (why) *why = g_why;
    return nullptr;
  }
  return &g_api;
}

Api& api() { return g_api; }

void load_instance_funcs(VkInstance instance) {
#define P64_VK_LOAD_INSTANCE(name) \
  g_api.name = reinterpret_cast<PFN_##name>(g_api.vkGetInstanceProcAddr(instance, #name));
  P64_VK_INSTANCE_FUNCS(P64_VK_LOAD_INSTANCE)
  P64_VK_DEBUG_FUNCS(P64_VK_LOAD_INSTANCE)
#undef P64_VK_LOAD_INSTANCE
}

void load_device_funcs(VkDevice device) {
#define P64_VK_LOAD_DEVICE(name) \
  g_api.name = reinterpret_cast<PFN_##name>(g_api.vkGetDeviceProcAddr(device, #name));
  P64_VK_DEVICE_FUNCS(P64_VK_LOAD_DEVICE)
#undef P64_VK_LOAD_DEVICE
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult error";
  }
}

void check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  std::string msg = std::string("Vulkan: ") + what + " failed: " + result_name(r) + " (" +
                    std::to_string(static_cast<int>(r)) + ")";
  if (r == VK_ERROR_DEVICE_LOST) msg += "; the device was lost (driver reset or hang), reload the model";
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY) msg += "; the device has too little free memory";
  throw DeviceError(msg);
}

}  // namespace p64::vk
