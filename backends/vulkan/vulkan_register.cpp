#include <algorithm>

#include "backends/vulkan/vk_context.h"
#include "backends/vulkan/vulkan_backend.h"
#include "engine/common/error.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace vulkan {

bool probe_rank(int* rank, std::string* why) {
  std::vector<vk::DeviceSummary> devs;
  try {
    devs = vk::list_devices();
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
  if (devs.empty()) {
    if (why) *why = "the Vulkan loader found no device";
    return false;
  }
  int best = -1000;
  for (const auto& d : devs) {
    int r = -10;
    switch (d.type) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: r = 20; break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: r = 10; break;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: r = 5; break;
      default: r = -10; break;  // CPU devices (lavapipe): below the CPU backend
    }
    best = std::max(best, r);
  }
  if (rank) *rank = best;
  return true;
}

}  // namespace vulkan

void register_vulkan_backend() {
  int rank = -10;
  std::string why;
  const bool ok = vulkan::probe_rank(&rank, &why);
  register_backend({"vulkan", ok ? rank : -10,
                    [ok, why](std::string* out) {
                      if (!ok && out) *out = why;
                      return ok;
                    },
                    [] { return vulkan::make_backend(); }, [] { return vulkan::switch_table(); }});
}

}  // namespace p64
