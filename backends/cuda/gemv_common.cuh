#pragma once
// What the decode GEMV kernels share (gemv.cu: a warp owns whole rows; gemv_split.cu: a block
// splits its rows' units over all its threads): the launch arguments and the rope epilogue.
#include <cuda_fp16.h>

#include "backends/cuda/kernels.h"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda {

struct GemvArgs {
  GemvSegment seg[3];
  int nseg;
  int64_t total_rows;
  int64_t n;
  ActRef act;
  GemvFusion fuse;
  L2Prefetch prefetch;
  GemvRope rope;
  GemvPrologue pro;
  bool cap_registers;  // host side only: picks the kernel instance
  int in_flight;       // host side only: units per lane in flight (1 or 2), picks the instance
  bool ring;           // host side only: gemv_ring (2 in flight, each refilled once consumed)
};

// The qkv_rope epilogue: lanes 0..R-1 hold rows row0..row0+R-1 (row0 even, so lanes 2j and
// 2j+1 hold one rotation pair of one head); q and k pairs are rotated in place and k and v rows
// written to the cache at the step's position, as rope.cu does.
template <int R>
__device__ __forceinline__ void rope_epilogue(const GemvArgs& a, int64_t row0, const float res[R]) {
  const int lane = threadIdx.x & 31;
  float mine = 0.f;
#pragma unroll
  for (int i = 0; i < R; ++i)
    if (lane == i) mine = res[i];
  const float other = __shfl_xor_sync(0xffffffffu, mine, 1);
  if (lane >= R || row0 + lane >= a.total_rows) return;
  int64_t rr = row0 + lane;
  int s = 0;
  while (s + 1 < a.nseg && rr >= a.seg[s].rows) {
    rr -= a.seg[s].rows;
    ++s;
  }
  const GemvRope& p = a.rope;
  const int64_t idx = (a.seg[s].out + rr) - p.qkv;  // row of the whole q, k, v vector
  const int role = idx < p.q_rows ? 1 : idx < p.q_rows + p.kv_rows ? 2 : 3;
  const int64_t in_role = role == 1 ? idx : role == 2 ? idx - p.q_rows : idx - p.q_rows - p.kv_rows;
  const int d = int(in_role % p.head_dim);
  const int pos = p.state->pos;
  float v = mine;
  if (role != 3 && d < p.rope_dim) {
    float sn, cs;
    sincosf(float(pos) * p.inv_freq[d >> 1], &sn, &cs);
    v = (d & 1) ? other * sn + mine * cs : mine * cs - other * sn;
    a.seg[s].out[rr] = v;
  }
  if (role == 2 || role == 3) {
    const int64_t off = (in_role / p.head_dim * p.max_ctx + pos) * p.head_dim + d;
    void* cache = role == 2 ? p.k_cache : p.v_cache;
    if (p.kv_f16) static_cast<__half*>(cache)[off] = __float2half_rn(v);
    else static_cast<float*>(cache)[off] = v;
  }
}

// Rows row0 .. row0 + R - 1 of a launch, found in its segments: each row's pointers, output and
// whether it exists. SwiGLU keeps only the gate rows' pointers: an up row's are the gate row's
// moved by the distance between the two tensors (same shape and type), which frees registers.
template <class P, int R, int MODE>
__device__ __forceinline__ void find_rows(const GemvArgs& a, int64_t row0, typename P::RowPtr ref[R], float* out[R],
                                          bool valid[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    int64_t rr = row0 + i;
    valid[i] = rr < a.total_rows;
    int s = 0;
    if constexpr (MODE != 2) {
      while (s + 1 < a.nseg && rr >= a.seg[s].rows) { rr -= a.seg[s].rows; ++s; }
    }
    if (!valid[i]) rr = 0;
    ref[i] = P::row_ptr(RowRef{a.seg[s].w, a.seg[s].nb, rr, a.n});
    out[i] = a.seg[s].out + rr;
  }
}

// Unit u of every row into raw (SwiGLU: the R gate rows, then their R up rows).
template <class P, int R, int MODE>
__device__ __forceinline__ void load_unit_rows(typename P::Raw* raw, const typename P::RowPtr ref[R], const bool valid[R],
                                               int64_t up_bytes, int64_t u) {
  constexpr int NR = MODE == 2 ? 2 * R : R;
#pragma unroll
  for (int i = 0; i < NR; ++i)
    if (valid[i % R]) P::load(raw[i], i < R ? ref[i] : P::shift(ref[i - R], up_bytes), u);
}

// The block-split GEMV (gemv_split.cu) for rows_per_block rows per block; false where it has
// no kernel for the dtype, mode or fusion (the caller then takes the warp kernel).
bool launch_gemv_split(const GemvArgs& a, uint32_t dtype, GemvMode mode, int rows_per_block, cudaStream_t stream);

}  // namespace p64::cuda
