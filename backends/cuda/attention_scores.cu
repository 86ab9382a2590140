// Attention whose scores take a scale of their own, a soft-cap or a sliding window (gemma2,
// gemma3, phi3 and Mistral-style windows; arch_kernels.h AttnScores), for the decode step and
// the batched prefill. The Llama kernels (attention.cu, attention_stream.cu,
// prefill_attention.cu) are left as they are; these run only for the layers that need them.
//
// Decode: flash-decoding as attention.cu does it — block (kv head, split) walks its split's
// positions for the G q heads of the kv head and writes a partial (max, sum, weighted V) in the
// same layout, so launch_attention_combine merges them. Positions outside the window leave a
// split empty (max -inf, sums 0), which the merge weighs as nothing; the split holding the
// step's own position is never empty.
// Prefill: a warp per (query, q head) row, online softmax over the row's positions, read from
// the cache in place.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "backends/cuda/arch_kernels.h"
#include "backends/cuda/attention_split.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

// The first position a query at causal length n sees (cpu::AttentionScores::first).
__device__ __forceinline__ int first_position(const AttnScores& sc, int n) {
  return sc.window > 0 && n > sc.window ? n - sc.window : 0;
}

// s soft-capped when the layer caps (cpu::softcap).
__device__ __forceinline__ float capped(const AttnScores& sc, float s) {
  return sc.softcap > 0.f ? sc.softcap * tanhf(s / sc.softcap) : s;
}

// The online-softmax update of one head's running max m, sum l and output acc with score s and
// V row v (each lane its DPL elements).
template <int DPL>
__device__ __forceinline__ void online_update(float s, const float (&v)[DPL], float& m, float& l, float (&acc)[DPL]) {
  const float mn = fmaxf(m, s);
  const float corr = expf(m - mn), pr = expf(s - mn);  // corr 0 on the first position (m = -inf)
  l = l * corr + pr;
#pragma unroll
  for (int i = 0; i < DPL; ++i) acc[i] = fmaf(acc[i], corr, pr * v[i]);
  m = mn;
}

template <bool F16, int DPL>
__global__ void __launch_bounds__(kWarps * 32) attn_scored_split_kernel(const AttnLaunch a, const AttnScores sc) {
  __shared__ SplitShared<DPL> sh;
  dependency_wait();
  const SplitGeometry g = split_geometry(a);
  const int kvh = blockIdx.x, G = a.n_head / a.n_head_kv, D = a.head_dim;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int first = first_position(sc, g.len);
  const int64_t head_base = kv_head_base(a, kvh);
  for (int split = blockIdx.y; split < g.used; split += gridDim.y) {
    float q[kMaxGroup][DPL], m[kMaxGroup], l[kMaxGroup], acc[kMaxGroup][DPL];
    reset_softmax<DPL, kMaxGroup>(m, l, acc);
#pragma unroll
    for (int h = 0; h < kMaxGroup; ++h)
#pragma unroll
      for (int i = 0; i < DPL; ++i) {
        const int d = lane * DPL + i;
        q[h][i] = h < G && d < D ? a.q[int64_t(kvh * G + h) * D + d] * sc.scale : 0.f;
      }
    const int start = max(split * g.chunk, first), end = min(split * g.chunk + g.chunk, g.len);
    for (int p = start + warp; p < end; p += kWarps) {
      float k[DPL], v[DPL];
      load_row<F16, DPL>(a.k_cache, head_base + int64_t(p) * D, lane, D, k);
      load_row<F16, DPL>(a.v_cache, head_base + int64_t(p) * D, lane, D, v);
#pragma unroll
      for (int h = 0; h < kMaxGroup; ++h) {
        if (h < G) {
          float s = 0.f;
#pragma unroll
          for (int i = 0; i < DPL; ++i) s = fmaf(q[h][i], k[i], s);
          s = capped(sc, warp_sum(s));
          online_update<DPL>(s, v, m[h], l[h], acc[h]);
        }
      }
    }
    write_split_partial<DPL>(a, kvh, split, g.splits, m, l, acc, sh);
  }
}

constexpr int kRowWarps = 4;  // prefill: (query, q head) rows per block

