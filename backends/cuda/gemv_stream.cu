// The streaming decode GEMV (the gemv_stream switch): the integer paths' weight units travel
// global -> shared by cp.async in an S-stage pipeline per warp, so every lane keeps S - 1
// units in flight while it computes one, and in-flight bytes cost no registers (gemv.cu holds
// its units in registers, 2 per row, and waits a full memory latency per round).
// Each warp walks a contiguous run of rows unit by unit: lane l takes units l, l + 32, ... of a
// row. Every lane has the same number of steps per row (ceil(units / 32), lanes past the row's
// end idle), so a row ends on the same step for the whole warp: its sum is reduced by shuffles
// and written by lane 0. With SwiGLU the walk alternates gate and up rows.
// With a prologue (gemv_prologue) each block first turns the fp32 input into the integer form
// in shared memory (RMSNorm included), while its first weights are already in flight.
#include <algorithm>
#include <string>

#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/gemv_stream.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"
#include "backends/cuda/weight_slots.cuh"

namespace p64::cuda {
namespace {

constexpr int kMaxWarps = 8;

struct StreamArgs {
  GemvSegment seg[3];
  int nseg;
  int64_t rows;           // output rows (SwiGLU: gate rows)
  int64_t rows_per_warp;  // output rows
  int64_t n;
  ActRef act;
  GemvPrologue pro;
  int act_bits;
  uint32_t input_offset;  // bytes of shared memory before the prologue's input area
};

__host__ __device__ inline size_t align16(size_t v) { return (v + 15) & ~size_t(15); }
// Shared bytes of the prologue's input: integers, one scale per 32, one sum per 16.
size_t input_bytes(int64_t n, int bits) { return align16(size_t(n) * bits / 8) + size_t(n / 32 + n / 16) * 4; }

// The block's integer input from the fp32 vector (n % 32 == 0 on every integer path): the
// norm's sum of squares over the whole vector, then one warp per 32 elements.
__device__ void build_input(const StreamArgs& a, uint8_t* area) {
  __shared__ float red[kMaxWarps];
  const int warps = int(blockDim.x >> 5), warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31);
  const float* x = a.pro.x;
  const int64_t n = a.n;
  float scale = 1.f;
  if (a.pro.norm) {
    float ss = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss = fmaf(x[i], x[i], ss);
    ss = warp_sum(ss);
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    float tot = 0.f;
    for (int i = 0; i < warps; ++i) tot += red[i];
    scale = rsqrtf(tot / float(n) + a.pro.eps);
  }
  const size_t qbytes = align16(size_t(n) * a.act_bits / 8);
  ActBuffers sb{nullptr, area, reinterpret_cast<float*>(area + qbytes),
                reinterpret_cast<float*>(area + qbytes + size_t(n / 32) * 4), a.act_bits};
  for (int64_t g = warp; g < n / 32; g += warps) {
    const int64_t e = g * 32 + lane;
    float v = x[e] * scale;
    if (a.pro.norm) v *= a.pro.norm[e];
    store_quantized_warp(sb, e, n, v);
  }
  __syncthreads();
}

// Step v of a warp's walk of rows: the weight row it reads and the output it feeds.
template <int MODE>
__device__ __forceinline__ RowRef walk_row(const StreamArgs& a, int64_t v, float** out) {
  int64_t rr = v;
  int s = 0;
  if constexpr (MODE == 2) {
    rr = v >> 1;
    s = int(v & 1);
    *out = a.seg[0].out + rr;
  } else {
    while (s + 1 < a.nseg && rr >= a.seg[s].rows) {
      rr -= a.seg[s].rows;
      ++s;
    }
    *out = a.seg[s].out + rr;
  }
  return RowRef{a.seg[s].w, a.seg[s].nb, rr, a.n};
}

template <class P, class SL, int S, int MODE>
__global__ void __launch_bounds__(kMaxWarps * 32) gemv_stream_kernel(const StreamArgs a) {
  extern __shared__ __align__(16) uint8_t smem[];
  constexpr int kStageBytes = SL::kParts * kSlotPartStride;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  uint8_t* slots = smem + warp * S * kStageBytes + lane * 16;
  const int64_t units = P::units(a.n);
  const int per_row = int((units + 31) / 32);
  const int64_t r0 = (int64_t(blockIdx.x) * (blockDim.x >> 5) + warp) * a.rows_per_warp;
  const int64_t r1 = min(a.rows, r0 + a.rows_per_warp);
  const int64_t walk = MODE == 2 ? 2 : 1;
  const int64_t v0 = r0 * walk, v1 = max(r0, r1) * walk;
  const int64_t steps = (v1 - v0) * per_row;

  // issue cursor: the row and the step inside it of the next copy
  int64_t iv = v0;
  int ij = 0, istage = 0;
  float* unused;
  RowRef iref = walk_row<MODE>(a, v0, &unused);
  auto issue = [&](int64_t step) {
    if (step < steps) {
      const int64_t u = int64_t(ij) * 32 + lane;
      if (u < units) SL::copy(slots + istage * kStageBytes, iref, u);
      if (++ij == per_row) {
        ij = 0;
        if (++iv < v1) iref = walk_row<MODE>(a, iv, &unused);
      }
      istage = istage + 1 == S ? 0 : istage + 1;
    }
    cp_async_commit();  // empty groups keep every lane's group count in step
  };
  // Weights depend on no earlier kernel: the first S - 1 units are in flight before the wait.
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s);
  dependency_wait();
  ActRef act = a.act;
  if (a.pro.x) {
    uint8_t* area = smem + a.input_offset;
    build_input(a, area);
    const size_t qbytes = align16(size_t(a.n) * a.act_bits / 8);
    act = ActRef{nullptr, area, reinterpret_cast<const float*>(area + qbytes),
                 reinterpret_cast<const float*>(area + qbytes + size_t(a.n / 32) * 4)};
  }

