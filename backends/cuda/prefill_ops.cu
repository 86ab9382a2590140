// The prefill's elementwise and row-wise ops, one block (or block row) per token: embedding
// gather, RMSNorm to f16, SwiGLU to f16, RoPE + KV write. The math is the decode kernels'
// (norm.cu, rope.cu) for T rows at once; the f16 outputs are the GEMM's inputs.
#include <cuda_fp16.h>

#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/prefill_kernels.h"
#include "backends/cuda/tiled_formats.cuh"
#include "backends/cuda/weight_formats.cuh"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

constexpr int kThreads = 256;

// Block t: one thread per 32-element unit of the row, dequantized by the decode's reader.
template <uint32_t DT>
__global__ void __launch_bounds__(kThreads) embed_rows_kernel(const uint8_t* __restrict__ w, int64_t nb, int64_t n,
                                                              const int32_t* __restrict__ tokens, float* __restrict__ x) {
  const int t = blockIdx.x;
  const int64_t row = tokens[t];
  float* out = x + int64_t(t) * n;
  for (int64_t u = threadIdx.x; u < (n + 31) / 32; u += kThreads) {
    float v[32];
    Deq<DT>::unit(RowRef{w, nb, row, n}, u, v);
#pragma unroll
    for (int i = 0; i < 32; ++i)
      if (u * 32 + i < n) out[u * 32 + i] = v[i];
  }
}

__device__ __forceinline__ float block_sum(float v, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float tot = 0.f;
#pragma unroll
  for (int i = 0; i < kThreads / 32; ++i) tot += red[i];
  return tot;
}

__global__ void __launch_bounds__(kThreads) rmsnorm_rows_kernel(const float* __restrict__ x, int64_t ldx,
                                                                const float* __restrict__ w, float eps, int64_t n,
                                                                __half* __restrict__ out, int64_t ldo) {
  __shared__ float red[kThreads / 32];
  const float* xr = x + int64_t(blockIdx.x) * ldx;
  float ss = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) ss = fmaf(xr[i], xr[i], ss);
  const float scale = rsqrtf(block_sum(ss, red) / float(n) + eps);
  __half* o = out + int64_t(blockIdx.x) * ldo;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) o[i] = __float2half_rn(xr[i] * scale * w[i]);
}

__global__ void swiglu_rows_kernel(const float* __restrict__ gate, const float* __restrict__ up, int64_t ld_in,
                                   int64_t n, __half* __restrict__ out, int64_t ldo) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t t = blockIdx.y;
  const float a = gate[t * ld_in + i];
  out[t * ldo + i] = __float2half_rn(a / (1.f + __expf(-a)) * up[t * ld_in + i]);
}

// Block (head, t): q heads then k heads, as rope.cu, at position pos + t; k heads also store
// their rotated k and the row's v into the cache.
template <bool F16>
__global__ void rope_kv_rows_kernel(float* __restrict__ qkv, int64_t ld, const float* __restrict__ inv_freq,
                                    int n_head, int n_head_kv, int head_dim, int rope_dim, void* k_cache,
                                    void* v_cache, int max_ctx, int pos0) {
  const int head = blockIdx.x, t = blockIdx.y, pos = pos0 + t;
  const bool is_k = head >= n_head;
  const int kvh = head - n_head;
  float* row = qkv + int64_t(t) * ld;
  float* vec = row + int64_t(head) * head_dim;
  for (int i = threadIdx.x; i < head_dim / 2; i += blockDim.x) {
    float a = vec[2 * i], b = vec[2 * i + 1];
    if (2 * i < rope_dim) {
      float s, c;
      sincosf(float(pos) * inv_freq[i], &s, &c);
      const float ra = a * c - b * s, rb = a * s + b * c;
      a = ra;
      b = rb;
      vec[2 * i] = a;
      vec[2 * i + 1] = b;
    }
    if (is_k) {
      const int64_t off = (int64_t(kvh) * max_ctx + pos) * head_dim + 2 * i;
      if constexpr (F16) {
        *reinterpret_cast<__half2*>(static_cast<__half*>(k_cache) + off) = __floats2half2_rn(a, b);
      } else {
        static_cast<float*>(k_cache)[off] = a;
        static_cast<float*>(k_cache)[off + 1] = b;
      }
    }
  }
  if (is_k) {
    const float* v = row + int64_t(n_head + n_head_kv + kvh) * head_dim;
    const int64_t off = (int64_t(kvh) * max_ctx + pos) * head_dim;
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
      if constexpr (F16) static_cast<__half*>(v_cache)[off + i] = __float2half_rn(v[i]);
      else static_cast<float*>(v_cache)[off + i] = v[i];
    }
  }
}

