#pragma once
// The Vulkan backend: native Vulkan 1.2/1.3 compute over the Backend seam.
#include <functional>
#include <memory>
#include <string>

#include "engine/runtime/backend.h"

namespace p64 {

// Registers "vulkan" with the backend registry; rank rule in vulkan_rank().
void register_vulkan_backend();

namespace vulkan {

struct InstanceSettings {
  // Enables VK_LAYER_KHRONOS_validation (when installed) with a debug messenger; every
  // warning or error goes to on_message (stderr when unset). The environment variable
  // P64_VULKAN_VALIDATION=1 turns it on for backends made by the registry.
  bool validation = false;
  std::function<void(const std::string&)> on_message;
};

std::unique_ptr<Backend> make_backend(InstanceSettings settings = {});
// Its switches (readable without a device).
const std::vector<SwitchInfo>& switch_table();

// Auto-select rank of the best Vulkan device present (backend_registry picks the highest):
// discrete GPU 20, integrated 10, virtual 5 (all above the CPU backend's 0); a CPU-type
// device (lavapipe, SwiftShader) -10, below the CPU backend, so auto never takes it. Sets
// *why and returns false when there is no loader or no device.
bool probe_rank(int* rank, std::string* why);

// What the last load() of a Vulkan backend spent, for the cold/warm start figures.
struct LoadReport {
  double context_ms = 0;    // instance + device + pipeline-cache file
  double pipelines_ms = 0;  // creating every compute pipeline (the part the cache warms)
  double upload_ms = 0;     // weights through the staging buffer
  double record_ms = 0;     // pre-recording the decode command buffers
  double total_ms = 0;
  size_t pipelines = 0;
  bool pipeline_cache_warm = false;  // a cache file for this device was found and accepted
  std::string pipeline_cache_path;
  std::string device;
};
// Throws p64::Error when `b` is not a Vulkan backend.
LoadReport load_report(const Backend& b);

}  // namespace vulkan
}  // namespace p64
