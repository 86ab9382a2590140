// The prefill GEMM: Y[T x rows] (=|+=) X[T x n] * W^T with X f16 and W in any weight format.
// A block computes a BM x 128 tile of Y (BM tokens, 128 weight rows) over k-tiles of 64:
// X tiles arrive by cp.async, W tiles are read raw into registers one k-tile ahead and
// dequantized to f16 into shared memory after the current tile's MMAs (prefill_tiles.cuh),
// two shared-memory stages, one barrier per k-tile. Eight warps as 2 (tokens) x 4 (rows),
// each warp BM/2 x 32 with mma.sync.m16n8k16 (f16 inputs, f32 accumulators) fed by
// ldmatrix from rows padded to 72 halves (conflict-free). Up to three matrices of one dtype
// share a launch (q, k, v; gate, up): grid.y walks their 128-row tiles in turn, grid.x the
// token tiles, so the blocks that read one weight tile run next to each other (L2 reuse).
// grid.z splits the k-tiles when the output tiles alone would leave multiprocessors idle (q/k/v,
// o and down of a 512-token prompt on 132 SMs): each split writes its partial tile to a
// workspace and splitk_reduce_kernel adds the splits in order and applies the epilogue.
#include <algorithm>
#include <cuda_fp16.h>

#include <string>

#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/prefill_kernels.h"
#include "backends/cuda/prefill_tiles.cuh"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

using prefill::WTile;

constexpr int kBN = 128, kBK = 64, kThreads = 256;
constexpr int kLds = kBK + 8;  // halves per shared row: 144 bytes, ldmatrix rows hit distinct banks

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__host__ __device__ constexpr int64_t row_tiles(int64_t rows) { return (rows + kBN - 1) / kBN; }

template <uint32_t DT, int BM>
__global__ void __launch_bounds__(kThreads, 2) prefill_gemm_kernel(const PrefillGemm g) {
  constexpr int MT = BM / 32;  // m16 tiles per warp (a warp covers BM / 2 tokens)
  using Tile = WTile<DT>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* sa = reinterpret_cast<__half*>(smem_raw);  // [2][BM][kLds]
  __half* sb = sa + 2 * BM * kLds;                    // [2][kBN][kLds]

  // Which matrix (segment) and which 128-row tile of it this block computes.
  int64_t tile = blockIdx.y;
  int s = 0;
  while (s + 1 < g.nseg && tile >= row_tiles(s == 0 ? g.seg[0].rows : g.seg[1].rows)) {
    tile -= row_tiles(s == 0 ? g.seg[0].rows : g.seg[1].rows);
    ++s;
  }
  const PrefillGemmSeg seg = s == 0 ? g.seg[0] : (s == 1 ? g.seg[1] : g.seg[2]);
  // This segment's first column among all segments' rows (the split-K workspace's layout).
  const int64_t seg_col = s == 0 ? 0 : (s == 1 ? g.seg[0].rows : g.seg[0].rows + g.seg[1].rows);
  const int64_t m0 = int64_t(blockIdx.x) * BM, r0 = tile * kBN;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp >> 2, wn = warp & 3;
  const int ktiles = int((g.n + kBK - 1) / kBK);
  const int kt_begin = int(int64_t(ktiles) * blockIdx.z / gridDim.z);
  const int kt_end = int(int64_t(ktiles) * (blockIdx.z + 1) / gridDim.z);
  const int64_t units = (g.n + 31) / 32;

  // X tile loader: BM rows x 8 chunks of 16 bytes; rows past T re-read row T-1 (their
  // outputs are never stored).
  const __half* x = static_cast<const __half*>(g.x);
  auto load_x = [&](int kt, int stage) {
#pragma unroll
    for (int i = 0; i < BM * 8 / kThreads; ++i) {
      const int c = tid + i * kThreads, r = c >> 3, col = (c & 7) * 8;
      const int64_t tr = m0 + r < g.T ? m0 + r : g.T - 1;
      cp_async16(sa + (stage * BM + r) * kLds + col, x + tr * g.ldx + int64_t(kt) * kBK + col);
    }
    cp_async_commit();
  };
  // W tile: thread -> (row wr, half h); a row past the matrix or a unit past n reads as zeros.
  const int wr = tid >> 1, wh = tid & 1;
  const int64_t wrow = r0 + wr;
  typename Tile::Raw raw;
  auto load_w = [&](int kt) {
    if (wrow < seg.rows && int64_t(2 * kt + wh) < units) Tile::load(raw, seg.w, seg.nb, wrow, g.n, kt, wh);
    else Tile::zero(raw);
  };
  auto store_w = [&](int kt, int stage) { Tile::store(raw, sb + (stage * kBN + wr) * kLds, kt, wh); };

  float acc[MT][4][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[i][j][k] = 0.f;

  load_x(kt_begin, 0);
  load_w(kt_begin);
  store_w(kt_begin, 0);
  cp_async_wait_all();
  __syncthreads();

  for (int kt = kt_begin; kt < kt_end; ++kt) {
    const int cur = (kt - kt_begin) & 1;
    const bool more = kt + 1 < kt_end;
    if (more) {
      load_x(kt + 1, cur ^ 1);
      load_w(kt + 1);  // in flight during the MMAs below
    }
    const __half* a_st = sa + cur * BM * kLds;
    const __half* b_st = sb + cur * kBN * kLds;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[MT][4], bf[2][4];
#pragma unroll
      for (int i = 0; i < MT; ++i)
        ldmatrix_x4(af[i], a_st + (wm * (BM / 2) + i * 16 + (lane & 15)) * kLds + kk * 16 + (lane >> 4) * 8);
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        const int q = lane >> 3;
        ldmatrix_x4(bf[p], b_st + (wn * 32 + p * 16 + (q >> 1) * 8 + (lane & 7)) * kLds + kk * 16 + (q & 1) * 8);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma16816(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
    }
    if (more) store_w(kt + 1, cur ^ 1);
    cp_async_wait_all();
    __syncthreads();
  }

  // Epilogue: c0,c1 at (row g, cols 2t, 2t+1) and c2,c3 at row g + 8 of each m16 x n8 tile.
  const int gq = lane >> 2, tq = lane & 3;
  const bool partial = gridDim.z > 1;
  const int64_t wsw = g.seg[0].rows + (g.nseg > 1 ? g.seg[1].rows : 0) + (g.nseg > 2 ? g.seg[2].rows : 0);
  float* ws = partial ? g.ws + int64_t(blockIdx.z) * g.T * wsw + seg_col : nullptr;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t t = m0 + wm * (BM / 2) + i * 16 + gq + (e >> 1) * 8;
        const int64_t c = r0 + wn * 32 + j * 8 + tq * 2 + (e & 1);
        if (t < g.T && c < seg.rows) {
          if (partial) {
            ws[t * wsw + c] = acc[i][j][e];
            continue;
          }
          float* y = seg.out + t * g.ldy + c;
          if (g.epilogue == PrefillEpilogue::AddTo) *y += acc[i][j][e];
          else *y = acc[i][j][e];
        }
      }
    }
  }
}

