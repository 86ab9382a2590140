// Decode attention with GQA, split over the context (flash-decoding): block (kv head, split)
// streams `chunk` cached positions once for all the q heads that share that kv head, keeps an
// online softmax per head per warp, and writes a partial (max, sum, weighted V); the combine
// pass merges the splits of each head and writes the o-projection's input in both forms.
// The number of splits in use follows the position read from the step state, so one captured
// graph serves every position. With attn_grid the grid holds a fixed number of blocks per kv head
// that walk the splits in use, instead of one block per possible split (most of which would only
// start and exit at a short context).
// With attn_early the split blocks load their first round of cached K/V rows, and both kernels
// read the step's position, before waiting for the q/k/v GEMV: only the row at the step's own
// position is that GEMV's output; earlier rows come from earlier steps, and the position from
// the copy that precedes the step's first kernel, all complete when any kernel of the step
// starts (each kernel lets its successor start only once it has waited for its predecessor).
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;  // q heads per kv head
constexpr int kPosPerWarp = 4;

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

// One warp's round of kPosPerWarp consecutive cached positions.
template <int DPL>
struct KvRound {
  float k[kPosPerWarp][DPL], v[kPosPerWarp][DPL];
};

// Loads the round's positions [t0, min(t0 + kPosPerWarp, end)): all of them (pick -1), all but
// position `pick` (except = true) or only that one (except = false).
template <bool F16, int DPL>
__device__ __forceinline__ void load_round(const AttnLaunch& a, int64_t head_base, int t0, int end, int lane,
                                           KvRound<DPL>& r, int pick = -1, bool except = true) {
  const int D = a.head_dim;
#pragma unroll
  for (int p = 0; p < kPosPerWarp; ++p) {
    if (t0 + p < end && (pick < 0 || (t0 + p == pick) != except)) {
      load_row<F16, DPL>(a.k_cache, head_base + int64_t(t0 + p) * D, lane, D, r.k[p]);
      load_row<F16, DPL>(a.v_cache, head_base + int64_t(t0 + p) * D, lane, D, r.v[p]);
    }
  }
}

// Positions per split at context length len: the chunk, or with attn_splits (a.max_splits) as
// many as keep the splits in use to that count, in whole rounds of the block's warps, so a deep
// context is not cut into hundreds of partials that the combine then merges one batch at a time.
__device__ __forceinline__ int split_chunk(const AttnLaunch& a, int len) {
  if (a.max_splits <= 0) return a.chunk;
  constexpr int kRound = kWarps * kPosPerWarp;
  const int per = (len + a.max_splits - 1) / a.max_splits;
  return max(a.chunk, (per + kRound - 1) / kRound * kRound);
}
__device__ __forceinline__ int64_t kv_head_base(const AttnLaunch& a, int kvh) { return int64_t(kvh) * a.max_ctx * a.head_dim; }

template <int DPL>
struct SplitShared {
  float m[kWarps][kMaxGroup], l[kWarps][kMaxGroup];
  float acc[kWarps][kMaxGroup][32 * DPL];
};

// The block's warps' online-softmax states (each lane's DPL elements lane * DPL + i of each q
// head) merged into partial `split` of kv head kvh's G q heads.
template <int DPL>
__device__ __forceinline__ void write_split_partial(const AttnLaunch& a, int kvh, int split, int splits,
                                                    const float (&m)[kMaxGroup], const float (&l)[kMaxGroup],
                                                    const float (&acc)[kMaxGroup][DPL], SplitShared<DPL>& sh) {
  const int G = a.n_head / a.n_head_kv, D = a.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
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

// One split: positions [start, end) of kv head kvh for its G q heads, merged over the block's
// warps into partial `split` (stride `splits`).
// early: the warp's first round, loaded before the wait except the step's own position (len - 1).
template <bool F16, int DPL>
__device__ __forceinline__ void attend_split(const AttnLaunch& a, int kvh, int split, int splits, int len, int chunk,
                                             SplitShared<DPL>& sh, const KvRound<DPL>* early) {
  const int start = split * chunk;
  const int end = min(start + chunk, len);
  const int G = a.n_head / a.n_head_kv, D = a.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
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
      q[g][i] = (g < G && d < D) ? a.q[int64_t(kvh * G + g) * D + d] * scale : 0.f;
    }
  }
  const int64_t head_base = kv_head_base(a, kvh);
  // Each warp takes kPosPerWarp consecutive positions per round and loads all their K and V
  // rows before any arithmetic, so the loads of a round are in flight together.
  const int first_t0 = start + warp * kPosPerWarp;
  for (int t0 = first_t0; t0 < end; t0 += kWarps * kPosPerWarp) {
    KvRound<DPL> r;
    if (early && t0 == first_t0) {
      r = *early;
      load_round<F16, DPL>(a, head_base, t0, end, lane, r, len - 1, /*except=*/false);
    } else {
      load_round<F16, DPL>(a, head_base, t0, end, lane, r);
    }
    float (&k)[kPosPerWarp][DPL] = r.k;
    float (&v)[kPosPerWarp][DPL] = r.v;
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
  write_split_partial<DPL>(a, kvh, split, splits, m, l, acc, sh);
}