  int64_t cv = v0;
  int cj = 0, cstage = 0;
  float* cout = nullptr;
  RowRef cref = walk_row<MODE>(a, v0, &cout);
  float acc = 0.f, gate = 0.f;
  for (int64_t step = 0; step < steps; ++step) {
    issue(step + S - 1);
    cp_async_wait<S - 1>();
    const int64_t u = int64_t(cj) * 32 + lane;
    if (u < units) {
      typename P::Raw raw;
      SL::read(raw, slots + cstage * kStageBytes, cref, u);
      typename P::X x;
      P::load_x(x, act, a.n, u);
      acc += P::dot(raw, x, u);
    }
    cstage = cstage + 1 == S ? 0 : cstage + 1;
    if (++cj == per_row) {
      cj = 0;
      const float sum = warp_sum(acc);
      acc = 0.f;
      if constexpr (MODE == 2) {
        if (cv & 1) {
          if (lane == 0) *cout = gate / (1.f + __expf(-gate)) * sum;
        } else {
          gate = sum;
        }
      } else if (lane == 0) {
        *cout = MODE == 1 ? *cout + sum : sum;  // residual add: this warp is the row's only writer
      }
      if (++cv < v1) cref = walk_row<MODE>(a, cv, &cout);
    }
  }
  cp_async_wait_all();
}

int multiprocessors() {
  static const int sms = [] {
    int dev = 0, n = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice", __FILE__, __LINE__);
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute", __FILE__,
          __LINE__);
    return n;
  }();
  return sms;
}

