#pragma once
// The streaming decode GEMV (gemv_stream.cu): cp.async-pipelined weight units for the integer
// paths of Q4_K (AoS and SoA), Q6_K SoA and Q8_0 SoA, without the fusion epilogues.
#include "backends/cuda/kernels.h"

namespace p64::cuda {

bool gemv_stream_supports(const GemvLaunch& g);
// stages: 4 or 8 units in flight per lane (the pipeline depth)
void launch_gemv_stream(const GemvLaunch& g, int stages, cudaStream_t stream);

}  // namespace p64::cuda
