#include "backends/vulkan/vk_context.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/common/error.h"

namespace p64::vk {
namespace {

const Api& need_loader() {
  std::string why;
  const Api* a = load_loader(&why);
  if (!a) throw DeviceError(why);
  return *a;
}

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void* user) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  auto* fn = static_cast<std::function<void(const std::string&)>*>(user);
  std::string msg = data && data->pMessage ? data->pMessage : "(no message)";
  if (fn && *fn) (*fn)(msg);
  else std::fprintf(stderr, "p64 vulkan validation: %s\n", msg.c_str());
  return VK_FALSE;
}

int type_preference(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

uint64_t largest_device_local_heap(const VkPhysicalDeviceMemoryProperties& m) {
  uint64_t best = 0;
  for (uint32_t i = 0; i < m.memoryHeapCount; ++i)
    if (m.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) best = std::max<uint64_t>(best, m.memoryHeaps[i].size);
  return best;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A bare instance for listing devices (no layers).
VkInstance make_plain_instance() {
  const Api& a = need_loader();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "p64";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkInstance inst = VK_NULL_HANDLE;
  check(a.vkCreateInstance(&ci, nullptr, &inst), "vkCreateInstance");
  load_instance_funcs(inst);
  return inst;
}

}  // namespace

const char* device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::vector<DeviceSummary> list_devices() {
  VkInstance inst = make_plain_instance();
  Api& a = api();
  uint32_t n = 0;
  a.vkEnumeratePhysicalDevices(inst, &n, nullptr);
  std::vector<VkPhysicalDevice> devs(n);
  if (n) a.vkEnumeratePhysicalDevices(inst, &n, devs.data());
  std::vector<DeviceSummary> out;
  for (uint32_t i = 0; i < n; ++i) {
    VkPhysicalDeviceProperties p;
    a.vkGetPhysicalDeviceProperties(devs[i], &p);
    VkPhysicalDeviceMemoryProperties m;
    a.vkGetPhysicalDeviceMemoryProperties(devs[i], &m);
    out.push_back({i, p.deviceName, p.deviceType, largest_device_local_heap(m)});
  }
  a.vkDestroyInstance(inst, nullptr);
  return out;
}

Context::Context(const InstanceOptions& opts, const std::string& device_spec) : opts_(opts) {
  try {
    create_instance(opts);
    pick_device(device_spec);
    create_device();
    open_pipeline_cache();
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

void Context::release() {
  Api& a = api();
  if (device) {
    a.vkDeviceWaitIdle(device);
    if (cache_) a.vkDestroyPipelineCache(device, cache_, nullptr);
    if (fence_) a.vkDestroyFence(device, fence_, nullptr);
    if (pool_) a.vkDestroyCommandPool(device, pool_, nullptr);
    a.vkDestroyDevice(device, nullptr);
    device = VK_NULL_HANDLE;
  }
  if (messenger_ && a.vkDestroyDebugUtilsMessengerEXT) a.vkDestroyDebugUtilsMessengerEXT(instance, messenger_, nullptr);
  messenger_ = VK_NULL_HANDLE;
  if (instance) a.vkDestroyInstance(instance, nullptr);
  instance = VK_NULL_HANDLE;
}

void Context::create_instance(const InstanceOptions& opts) {
  const Api& a = need_loader();
  uint32_t version = VK_API_VERSION_1_0;
  if (a.vkEnumerateInstanceVersion) a.vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2)
    throw DeviceError("the Vulkan loader supports only API " + std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
                      std::to_string(VK_API_VERSION_MINOR(version)) + "; the Vulkan backend needs 1.2");

  std::vector<const char*> layers, exts;
  bool debug = false;
  if (opts.validation) {
    uint32_t n = 0;
    a.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> lp(n);
    if (n) a.vkEnumerateInstanceLayerProperties(&n, lp.data());
    for (const auto& l : lp)
      if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) layers.push_back("VK_LAYER_KHRONOS_validation");
    uint32_t ne = 0;
    a.vkEnumerateInstanceExtensionProperties(nullptr, &ne, nullptr);
    std::vector<VkExtensionProperties> ep(ne);
    if (ne) a.vkEnumerateInstanceExtensionProperties(nullptr, &ne, ep.data());
    for (const auto& e : ep)
      if (std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0) debug = true;
    if (debug) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "p64";
  app.pEngineName = "p64lab";
  app.apiVersion = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dci.pfnUserCallback = debug_callback;
  dci.pUserData = &opts_.on_message;

  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  if (debug) ci.pNext = &dci;  // also reports problems of instance creation itself
  check(a.vkCreateInstance(&ci, nullptr, &instance), "vkCreateInstance");
  load_instance_funcs(instance);
  if (debug && api().vkCreateDebugUtilsMessengerEXT)
    check(api().vkCreateDebugUtilsMessengerEXT(instance, &dci, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
}

void Context::pick_device(const std::string& spec) {
  Api& a = api();
  uint32_t n = 0;
  check(a.vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  if (n == 0) throw DeviceError("Vulkan: the loader found no device (no Vulkan driver installed?)");
  std::vector<VkPhysicalDevice> devs(n);
  check(a.vkEnumeratePhysicalDevices(instance, &n, devs.data()), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDeviceProperties> all(n);
  std::string names;
  for (uint32_t i = 0; i < n; ++i) {
    a.vkGetPhysicalDeviceProperties(devs[i], &all[i]);
    names += (i ? ", " : "") + std::to_string(i) + ": " + all[i].deviceName + " (" +
             device_type_name(all[i].deviceType) + ")";
  }
  int chosen = -1;
  if (spec.empty()) {
    for (uint32_t i = 0; i < n; ++i)
      if (all[i].apiVersion >= VK_API_VERSION_1_2 &&
          (chosen < 0 || type_preference(all[i].deviceType) > type_preference(all[chosen].deviceType)))
        chosen = static_cast<int>(i);
    if (chosen < 0) throw DeviceError("Vulkan: no device supports Vulkan 1.2 (devices: " + names + ")");
  } else if (std::all_of(spec.begin(), spec.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    uint32_t idx = static_cast<uint32_t>(std::stoul(spec));
    if (idx >= n) throw DeviceError("Vulkan: no device with index " + spec + " (devices: " + names + ")");
    chosen = static_cast<int>(idx);
  } else {
    for (uint32_t i = 0; i < n && chosen < 0; ++i)
      if (lower(all[i].deviceName).find(lower(spec)) != std::string::npos) chosen = static_cast<int>(i);
    if (chosen < 0) throw DeviceError("Vulkan: no device name contains '" + spec + "' (devices: " + names + ")");
  }
  device_index = static_cast<uint32_t>(chosen);
  phys = devs[chosen];
  props = all[chosen];
  if (props.apiVersion < VK_API_VERSION_1_2)
    throw DeviceError(std::string("Vulkan: device '") + props.deviceName + "' supports only Vulkan " +
                      std::to_string(VK_API_VERSION_MAJOR(props.apiVersion)) + "." +
                      std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) + "; 1.2 is needed");

  subgroup = VkPhysicalDeviceSubgroupProperties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  driver = VkPhysicalDeviceDriverProperties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  ids = VkPhysicalDeviceIDProperties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties sizes{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  subgroup.pNext = &driver;
  driver.pNext = &ids;
  const bool v13 = props.apiVersion >= VK_API_VERSION_1_3;
  if (v13) ids.pNext = &sizes;
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &subgroup;
  a.vkGetPhysicalDeviceProperties2(phys, &p2);
  min_subgroup = v13 ? sizes.minSubgroupSize : subgroup.subgroupSize;
  max_subgroup = v13 ? sizes.maxSubgroupSize : subgroup.subgroupSize;
  subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                        (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                        (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  a.vkGetPhysicalDeviceMemoryProperties(phys, &memory);
  device_local_bytes = largest_device_local_heap(memory);

  uint32_t ne = 0;
  a.vkEnumerateDeviceExtensionProperties(phys, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> ep(ne);
  if (ne) a.vkEnumerateDeviceExtensionProperties(phys, nullptr, &ne, ep.data());
  bool nv_ext = false;
  for (const auto& e : ep) {
    if (std::strcmp(e.extensionName, "VK_KHR_cooperative_matrix") == 0) cooperative_matrix = true;
    if (std::strcmp(e.extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0) nv_ext = true;
  }
  nv_coopmat_why = "the extension is not offered";
  if (nv_ext && a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) {
    uint32_t nc = 0;
    a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(phys, &nc, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> cp(nc, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    if (nc) a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(phys, &nc, cp.data());
    bool shape = false;
    for (const auto& c : cp)
      shape |= c.MSize == 16 && c.NSize == 16 && c.KSize == 16 && c.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
               c.BType == VK_COMPONENT_TYPE_FLOAT16_NV && c.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
               c.DType == VK_COMPONENT_TYPE_FLOAT32_NV && c.scope == VK_SCOPE_SUBGROUP_NV;
    nv_coopmat_why = !shape ? "it lists no 16x16x16 f16 x f16 -> f32 subgroup shape"
                     : min_subgroup != 32 || max_subgroup != 32 ? "subgroups are not 32 invocations"
                                                                 : "";
    nv_coopmat = nv_coopmat_why.empty();
  }
}

void Context::create_device() {
  Api& a = api();
  uint32_t nq = 0;
  a.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  a.vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf.data());
  int family = -1;
  for (uint32_t i = 0; i < nq; ++i)  // prefer a family that also keeps timestamps
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && (family < 0 || (qf[i].timestampValidBits && !qf[family].timestampValidBits)))
      family = static_cast<int>(i);
  if (family < 0) throw DeviceError(std::string("Vulkan: device '") + props.deviceName + "' has no compute queue");
  queue_family = static_cast<uint32_t>(family);
  timestamp_bits = qf[family].timestampValidBits;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  const bool v13 = props.apiVersion >= VK_API_VERSION_1_3;
  f2.pNext = &f12;
  if (v13) f12.pNext = &f13;
  a.vkGetPhysicalDeviceFeatures2(phys, &f2);
  VkPhysicalDeviceVulkan13Features want13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  full_subgroups = v13 && f13.subgroupSizeControl && f13.computeFullSubgroups;
  want13.subgroupSizeControl = full_subgroups ? VK_TRUE : VK_FALSE;
  want13.computeFullSubgroups = full_subgroups ? VK_TRUE : VK_FALSE;
  // f16 arithmetic for the prefill GEMM's f16 variant (prefill_f16).
  VkPhysicalDeviceVulkan12Features want12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  float16 = f12.shaderFloat16 == VK_TRUE;
  want12.shaderFloat16 = f12.shaderFloat16;
  if (v13) want12.pNext = &want13;
  // The prefill GEMM's cooperative-matrix variant (prefill_coopmat).
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  std::vector<const char*> exts;
  if (nv_coopmat) {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceFeatures2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    q2.pNext = &have;
    a.vkGetPhysicalDeviceFeatures2(phys, &q2);
    if (!have.cooperativeMatrix) nv_coopmat_why = "its cooperativeMatrix feature is off";
    else if (!f12.vulkanMemoryModel || !float16) nv_coopmat_why = "vulkanMemoryModel or shaderFloat16 is missing";
    nv_coopmat = nv_coopmat_why.empty();
  }
  if (nv_coopmat) {
    exts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    nvcm.cooperativeMatrix = VK_TRUE;
    nvcm.pNext = want12.pNext;
    want12.pNext = &nvcm;
    want12.vulkanMemoryModel = VK_TRUE;
  }

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &want12;
  dci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  check(a.vkCreateDevice(phys, &dci, nullptr, &device), "vkCreateDevice");
  load_device_funcs(device);
  a.vkGetDeviceQueue(device, queue_family, 0, &queue);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family;
  check(a.vkCreateCommandPool(device, &pci, nullptr, &pool_), "vkCreateCommandPool");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(a.vkCreateFence(device, &fci, nullptr, &fence_), "vkCreateFence");
}

std::string Context::uuid_hex() const {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : props.pipelineCacheUUID) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

void Context::open_pipeline_cache() {
  std::filesystem::path dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = x;
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::filesystem::path(h) / ".cache";
  if (!dir.empty()) cache_path_ = (dir / "p64lab" / ("vulkan-pipelines-" + uuid_hex() + ".bin")).string();
  std::vector<char> data;
  if (!cache_path_.empty()) {
    std::ifstream f(cache_path_, std::ios::binary);
    if (f) data.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  // The driver checks the header (vendor, device, cache UUID) and ignores stale data.
  if (api().vkCreatePipelineCache(device, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(api().vkCreatePipelineCache(device, &ci, nullptr, &cache_), "vkCreatePipelineCache");
    data.clear();
  }
  cache_warm_ = !data.empty();
}

void Context::save_pipeline_cache() {
  if (cache_path_.empty() || !cache_) return;
  size_t size = 0;
  if (api().vkGetPipelineCacheData(device, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (api().vkGetPipelineCacheData(device, cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache_path_).parent_path(), ec);
  const std::string tmp = cache_path_ + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;  // a cache that cannot be written only costs the next start its warmth
    f.write(data.data(), static_cast<std::streamsize>(size));
  }
  std::filesystem::rename(tmp, cache_path_, ec);
}

uint32_t Context::find_memory_type(uint32_t bits, bool host_visible) const {
  const VkMemoryPropertyFlags need = host_visible
                                         ? (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
                                         : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = memory.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    // Weights want plain VRAM (not the small host-visible BAR window); staging wants host RAM.
    int score = host_visible ? ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 1 : 2)
                             : ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? 1 : 2);
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  if (best < 0) {
    if (!host_visible) return find_memory_type(bits, true);  // e.g. CPU devices: all memory is host memory
    throw DeviceError("Vulkan: no suitable memory type");
  }
  return static_cast<uint32_t>(best);
}

Buffer Context::create_buffer(uint64_t size, bool host_visible, const std::string& what) {
  Api& a = api();
  Buffer b;
  b.size = std::max<uint64_t>(size, 16);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = b.size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(a.vkCreateBuffer(device, &bci, nullptr, &b.buf), ("vkCreateBuffer for " + what).c_str());
  VkMemoryRequirements req;
  a.vkGetBufferMemoryRequirements(device, b.buf, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = find_memory_type(req.memoryTypeBits, host_visible);
  VkResult r = a.vkAllocateMemory(device, &ai, nullptr, &b.mem);
  if (r != VK_SUCCESS) {
    a.vkDestroyBuffer(device, b.buf, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw DeviceError("Vulkan: out of " + std::string(host_visible ? "host-visible" : "device") + " memory allocating " +
                        std::to_string(req.size >> 20) + " MiB for " + what + " (" + std::to_string(allocated_ >> 20) +
                        " MiB already allocated, largest device-local heap " +
                        std::to_string(device_local_bytes >> 20) + " MiB)");
    check(r, ("vkAllocateMemory for " + what).c_str());
  }
  check(a.vkBindBufferMemory(device, b.buf, b.mem, 0), "vkBindBufferMemory");
  if (host_visible) check(a.vkMapMemory(device, b.mem, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  allocated_ += req.size;
  peak_ = std::max(peak_, allocated_);
  return b;
}

void Context::destroy(Buffer& b) {
  Api& a = api();
  if (b.buf) a.vkDestroyBuffer(device, b.buf, nullptr);
  if (b.mem) {
    if (b.mapped) a.vkUnmapMemory(device, b.mem);
    a.vkFreeMemory(device, b.mem, nullptr);
    allocated_ -= std::min<uint64_t>(allocated_, b.size);
  }
  b = Buffer{};
}

VkCommandBuffer Context::allocate_command_buffer() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(api().vkAllocateCommandBuffers(device, &ai, &cmd), "vkAllocateCommandBuffers");
  return cmd;
}

void Context::free_command_buffer(VkCommandBuffer cmd) {
  if (cmd) api().vkFreeCommandBuffers(device, pool_, 1, &cmd);
}

void Context::submit_and_wait(VkCommandBuffer cmd, bool poll) {
  Api& a = api();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(a.vkResetFences(device, 1, &fence_), "vkResetFences");
  check(a.vkQueueSubmit(queue, 1, &si, fence_), "vkQueueSubmit");
  if (poll) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < until) {
      const VkResult r = a.vkGetFenceStatus(device, fence_);
      if (r == VK_SUCCESS) return;
      if (r != VK_NOT_READY) check(r, "vkGetFenceStatus");
    }
  }
  check(a.vkWaitForFences(device, 1, &fence_, VK_TRUE, 60ull * 1000 * 1000 * 1000), "vkWaitForFences");
}

}  // namespace p64::vk