template <bool F16, int DPL>
__global__ void __launch_bounds__(kRowWarps * 32) prefill_attn_scored_kernel(const PrefillAttn a, const AttnScores sc) {
  dependency_wait();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t r = int64_t(blockIdx.x) * kRowWarps + warp;
  if (r >= int64_t(a.T) * a.n_head) return;  // no block-wide sync below
  const int t = int(r / a.n_head), h = int(r % a.n_head), D = a.head_dim;
  const int kvh = h / (a.n_head / a.n_head_kv);
  const int len = a.pos + t + 1;
  float q[DPL], acc[DPL], m = -INFINITY, l = 0.f;
#pragma unroll
  for (int i = 0; i < DPL; ++i) {
    const int d = lane * DPL + i;
    q[i] = d < D ? a.q[int64_t(t) * a.ldq + int64_t(h) * D + d] * sc.scale : 0.f;
    acc[i] = 0.f;
  }
  const int64_t head_base = int64_t(kvh) * a.max_ctx * D;
  for (int p = first_position(sc, len); p < len; ++p) {
    float k[DPL], v[DPL];
    load_row<F16, DPL>(a.k_cache, head_base + int64_t(p) * D, lane, D, k);
    load_row<F16, DPL>(a.v_cache, head_base + int64_t(p) * D, lane, D, v);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < DPL; ++i) s = fmaf(q[i], k[i], s);
    online_update<DPL>(capped(sc, warp_sum(s)), v, m, l, acc);
  }
  __half* out = static_cast<__half*>(a.out) + int64_t(t) * a.ldo + int64_t(h) * D;
  const float inv = 1.f / l;
#pragma unroll
  for (int i = 0; i < DPL; ++i) {
    const int d = lane * DPL + i;
    if (d < D) out[d] = __float2half_rn(acc[i] * inv);
  }
}

template <bool F16>
void launch_scored_split(const AttnLaunch& a, const AttnScores& s, cudaStream_t stream) {
  // A block per possible split (most exit at once at short contexts), within the grid's y limit:
  // a block walks every gridDim.y-th split in use.
  const int splits = std::min(attention_max_splits(a.max_ctx, a.chunk), 65535);
  const dim3 grid(unsigned(a.n_head_kv), unsigned(splits));
  const int D = a.head_dim;
  auto* kernel = D <= 32    ? attn_scored_split_kernel<F16, 1>
                 : D <= 64  ? attn_scored_split_kernel<F16, 2>
                 : D <= 128 ? attn_scored_split_kernel<F16, 4>
                            : attn_scored_split_kernel<F16, 8>;
  launch_kernel("attn_scored_split_kernel", kernel, grid, dim3(kWarps * 32), 0, stream, a, s);
}

template <bool F16>
void launch_scored_prefill(const PrefillAttn& a, const AttnScores& s, cudaStream_t stream) {
  const int64_t rows = int64_t(a.T) * a.n_head;
  const dim3 grid(unsigned((rows + kRowWarps - 1) / kRowWarps));
  const int D = a.head_dim;
  auto* kernel = D <= 32    ? prefill_attn_scored_kernel<F16, 1>
                 : D <= 64  ? prefill_attn_scored_kernel<F16, 2>
                 : D <= 128 ? prefill_attn_scored_kernel<F16, 4>
                            : prefill_attn_scored_kernel<F16, 8>;
  launch_kernel("prefill_attn_scored_kernel", kernel, grid, dim3(kRowWarps * 32), 0, stream, a, s);
}

}  // namespace

void launch_attention_scored(const AttnLaunch& a, const AttnScores& s, cudaStream_t stream) {
  if (a.head_dim <= 0 || a.head_dim > 256) throw Error("CUDA backend: head_dim " + std::to_string(a.head_dim) + " > 256");
  if (a.n_head % a.n_head_kv != 0 || a.n_head / a.n_head_kv > kMaxGroup)
    throw Error("CUDA backend: GQA group of " + std::to_string(a.n_head / a.n_head_kv) +
                " q heads per kv head is not supported (at most 8)");
  // The combine recomputes this split geometry: only the fixed chunk of attention.cu's plain kernel.
  if (a.max_splits != 0 || a.stream_kv || a.tail_counter || a.early)
    throw Error("CUDA backend: scored attention runs with a fixed attn_chunk split, merged by the combine pass");
  if (a.kv_f16) launch_scored_split<true>(a, s, stream);
  else launch_scored_split<false>(a, s, stream);
}

void launch_prefill_attention_scored(const PrefillAttn& a, const AttnScores& s, cudaStream_t stream) {
  if (a.head_dim <= 0 || a.head_dim > 256)
    throw Error("prefill attention: head_dim " + std::to_string(a.head_dim) + " not supported (<= 256)");
  if (a.n_head_kv <= 0 || a.n_head % a.n_head_kv != 0) throw Error("prefill attention: q heads not a multiple of kv heads");
  if (a.T <= 0 || a.pos < 0 || a.pos + a.T > a.max_ctx) throw Error("prefill attention: positions outside the cache");
  if (a.kv_f16) launch_scored_prefill<true>(a, s, stream);
  else launch_scored_prefill<false>(a, s, stream);
}

}  // namespace p64::cuda
