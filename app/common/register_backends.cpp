#include "app/common/register_backends.h"

#include "backends/cpu/cpu_backend.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
#ifdef P64_HAVE_CUDA
void register_cuda_backend();  // backends/cuda
#endif
#ifdef P64_HAVE_VULKAN
void register_vulkan_backend();  // backends/vulkan
#endif

void register_all_backends() {
  static bool done = false;
  if (done) return;
  done = true;
  register_backend(
      {"cpu", 0, [](std::string*) { return true; }, [] { return make_cpu_backend(); }, [] { return cpu_switch_table(); }});
#ifdef P64_HAVE_CUDA
  register_cuda_backend();
#endif
#ifdef P64_HAVE_VULKAN
  register_vulkan_backend();
#endif
}

}  // namespace p64
