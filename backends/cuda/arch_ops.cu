// The element-wise and per-head steps some architectures add to the Llama block
// (arch_kernels.h): q/k/v finishing (bias, q/k norm, RoPE of either pairing, KV write),
// post-norm into the residual, GeGLU, and the embedding scale. Written plainly: they run only
// for the architectures that need them, and their order and formulas are the CPU's.
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "backends/cuda/arch_kernels.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/warp_reduce.cuh"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

constexpr int kHeadThreads = 64;
constexpr int kMaxHeadDim = 256;
constexpr int kRowThreads = 256;

// The block's total of v (every thread passes its part); `red` holds a float per warp.
template <int kThreads>
__device__ __forceinline__ float block_total(float v, float* red) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0.f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) t += red[w];
  __syncthreads();  // red may be reused
  return t;
}

// gelu(g) with the tanh approximation, times u (cpu::geglu_tanh).
__device__ __forceinline__ float geglu(float g, float u) {
  const float sqrt_2_over_pi = 0.7978845608028654f;
  return 0.5f * g * (1.f + tanhf(sqrt_2_over_pi * (g + 0.044715f * g * g * g))) * u;
}

// Block (head, row): q heads [0, n_head), then k heads; a k head's block also writes its v head.
template <bool F16>
__global__ void __launch_bounds__(kHeadThreads) qkv_heads_kernel(const QkvHeads h) {
  __shared__ float vec[kMaxHeadDim];
  __shared__ float red[kHeadThreads / 32];
  dependency_wait();
  const int head = blockIdx.x, t = blockIdx.y, D = h.head_dim;
  const int pos = h.state ? h.state->pos : h.pos0 + t;
  const bool is_k = head >= h.n_head;
  const int kvh = head - h.n_head;
  float* row = h.qkv + int64_t(t) * h.ld;
  float* x = row + int64_t(head) * D;  // k heads follow the q heads
  // qkv bias (qwen2)
  const float* b = h.bias ? h.bias + int64_t(head) * D : nullptr;
  for (int i = threadIdx.x; i < D; i += kHeadThreads) vec[i] = b ? x[i] + b[i] : x[i];
  // q and k rmsnorm per head, before RoPE (qwen3, gemma3)
  const float* w = is_k ? h.k_norm : h.q_norm;
  if (w) {
    float ss = 0.f;
    for (int i = threadIdx.x; i < D; i += kHeadThreads) ss = fmaf(vec[i], vec[i], ss);
    const float scale = 1.f / sqrtf(block_total<kHeadThreads>(ss, red) / float(D) + h.eps);
    for (int i = threadIdx.x; i < D; i += kHeadThreads) vec[i] = w[i] * (scale * vec[i]);
  }
  __syncthreads();
  // RoPE over the head's rotated pairs; LongRope's factor scales them (1 for the others)
  const int pairs = h.rope_dim / 2;
  for (int i = threadIdx.x; i < pairs; i += kHeadThreads) {
    float s, c;
    sincosf(float(pos) * h.inv_freq[i], &s, &c);
    c *= h.rope_scale;
    s *= h.rope_scale;
    const int a0 = h.halves ? i : 2 * i, a1 = h.halves ? i + pairs : 2 * i + 1;
    const float v0 = vec[a0], v1 = vec[a1];
    vec[a0] = v0 * c - v1 * s;
    vec[a1] = v0 * s + v1 * c;
  }
  __syncthreads();
  const int64_t cache_row = (int64_t(kvh) * h.max_ctx + pos) * D;
  for (int i = threadIdx.x; i < D; i += kHeadThreads) {
    x[i] = vec[i];
    if (is_k) {
      if constexpr (F16) static_cast<__half*>(h.k_cache)[cache_row + i] = __float2half_rn(vec[i]);
      else static_cast<float*>(h.k_cache)[cache_row + i] = vec[i];
    }
  }
  if (!is_k) return;
  const int64_t v_at = int64_t(h.n_head + h.n_head_kv + kvh) * D;
  const float* vb = h.bias ? h.bias + v_at : nullptr;
  for (int i = threadIdx.x; i < D; i += kHeadThreads) {
    const float v = vb ? row[v_at + i] + vb[i] : row[v_at + i];
    if constexpr (F16) static_cast<__half*>(h.v_cache)[cache_row + i] = __float2half_rn(v);
    else static_cast<float*>(h.v_cache)[cache_row + i] = v;
  }
}

