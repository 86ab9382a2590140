#pragma once
// What the decode attention's split kernels (attention.cu, attention_stream.cu) share: the split
// geometry, the merge of a block's warps into one partial per split, and the merge of the
// partials (the combine pass, or the last split block with attn_tail_combine).
#include <cuda_fp16.h>

#include <cmath>

#include "backends/cuda/kernels.h"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;  // q heads per kv head
constexpr int kPosPerWarp = 4;
constexpr int kStreamTile = 32;  // attn_stream: cached positions per warp tile (a lane each)

__host__ __device__ inline int attention_splits_of(int max_ctx, int chunk) { return (max_ctx + chunk - 1) / chunk; }

template <bool F16>
__device__ __forceinline__ float kv_at(const void* base, int64_t i) {
  if constexpr (F16) return __half2float(static_cast<const __half*>(base)[i]);
  else return static_cast<const float*>(base)[i];
}

template <bool F16, int DPL>
__device__ __forceinline__ void load_row(const void* base, int64_t off, int lane, int D, float out[DPL]) {
  const int d0 = lane * DPL;
  if (d0 + DPL <= D) {
    if constexpr (F16 && DPL == 4) {
      const uint2 r = *reinterpret_cast<const uint2*>(static_cast<const __half*>(base) + off + d0);
      const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&r.x));
      const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&r.y));
      out[0] = a.x; out[1] = a.y; out[2] = b.x; out[3] = b.y;
      return;
    }
#pragma unroll
    for (int i = 0; i < DPL; ++i) out[i] = kv_at<F16>(base, off + d0 + i);
  } else {
#pragma unroll
    for (int i = 0; i < DPL; ++i) out[i] = d0 + i < D ? kv_at<F16>(base, off + d0 + i) : 0.f;
  }
}

// Positions per split at context length len: the chunk, or with attn_splits (a.max_splits) as
// many as keep the splits in use to that count, in whole rounds of the block's warps, so a deep
// context is not cut into hundreds of partials that the combine then merges one batch at a time.
__device__ __forceinline__ int split_chunk(const AttnLaunch& a, int len) {
  if (a.max_splits <= 0) return a.chunk;
  const int round = a.stream_kv ? kStreamTile : kWarps * kPosPerWarp;
  const int per = (len + a.max_splits - 1) / a.max_splits;
  return max(a.chunk, (per + round - 1) / round * round);
}
// The step's split geometry: the context length, positions per split, the partials' stride (every
// possible split at attn_chunk) and the splits in use.
struct SplitGeometry {
  int len, chunk, splits, used;
};
__device__ __forceinline__ SplitGeometry split_geometry(const AttnLaunch& a) {
  SplitGeometry g;
  g.len = a.state->pos + 1;
  g.chunk = split_chunk(a, g.len);
  g.splits = attention_splits_of(a.max_ctx, a.chunk);
  g.used = (g.len + g.chunk - 1) / g.chunk;
  return g;
}
__device__ __forceinline__ int64_t kv_head_base(const AttnLaunch& a, int kvh) { return int64_t(kvh) * a.max_ctx * a.head_dim; }

// A lane's scores against its cached K row, one 16-byte piece at a time: the 8 halves of piece c
// dotted with the G pre-scaled q heads in shared memory (one address for all lanes), added to s.
template <int DPL, int NG>
__device__ __forceinline__ void dot_k_piece(const uint4& kk, const float (*qs)[32 * DPL], int c, int G, float (&s)[NG]) {
  const __half2* h2 = reinterpret_cast<const __half2*>(&kk);
  float kf[8];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    const float2 f = __half22float2(h2[w]);
    kf[2 * w] = f.x;
    kf[2 * w + 1] = f.y;
  }
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    if (g < G) {
      const float4 q0 = *reinterpret_cast<const float4*>(&qs[g][8 * c]);
      const float4 q1 = *reinterpret_cast<const float4*>(&qs[g][8 * c + 4]);
      s[g] = fmaf(q0.x, kf[0], fmaf(q0.y, kf[1], fmaf(q0.z, kf[2], fmaf(q0.w, kf[3], s[g]))));
      s[g] = fmaf(q1.x, kf[4], fmaf(q1.y, kf[5], fmaf(q1.z, kf[6], fmaf(q1.w, kf[7], s[g]))));
    }
  }
}

