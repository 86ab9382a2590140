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
#include "backends/cuda/attention_split.cuh"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {
namespace {

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
template <int DPL, int NG>
__device__ __forceinline__ void attend_split_lanes(const AttnLaunch& a, int kvh, int split, int splits, int len,
                                                   int chunk, SplitShared<DPL>& sh, const float (*qs)[32 * DPL]) {
  constexpr int D = 32 * DPL, kChunks = D / 8;  // 8 halves per 16-byte load
  const int start = split * chunk, end = min(start + chunk, len);
  const int G = a.n_head / a.n_head_kv;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float m[NG], l[NG], acc[NG][DPL];
  reset_softmax<DPL, NG>(m, l, acc);
  const int64_t head_base = kv_head_base(a, kvh);
  const __half* kc = static_cast<const __half*>(a.k_cache) + head_base;
  for (int t0 = start + 32 * warp; t0 < end; t0 += 32 * kWarps) {
    const bool valid = t0 + lane < end;  // lane 0's position always is: t0 < end
    const uint4* krow = reinterpret_cast<const uint4*>(kc + int64_t(valid ? t0 + lane : t0) * D);
    float s[NG];
#pragma unroll
    for (int g = 0; g < NG; ++g) s[g] = 0.f;
#pragma unroll
    for (int c0 = 0; c0 < kChunks; c0 += 8) {
      uint4 kk[8];
#pragma unroll
      for (int c = 0; c < 8; ++c)
        if (c0 + c < kChunks) kk[c] = __ldg(krow + c0 + c);
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        if (c0 + c >= kChunks) break;
        dot_k_piece<DPL, NG>(kk[c], qs, c0 + c, G, s);
      }
    }
    float p[NG];
    softmax_tile<DPL, NG>(s, valid, G, m, l, acc, p);
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
        for (int g = 0; g < NG; ++g) {
          if (g < G) {
            const float pg = __shfl_sync(0xffffffffu, p[g], j0 + j);
#pragma unroll
            for (int i = 0; i < DPL; ++i) acc[g][i] = fmaf(pg, v[j][i], acc[g][i]);
          }
        }
      }
    }
  }
  write_split_partial<DPL, NG>(a, kvh, split, splits, m, l, acc, sh);
}


template <int BATCH>
__global__ void attn_combine_kernel(const AttnLaunch a, int splits) {
  if (!a.early) dependency_wait();
  const SplitGeometry g = split_geometry(a);
  if (a.early) dependency_wait();
  combine_element<BATCH>(a, splits, blockIdx.x, threadIdx.x, g.used, int(threadIdx.x) < a.head_dim);
}

template <bool F16, int DPL, bool EARLY>
__global__ void __launch_bounds__(kWarps * 32) attn_split_kernel(const AttnLaunch a) {
  __shared__ SplitShared<DPL> sh;
  if constexpr (!EARLY) dependency_wait();
  const SplitGeometry g = split_geometry(a);
  const int len = g.len, chunk = g.chunk, splits = g.splits, used = g.used;
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
  tail_combine(a, g);
}

template <int DPL, int NG>
__global__ void __launch_bounds__(kWarps * 32) attn_split_lanes_kernel(const AttnLaunch a) {
  __shared__ SplitShared<DPL> sh;
  __shared__ __align__(16) float qs[NG][32 * DPL];
  dependency_wait();
  const SplitGeometry g = split_geometry(a);
  if (int(blockIdx.y) >= g.used) return;
  const int G = a.n_head / a.n_head_kv, D = 32 * DPL;
  const float scale = rsqrtf(float(D));
  for (int i = threadIdx.x; i < G * D; i += blockDim.x) qs[i / D][i % D] = a.q[int64_t(blockIdx.x) * G * D + i] * scale;
  __syncthreads();
  for (int split = blockIdx.y; split < g.used; split += gridDim.y)
    attend_split_lanes<DPL, NG>(a, blockIdx.x, split, g.splits, g.len, g.chunk, sh, qs);
  tail_combine(a, g);
}

template <int DPL>
void launch_lanes(const AttnLaunch& a, dim3 grid, cudaStream_t stream) {
  const int G = a.n_head / a.n_head_kv;
  auto* kernel = G <= 1   ? attn_split_lanes_kernel<DPL, 1>
                 : G <= 2 ? attn_split_lanes_kernel<DPL, 2>
                 : G <= 4 ? attn_split_lanes_kernel<DPL, 4>
                          : attn_split_lanes_kernel<DPL, 8>;
  launch_kernel("attn_split_lanes_kernel", kernel, grid, dim3(kWarps * 32), 0, stream, a);
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
  if (a.stream_kv && attention_stream_supported(a)) return launch_attention_stream(a, stream);
  if (a.lanes && a.kv_f16) {
    switch (a.head_dim) {
      case 32: return launch_lanes<1>(a, split_grid(a), stream);
      case 64: return launch_lanes<2>(a, split_grid(a), stream);
      case 128: return launch_lanes<4>(a, split_grid(a), stream);
      case 256: return launch_lanes<8>(a, split_grid(a), stream);
      default: break;  // the warp-row kernel below
    }
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
