#pragma once

namespace p64 {
// Registers every backend this build has (CPU always; CUDA and Vulkan when built). Idempotent.
void register_all_backends();
}  // namespace p64
