// prefill_attn_group=4 (opt-in): the batched prefill's causal GQA attention (the layout and
// tiling of prefill_attention.cu) with one online-softmax update per group of 4 cached
// positions: a warp's 4 rows x 4 positions dot products are reduced together so their 80
// shuffles overlap, and each row rescales once per group (5 exponentials per 4 positions
// instead of 8). Masked positions of a group score -inf; those past the tile read as zeros.
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/prefill_attn_rows.cuh"
#include "backends/cuda/prefill_kernels.h"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

using prefill::load_vec;

constexpr int kWarps = 8, kRowsPerWarp = 4, kRows = kWarps * kRowsPerWarp, kTile = 64;
constexpr int kGroup = 4;  // positions per softmax update; divides kTile

template <bool F16, int DPL>
__global__ void __launch_bounds__(kWarps * 32) prefill_attn_grouped_kernel(const PrefillAttn a, int bq) {
  constexpr int kElt = F16 ? 2 : 4;
  extern __shared__ __align__(16) unsigned char smem[];
  const int D = a.head_dim, G = a.n_head / a.n_head_kv;
  unsigned char* sk = smem;
  unsigned char* sv = smem + size_t(kTile) * D * kElt;
  const int kvh = blockIdx.x, t0 = blockIdx.y * bq;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float scale = rsqrtf(float(D));

  float q[kRowsPerWarp][DPL], acc[kRowsPerWarp][DPL], m[kRowsPerWarp], l[kRowsPerWarp];
  int len[kRowsPerWarp];
  int warp_len = 0;
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp + kWarps * i, tq = t0 + r / G, h = kvh * G + r % G;
    const bool valid = r < bq * G && tq < a.T;
    len[i] = valid ? a.pos + tq + 1 : 0;
    warp_len = max(warp_len, len[i]);
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int e = 0; e < DPL; ++e) {
      const int d = lane * DPL + e;
      acc[i][e] = 0.f;
      q[i][e] = valid && d < D ? a.q[int64_t(tq) * a.ldq + int64_t(h) * D + d] * scale : 0.f;
    }
  }
  const int last_t = min(t0 + bq, a.T) - 1;
  const int block_len = a.pos + last_t + 1;
  const size_t row_bytes = size_t(D) * kElt;
  const unsigned char* kbase = static_cast<const unsigned char*>(a.k_cache) + size_t(kvh) * a.max_ctx * row_bytes;
  const unsigned char* vbase = static_cast<const unsigned char*>(a.v_cache) + size_t(kvh) * a.max_ctx * row_bytes;

  for (int p0 = 0; p0 < block_len; p0 += kTile) {
    const int cnt = min(kTile, block_len - p0);
    __syncthreads();  // the previous tile is consumed
    const size_t bytes = size_t(cnt) * row_bytes;
    if (row_bytes % 16 == 0) {
      for (size_t off = threadIdx.x * 16; off < bytes; off += blockDim.x * 16) {
        *reinterpret_cast<uint4*>(sk + off) = *reinterpret_cast<const uint4*>(kbase + p0 * row_bytes + off);
        *reinterpret_cast<uint4*>(sv + off) = *reinterpret_cast<const uint4*>(vbase + p0 * row_bytes + off);
      }
    } else {
      for (size_t off = threadIdx.x * 4; off < bytes; off += blockDim.x * 4) {
        *reinterpret_cast<uint32_t*>(sk + off) = *reinterpret_cast<const uint32_t*>(kbase + p0 * row_bytes + off);
        *reinterpret_cast<uint32_t*>(sv + off) = *reinterpret_cast<const uint32_t*>(vbase + p0 * row_bytes + off);
      }
    }
    __syncthreads();
    const int wend = min(cnt, warp_len - p0);  // positions any of this warp's rows still needs
    // Positions in [wend, p + kGroup) read as zeros and are masked for every row: past the
    // tile only when the tile is the block's last (all lengths end in it) or past warp_len.
    for (int p = 0; p < wend; p += kGroup) {
      float k[kGroup][DPL], v[kGroup][DPL], s[kRowsPerWarp][kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        if (p + j < wend) {
          load_vec<F16, DPL>(sk + (p + j) * row_bytes, lane, D, k[j]);
          load_vec<F16, DPL>(sv + (p + j) * row_bytes, lane, D, v[j]);
        } else {
#pragma unroll
          for (int e = 0; e < DPL; ++e) k[j][e] = v[j][e] = 0.f;
        }
      }
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
        for (int j = 0; j < kGroup; ++j) {
          float acc_s = 0.f;
#pragma unroll
          for (int e = 0; e < DPL; ++e) acc_s = fmaf(q[i][e], k[j][e], acc_s);
          s[i][j] = acc_s;
        }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int i = 0; i < kRowsPerWarp; ++i)
#pragma unroll
          for (int j = 0; j < kGroup; ++j) s[i][j] += __shfl_xor_sync(0xffffffffu, s[i][j], o);
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) {
        if (p0 + p >= len[i]) continue;  // causal mask (uniform across the warp): nothing left for this row
        float mx = m[i];
#pragma unroll
        for (int j = 0; j < kGroup; ++j) {
          if (p0 + p + j >= len[i]) s[i][j] = -INFINITY;
          mx = fmaxf(mx, s[i][j]);
        }
        const float corr = __expf(m[i] - mx);  // mx is finite: position p is unmasked
        float pr[kGroup], sum = 0.f;
#pragma unroll
        for (int j = 0; j < kGroup; ++j) {
          pr[j] = __expf(s[i][j] - mx);
          sum += pr[j];
        }
        l[i] = l[i] * corr + sum;
#pragma unroll
        for (int e = 0; e < DPL; ++e) {
          float a_e = acc[i][e] * corr;
#pragma unroll
          for (int j = 0; j < kGroup; ++j) a_e = fmaf(pr[j], v[j][e], a_e);
          acc[i][e] = a_e;
        }
        m[i] = mx;
      }
    }
  }
  __half* out = static_cast<__half*>(a.out);