// y (=|+=) the sum of the splits' partial tiles, added in split order.
__global__ void splitk_reduce_kernel(const PrefillGemm g, int splits, int64_t wsw) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, t = blockIdx.y;
  if (j >= wsw) return;
  float sum = 0.f;
  for (int z = 0; z < splits; ++z) sum += g.ws[(int64_t(z) * g.T + t) * wsw + j];
  int64_t c = j;
  PrefillGemmSeg seg = g.seg[0];
  if (c >= seg.rows) {
    c -= seg.rows;
    seg = g.seg[1];
    if (c >= seg.rows) {
      c -= seg.rows;
      seg = g.seg[2];
    }
  }
  float* y = seg.out + t * g.ldy + c;
  if (g.epilogue == PrefillEpilogue::AddTo) *y += sum;
  else *y = sum;
}

template <uint32_t DT, int BM>
void launch_bm(const PrefillGemm& g, int64_t tiles, int splits, cudaStream_t stream) {
  constexpr size_t smem = size_t(2) * (BM + kBN) * kLds * sizeof(__half);
  static bool configured = false;  // one attribute call per instantiation
  if (!configured) {
    P64_CUDA_CHECK(cudaFuncSetAttribute(prefill_gemm_kernel<DT, BM>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(smem)));
    configured = true;
  }
  const dim3 grid(unsigned((g.T + BM - 1) / BM), unsigned(tiles), unsigned(splits));
  prefill_gemm_kernel<DT, BM><<<grid, kThreads, smem, stream>>>(g);
  P64_CUDA_CHECK_LAUNCH("prefill_gemm_kernel");
  if (splits > 1) {
    int64_t wsw = 0;
    for (int i = 0; i < g.nseg; ++i) wsw += g.seg[i].rows;
    splitk_reduce_kernel<<<dim3(unsigned((wsw + 255) / 256), unsigned(g.T)), 256, 0, stream>>>(g, splits, wsw);
    P64_CUDA_CHECK_LAUNCH("splitk_reduce_kernel");
  }
}

