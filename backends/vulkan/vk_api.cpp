#include "backends/vulkan/vk_api.h"

#include <mutex>

#include "engine/common/error.h"
#include "engine/common/platform.h"

namespace p64::vk {
namespace {

Api g_api;
// Never closed: drivers keep threads and atexit hooks inside the loader's image until exit.
platform::DynamicLibrary* g_lib = nullptr;
std::string g_why;

#ifdef _WIN32
constexpr const char* kLoaderName = "vulkan-1.dll";
#else
constexpr const char* kLoaderName = "libvulkan.so.1";
#endif

// The loader unloads a driver when its last instance is destroyed, and NVIDIA's driver takes
// static TLS each time it is loaded again, which glibc never gives back: after about ten
// backends in one process (a test binary, an A/B session in the GUI) vkCreateInstance fails
// with VK_ERROR_INCOMPATIBLE_DRIVER. One instance that is never destroyed keeps every driver
// loaded for the life of the process.
void pin_drivers() {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  VkInstance pin = VK_NULL_HANDLE;
  (void)g_api.vkCreateInstance(&ci, nullptr, &pin);  // no driver: nothing to keep loaded
}

}  // namespace

const Api* load_loader(std::string* why) {
  static std::once_flag once;
  std::call_once(once, [] {
    auto* lib = new platform::DynamicLibrary();
#ifdef _WIN32
    const bool opened = lib->open({"vulkan-1.dll"});
#else
    const bool opened = lib->open({"libvulkan.so.1", "libvulkan.so"});
#endif
    if (!opened) {
      g_why = std::string("no Vulkan loader (") + kLoaderName + " could not be opened: " + lib->error() +
              "); install libvulkan1 and a Vulkan driver";
      delete lib;
      return;
    }
    g_lib = lib;
    g_api.vkGetInstanceProcAddr =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(g_lib->symbol("vkGetInstanceProcAddr"));
    if (!g_api.vkGetInstanceProcAddr) {
      g_why = std::string(kLoaderName) + " has no vkGetInstanceProcAddr";
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
      return;
    }
    pin_drivers();
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