#pragma unroll
  for (int i = 0; i < kRowsPerWarp; ++i) {
    if (len[i] == 0) continue;
    const int r = warp + kWarps * i, tq = t0 + r / G, h = kvh * G + r % G;
    const float inv = 1.f / l[i];
#pragma unroll
    for (int e = 0; e < DPL; ++e) {
      const int d = lane * DPL + e;
      if (d < D) out[int64_t(tq) * a.ldo + int64_t(h) * D + d] = __float2half_rn(acc[i][e] * inv);
    }
  }
}

template <bool F16, int DPL>
void launch_dpl(const PrefillAttn& a, cudaStream_t stream) {
  const int G = a.n_head / a.n_head_kv;
  const int bq = kRows / G;
  const size_t smem = size_t(2) * kTile * a.head_dim * (F16 ? 2 : 4);
  static size_t configured = 0;  // largest dynamic shared size allowed so far for this instantiation
  if (smem > configured) {
    P64_CUDA_CHECK(cudaFuncSetAttribute(prefill_attn_grouped_kernel<F16, DPL>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    configured = smem;
  }
  const dim3 grid(unsigned(a.n_head_kv), unsigned((a.T + bq - 1) / bq));
  prefill_attn_grouped_kernel<F16, DPL><<<grid, kWarps * 32, smem, stream>>>(a, bq);
  P64_CUDA_CHECK_LAUNCH("prefill_attn_grouped_kernel");
}

template <bool F16>
void launch_f(const PrefillAttn& a, cudaStream_t stream) {
  if (a.head_dim <= 32) launch_dpl<F16, 1>(a, stream);
  else if (a.head_dim <= 64) launch_dpl<F16, 2>(a, stream);
  else if (a.head_dim <= 128) launch_dpl<F16, 4>(a, stream);
  else launch_dpl<F16, 8>(a, stream);
}

}  // namespace

// Shapes and positions are checked by launch_prefill_attention, the only caller.
void launch_prefill_attention_grouped(const PrefillAttn& a, cudaStream_t stream) {
  if (a.kv_f16) launch_f<true>(a, stream);
  else launch_f<false>(a, stream);
}

}  // namespace p64::cuda