// Block t: x[t] += w * (rsqrt(mean(y[t]^2) + eps) * y[t]).
__global__ void __launch_bounds__(kRowThreads) post_norm_add_kernel(const float* __restrict__ y,
                                                                    const float* __restrict__ w, float eps, int64_t n,
                                                                    float* __restrict__ x) {
  __shared__ float red[kRowThreads / 32];
  dependency_wait();
  const float* yr = y + int64_t(blockIdx.x) * n;
  float* xr = x + int64_t(blockIdx.x) * n;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kRowThreads) ss = fmaf(yr[i], yr[i], ss);
  const float scale = 1.f / sqrtf(block_total<kRowThreads>(ss, red) / float(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += kRowThreads) xr[i] += w[i] * (scale * yr[i]);
}

// out may be gate (the decode step writes the product over it): no __restrict__.
__global__ void geglu_kernel(const float* g, const float* u, float* out, int64_t n) {
  dependency_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = geglu(g[i], u[i]);
}

__global__ void geglu_rows_kernel(const float* __restrict__ gate, const float* __restrict__ up, int64_t ld_in,
                                  int64_t n, __half* __restrict__ out, int64_t ldo) {
  dependency_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t t = blockIdx.y;
  out[t * ldo + i] = __float2half_rn(geglu(gate[t * ld_in + i], up[t * ld_in + i]));
}

__global__ void scale_kernel(float* __restrict__ x, int64_t n, float s) {
  dependency_wait();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

}  // namespace

void launch_qkv_heads(const QkvHeads& h, cudaStream_t stream) {
  if (h.head_dim <= 0 || h.head_dim > kMaxHeadDim || h.rope_dim > h.head_dim || h.rope_dim % 2 != 0)
    throw Error("CUDA qkv heads: head_dim " + std::to_string(h.head_dim) + " / rope_dim " + std::to_string(h.rope_dim) +
                " not supported (head_dim <= 256, even rope_dim <= head_dim)");
  if ((h.q_norm == nullptr) != (h.k_norm == nullptr)) throw Error("CUDA qkv heads: a q norm without a k norm");
  const dim3 grid(unsigned(h.n_head + h.n_head_kv), unsigned(h.T));
  launch_kernel("qkv_heads_kernel", h.kv_f16 ? qkv_heads_kernel<true> : qkv_heads_kernel<false>, grid,
                dim3(kHeadThreads), 0, stream, h);
}

void launch_post_norm_add(const float* y, const float* w, float eps, int64_t n, int T, float* x, cudaStream_t stream) {
  launch_kernel("post_norm_add_kernel", post_norm_add_kernel, dim3(unsigned(T)), dim3(kRowThreads), 0, stream, y, w,
                eps, n, x);
}

void launch_geglu(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream) {
  launch_kernel("geglu_kernel", geglu_kernel, dim3(unsigned((n + 255) / 256)), dim3(256), 0, stream, gate, up, out, n);
}

void launch_prefill_geglu(const float* gate, const float* up, int64_t ld_in, int64_t n, int T, void* out_f16,
                          int64_t ldo, cudaStream_t stream) {
  const dim3 grid(unsigned((n + kRowThreads - 1) / kRowThreads), unsigned(T));
  launch_kernel("geglu_rows_kernel", geglu_rows_kernel, grid, dim3(kRowThreads), 0, stream, gate, up, ld_in, n,
                static_cast<__half*>(out_f16), ldo);
}

void launch_scale(float* x, int64_t n, float s, cudaStream_t stream) {
  launch_kernel("scale_kernel", scale_kernel, dim3(unsigned((n + 255) / 256)), dim3(256), 0, stream, x, n, s);
}

}  // namespace p64::cuda
