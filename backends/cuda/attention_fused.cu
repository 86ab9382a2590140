// Decode attention in one launch per layer (the attn_fused switch): each split block rotates its
// q heads itself, the block that holds the current position also rotates k and writes k and v
// into the cache, and the last split block of each kv head to finish merges the partials
// (a ticket counter per kv head), so rope, split and combine are one kernel instead of three.
// Same math as rope.cu + attention.cu; the partial layout is attention.cu's.
#include <cuda_fp16.h>

#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"

namespace p64::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;
constexpr int kPosPerWarp = 4;

template <bool F16>
__device__ __forceinline__ float kv_load(const void* base, int64_t i) {
  if constexpr (F16) return __half2float(static_cast<const __half*>(base)[i]);
  else return static_cast<const float*>(base)[i];
}
template <bool F16>
__device__ __forceinline__ void kv_store(void* base, int64_t i, float v) {
  if constexpr (F16) static_cast<__half*>(base)[i] = __float2half_rn(v);
  else static_cast<float*>(base)[i] = v;
}

// Lane-held slice [lane*DPL, lane*DPL+DPL) of one head, rotated at `pos` (adjacent pairs; with
// DPL == 1 a pair spans two lanes).
template <int DPL>
__device__ __forceinline__ void rope_slice(float v[DPL], int lane, int D, int rope_dim, const float* inv_freq, int pos) {
  if constexpr (DPL == 1) {
    const int d = lane;
    const float other = __shfl_xor_sync(0xffffffffu, v[0], 1);
    if (d < D && d < rope_dim) {
      float s, c;
      sincosf(float(pos) * inv_freq[d >> 1], &s, &c);
      v[0] = (d & 1) ? other * s + v[0] * c : v[0] * c - other * s;
    }
  } else {
#pragma unroll
    for (int i = 0; i < DPL; i += 2) {
      const int d = lane * DPL + i;
      if (d < D && d < rope_dim) {
        float s, c;
        sincosf(float(pos) * inv_freq[d >> 1], &s, &c);
        const float a = v[i], b = v[i + 1];
        v[i] = a * c - b * s;
        v[i + 1] = a * s + b * c;
      }
    }
  }
}

template <bool F16, int DPL>
__global__ void __launch_bounds__(kWarps * 32) attn_fused_kernel(const AttnLaunch a, const FusedAttn f) {
  constexpr int DMAX = 32 * DPL;
  __shared__ float s_m[kWarps][kMaxGroup], s_l[kWarps][kMaxGroup];
  __shared__ float s_acc[kWarps][kMaxGroup][DMAX];
  __shared__ bool s_last;
  dependency_wait();
  const int kvh = blockIdx.x, split = blockIdx.y, splits = gridDim.y;
  const int pos = a.state->pos, len = pos + 1;
  const int used = (len + a.chunk - 1) / a.chunk;
  if (split >= used) return;
  const int start = split * a.chunk, end = min(start + a.chunk, len);
  const int G = a.n_head / a.n_head_kv, D = a.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t head_base = int64_t(kvh) * a.max_ctx * D;

  if (split == used - 1 && warp == 0) {  // this block holds `pos`: rotate k, write k and v
    float k[DPL];
    const float* kin = f.qkv + int64_t(a.n_head + kvh) * D;
    const float* vin = f.qkv + int64_t(a.n_head + a.n_head_kv + kvh) * D;
#pragma unroll
    for (int i = 0; i < DPL; ++i) k[i] = lane * DPL + i < D ? kin[lane * DPL + i] : 0.f;
    rope_slice<DPL>(k, lane, D, f.rope_dim, f.inv_freq, pos);
#pragma unroll
    for (int i = 0; i < DPL; ++i) {
      const int d = lane * DPL + i;
      if (d < D) {
        kv_store<F16>(const_cast<void*>(a.k_cache), head_base + int64_t(pos) * D + d, k[i]);
        kv_store<F16>(const_cast<void*>(a.v_cache), head_base + int64_t(pos) * D + d, vin[d]);
      }
    }
  }
  __syncthreads();  // the cache row at `pos` is visible to the whole block from here

  const float scale = rsqrtf(float(D));
  float q[kMaxGroup][DPL], m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][DPL];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) {
      acc[g][i] = 0.f;
      const int d = lane * DPL + i;
      q[g][i] = (g < G && d < D) ? f.qkv[int64_t(kvh * G + g) * D + d] : 0.f;
    }
    if (g < G) rope_slice<DPL>(q[g], lane, D, f.rope_dim, f.inv_freq, pos);
