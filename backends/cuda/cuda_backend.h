#pragma once
#include <memory>
#include <string>

#include "engine/runtime/backend.h"

namespace p64 {

// The CUDA backend: weights resident on the device in their P64 (SoA) layouts, KV cache and
// residual stream on the device, the decode step captured once as a CUDA graph, argmax on the
// device. Throws p64::DeviceError when no driver or device is present.
std::unique_ptr<Backend> make_cuda_backend();

// True when a CUDA driver and at least one device are present; otherwise *why says which.
bool cuda_device_available(std::string* why);

// Registers "cuda" (rank 100) with the backend registry (called by register_all_backends).
void register_cuda_backend();

}  // namespace p64
