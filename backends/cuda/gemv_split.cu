// Decode GEMV with a block's threads split over its rows' units (the gemv_split switch). A block
// of 128 threads owns R rows; thread t takes units t, t + 128, ... of every row. A row of 96
// units (3072 elements of Q4_K) costs each thread one unit, so all R rows' weights are in flight
// at once: one memory latency per block, where a warp that owns whole rows waits one latency
// per round of units. Partial sums meet in shared memory; warp 0 runs the epilogue.
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/tiled_formats.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarpsPerBlock = kThreads / 32;

// U: units per thread loaded before any arithmetic (rows longer than 128 U units loop).
template <class P, int R, int MODE, int U>
__global__ void __launch_bounds__(kThreads, 4) gemv_split_kernel(const GemvArgs a) {
  constexpr int NR = MODE == 2 ? 2 * R : R;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int64_t row0 = int64_t(blockIdx.x) * R;
  typename P::RowPtr ref[R];
  float* out[R];
  bool valid[R];
  const int64_t up_bytes = MODE == 2 ? a.seg[1].w - a.seg[0].w : 0;
  find_rows<P, R, MODE>(a, row0, ref, out, valid);
  const int64_t units = P::units(a.n);
  float acc[NR];
#pragma unroll
  for (int i = 0; i < NR; ++i) acc[i] = 0.f;
  typename P::Raw raw[U][NR];
  auto load = [&](int64_t base) {
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const int64_t u = base + kThreads * k;
      if (u < units) {
        load_unit_rows<P, R, MODE>(raw[k], ref, valid, up_bytes, u);
      }
    }
  };
  load(t);  // weights depend on no kernel: in flight while the previous one finishes
  dependency_wait();
  for (int64_t base = t; base < units;) {
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const int64_t u = base + kThreads * k;
      if (u < units) {
        typename P::X x;
        P::load_x(x, a.act, a.n, u);
#pragma unroll
        for (int i = 0; i < NR; ++i)
          if (valid[i % R]) acc[i] += P::dot(raw[k][i], x, u);
      }
    }
    base += kThreads * U;
    if (base < units) load(base);
  }

  __shared__ float part[kWarpsPerBlock][NR];
#pragma unroll
  for (int i = 0; i < NR; ++i) {
    const float v = warp_sum(acc[i]);
    if (lane == 0) part[warp][i] = v;
  }
  __syncthreads();
  if (warp != 0) return;
  float total = 0.f;  // lane i < NR: row i's dot product (SwiGLU: up row i - R)
  if (lane < NR) {
#pragma unroll
    for (int w = 0; w < kWarpsPerBlock; ++w) total += part[w][lane];
  }
  const float up = __shfl_down_sync(0xffffffffu, total, R);
  float res[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    res[i] = 0.f;
    if (lane == i && valid[i]) {
      if constexpr (MODE == 0) res[i] = total;
      else if constexpr (MODE == 1) res[i] = *out[i] + total;  // this block is the row's only writer
      else res[i] = total / (1.f + __expf(-total)) * up;
      *out[i] = res[i];
    }
  }
  if constexpr (MODE == 0 && R % 2 == 0) {
    if (a.rope.inv_freq) rope_epilogue<R>(a, row0, res);
  }
}

// `units`: the row's units as P counts them (P::units is device code).
template <class P, int R, int MODE>
void launch_r(const GemvArgs& a, int64_t units, cudaStream_t stream) {
  const dim3 grid(unsigned((a.total_rows + R - 1) / R));
  if (units <= kThreads)
    return launch_kernel("gemv_split_kernel", gemv_split_kernel<P, R, MODE, 1>, grid, dim3(kThreads), 0, stream, a);
  launch_kernel("gemv_split_kernel", gemv_split_kernel<P, R, MODE, 2>, grid, dim3(kThreads), 0, stream, a);
}

template <class P, int R>
void launch_mode(const GemvArgs& a, GemvMode mode, int64_t units, cudaStream_t stream) {
  switch (mode) {
    case GemvMode::Store: return launch_r<P, R, 0>(a, units, stream);
    case GemvMode::AddTo: return launch_r<P, R, 1>(a, units, stream);
    case GemvMode::SwiGLU: return launch_r<P, R, 2>(a, units, stream);
  }
}

template <class P>
bool launch_p(const GemvArgs& a, GemvMode mode, int rows, int64_t units, cudaStream_t stream) {
  if (rows >= 4) launch_mode<P, 4>(a, mode, units, stream);
  else launch_mode<P, 2>(a, mode, units, stream);
  return true;
}

}  // namespace

bool launch_gemv_split(const GemvArgs& a, uint32_t dtype, GemvMode mode, int rows_per_block, cudaStream_t stream) {
  if (a.fuse.in_ssq || a.fuse.quantize_out || a.prefetch.count) return false;
  const int64_t units = a.n / 32;  // a 32-element unit: every form here but Q8_0's 16-byte halves
  switch (dtype) {
    case kQ4_KS: return launch_p<Dp2a<kQ4_KS>>(a, mode, rows_per_block, units, stream);
    case kQ6_KS: return launch_p<Dp2a<kQ6_KS>>(a, mode, rows_per_block, units, stream);
    case kQ8_0S: return launch_p<Dp2a<kQ8_0S>>(a, mode, rows_per_block, 2 * units, stream);
    case kTiledQ4_K: return launch_p<TiledQ4_K>(a, mode, rows_per_block, units, stream);
    case kTiledQ6_K: return launch_p<TiledQ6_K>(a, mode, rows_per_block, units, stream);
    default: return false;
  }
}

}  // namespace p64::cuda
