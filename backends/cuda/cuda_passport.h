#pragma once
#include <cuda_runtime.h>

#include "engine/runtime/passport.h"

namespace p64::cuda {

// Device facts from cudaDeviceGetAttribute (CUDA 13 dropped several cudaDeviceProp fields)
// plus measured read-only stream and device-to-device copy bandwidth (medians over a buffer
// of at least 8x the L2).
Passport collect_cuda_passport(int device, cudaStream_t stream);

}  // namespace p64::cuda