// attn_lanes (f16 cache, head_dim = 32 DPL): each lane owns one position of a warp's 32-position
// tile and reads that position's whole K row in 16-byte loads, eight at a time, dotting it with
// every q head of the group (q from shared memory: one address for all lanes), so no shuffles
// reduce a dot product and each lane has 128 bytes of K in flight. The tile's softmax weights
// then reach every lane by shuffles for the V pass, where a lane owns DPL elements of the head.
template <int DPL>
__device__ __forceinline__ void attend_split_lanes(const AttnLaunch& a, int kvh, int split, int splits, int len,
                                                   int chunk, SplitShared<DPL>& sh, const float (*qs)[32 * DPL]) {
  constexpr int D = 32 * DPL, kChunks = D / 8;  // 8 halves per 16-byte load
  const int start = split * chunk, end = min(start + chunk, len);
  const int G = a.n_head / a.n_head_kv;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][DPL];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) acc[g][i] = 0.f;
  }
  const int64_t head_base = kv_head_base(a, kvh);
  const __half* kc = static_cast<const __half*>(a.k_cache) + head_base;
  for (int t0 = start + 32 * warp; t0 < end; t0 += 32 * kWarps) {
    const bool valid = t0 + lane < end;  // lane 0's position always is: t0 < end
    const uint4* krow = reinterpret_cast<const uint4*>(kc + int64_t(valid ? t0 + lane : t0) * D);
    float s[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) s[g] = 0.f;
#pragma unroll
    for (int c0 = 0; c0 < kChunks; c0 += 8) {
      uint4 kk[8];
#pragma unroll
      for (int c = 0; c < 8; ++c)
        if (c0 + c < kChunks) kk[c] = __ldg(krow + c0 + c);
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        if (c0 + c >= kChunks) break;
        float kf[8];
        const __half2* h2 = reinterpret_cast<const __half2*>(&kk[c]);
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float2 f = __half22float2(h2[w]);
          kf[2 * w] = f.x;
          kf[2 * w + 1] = f.y;
        }
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
          if (g < G) {
            const float4 q0 = *reinterpret_cast<const float4*>(&qs[g][8 * (c0 + c)]);
            const float4 q1 = *reinterpret_cast<const float4*>(&qs[g][8 * (c0 + c) + 4]);
            s[g] = fmaf(q0.x, kf[0], fmaf(q0.y, kf[1], fmaf(q0.z, kf[2], fmaf(q0.w, kf[3], s[g]))));
            s[g] = fmaf(q1.x, kf[4], fmaf(q1.y, kf[5], fmaf(q1.z, kf[6], fmaf(q1.w, kf[7], s[g]))));
          }
        }
      }
    }
    float p[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) {
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
    const int n = min(32, end - t0);
    for (int j0 = 0; j0 < n; j0 += 8) {
      float v[8][DPL];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (j0 + j < n) load_row<true, DPL>(a.v_cache, head_base + int64_t(t0 + j0 + j) * D, lane, D, v[j]);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        if (j0 + j >= n) break;
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
          if (g < G) {
            const float pg = __shfl_sync(0xffffffffu, p[g], j0 + j);
#pragma unroll
            for (int i = 0; i < DPL; ++i) acc[g][i] = fmaf(pg, v[j][i], acc[g][i]);
          }
        }
      }
    }
  }
  write_split_partial<DPL>(a, kvh, split, splits, m, l, acc, sh);
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