template <uint32_t DT>
void embed_dt(const uint8_t* w, int64_t nb, int64_t n, const int32_t* tokens, int T, float* x, cudaStream_t stream) {
  embed_rows_kernel<DT><<<unsigned(T), kThreads, 0, stream>>>(w, nb, n, tokens, x);
  P64_CUDA_CHECK_LAUNCH("embed_rows_kernel");
}

}  // namespace

void launch_prefill_embed(uint32_t dtype, const uint8_t* w, int64_t nb, int64_t n, const int32_t* tokens, int T,
                          float* x, cudaStream_t stream) {
  switch (dtype) {
    case kF32: return embed_dt<kF32>(w, nb, n, tokens, T, x, stream);
    case kF16: return embed_dt<kF16>(w, nb, n, tokens, T, x, stream);
    case kBF16: return embed_dt<kBF16>(w, nb, n, tokens, T, x, stream);
    case kQ5_0: return embed_dt<kQ5_0>(w, nb, n, tokens, T, x, stream);
    case kQ8_0: return embed_dt<kQ8_0>(w, nb, n, tokens, T, x, stream);
    case kQ8_0S: return embed_dt<kQ8_0S>(w, nb, n, tokens, T, x, stream);
    case kQ4_K: return embed_dt<kQ4_K>(w, nb, n, tokens, T, x, stream);
    case kQ4_KS: return embed_dt<kQ4_KS>(w, nb, n, tokens, T, x, stream);
    case kQ6_K: return embed_dt<kQ6_K>(w, nb, n, tokens, T, x, stream);
    case kQ6_KS: return embed_dt<kQ6_KS>(w, nb, n, tokens, T, x, stream);
    case kTiledQ4_K: return embed_dt<kTiledQ4_K>(w, nb, n, tokens, T, x, stream);
    case kTiledQ6_K: return embed_dt<kTiledQ6_K>(w, nb, n, tokens, T, x, stream);
    default: throw Error("prefill embed: dtype " + std::to_string(dtype) + " has no reader");
  }
}

void launch_prefill_rmsnorm(const float* x, int64_t ldx, const float* weight, float eps, int64_t n, int T,
                            void* out_f16, int64_t ldo, cudaStream_t stream) {
  rmsnorm_rows_kernel<<<unsigned(T), kThreads, 0, stream>>>(x, ldx, weight, eps, n, static_cast<__half*>(out_f16),
                                                            ldo);
  P64_CUDA_CHECK_LAUNCH("rmsnorm_rows_kernel");
}

void launch_prefill_swiglu(const float* gate, const float* up, int64_t ld_in, int64_t n, int T, void* out_f16,
                           int64_t ldo, cudaStream_t stream) {
  const dim3 grid(unsigned((n + kThreads - 1) / kThreads), unsigned(T));
  swiglu_rows_kernel<<<grid, kThreads, 0, stream>>>(gate, up, ld_in, n, static_cast<__half*>(out_f16), ldo);
  P64_CUDA_CHECK_LAUNCH("swiglu_rows_kernel");
}

void launch_prefill_rope_kv(float* qkv, int64_t ld, const float* inv_freq, int n_head, int n_head_kv, int head_dim,
                            int rope_dim, void* k_cache, void* v_cache, bool kv_f16, int max_ctx, int pos, int T,
                            cudaStream_t stream) {
  const int threads = head_dim / 2 < 32 ? 32 : (head_dim / 2 > 256 ? 256 : head_dim / 2);
  const dim3 grid(unsigned(n_head + n_head_kv), unsigned(T));
  if (kv_f16)
    rope_kv_rows_kernel<true><<<grid, threads, 0, stream>>>(qkv, ld, inv_freq, n_head, n_head_kv, head_dim, rope_dim,
                                                            k_cache, v_cache, max_ctx, pos);
  else
    rope_kv_rows_kernel<false><<<grid, threads, 0, stream>>>(qkv, ld, inv_freq, n_head, n_head_kv, head_dim,
                                                             rope_dim, k_cache, v_cache, max_ctx, pos);
  P64_CUDA_CHECK_LAUNCH("rope_kv_rows_kernel");
}

}  // namespace p64::cuda