// An empty online-softmax state for each q head: no max yet, nothing summed.
template <int DPL, int NG>
__device__ __forceinline__ void reset_softmax(float (&m)[NG], float (&l)[NG], float (&acc)[NG][DPL]) {
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) acc[g][i] = 0.f;
  }
}

// The online softmax over a tile of 32 positions, a lane each (valid: the lane's position is in
// the split; lane 0's always is, so the tile's max is finite): the tile's weights p for the V
// pass, and the running max, sum and accumulators of each q head rescaled to the new max.
template <int DPL, int NG>
__device__ __forceinline__ void softmax_tile(const float (&s)[NG], bool valid, int G, float (&m)[NG], float (&l)[NG],
                                             float (&acc)[NG][DPL], float (&p)[NG]) {
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    p[g] = 0.f;
    if (g < G) {
      const float sv = valid ? s[g] : -INFINITY;
      float tmax = sv;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, o));
      const float mn = fmaxf(m[g], tmax);
      const float corr = __expf(m[g] - mn);  // 0 for the first tile (m = -inf, mn finite)
      p[g] = valid ? __expf(sv - mn) : 0.f;
      l[g] = l[g] * corr + warp_sum(p[g]);
#pragma unroll
      for (int i = 0; i < DPL; ++i) acc[g][i] *= corr;
      m[g] = mn;
    }
  }
}

template <int DPL>
struct SplitShared {
  float m[kWarps][kMaxGroup], l[kWarps][kMaxGroup];
  float acc[kWarps][kMaxGroup][32 * DPL];
};

// The block's warps' online-softmax states (each lane's DPL elements lane * DPL + i of each q
// head) merged into partial `split` of kv head kvh's G q heads.
// NG: the size of the callers' per-head arrays (kMaxGroup, or the group size rounded up).
template <int DPL, int NG = kMaxGroup>
__device__ __forceinline__ void write_split_partial(const AttnLaunch& a, int kvh, int split, int splits,
                                                    const float (&m)[NG], const float (&l)[NG],
                                                    const float (&acc)[NG][DPL], SplitShared<DPL>& sh) {
  const int G = a.n_head / a.n_head_kv, D = a.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    if (g < G) {
      if (lane == 0) { sh.m[warp][g] = m[g]; sh.l[warp][g] = l[g]; }
#pragma unroll
      for (int i = 0; i < DPL; ++i) sh.acc[warp][g][lane * DPL + i] = acc[g][i];
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
    const int g = idx / D, d = idx % D;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) M = fmaxf(M, sh.m[w][g]);
    float L = 0.f, A = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float f = sh.m[w][g] == -INFINITY ? 0.f : __expf(sh.m[w][g] - M);
      L += sh.l[w][g] * f;
      A += sh.acc[w][g][d] * f;
    }
    const int64_t qh = int64_t(kvh) * G + g;
    a.part_acc[(qh * splits + split) * D + d] = A;
    if (d == 0) {
      a.part_m[qh * splits + split] = M;
      a.part_l[qh * splits + split] = L;
    }
  }
  __syncthreads();  // the shared partials are reused by the block's next split
}

