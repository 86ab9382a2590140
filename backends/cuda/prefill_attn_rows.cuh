#pragma once
// Shared by the prefill attention kernels (prefill_attention.cu, prefill_attention_grouped.cu):
// a lane's DPL consecutive elements (lane * DPL ...) of one cached K or V row, as floats;
// elements past head_dim read as zeros.
#include <cuda_fp16.h>

namespace p64::cuda::prefill {

template <bool F16, int DPL>
__device__ __forceinline__ void load_vec(const void* row, int lane, int D, float out[DPL]) {
  const int d0 = lane * DPL;
  if constexpr (F16 && DPL >= 2 && DPL % 2 == 0) {
    if (d0 + DPL <= D) {
      const __half2* p = reinterpret_cast<const __half2*>(static_cast<const __half*>(row) + d0);
#pragma unroll
      for (int i = 0; i < DPL / 2; ++i) {
        const float2 f = __half22float2(p[i]);
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < DPL; ++i) {
    const int d = d0 + i;
    if (d < D) out[i] = F16 ? __half2float(static_cast<const __half*>(row)[d]) : static_cast<const float*>(row)[d];
    else out[i] = 0.f;
  }
}

}  // namespace p64::cuda::prefill