// Rows per warp so that the grid fills the device once: one resident wave, no tail of
// half-empty blocks. A prologue's blocks take 8 warps, so fewer blocks re-read the input.
template <class P, class SL, int S, int MODE>
void launch_stream(const StreamArgs& base, cudaStream_t stream) {
  auto* kernel = gemv_stream_kernel<P, SL, S, MODE>;
  StreamArgs a = base;
  const int warps = a.pro.x ? 8 : 4;
  a.input_offset = uint32_t(warps * S * SL::kParts * kSlotPartStride);
  const size_t smem = a.input_offset + (a.pro.x ? input_bytes(a.n, a.act_bits) : 0);
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), "cudaFuncSetAttribute",
        __FILE__, __LINE__);
  int blocks_per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, warps * 32, smem),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor", __FILE__, __LINE__);
  if (blocks_per_sm == 0) throw Error("CUDA backend: the streaming GEMV's " + std::to_string(smem) +
                                      " bytes of shared memory do not fit a multiprocessor");
  const int64_t resident = int64_t(multiprocessors()) * blocks_per_sm * warps;
  a.rows_per_warp = a.rows_per_warp > 0 ? a.rows_per_warp : std::max<int64_t>(1, (a.rows + resident - 1) / resident);
  const int64_t need = (a.rows + a.rows_per_warp - 1) / a.rows_per_warp;
  const int64_t blocks = (need + warps - 1) / warps;
  launch_kernel("gemv_stream_kernel", kernel, dim3(unsigned(blocks)), dim3(warps * 32), smem, stream, a);
}

template <class P, class SL, int S>
void launch_mode(const StreamArgs& a, GemvMode mode, cudaStream_t stream) {
  switch (mode) {
    case GemvMode::Store: return launch_stream<P, SL, S, 0>(a, stream);
    case GemvMode::AddTo: return launch_stream<P, SL, S, 1>(a, stream);
    case GemvMode::SwiGLU: return launch_stream<P, SL, S, 2>(a, stream);
  }
}

// int16 activations only: int8's rounding fails the quality gate on deep models (act_quant).
template <uint32_t T, int S>
void launch_dtype(const StreamArgs& a, GemvMode mode, cudaStream_t stream) {
  launch_mode<Dp2a<T>, Slot<T>, S>(a, mode, stream);
}

template <int S>
bool launch_stages(const StreamArgs& a, const GemvLaunch& g, cudaStream_t stream) {
  switch (g.dtype) {
    case kQ4_K: launch_dtype<kQ4_K, S>(a, g.mode, stream); return true;
    case kQ4_KS: launch_dtype<kQ4_KS, S>(a, g.mode, stream); return true;
    case kQ6_KS: launch_dtype<kQ6_KS, S>(a, g.mode, stream); return true;
    case kQ8_0S: launch_dtype<kQ8_0S, S>(a, g.mode, stream); return true;
  }
  return false;
}

}  // namespace

bool gemv_stream_supports(const GemvLaunch& g) {
  const bool format = g.dtype == kQ4_K || g.dtype == kQ4_KS || g.dtype == kQ6_KS || g.dtype == kQ8_0S;
  return format && g.act_bits == 16 && gemv_has_int_path(g.dtype, g.n) && !g.fuse.in_ssq &&
         !g.fuse.quantize_out && g.prefetch.count == 0;
}

void launch_gemv_stream(const GemvLaunch& g, int stages, cudaStream_t stream) {
  if (!gemv_stream_supports(g)) throw Error("CUDA backend: the streaming GEMV does not take this launch");
  StreamArgs a{};
  for (int i = 0; i < 3; ++i) a.seg[i] = g.seg[i];
  a.nseg = g.nseg;
  a.rows = 0;
  if (g.mode == GemvMode::SwiGLU) {
    a.rows = g.seg[0].rows;
  } else {
    for (int i = 0; i < g.nseg; ++i) a.rows += g.seg[i].rows;
  }
  a.n = g.n;
  a.act = ActRef{g.xf, g.xq, g.xd, g.xs};
  a.pro = g.prologue;
  a.rows_per_warp = g.stream_rows;
  a.act_bits = g.act_bits;
  const bool done = stages >= 8 ? launch_stages<8>(a, g, stream) : launch_stages<4>(a, g, stream);
  if (!done) throw Error("CUDA backend: no streaming GEMV for dtype id " + std::to_string(g.dtype));
}

}  // namespace p64::cuda
