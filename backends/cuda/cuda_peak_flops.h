#pragma once
// The compute ceiling a CUDA device's passport gives the roofline: its dense fp16 tensor-core
// rate (f32 accumulate, what the prefill GEMM's mma.sync runs) where the architecture's rate per
// SM and clock is known, else its fp32 FMA rate where the FP32 lanes per SM are known, else none.
// Per SM and clock, from NVIDIA's architecture whitepapers: tensor cores 1024 FLOP on sm_70,
// 2048 on sm_80, 4096 on sm_90; FP32 lanes 64 on sm_60/70/75/80, 128 on sm_61/86/87/89/90.
// GA10x and Ada tensor rates differ between GeForce and professional boards, so they take the
// FP32 figure rather than a guess.
#include <string>

namespace p64::cuda {

struct PeakFlops {
  double flops = 0;  // FLOP/s; 0 = unknown
  std::string what;  // how it was counted, or why there is none
};

PeakFlops peak_flops(int major, int minor, int multiprocessors, double sm_clock_ghz);

}  // namespace p64::cuda
