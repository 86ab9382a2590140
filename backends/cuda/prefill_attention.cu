// Causal GQA attention for a prefill chunk: query t (absolute position pos + t) attends to
// cached positions 0..pos + t, which include this chunk's own K and V (written by the rope
// kernel before this runs). Block (kv head, query tile) holds 32 (query, q head) rows — all
// G q heads of 32 / G queries — and streams the kv head's cache once through shared memory
// in tiles of 64 positions; each warp owns 4 rows (lanes split head_dim) and keeps an online
// softmax per row, the four rows' dot products interleaved so their shuffles overlap. The
// math per position is the decode kernel's (attention.cu): q pre-scaled by 1/sqrt(D), __expf.
//
// prefill_attn_group=4 (opt-in) makes one online-softmax update per group of 4 cached
// positions: a warp's 4 rows x 4 positions dot products are reduced together so their 80
// shuffles overlap, and each row rescales once per group (5 exponentials per 4 positions
// instead of 8). Masked positions of a group score -inf; those past the tile read as zeros.
// The group is the kernel's template parameter; with 1 the update is the decode kernel's.
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/prefill_kernels.h"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

constexpr int kWarps = 8, kRowsPerWarp = 4, kRows = kWarps * kRowsPerWarp, kTile = 64;

// A lane's DPL consecutive elements (lane * DPL ...) of one cached K or V row, as floats;
// elements past head_dim read as zeros.
template <bool F16, int DPL>
__device__ __forceinline__ void load_vec(const void* row, int lane, int D, float out[DPL]) {
  const int d0 = lane * DPL;
  if constexpr (F16 && DPL >= 2 && DPL % 2 == 0) {
    if (d0 + DPL <= D) {
      const __half2* p = reinterpret_cast<const __half2*>(static_cast<const __half*>(row) + d0);
#pragma unroll
      for (int i = 0; i < DPL / 2; ++i) {
        const float2 f = __half22float2(p[i]);
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < DPL; ++i) {
    const int d = d0 + i;
    if (d < D) out[i] = F16 ? __half2float(static_cast<const __half*>(row)[d]) : static_cast<const float*>(row)[d];
    else out[i] = 0.f;
  }
}

// A row's online-softmax update with one position's score and V: the decode kernel's update
// (attention.cu), so a prefilled position is attended as a decoded one.
template <int DPL>
__device__ __forceinline__ void update_one(float s, const float (&v)[DPL], float& m, float& l, float (&acc)[DPL]) {
  const float mn = fmaxf(m, s);
  const float corr = __expf(m - mn), pr = __expf(s - mn);
  l = l * corr + pr;
#pragma unroll
  for (int e = 0; e < DPL; ++e) acc[e] = fmaf(acc[e], corr, pr * v[e]);
  m = mn;
}

// kGroup: positions per online-softmax update (1 or 4; divides kTile). Over 120 lines because
// the grouped update is written in place: moved into a helper like update_one, nvcc renumbers
// its registers and ptxas emits other sm_90 code; in place, each mode's machine code is byte
// for byte that of the two kernels this one replaced, as measured.
template <int kGroup, bool F16, int DPL>
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
    // Positions in [wend, p + kGroup) read as zeros and are masked for every row: past the
    // tile only when the tile is the block's last (all lengths end in it) or past warp_len.
    for (int p = 0; p < wend; p += kGroup) {
      float k[kGroup][DPL], v[kGroup][DPL], s[kRowsPerWarp][kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j) {
        if (p + j < wend) {
          load_vec<F16, DPL>(sk + (p + j) * row_bytes, lane, D, k[j]);
          if constexpr (kGroup > 1) load_vec<F16, DPL>(sv + (p + j) * row_bytes, lane, D, v[j]);
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
      // One position reads its V after the shuffles, a group with its Ks: the orders each
      // mode was measured with.
      if constexpr (kGroup == 1) load_vec<F16, DPL>(sv + p * row_bytes, lane, D, v[0]);
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) {
        if (p0 + p >= len[i]) continue;  // causal mask (uniform across the warp): nothing left for this row
        if constexpr (kGroup == 1) update_one<DPL>(s[i][0], v[0], m[i], l[i], acc[i]);
        else {
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

template <int kGroup, bool F16, int DPL>
void launch_dpl(const PrefillAttn& a, cudaStream_t stream) {
  const int G = a.n_head / a.n_head_kv;
  const int bq = kRows / G;
  const size_t smem = size_t(2) * kTile * a.head_dim * (F16 ? 2 : 4);
  static size_t configured = 0;  // largest dynamic shared size allowed so far for this instantiation
  if (smem > configured) {
    P64_CUDA_CHECK(cudaFuncSetAttribute(prefill_attn_kernel<kGroup, F16, DPL>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    configured = smem;
  }
  const dim3 grid(unsigned(a.n_head_kv), unsigned((a.T + bq - 1) / bq));
  prefill_attn_kernel<kGroup, F16, DPL><<<grid, kWarps * 32, smem, stream>>>(a, bq);
  P64_CUDA_CHECK_LAUNCH(kGroup == 1 ? "prefill_attn_kernel" : "prefill_attn_kernel (grouped)");
}

template <int kGroup, bool F16>
void launch_f(const PrefillAttn& a, cudaStream_t stream) {
  if (a.head_dim <= 32) launch_dpl<kGroup, F16, 1>(a, stream);
  else if (a.head_dim <= 64) launch_dpl<kGroup, F16, 2>(a, stream);
  else if (a.head_dim <= 128) launch_dpl<kGroup, F16, 4>(a, stream);
  else launch_dpl<kGroup, F16, 8>(a, stream);
}

template <int kGroup>
void launch_group(const PrefillAttn& a, cudaStream_t stream) {
  if (a.kv_f16) launch_f<kGroup, true>(a, stream);
  else launch_f<kGroup, false>(a, stream);
}

}  // namespace

void launch_prefill_attention(const PrefillAttn& a, cudaStream_t stream) {
  if (a.head_dim <= 0 || a.head_dim > 256 || a.head_dim % 2 != 0)
    throw Error("prefill attention: head_dim " + std::to_string(a.head_dim) + " not supported (even, <= 256)");
  if (a.n_head_kv <= 0 || a.n_head % a.n_head_kv != 0 || a.n_head / a.n_head_kv > kRows)
    throw Error("prefill attention: " + std::to_string(a.n_head) + " q heads over " + std::to_string(a.n_head_kv) +
                " kv heads not supported");
  if (a.T <= 0 || a.pos < 0 || a.pos + a.T > a.max_ctx) throw Error("prefill attention: positions outside the cache");
  if (a.group == 1) launch_group<1>(a, stream);
  else if (a.group == 4) launch_group<4>(a, stream);
  else throw Error("prefill attention: positions per softmax update must be 1 or 4");
}

}  // namespace p64::cuda
