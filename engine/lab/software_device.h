#pragma once
// A device whose figures do not speak for the hardware its backend names.
#include <string>

#include "engine/runtime/passport.h"

namespace p64 {

// Why: a Vulkan (or any GPU backend's) device that is the CPU, such as llvmpipe, a software
// rasteriser. Empty for a real device and for the CPU backend itself.
std::string software_device_note(const Passport& p);

}  // namespace p64
