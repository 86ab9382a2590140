#pragma once
// The gemv_prologue switch: a GEMV block makes its own int16 input in shared memory from the
// fp32 vector (RMS-normalized first where a norm is given), in place of the norm or
// quantization kernel that would otherwise run before it and cost a launch. Every block
// recomputes the same sum of squares in the same order, so all blocks use one scale, and the
// values match what norm.cu's kernel writes up to the order of the sums.
#include <cuda_fp16.h>

#include "backends/cuda/kernels.h"
#include "backends/cuda/warp_reduce.cuh"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda {

// Shared memory of the int16 input: xq (2 bytes each), then xs (one float per 16), then xd
// (one float per 32); xs comes first so its float2 reads stay 8-byte aligned.
__host__ __device__ constexpr int64_t gemv_prologue_bytes(int64_t n) { return 2 * n + n / 16 * 4 + n / 32 * 4; }

// All threads of the block call this once, after waiting for the kernel that wrote p.x. One
// thread turns one 32-element group into its integers, scale and two sums of 16.
template <int THREADS>
__device__ __forceinline__ ActRef gemv_prologue_input(const GemvPrologue& p, int64_t n, unsigned char* smem) {
  int16_t* xq = reinterpret_cast<int16_t*>(smem);
  float* xs = reinterpret_cast<float*>(smem + 2 * n);
  float* xd = xs + n / 16;
  const int groups = int(n / 32);
  const float4* x4 = reinterpret_cast<const float4*>(p.x);
  const float4* w4 = reinterpret_cast<const float4*>(p.norm);
  float scale = 1.f;
  if (p.norm) {
    __shared__ float partial[THREADS / 32];
    float ss = 0.f;
    for (int g = threadIdx.x; g < groups; g += THREADS) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float4 v = x4[8 * g + i];
        ss = fmaf(v.x, v.x, ss);
        ss = fmaf(v.y, v.y, ss);
        ss = fmaf(v.z, v.z, ss);
        ss = fmaf(v.w, v.w, ss);
      }
    }
    ss = warp_sum(ss);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < THREADS / 32; ++i) total += partial[i];
    scale = rsqrtf(total / float(n) + p.eps);
  }
  for (int g = threadIdx.x; g < groups; g += THREADS) {
    float v[32];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float4 a = x4[8 * g + i];
      const float4 w = p.norm ? w4[8 * g + i] : make_float4(1.f, 1.f, 1.f, 1.f);
      v[4 * i] = a.x * scale * w.x;
      v[4 * i + 1] = a.y * scale * w.y;
      v[4 * i + 2] = a.z * scale * w.z;
      v[4 * i + 3] = a.w * scale * w.w;
    }
    float amax = 0.f, s0 = 0.f, s1 = 0.f;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      amax = fmaxf(amax, fmaxf(fabsf(v[i]), fabsf(v[16 + i])));
      s0 += v[i];
      s1 += v[16 + i];
    }
    const float d = amax / 32767.f;
    const float id = d > 0.f ? 1.f / d : 0.f;
    uint32_t packed[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const uint32_t lo = uint16_t(int16_t(__float2int_rn(v[2 * i] * id)));
      const uint32_t hi = uint16_t(int16_t(__float2int_rn(v[2 * i + 1] * id)));
      packed[i] = lo | (hi << 16);
    }
    uint4* dst = reinterpret_cast<uint4*>(xq + 32 * g);
#pragma unroll
    for (int i = 0; i < 4; ++i) dst[i] = make_uint4(packed[4 * i], packed[4 * i + 1], packed[4 * i + 2], packed[4 * i + 3]);
    xd[g] = d;
    xs[2 * g] = s0;
    xs[2 * g + 1] = s1;
  }
  __syncthreads();
  return ActRef{nullptr, xq, xd, xs};
}

}  // namespace p64::cuda
