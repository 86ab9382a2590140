// RoPE on q and k (adjacent pairs, as every loaded Model stores them) fused with the KV write:
// one block per head; kv heads also store k (rotated) and v into the cache at the position
// the step state names. Frequencies come precomputed from the host (llama3 scaling and
// rope_freq_factors folded in), so the kernel does the same math for every scaling type.
#include <cuda_fp16.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {

template <bool F16>
__global__ void rope_kv_kernel(float* __restrict__ qkv, const float* __restrict__ inv_freq, int n_head, int n_head_kv,
                               int head_dim, int rope_dim, void* k_cache, void* v_cache, int max_ctx,
                               const StepState* state) {
  dependency_wait();
  const int head = blockIdx.x;  // [0, n_head) q heads, then [0, n_head_kv) k heads
  const int pos = state->pos;
  const bool is_k = head >= n_head;
  const int kvh = head - n_head;
  float* vec = qkv + int64_t(head) * head_dim;  // k heads follow the q heads in qkv
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
        reinterpret_cast<__half2*>(static_cast<__half*>(k_cache) + off)[0] = __floats2half2_rn(a, b);
      } else {
        static_cast<float*>(k_cache)[off] = a;
        static_cast<float*>(k_cache)[off + 1] = b;
      }
    }
  }
  if (is_k) {
    const float* v = qkv + int64_t(n_head + n_head_kv) * head_dim + int64_t(kvh) * head_dim;
    const int64_t off = (int64_t(kvh) * max_ctx + pos) * head_dim;
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
      if constexpr (F16)
        static_cast<__half*>(v_cache)[off + i] = __float2half_rn(v[i]);
      else
        static_cast<float*>(v_cache)[off + i] = v[i];
    }
  }
}

}  // namespace

void launch_rope_kv_write(float* qkv, const float* inv_freq, int n_head, int n_head_kv, int head_dim, int rope_dim,
                          void* k_cache, void* v_cache, bool kv_f16, int max_ctx, const StepState* state,
                          cudaStream_t stream) {
  const int threads = head_dim / 2 < 32 ? 32 : (head_dim / 2 > 256 ? 256 : head_dim / 2);
  const unsigned blocks = unsigned(n_head + n_head_kv);
  launch_kernel("rope_kv_kernel", kv_f16 ? rope_kv_kernel<true> : rope_kv_kernel<false>, dim3(blocks), dim3(threads), 0,
                stream, qkv, inv_freq, n_head, n_head_kv, head_dim, rope_dim, k_cache, v_cache, max_ctx, state);
}

}  // namespace p64::cuda
