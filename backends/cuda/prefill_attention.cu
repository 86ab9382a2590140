// Causal GQA attention for a prefill chunk: query t (absolute position pos + t) attends to
// cached positions 0..pos + t, which include this chunk's own K and V (written by the rope
// kernel before this runs). Block (kv head, query tile) holds 32 (query, q head) rows — all
// G q heads of 32 / G queries — and streams the kv head's cache once through shared memory
// in tiles of 64 positions; each warp owns 4 rows (lanes split head_dim) and keeps an online
// softmax per row, the four rows' dot products interleaved so their shuffles overlap. The
// math per position is the decode kernel's (attention.cu): q pre-scaled by 1/sqrt(D), __expf.
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

template <bool F16, int DPL>
__global__ void __launch_bounds__(kWarps * 32) prefill_attn_kernel(const PrefillAttn a, int bq) {
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
    for (int p = 0; p < wend; ++p) {
      float k[DPL], v[DPL], s[kRowsPerWarp];
      load_vec<F16, DPL>(sk + p * row_bytes, lane, D, k);
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) {
        s[i] = 0.f;
#pragma unroll
        for (int e = 0; e < DPL; ++e) s[i] = fmaf(q[i][e], k[e], s[i]);
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int i = 0; i < kRowsPerWarp; ++i) s[i] += __shfl_xor_sync(0xffffffffu, s[i], o);
      load_vec<F16, DPL>(sv + p * row_bytes, lane, D, v);
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) {
        if (p0 + p < len[i]) {  // causal mask (uniform across the warp)
          const float mn = fmaxf(m[i], s[i]);
          const float corr = __expf(m[i] - mn), pr = __expf(s[i] - mn);
          l[i] = l[i] * corr + pr;
#pragma unroll
          for (int e = 0; e < DPL; ++e) acc[i][e] = fmaf(acc[i][e], corr, pr * v[e]);
          m[i] = mn;
        }
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
    P64_CUDA_CHECK(
        cudaFuncSetAttribute(prefill_attn_kernel<F16, DPL>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    configured = smem;
  }
  const dim3 grid(unsigned(a.n_head_kv), unsigned((a.T + bq - 1) / bq));
  prefill_attn_kernel<F16, DPL><<<grid, kWarps * 32, smem, stream>>>(a, bq);
  P64_CUDA_CHECK_LAUNCH("prefill_attn_kernel");
}

template <bool F16>
void launch_f(const PrefillAttn& a, cudaStream_t stream) {
  if (a.head_dim <= 32) launch_dpl<F16, 1>(a, stream);
  else if (a.head_dim <= 64) launch_dpl<F16, 2>(a, stream);
  else if (a.head_dim <= 128) launch_dpl<F16, 4>(a, stream);
  else launch_dpl<F16, 8>(a, stream);
}

}  // namespace

void launch_prefill_attention(const PrefillAttn& a, cudaStream_t stream) {
  if (a.head_dim <= 0 || a.head_dim > 256 || a.head_dim % 2 != 0)
    throw Error("prefill attention: head_dim " + std::to_string(a.head_dim) + " not supported (even, <= 256)");
  if (a.n_head_kv <= 0 || a.n_head % a.n_head_kv != 0 || a.n_head / a.n_head_kv > kRows)
    throw Error("prefill attention: " + std::to_string(a.n_head) + " q heads over " + std::to_string(a.n_head_kv) +
                " kv heads not supported");
  if (a.T <= 0 || a.pos < 0 || a.pos + a.T > a.max_ctx) throw Error("prefill attention: positions outside the cache");
  if (a.group == 4) return launch_prefill_attention_grouped(a, stream);  // prefill_attention_grouped.cu
  if (a.group != 1) throw Error("prefill attention: positions per softmax update must be 1 or 4");
  if (a.kv_f16) launch_f<true>(a, stream);
  else launch_f<false>(a, stream);
}

}  // namespace p64::cuda