template <uint32_t DT>
void launch_dt(const PrefillGemm& g, int sms, cudaStream_t stream) {
  int64_t tiles = 0, wsw = 0;
  for (int i = 0; i < g.nseg; ++i) {
    tiles += row_tiles(g.seg[i].rows);
    wsw += g.seg[i].rows;
  }
  const int64_t ktiles = (g.n + kBK - 1) / kBK;
  // The largest token tile for T; without a workspace to split into, the largest whose grid
  // still gives every multiprocessor a block.
  int bm = g.T > 64 ? 128 : (g.T > 32 ? 64 : 32);
  if (bm == 128 && !g.ws && (g.T + 127) / 128 * tiles < sms) bm = 64;
  const int64_t blocks = (g.T + bm - 1) / bm * tiles;
  // Split-K up to about two blocks per multiprocessor slot pair (two resident blocks per SM),
  // keeping at least 4 k-tiles per split, within the workspace.
  int64_t splits = 1;
  if (g.splits > 0) splits = g.splits;
  else if (g.ws && blocks < 2 * sms) splits = std::min<int64_t>(ktiles / 4, (4 * sms + blocks / 2) / blocks);
  splits = std::clamp<int64_t>(splits, 1, ktiles);
  if (splits > 1 && g.ws_floats < splits * g.T * wsw) {
    if (g.splits > 0) throw Error("prefill GEMM: the split-K workspace is too small for the splits asked");
    splits = std::max<int64_t>(1, g.ws_floats / (g.T * wsw));
  }
  if (splits > 1 && !g.ws) throw Error("prefill GEMM: split-K without a workspace");
  if (bm == 128) launch_bm<DT, 128>(g, tiles, int(splits), stream);
  else if (bm == 64) launch_bm<DT, 64>(g, tiles, int(splits), stream);
  else launch_bm<DT, 32>(g, tiles, int(splits), stream);
}

}  // namespace

bool prefill_gemm_supports(uint32_t dtype) {
  switch (dtype) {
    case kF32: case kF16: case kBF16: case kQ5_0: case kQ8_0: case kQ8_0S: case kQ4_K: case kQ4_KS: case kQ6_K:
    case kQ6_KS: case kTiledQ4_K: case kTiledQ6_K:
      return true;
    default:
      return false;
  }
}

void launch_prefill_gemm(const PrefillGemm& g, int sms, cudaStream_t stream) {
  if (g.nseg < 1 || g.nseg > 3 || g.T <= 0 || g.n <= 0) throw Error("prefill GEMM: empty or malformed launch");
  if (g.ldx % kBK != 0 || g.ldx < (g.n + kBK - 1) / kBK * kBK)
    throw Error("prefill GEMM: activation stride " + std::to_string(g.ldx) + " is not a padded multiple of 64 >= " +
                std::to_string(g.n));
  if (g.ldy >= int64_t(1) << 31 || g.T >= 65535 * 32) throw Error("prefill GEMM: output too large for one launch");
  if (g.splits > 64) throw Error("prefill GEMM: at most 64 k splits");
  switch (g.dtype) {
    case kF32: return launch_dt<kF32>(g, sms, stream);
    case kF16: return launch_dt<kF16>(g, sms, stream);
    case kBF16: return launch_dt<kBF16>(g, sms, stream);
    case kQ5_0: return launch_dt<kQ5_0>(g, sms, stream);
    case kQ8_0: return launch_dt<kQ8_0>(g, sms, stream);
    case kQ8_0S: return launch_dt<kQ8_0S>(g, sms, stream);
    case kQ4_K: return launch_dt<kQ4_K>(g, sms, stream);
    case kQ4_KS: return launch_dt<kQ4_KS>(g, sms, stream);
    case kQ6_K: return launch_dt<kQ6_K>(g, sms, stream);
    case kQ6_KS: return launch_dt<kQ6_KS>(g, sms, stream);
    case kTiledQ4_K: return launch_dt<kTiledQ4_K>(g, sms, stream);
    case kTiledQ6_K: return launch_dt<kTiledQ6_K>(g, sms, stream);
    default: throw Error("prefill GEMM: dtype " + std::to_string(g.dtype) + " has no tile reader");
  }
}

}  // namespace p64::cuda