template <int BATCH>
__global__ void attn_combine_kernel(const AttnLaunch a, int splits) {
  if (!a.early) dependency_wait();
  const int len = a.state->pos + 1;
  if (a.early) dependency_wait();
  const int d = threadIdx.x, chunk = split_chunk(a, len);
  combine_element<BATCH>(a, splits, blockIdx.x, d, (len + chunk - 1) / chunk, d < a.head_dim);
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

template <bool F16, int DPL, bool EARLY>
__global__ void __launch_bounds__(kWarps * 32) attn_split_kernel(const AttnLaunch a) {
  __shared__ SplitShared<DPL> sh;
  if constexpr (!EARLY) dependency_wait();
  const int len = a.state->pos + 1, chunk = split_chunk(a, len);
  const int splits = attention_splits_of(a.max_ctx, a.chunk), used = (len + chunk - 1) / chunk;
  int split = blockIdx.y;
  if constexpr (EARLY) {
    KvRound<DPL> first;
    if (split < used) {
      const int end = min(split * chunk + chunk, len);
      const int t0 = split * chunk + (threadIdx.x >> 5) * kPosPerWarp;
      load_round<F16, DPL>(a, kv_head_base(a, blockIdx.x), t0, end, threadIdx.x & 31, first, len - 1);
    }
    dependency_wait();
    if (split < used) attend_split<F16, DPL>(a, blockIdx.x, split, splits, len, chunk, sh, &first);
    split += gridDim.y;
  }
  for (; split < used; split += gridDim.y)
    attend_split<F16, DPL>(a, blockIdx.x, split, splits, len, chunk, sh, nullptr);
  if (a.tail_counter) {
    const int workers = min(used, int(gridDim.y));
    if (int(blockIdx.y) < workers) combine_in_last_block(a, blockIdx.x, splits, used, workers);
  }
}

template <int DPL>
__global__ void __launch_bounds__(kWarps * 32) attn_split_lanes_kernel(const AttnLaunch a) {
  __shared__ SplitShared<DPL> sh;
  __shared__ __align__(16) float qs[kMaxGroup][32 * DPL];
  dependency_wait();
  const int len = a.state->pos + 1, chunk = split_chunk(a, len);
  const int splits = attention_splits_of(a.max_ctx, a.chunk), used = (len + chunk - 1) / chunk;
  if (int(blockIdx.y) >= used) return;
  const int G = a.n_head / a.n_head_kv, D = 32 * DPL;
  const float scale = rsqrtf(float(D));
  for (int i = threadIdx.x; i < G * D; i += blockDim.x) qs[i / D][i % D] = a.q[int64_t(blockIdx.x) * G * D + i] * scale;
  __syncthreads();
  for (int split = blockIdx.y; split < used; split += gridDim.y)
    attend_split_lanes<DPL>(a, blockIdx.x, split, splits, len, chunk, sh, qs);
  if (a.tail_counter) {
    const int workers = min(used, int(gridDim.y));
    combine_in_last_block(a, blockIdx.x, splits, used, workers);
  }
}

// Split blocks per kv head: one per possible split, attn_grid's fixed count, or with attn_splits
// one per split in use.
dim3 split_grid(const AttnLaunch& a) {
  const int all = attention_max_splits(a.max_ctx, a.chunk);
  int blocks = a.grid_splits > 0 ? std::min(a.grid_splits, all) : all;
  if (a.max_splits > 0 && a.grid_splits <= 0) blocks = std::min(a.max_splits, all);
  return dim3(unsigned(a.n_head_kv), unsigned(blocks));
}

template <bool F16, bool EARLY>
void launch_split(const AttnLaunch& a, cudaStream_t stream) {
  const dim3 grid = split_grid(a);
  const int D = a.head_dim;
  auto* kernel = D <= 32 ? attn_split_kernel<F16, 1, EARLY>
                 : D <= 64 ? attn_split_kernel<F16, 2, EARLY>
                 : D <= 128 ? attn_split_kernel<F16, 4, EARLY>
                            : attn_split_kernel<F16, 8, EARLY>;
  launch_kernel("attn_split_kernel", kernel, grid, dim3(kWarps * 32), 0, stream, a);
}

}  // namespace

int attention_max_splits(int max_ctx, int chunk) { return attention_splits_of(max_ctx, chunk); }

void launch_attention_decode(const AttnLaunch& a, cudaStream_t stream) {
  if (a.head_dim > 256) throw Error("CUDA backend: head_dim " + std::to_string(a.head_dim) + " > 256 is not supported");
  if (a.n_head % a.n_head_kv != 0 || a.n_head / a.n_head_kv > kMaxGroup)
    throw Error("CUDA backend: GQA group of " + std::to_string(a.n_head / a.n_head_kv) +
                " q heads per kv head is not supported (at most 8)");
  if (a.tail_counter && a.head_dim % 32 != 0)
    throw Error("CUDA backend: the attention tail combine needs head_dim % 32 == 0 (got " + std::to_string(a.head_dim) + ")");
  if (a.lanes && a.kv_f16 && a.head_dim % 32 == 0) {
    const int D = a.head_dim;
    auto* kernel = D == 32 ? attn_split_lanes_kernel<1>
                   : D == 64 ? attn_split_lanes_kernel<2>
                   : D == 128 ? attn_split_lanes_kernel<4>
                   : D == 256 ? attn_split_lanes_kernel<8> : nullptr;
    if (kernel) return launch_kernel("attn_split_lanes_kernel", kernel, split_grid(a), dim3(kWarps * 32), 0, stream, a);
  }
  if (a.kv_f16) return a.early ? launch_split<true, true>(a, stream) : launch_split<true, false>(a, stream);
  a.early ? launch_split<false, true>(a, stream) : launch_split<false, false>(a, stream);
}

void launch_attention_combine(const AttnLaunch& a, cudaStream_t stream) {
  const int threads = a.head_dim < 32 ? 32 : ((a.head_dim + 31) / 32) * 32;
  auto* kernel = a.combine_batch > 1 ? attn_combine_kernel<8> : attn_combine_kernel<1>;
  launch_kernel("attn_combine_kernel", kernel, dim3(unsigned(a.n_head)), dim3(unsigned(threads)), 0, stream, a,
                attention_max_splits(a.max_ctx, a.chunk));
}

}  // namespace p64::cuda