#pragma unroll
    for (int i = 0; i < DPL; ++i) q[g][i] *= scale;
  }
  for (int t0 = start + warp * kPosPerWarp; t0 < end; t0 += kWarps * kPosPerWarp) {
    float k[kPosPerWarp][DPL], v[kPosPerWarp][DPL];
#pragma unroll
    for (int p = 0; p < kPosPerWarp; ++p) {
#pragma unroll
      for (int i = 0; i < DPL; ++i) {
        const int d = lane * DPL + i;
        const bool in = t0 + p < end && d < D;
        k[p][i] = in ? kv_load<F16>(a.k_cache, head_base + int64_t(t0 + p) * D + d) : 0.f;
        v[p][i] = in ? kv_load<F16>(a.v_cache, head_base + int64_t(t0 + p) * D + d) : 0.f;
      }
    }
#pragma unroll
    for (int p = 0; p < kPosPerWarp; ++p) {
      if (t0 + p >= end) break;
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g < G) {
          float s = 0.f;
#pragma unroll
          for (int i = 0; i < DPL; ++i) s = fmaf(q[g][i], k[p][i], s);
#pragma unroll
          for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
          const float mn = fmaxf(m[g], s);
          const float corr = __expf(m[g] - mn), pr = __expf(s - mn);
          l[g] = l[g] * corr + pr;
#pragma unroll
          for (int i = 0; i < DPL; ++i) acc[g][i] = fmaf(acc[g][i], corr, pr * v[p][i]);
          m[g] = mn;
        }
      }
    }
  }
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    if (g < G) {
      if (lane == 0) { s_m[warp][g] = m[g]; s_l[warp][g] = l[g]; }
#pragma unroll
      for (int i = 0; i < DPL; ++i) s_acc[warp][g][lane * DPL + i] = acc[g][i];
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) M = fmaxf(M, s_m[w][g]);
    float L = 0.f, A = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float e = s_m[w][g] == -INFINITY ? 0.f : __expf(s_m[w][g] - M);
      L += s_l[w][g] * e;
      A += s_acc[w][g][d] * e;
    }
    const int64_t qh = int64_t(kvh) * G + g;
    a.part_acc[(qh * splits + split) * D + d] = A;
    if (d == 0) {
      a.part_m[qh * splits + split] = M;
      a.part_l[qh * splits + split] = L;
    }
  }

  // The last block of this kv head to get here merges every split's partials.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const int ticket = atomicAdd(f.tickets + kvh, 1);
    s_last = ticket == used - 1;
    if (s_last) f.tickets[kvh] = 0;  // ready for the next layer
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  for (int base = 0; base < G * D; base += blockDim.x) {
    const int idx = base + threadIdx.x;
    const bool in = idx < G * D;
    const int g = in ? idx / D : 0, d = in ? idx % D : 0;
    const int64_t h = int64_t(kvh) * G + g;
    float o = 0.f;
    if (in) {
      float M = -INFINITY;
      for (int s = 0; s < used; ++s) M = fmaxf(M, __ldcg(a.part_m + h * splits + s));
      float L = 0.f, A = 0.f;
      for (int s = 0; s < used; ++s) {
        const float e = __expf(__ldcg(a.part_m + h * splits + s) - M);
        L += __ldcg(a.part_l + h * splits + s) * e;
        A += __ldcg(a.part_acc + (h * splits + s) * D + d) * e;
      }
      o = A / L;
      a.out.xf[h * D + d] = o;
    }
    if (a.quantize_out) {  // D % 32 == 0: each warp holds one 32-element block of one head
      float amax = fabsf(o);
#pragma unroll
      for (int k = 16; k > 0; k >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, k));
      float s16 = o;
#pragma unroll
      for (int k = 8; k > 0; k >>= 1) s16 += __shfl_xor_sync(0xffffffffu, s16, k);
      const int64_t e = h * D + d;
      if (in) {
        store_quantized(a.out, e, e + 1, o, amax);
        if ((lane & 15) == 0) a.out.xs[e >> 4] = s16;
      }
    }
  }
}

template <bool F16>
void launch_fused(const AttnLaunch& a, const FusedAttn& f, cudaStream_t stream) {
  const dim3 grid(unsigned(a.n_head_kv), unsigned(attention_max_splits(a.max_ctx, a.chunk)));
  const int D = a.head_dim;
  auto* kernel = D <= 32 ? attn_fused_kernel<F16, 1>
                 : D <= 64 ? attn_fused_kernel<F16, 2>
                 : D <= 128 ? attn_fused_kernel<F16, 4>
                            : attn_fused_kernel<F16, 8>;
  launch_kernel("attn_fused_kernel", kernel, grid, dim3(kWarps * 32), 0, stream, a, f);
}

}  // namespace

void launch_attention_fused(const AttnLaunch& a, const FusedAttn& f, cudaStream_t stream) {
  if (a.head_dim > 256) throw Error("CUDA backend: head_dim " + std::to_string(a.head_dim) + " > 256 is not supported");
  if (a.n_head % a.n_head_kv != 0 || a.n_head / a.n_head_kv > kMaxGroup)
    throw Error("CUDA backend: GQA group of " + std::to_string(a.n_head / a.n_head_kv) +
                " q heads per kv head is not supported (at most 8)");
  if (a.kv_f16) launch_fused<true>(a, f, stream);
  else launch_fused<false>(a, f, stream);
}

}  // namespace p64::cuda
