// attn_stream: the decode attention's split kernel with the KV cache streamed through shared
// memory (f16 cache, head_dim 32/64/128). Each warp takes tiles of kStreamTile cached positions
// of its block's split and keeps kStages of them in flight by cp.async, K and V rows together,
// while it works on the oldest: the bytes in flight hold no registers, and the V rows do not
// wait for the softmax as they do when loaded into registers. In a tile a lane owns one
// position for the scores (its K row read from shared memory; rows padded by 16 bytes so a
// quarter-warp's rows fall in distinct banks) and DPL elements of the head for the V pass.
// The first tiles are requested before the kernel waits for the q/k/v GEMV (with attn_early),
// except the row at the step's own position, which that GEMV writes: it is read after the wait.
// The grid is one block per split, max_splits blocks per kv head (the backend sizes it to the
// multiprocessors), so a deep context is read in long runs and the combine merges few partials.
#include <cuda_fp16.h>

#include "backends/cuda/attention_split.cuh"
#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"

namespace p64::cuda {
namespace {

constexpr int kStages = 2;

template <int DPL>
struct StreamTile {
  static constexpr int D = 32 * DPL;
  static constexpr int kChunks = D / 8;           // 16-byte pieces of a row
  static constexpr int kKRow = D * 2 + 16;        // a K row's stride in shared memory
  static constexpr int kVRow = D * 2;
  static constexpr int kBytes = kStreamTile * (kKRow + kVRow);
  static constexpr int kBlockBytes = kWarps * kStages * kBytes;
};

template <int N>
__device__ __forceinline__ void cp_async_wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Requests the K and V rows of positions [t0, min(t0 + kStreamTile, end)) into `slot`, all but
// row `skip`, and commits them as one group (an empty one past the split's end, so that every
// lane's group count stays the same).
template <int DPL>
__device__ __forceinline__ void request_tile(unsigned char* slot, const __half* kc, const __half* vc, int t0, int end,
                                             int skip, int lane) {
  using T = StreamTile<DPL>;
  const int rows = min(kStreamTile, end - t0);
  for (int i = lane; i < rows * T::kChunks; i += 32) {
    const int r = i / T::kChunks, c = i % T::kChunks;
    if (t0 + r == skip) continue;
    const int64_t at = int64_t(t0 + r) * T::D + c * 8;
    cp_async16(slot + r * T::kKRow + 16 * c, kc + at);
    cp_async16(slot + kStreamTile * T::kKRow + r * T::kVRow + 16 * c, vc + at);
  }
  cp_async_commit();
}

// Loads row `row` of the tile at t0 in `slot` (K and V) through L2, after the producer's writes.
template <int DPL>
__device__ __forceinline__ void load_own_row(unsigned char* slot, const __half* kc, const __half* vc, int t0, int row,
                                             int lane) {
  using T = StreamTile<DPL>;
  const int r = row - t0;
  for (int i = lane; i < 2 * T::kChunks; i += 32) {
    const bool is_v = i >= T::kChunks;
    const int c = is_v ? i - T::kChunks : i;
    const uint4 val = __ldcg(reinterpret_cast<const uint4*>((is_v ? vc : kc) + int64_t(row) * T::D + c * 8));
    unsigned char* dst = is_v ? slot + kStreamTile * T::kKRow + r * T::kVRow : slot + r * T::kKRow;
    *reinterpret_cast<uint4*>(dst + 16 * c) = val;
  }
}

template <int DPL>
__device__ __forceinline__ void load_v(const unsigned char* row, int lane, float (&v)[DPL]) {
  const __half* h = reinterpret_cast<const __half*>(row) + lane * DPL;
  if constexpr (DPL == 1) {
    v[0] = __half2float(h[0]);
  } else {
#pragma unroll
    for (int i = 0; i < DPL; i += 2) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(h + i));
      v[i] = f.x;
      v[i + 1] = f.y;
    }
  }
}

// One tile of the online softmax: positions [t0, t0 + n) of the tile in `slot`, for the G q
// heads in `qs` (pre-scaled); NG >= G sizes the per-head arrays.
template <int DPL, int NG>
__device__ __forceinline__ void attend_tile(const unsigned char* slot, const float (*qs)[32 * DPL], int G, int n,
                                            int lane, float (&m)[NG], float (&l)[NG], float (&acc)[NG][DPL]) {
  using T = StreamTile<DPL>;
  const uint4* krow = reinterpret_cast<const uint4*>(slot + lane * T::kKRow);
  float s[NG];
#pragma unroll
  for (int g = 0; g < NG; ++g) s[g] = 0.f;
#pragma unroll
  for (int c = 0; c < T::kChunks; ++c) dot_k_piece<DPL, NG>(krow[c], qs, c, G, s);
  float p[NG];
  softmax_tile<DPL, NG>(s, lane < n, G, m, l, acc, p);
  const unsigned char* vt = slot + kStreamTile * T::kKRow;
#pragma unroll 8
  for (int j = 0; j < n; ++j) {
    float v[DPL];
    load_v<DPL>(vt + j * T::kVRow, lane, v);
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      if (g < G) {
        const float pg = __shfl_sync(0xffffffffu, p[g], j);
#pragma unroll
        for (int i = 0; i < DPL; ++i) acc[g][i] = fmaf(pg, v[i], acc[g][i]);
      }
    }
  }
}