// Head h's output element d over the `used` splits. BATCH 1: a pass for the max, then one for
// the sums, each split's loads waiting for the previous split's arithmetic. BATCH > 1: the
// partials of BATCH splits are loaded before any of them is merged (one online-softmax rescale
// per batch), so a batch costs one memory latency instead of BATCH.
template <int BATCH>
__device__ __forceinline__ float merge_splits(const AttnLaunch& a, int splits, int h, int d, int used) {
  const int D = a.head_dim;
  const float* pm = a.part_m + int64_t(h) * splits;
  const float* pl = a.part_l + int64_t(h) * splits;
  const float* pa = a.part_acc + int64_t(h) * splits * D + d;
  if constexpr (BATCH == 1) {
    float M = -INFINITY;
    for (int s = 0; s < used; ++s) M = fmaxf(M, __ldcg(pm + s));
    float L = 0.f, A = 0.f;
    for (int s = 0; s < used; ++s) {
      const float f = __expf(__ldcg(pm + s) - M);
      L += __ldcg(pl + s) * f;
      A += __ldcg(pa + int64_t(s) * D) * f;
    }
    return A / L;
  } else {
    float M = -INFINITY, L = 0.f, A = 0.f;
    for (int s0 = 0; s0 < used; s0 += BATCH) {
      float m[BATCH], l[BATCH], acc[BATCH];
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        const bool in = s0 + i < used;
        m[i] = in ? __ldcg(pm + s0 + i) : -INFINITY;
        l[i] = in ? __ldcg(pl + s0 + i) : 0.f;
        acc[i] = in ? __ldcg(pa + int64_t(s0 + i) * D) : 0.f;
      }
      float mn = M;
#pragma unroll
      for (int i = 0; i < BATCH; ++i) mn = fmaxf(mn, m[i]);
      const float c = M == -INFINITY ? 0.f : __expf(M - mn);  // every used split has a finite max
      L *= c;
      A *= c;
#pragma unroll
      for (int i = 0; i < BATCH; ++i) {
        const float f = m[i] == -INFINITY ? 0.f : __expf(m[i] - mn);
        L += l[i] * f;
        A += acc[i] * f;
      }
      M = mn;
    }
    return A / L;
  }
}

// Element d of head h's output merged over the `used` splits, written in both forms. Every lane
// of a warp calls it (the quantization's shuffles); `in_range` says whether its element exists.
template <int BATCH>
__device__ __forceinline__ void combine_element(const AttnLaunch& a, int splits, int h, int d, int used, bool in_range) {
  const int D = a.head_dim, lane = threadIdx.x & 31;
  float o = 0.f;
  if (in_range) {
    o = merge_splits<BATCH>(a, splits, h, d, used);
    a.out.xf[int64_t(h) * D + d] = o;
  }
  if (a.quantize_out) {  // head_dim % 32 == 0: each warp is one 32-element quantization block
    float amax = fabsf(o);
#pragma unroll
    for (int k = 16; k > 0; k >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, k));
    float s16 = o;
#pragma unroll
    for (int k = 8; k > 0; k >>= 1) s16 += __shfl_xor_sync(0xffffffffu, s16, k);
    const int64_t e = int64_t(h) * D + d;
    if (in_range) {
      store_quantized(a.out, e, e + 1, o, amax);
      if ((lane & 15) == 0) a.out.xs[e >> 4] = s16;
    }
  }
}

// attn_tail_combine: the split blocks of kv head kvh that had work count themselves in; the last
// to arrive merges the splits of the head's G q heads (head_dim % 32 == 0, so a warp's 32
// elements lie in one head and the loop keeps warps whole).
__device__ void combine_in_last_block(const AttnLaunch& a, int kvh, int splits, int used, int workers) {
  __shared__ int last;
  __syncthreads();  // this block's partials are written
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(a.tail_counter + kvh, 1u) == unsigned(workers - 1);
    if (last) a.tail_counter[kvh] = 0;  // every worker has arrived: ready for the next layer
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const int G = a.n_head / a.n_head_kv, D = a.head_dim;
  for (int idx = threadIdx.x; idx < G * D; idx += blockDim.x) {
    if (a.combine_batch > 1) combine_element<8>(a, splits, kvh * G + idx / D, idx % D, used, true);
    else combine_element<1>(a, splits, kvh * G + idx / D, idx % D, used, true);
  }
}


// attn_tail_combine (a.tail_counter set): the split blocks that wrote partials, the first
// min(used, grid) of the kv head, count themselves in; the last merges.
__device__ __forceinline__ void tail_combine(const AttnLaunch& a, const SplitGeometry& g) {
  if (!a.tail_counter) return;
  const int workers = min(g.used, int(gridDim.y));
  if (int(blockIdx.y) < workers) combine_in_last_block(a, blockIdx.x, g.splits, g.used, workers);
}

}  // namespace

}  // namespace p64::cuda