template <int DPL, int NG>
__global__ void __launch_bounds__(kWarps * 32, 1) attn_split_stream_kernel(const AttnLaunch a) {
  using T = StreamTile<DPL>;
  extern __shared__ __align__(16) unsigned char tiles_all[];
  __shared__ SplitShared<DPL> sh;
  __shared__ __align__(16) float qs[NG][32 * DPL];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (!a.early) dependency_wait();
  const SplitGeometry geo = split_geometry(a);
  const int len = geo.len, kvh = blockIdx.x, split = blockIdx.y;
  if (split >= geo.used) {
    if (a.early) dependency_wait();
    return;
  }
  const int start = split * geo.chunk, end = min(start + geo.chunk, len);
  const int64_t head_base = kv_head_base(a, kvh);
  const __half* kc = static_cast<const __half*>(a.k_cache) + head_base;
  const __half* vc = static_cast<const __half*>(a.v_cache) + head_base;
  unsigned char* ring = tiles_all + size_t(warp) * kStages * T::kBytes;
  // The warp's tiles start at first + i * stride.
  const int first = start + kStreamTile * warp, stride = kStreamTile * kWarps;
  const int tiles = first < end ? (end - first + stride - 1) / stride : 0;
  const int skip = a.early ? len - 1 : -1;  // written by the q/k/v GEMV this kernel waits for
#pragma unroll
  for (int i = 0; i < kStages; ++i) {
    const int t0 = first + i * stride;
    if (i < tiles) request_tile<DPL>(ring + i * T::kBytes, kc, vc, t0, end, skip, lane);
    else cp_async_commit();
  }
  if (a.early) dependency_wait();
  const int G = a.n_head / a.n_head_kv;
  const float scale = rsqrtf(float(T::D));
  for (int i = threadIdx.x; i < G * T::D; i += blockDim.x)
    qs[i / T::D][i % T::D] = a.q[int64_t(kvh) * G * T::D + i] * scale;
  for (int i = 0; i < kStages && i < tiles; ++i) {
    const int t0 = first + i * stride;
    if (skip >= t0 && skip < min(t0 + kStreamTile, end)) load_own_row<DPL>(ring + i * T::kBytes, kc, vc, t0, skip, lane);
  }
  __syncthreads();  // q in shared memory

  float m[NG], l[NG], acc[NG][DPL];
  reset_softmax<DPL, NG>(m, l, acc);
  for (int i = 0; i < tiles; ++i) {
    cp_async_wait_pending<kStages - 1>();  // tile i landed (this lane's copies) ...
    __syncwarp();                           // ... and every lane's
    unsigned char* slot = ring + (i % kStages) * T::kBytes;
    const int t0 = first + i * stride;
    attend_tile<DPL, NG>(slot, qs, G, min(kStreamTile, end - t0), lane, m, l, acc);
    __syncwarp();  // every lane is done with the slot
    if (i + kStages < tiles) request_tile<DPL>(slot, kc, vc, first + (i + kStages) * stride, end, -1, lane);
    else cp_async_commit();
  }
  cp_async_wait_all();
  write_split_partial<DPL, NG>(a, kvh, split, geo.splits, m, l, acc, sh);
  tail_combine(a, geo);
}

template <int DPL, int NG>
void launch_stream(const AttnLaunch& a, cudaStream_t stream) {
  auto* kernel = attn_split_stream_kernel<DPL, NG>;
  const int smem = StreamTile<DPL>::kBlockBytes;
  P64_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int all = attention_splits_of(a.max_ctx, a.chunk);
  const dim3 grid(unsigned(a.n_head_kv), unsigned(a.max_splits < all ? a.max_splits : all));
  launch_kernel("attn_split_stream_kernel", kernel, grid, dim3(kWarps * 32), size_t(smem), stream, a);
}

template <int DPL>
void launch_stream_for_group(const AttnLaunch& a, cudaStream_t stream) {
  const int G = a.n_head / a.n_head_kv;
  if (G <= 1) return launch_stream<DPL, 1>(a, stream);
  if (G <= 2) return launch_stream<DPL, 2>(a, stream);
  if (G <= 4) return launch_stream<DPL, 4>(a, stream);
  launch_stream<DPL, 8>(a, stream);
}

}  // namespace

bool attention_stream_supported(const AttnLaunch& a) {
  return a.kv_f16 && (a.head_dim == 32 || a.head_dim == 64 || a.head_dim == 128);
}

void launch_attention_stream(const AttnLaunch& a, cudaStream_t stream) {
  if (!attention_stream_supported(a) || a.max_splits <= 0)
    throw Error("CUDA backend: attn_stream needs an f16 KV cache, head_dim 32, 64 or 128 and a split count (got head_dim " +
                std::to_string(a.head_dim) + ")");
  if (a.head_dim == 32) return launch_stream_for_group<1>(a, stream);
  if (a.head_dim == 64) return launch_stream_for_group<2>(a, stream);
  launch_stream_for_group<4>(a, stream);
}

}  // namespace p64::cuda
