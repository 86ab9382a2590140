// Decode GEMV (y = W x for one token) over every weight format, plus the embedding lookup.
// One warp owns `R` whole rows: lanes stride over the row's units, so each warp-wide load is
// 512 consecutive bytes of weights; the activation unit is loaded once and reused for the R
// rows, and U units per lane are loaded before any arithmetic so several loads are in flight.
// The sum is finished with warp shuffles. Epilogues fuse the residual add (AddTo) and the
// FFN's SwiGLU (gate and up rows computed by the same warp).
#include <cuda_fp16.h>

#include <algorithm>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/warp_reduce.cuh"
#include "backends/cuda/weight_formats.cuh"

namespace p64::cuda {
namespace {

// Compile-time variants (scripts/gpu/build-gemv-variants.sh): warps per block, and blocks per SM
// under gemv_regs=cap. On the H200 4 x 4 stays fastest: 2 x 8 584.7, 8 x 2 566.6, 4 x 5 516.5 vs
// 586.5 tok/s (2 in flight); at 1 in flight 6 and 8 blocks spill (585.5, 505.7 vs 629.1).
#ifndef P64_CUDA_GEMV_WARPS
#define P64_CUDA_GEMV_WARPS 4
#endif
#ifndef P64_CUDA_GEMV_MIN_BLOCKS
#define P64_CUDA_GEMV_MIN_BLOCKS 4
#endif
constexpr int kWarps = P64_CUDA_GEMV_WARPS;  // warps per block

// gemv_stage: the byte widths of the dtype's SoA field arrays in order, the blocks per row and
// the shared memory one group of rows takes (0: not staged).
struct StagePlan {
  int fields;
  int32_t bytes[4];
  int64_t blocks_per_row;
  uint32_t smem;
};

struct GemvArgs {
  GemvSegment seg[3];
  int nseg;
  int64_t total_rows;
  int64_t n;
  ActRef act;
  GemvFusion fuse;
  L2Prefetch prefetch;
  GemvRope rope;
  StagePlan stage;
  bool cap_registers;  // host side only: picks the kernel instance
  int in_flight;       // host side only: units per lane in flight (1 or 2), picks the instance
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

// The float path reads fp32 activations and never quantizes its output.
template <class P>
constexpr bool kFloatPath = false;
template <uint32_t T>
constexpr bool kFloatPath<FloatPath<T>> = true;

// gemv_stage serves the SoA forms on the int16 path (the default), 1 or 2 rows per warp.
template <class P>
constexpr bool kStagedPath = false;
template <>
constexpr bool kStagedPath<Dp2a<kQ4_KS>> = true;
template <>
constexpr bool kStagedPath<Dp2a<kQ6_KS>> = true;
template <>
constexpr bool kStagedPath<Dp2a<kQ8_0S>> = true;
// Shared memory a staged block may ask for (the H200 gives a block up to 227 KB).
constexpr uint32_t kMaxStageBytes = 200 * 1024;

// Warps per block, and passes per block: a block that quantizes its output covers 32 rows (one
// quantization block) in 32 / (W * R) passes of W warps; more warps than 8 would cap the
// registers below what the SwiGLU rows need.
template <bool QOUT>
constexpr int warps_per_block() { return QOUT ? 8 : kWarps; }
template <int R, bool QOUT>
constexpr int passes_per_block() { return QOUT ? 32 / (warps_per_block<QOUT>() * R) : 1; }

// 1/rms of the input from the producer's per-32 partial sums of squares, summed in a fixed
// order so every warp (and every run) gets the same value.
__device__ __forceinline__ float input_norm_scale(const GemvFusion& f, int64_t n, int lane) {
  float t = 0.f;
  for (int64_t i = lane; i < n / 32; i += 32) t += f.in_ssq[i];
  return rsqrtf(warp_sum(t) / float(n) + f.in_eps);
}

// One warp, 32 consecutive outputs: the partial sum of squares of the raw values (the next
// RMSNorm's input) and the values times the next norm's weights quantized for the next GEMV.
__device__ __forceinline__ void quantize_output(const GemvFusion& f, int64_t e, int64_t n, float v) {
  const int lane = threadIdx.x & 31;
  if (f.out_ssq) {
    const float sq = warp_sum(v * v);
    if (lane == 0) f.out_ssq[e >> 5] = sq;
  }
  store_quantized_warp(f.out, e, n, f.out_norm && e < n ? v * f.out_norm[e] : v);
}

// A staged block's rows in shared memory: laid out as an SoA tensor of `nb` blocks of its own
// (gate rows, then with SwiGLU the up rows `up_bytes` further).
struct StageView {
  const uint8_t* base = nullptr;
  int64_t nb = 0;
  int64_t row0 = 0;  // the warp's first row among the block's
  int64_t up_bytes = 0;
};

// One warp's R rows (with SwiGLU, R gate rows and their R up rows) from row0; returns the
// values written (lane i holds row i's). `first`: the block's first pass, which waits for the
// previous kernel once its first weights are in flight. STAGED: the weights are read from the
// block's copy in shared memory (`sv`), which the caller has waited for.
template <class P, int R, int MODE, int IF, bool STAGED = false>
__device__ __forceinline__ void warp_rows(const GemvArgs& a, int64_t row0, bool first, float res[R],
                                          const StageView& sv = {}) {
  constexpr int NR = MODE == 2 ? 2 * R : R;
  constexpr int kUnitsInFlight = IF < P::kInFlight ? IF : P::kInFlight;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < R; ++i) res[i] = 0.f;
  if (row0 >= a.total_rows) {  // block 0 always has rows, so the grid still waits (launch.cuh)
    if (first) dependency_wait();
    return;
  }

  // SwiGLU keeps only the gate rows' pointers: an up row's are the gate row's moved by the
  // distance between the two tensors (same shape and type), which frees registers.
  typename P::RowPtr ref[R];
  const int64_t up_bytes = MODE != 2 ? 0 : STAGED ? sv.up_bytes : a.seg[1].w - a.seg[0].w;
  float* out[R];
  bool valid[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    int64_t rr = row0 + i;
    valid[i] = rr < a.total_rows;
    int s = 0;
    if constexpr (MODE != 2) {
      while (s + 1 < a.nseg && rr >= a.seg[s].rows) { rr -= a.seg[s].rows; ++s; }
    }
    if (!valid[i]) rr = 0;
    if constexpr (STAGED) ref[i] = P::row_ptr(RowRef{sv.base, sv.nb, sv.row0 + i, a.n});
    else ref[i] = P::row_ptr(RowRef{a.seg[s].w, a.seg[s].nb, rr, a.n});
    out[i] = a.seg[s].out + rr;
  }

  const int64_t units = P::units(a.n);
  float acc[NR];
#pragma unroll
  for (int i = 0; i < NR; ++i) acc[i] = 0.f;

  typename P::Raw raw[kUnitsInFlight][NR];
  auto load_weights = [&](int64_t base) {
#pragma unroll
    for (int k = 0; k < kUnitsInFlight; ++k) {
      const int64_t u = base + 32 * k;
      if (u < units) {
#pragma unroll
        for (int i = 0; i < NR; ++i)
          if (valid[i % R]) P::template load<STAGED>(raw[k][i], i < R ? ref[i] : P::shift(ref[i - R], up_bytes), u);
      }
    }
  };
  // The first round of weights does not depend on earlier kernels: with dependent launch it
  // is in flight while the previous kernel finishes.
  load_weights(lane);
  if (first) dependency_wait();
  for (int64_t base = lane; base < units;) {
    // one unit's activations at a time (L1 hits): registers go to weights in flight instead
#pragma unroll
    for (int k = 0; k < kUnitsInFlight; ++k) {
      const int64_t u = base + 32 * k;
      if (u < units) {
        typename P::X x;
        P::load_x(x, a.act, a.n, u);
#pragma unroll
        for (int i = 0; i < NR; ++i)
          if (valid[i % R]) acc[i] += P::dot(raw[k][i], x, u);
      }
    }
    base += 32 * kUnitsInFlight;
    if (base < units) load_weights(base);
  }
  const float scale = a.fuse.in_ssq ? input_norm_scale(a.fuse, a.n, lane) : 1.f;
#pragma unroll
  for (int i = 0; i < NR; ++i) acc[i] = warp_sum(acc[i]) * scale;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if (lane == i && valid[i]) {
      if constexpr (MODE == 0) {
        res[i] = acc[i];
      } else if constexpr (MODE == 1) {
        res[i] = *out[i] + acc[i];  // residual add: this warp is the row's only writer
      } else {
        const float g = acc[i];
        res[i] = g / (1.f + __expf(-g)) * acc[i + R];
      }
      *out[i] = res[i];
    }
  }
}

// MINB > 1 caps the registers so that MINB blocks fit on a multiprocessor (gemv_regs=cap):
// more warps in flight per SM at the price of a few rematerialized addresses.
template <class P, int R, int MODE, bool QOUT, int MINB, int IF>
__global__ void __launch_bounds__(warps_per_block<QOUT>() * 32, MINB) gemv_kernel(const GemvArgs a) {
  constexpr int W = warps_per_block<QOUT>();
  constexpr int kPasses = passes_per_block<R, QOUT>();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int i = 0; i < a.prefetch.count; ++i) prefetch_l2_span(a.prefetch.ptr[i], a.prefetch.bytes[i]);
  float res[R];
  if constexpr (!QOUT) {
    const int64_t row0 = (int64_t(blockIdx.x) * W + warp) * R;
    warp_rows<P, R, MODE, IF>(a, row0, true, res);
    if constexpr (MODE == 0 && R % 2 == 0) {
      if (a.rope.inv_freq) rope_epilogue<R>(a, row0, res);
    }
  } else {
    __shared__ float s_out[32];
#pragma unroll 1
    for (int pass = 0; pass < kPasses; ++pass) {
      const int slot = (pass * W + warp) * R;
      warp_rows<P, R, MODE, IF>(a, int64_t(blockIdx.x) * 32 + slot, pass == 0, res);
#pragma unroll
      for (int i = 0; i < R; ++i)
        if (lane == i) s_out[slot + i] = res[i];
    }
    __syncthreads();
    if (warp == 0) quantize_output(a.fuse, int64_t(blockIdx.x) * 32 + lane, a.total_rows, s_out[lane]);
  }
}
// gemv_stage: a persistent grid (as many blocks as fit at once) walks the groups of 4 x R
// rows; thread 0 bulk-copies a group's rows (every SoA field, gate and up with SwiGLU) into one
// of kStageBuffers shared buffers, so the copies of the next groups are in flight, holding no
// registers, while the warps compute the current one from shared memory. The host guarantees
// whole groups (no tail rows, no segment straddled) and 16-byte aligned spans.
#ifndef P64_CUDA_STAGE_BUFFERS  // compile-time variants (scripts/gpu/build-gemv-variants.sh)
#define P64_CUDA_STAGE_BUFFERS 2
#endif
constexpr int kStageBuffers = P64_CUDA_STAGE_BUFFERS;

template <int MODE>
__device__ __forceinline__ void stage_group(const GemvArgs& a, int64_t group, int64_t rows, uint8_t* dst,
                                            uint64_t* arrived) {
  int s = 0;
  int64_t rr = group * rows;
  if constexpr (MODE != 2) {
    while (s + 1 < a.nseg && rr >= a.seg[s].rows) { rr -= a.seg[s].rows; ++s; }
  }
  const int64_t nb = rows * a.stage.blocks_per_row;
  const uint32_t part_bytes = a.stage.smem / (MODE == 2 ? 2 : 1);
  bulk_barrier_expect(arrived, a.stage.smem);
  for (int part = 0; part < (MODE == 2 ? 2 : 1); ++part) {
    const GemvSegment& g = a.seg[MODE == 2 ? part : s];
    int64_t field_at = 0;  // the field's array offset in units of blocks x bytes
    for (int f = 0; f < a.stage.fields; ++f) {
      const int64_t w = a.stage.bytes[f];
      bulk_copy_to_shared(dst + part * part_bytes + nb * field_at, g.w + g.nb * field_at + rr * a.stage.blocks_per_row * w,
                          uint32_t(nb * w), arrived);
      field_at += w;
    }
  }
}

template <class P, int R, int MODE, int MINB>
__global__ void __launch_bounds__(kWarps * 32, MINB) gemv_staged_kernel(const GemvArgs a) {
  extern __shared__ __align__(128) uint8_t stage[];
  __shared__ uint64_t arrived[kStageBuffers];
  constexpr int64_t kRows = int64_t(kWarps) * R;
  const int warp = threadIdx.x >> 5;
  const int64_t groups = a.total_rows / kRows, nb = kRows * a.stage.blocks_per_row;
  const uint32_t part_bytes = a.stage.smem / (MODE == 2 ? 2 : 1);
  if (threadIdx.x == 0) {
    for (int b = 0; b < kStageBuffers; ++b) bulk_barrier_init(&arrived[b]);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int b = 0; b < kStageBuffers; ++b) {
      const int64_t g = blockIdx.x + int64_t(b) * gridDim.x;
      if (g < groups) stage_group<MODE>(a, g, kRows, stage + b * a.stage.smem, &arrived[b]);
    }
  }
  dependency_wait();
  int it = 0;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x, ++it) {
    const int b = it % kStageBuffers;
    uint8_t* buf = stage + b * a.stage.smem;
    bulk_barrier_wait(&arrived[b], uint32_t(it / kStageBuffers) & 1);
    float res[R];
    const int64_t row0 = g * kRows + int64_t(warp) * R;
    warp_rows<P, R, MODE, 1, true>(a, row0, false, res, StageView{buf, nb, int64_t(warp) * R, part_bytes});
    if constexpr (MODE == 0 && R % 2 == 0) {
      if (a.rope.inv_freq) rope_epilogue<R>(a, row0, res);
    }
    __syncthreads();  // every warp is done with this buffer: it may take the group after next
    const int64_t next = g + int64_t(kStageBuffers) * gridDim.x;
    if (threadIdx.x == 0 && next < groups) stage_group<MODE>(a, next, kRows, buf, &arrived[b]);
  }
}

template <class P, int R, int MODE>
void launch_staged(const GemvArgs& a, cudaStream_t stream) {
  constexpr int MINB = P64_CUDA_GEMV_MIN_BLOCKS;
  auto* kernel = gemv_staged_kernel<P, R, MODE, MINB>;
  static bool opted_in = false;  // per instance: dynamic shared memory beyond 48 KB must be asked for
  if (!opted_in) {
    P64_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxStageBytes)));
    opted_in = true;
  }
  const size_t smem = size_t(a.stage.smem) * kStageBuffers;
  int device = 0, sms = 0, per_sm = 0;
  P64_CUDA_CHECK(cudaGetDevice(&device));
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  P64_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarps * 32, smem));
  const int64_t groups = a.total_rows / (int64_t(kWarps) * R);
  const int64_t blocks = std::min<int64_t>(groups, int64_t(sms) * std::max(per_sm, 1));
  launch_kernel("gemv_staged_kernel", kernel, dim3(unsigned(blocks)), dim3(kWarps * 32), smem, stream, a);
}

template <class P, int R, int MODE, bool QOUT, int MINB = 1>
void launch_blocks(const GemvArgs& a, cudaStream_t stream) {
  constexpr int W = warps_per_block<QOUT>();
  const int64_t rows_per_block = int64_t(W) * R * passes_per_block<R, QOUT>();
  const int64_t blocks = (a.total_rows + rows_per_block - 1) / rows_per_block;
  if (a.in_flight == 1 || P::kInFlight == 1)
    return launch_kernel("gemv_kernel", gemv_kernel<P, R, MODE, QOUT, MINB, 1>, dim3(unsigned(blocks)), dim3(W * 32),
                         0, stream, a);
  launch_kernel("gemv_kernel", gemv_kernel<P, R, MODE, QOUT, MINB, 2>, dim3(unsigned(blocks)), dim3(W * 32), 0, stream,
                a);
}

template <class P, int R, int MODE>
void launch_one(const GemvArgs& a, cudaStream_t stream) {
  if constexpr (kStagedPath<P> && R <= 2) {
    if (a.stage.smem) return launch_staged<P, R, MODE>(a, stream);
  }
  if constexpr (!kFloatPath<P> && MODE != 0) {
    if (a.fuse.quantize_out) return launch_blocks<P, R, MODE, true>(a, stream);
  }
  if (a.fuse.quantize_out) throw Error("CUDA backend: output quantization needs an integer GEMV path");
  // Measured on the H200 (docs/cuda-backend.md): 4 blocks of 4 warps fit without spilling up
  // to 2 rows per warp; 4 rows per warp and the float path spill under that cap.
  if constexpr (!kFloatPath<P> && R <= 2) {
    if (a.cap_registers) return launch_blocks<P, R, MODE, false, P64_CUDA_GEMV_MIN_BLOCKS>(a, stream);
  }
  launch_blocks<P, R, MODE, false>(a, stream);
}

template <class P, int R>
void launch_mode(const GemvArgs& a, GemvMode mode, cudaStream_t stream) {
  switch (mode) {
    case GemvMode::Store: return launch_one<P, R, 0>(a, stream);
    case GemvMode::AddTo: return launch_one<P, R, 1>(a, stream);
    case GemvMode::SwiGLU: return launch_one<P, R, 2>(a, stream);
  }
}

template <class P>
void launch_rows(const GemvArgs& a, GemvMode mode, int rows_per_warp, cudaStream_t stream) {
  if (rows_per_warp >= 4) return launch_mode<P, 4>(a, mode, stream);
  if (rows_per_warp == 2) return launch_mode<P, 2>(a, mode, stream);
  return launch_mode<P, 1>(a, mode, stream);
}

// The float path keeps 32 dequantized values per row in registers: more than two rows in
// flight (R = 4, or R = 2 with SwiGLU's paired rows) would spill.
template <class P>
void launch_rows_float(const GemvArgs& a, GemvMode mode, int rows_per_warp, cudaStream_t stream) {
  if (rows_per_warp >= 2 && mode != GemvMode::SwiGLU) return launch_mode<P, 2>(a, mode, stream);
  return launch_mode<P, 1>(a, mode, stream);
}

template <uint32_t T>
__global__ void embed_kernel(RowRef r, const StepState* state, int64_t rows, float* out) {
  dependency_wait();
  const int64_t u = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t units = (r.n + 31) / 32;
  if (u >= units) return;
  int64_t tok = state->token;
  if (tok < 0 || tok >= rows) tok = 0;  // the host validates ids; never read out of bounds
  r.row = tok;
  float v[32];
  Deq<T>::unit(r, u, v);
#pragma unroll
  for (int i = 0; i < 32; ++i)
    if (u * 32 + i < r.n) out[u * 32 + i] = v[i];
}

template <uint32_t T>
void embed_one(RowRef r, const StepState* st, int64_t rows, float* out, cudaStream_t stream) {
  const int64_t units = (r.n + 31) / 32;
  launch_kernel("embed_kernel", embed_kernel<T>, dim3(unsigned((units + 127) / 128)), dim3(128), 0, stream, r, st,
                rows, out);
}

// The SoA field widths of the staged dtypes (engine/quant/quant.h), 0 fields: not staged.
StagePlan stage_fields(uint32_t dtype) {
  switch (dtype) {
    case kQ4_KS: return StagePlan{4, {128, 12, 2, 2}, 0, 0};
    case kQ6_KS: return StagePlan{4, {128, 64, 16, 2}, 0, 0};
    case kQ8_0S: return StagePlan{2, {32, 2, 0, 0}, 0, 0};
    default: return StagePlan{};
  }
}

// The rows per warp launch_gemv runs a launch with (gemv_fill may lower rows_per_warp).
int rows_per_warp_of(const GemvLaunch& g, int64_t total_rows) {
  int r = g.rows_per_warp;
  while (r > (g.rope.inv_freq ? 2 : 1) && total_rows / (int64_t(kWarps) * r) < g.fill_blocks) r /= 2;
  return r;
}

int64_t total_rows_of(const GemvLaunch& g) {
  if (g.mode == GemvMode::SwiGLU) return g.seg[0].rows;
  int64_t t = 0;
  for (int i = 0; i < g.nseg; ++i) t += g.seg[i].rows;
  return t;
}

// The staged kernel's plan for this launch, or smem 0 where it cannot serve it: whole blocks
// of rows in every segment, every copied span 16-byte aligned, and the copy within kMaxStageBytes.
StagePlan plan_stage(const GemvLaunch& g) {
  StagePlan p = stage_fields(g.dtype);
  if (!g.stage || g.act_bits != 16 || p.fields == 0 || g.fuse.quantize_out || !gemv_has_int_path(g.dtype, g.n))
    return StagePlan{};
  const int r = rows_per_warp_of(g, total_rows_of(g));
  if (r > 2) return StagePlan{};
  const int64_t rows = int64_t(kWarps) * r, block_elems = g.dtype == kQ8_0S ? 32 : 256;
  p.blocks_per_row = g.n / block_elems;
  int64_t part = 0;
  for (int i = 0; i < g.nseg; ++i) {
    const GemvSegment& s = g.seg[i];
    if (s.rows % rows != 0 || reinterpret_cast<uintptr_t>(s.w) % 16 != 0) return StagePlan{};
    int64_t field_at = 0;
    for (int f = 0; f < p.fields; ++f) {
      if ((s.nb * field_at) % 16 != 0 || (rows * p.blocks_per_row * p.bytes[f]) % 16 != 0) return StagePlan{};
      field_at += p.bytes[f];
    }
    part = rows * p.blocks_per_row * field_at;
  }
  const int64_t total = part * (g.mode == GemvMode::SwiGLU ? 2 : 1);
  if (total * kStageBuffers > kMaxStageBytes) return StagePlan{};
  p.smem = uint32_t(total);
  return p;
}

}  // namespace

bool gemv_stages(const GemvLaunch& g) { return plan_stage(g).smem != 0; }

bool gemv_has_int_path(uint32_t dtype, int64_t n) {
  switch (dtype) {
    case kQ4_K: case kQ4_KS: case kQ6_K: case kQ6_KS: return n % 256 == 0;
    case kQ8_0: case kQ8_0S: return n % 32 == 0;
    default: return false;
  }
}

void launch_gemv(const GemvLaunch& g, cudaStream_t stream) {
  GemvArgs a{};
  for (int i = 0; i < 3; ++i) a.seg[i] = g.seg[i];
  a.nseg = g.nseg;
  a.total_rows = total_rows_of(g);
  a.n = g.n;
  a.act = ActRef{g.xf, g.xq, g.xd, g.xs};
  a.fuse = g.fuse;
  a.prefetch = g.prefetch;
  a.cap_registers = g.cap_registers;
  a.in_flight = g.units_in_flight;
  a.rope = g.rope;
  if (g.rope.inv_freq && (g.mode != GemvMode::Store || g.rows_per_warp < 2 || g.fuse.quantize_out ||
                          g.rope.head_dim % 2 != 0))
    throw Error("CUDA backend: the rope epilogue needs a Store GEMV of 2 or 4 rows per warp and an even head_dim");
  if (g.mode == GemvMode::SwiGLU && (g.nseg != 2 || g.seg[0].rows != g.seg[1].rows || g.seg[0].nb != g.seg[1].nb))
    throw Error("CUDA backend: a SwiGLU GEMV needs gate and up tensors of the same shape and type");
  if (g.fuse.quantize_out && (a.total_rows % 32 != 0 || (g.mode != GemvMode::AddTo && g.mode != GemvMode::SwiGLU) ||
                              (g.mode == GemvMode::AddTo && g.nseg != 1)))
    throw Error("CUDA backend: output quantization needs one AddTo/SwiGLU output of a multiple of 32 rows");
  // gemv_fill: a matrix with few rows (o and down on the 3B: 3072) leaves block slots empty at
  // rows_per_warp; fewer rows per warp give it more blocks. The rope epilogue needs pairs.
  const int r = rows_per_warp_of(g, a.total_rows);
  a.stage = plan_stage(g);
  if (g.act_bits == 16 && gemv_has_int_path(g.dtype, g.n)) {
    switch (g.dtype) {
      case kQ4_K: return launch_rows<Dp2a<kQ4_K>>(a, g.mode, r, stream);
      case kQ4_KS: return launch_rows<Dp2a<kQ4_KS>>(a, g.mode, r, stream);
      case kQ6_K: return launch_rows<Dp2a<kQ6_K>>(a, g.mode, r, stream);
      case kQ6_KS: return launch_rows<Dp2a<kQ6_KS>>(a, g.mode, r, stream);
      case kQ8_0: return launch_rows<Dp2a<kQ8_0>>(a, g.mode, r, stream);
      case kQ8_0S: return launch_rows<Dp2a<kQ8_0S>>(a, g.mode, r, stream);
    }
  }
  if (g.act_bits == 8 && gemv_has_int_path(g.dtype, g.n)) {
    switch (g.dtype) {
      case kQ4_K: return launch_rows<Dp4a<kQ4_K>>(a, g.mode, r, stream);
      case kQ4_KS: return launch_rows<Dp4a<kQ4_KS>>(a, g.mode, r, stream);
      case kQ6_K: return launch_rows<Dp4a<kQ6_K>>(a, g.mode, r, stream);
      case kQ6_KS: return launch_rows<Dp4a<kQ6_KS>>(a, g.mode, r, stream);
      case kQ8_0: return launch_rows<Dp4a<kQ8_0>>(a, g.mode, r, stream);
      case kQ8_0S: return launch_rows<Dp4a<kQ8_0S>>(a, g.mode, r, stream);
    }
  }
  switch (g.dtype) {
    case kF32: return launch_rows_float<FloatPath<kF32>>(a, g.mode, r, stream);
    case kF16: return launch_rows_float<FloatPath<kF16>>(a, g.mode, r, stream);
    case kBF16: return launch_rows_float<FloatPath<kBF16>>(a, g.mode, r, stream);
    case kQ5_0: return launch_rows_float<FloatPath<kQ5_0>>(a, g.mode, r, stream);
    case kQ8_0: return launch_rows_float<FloatPath<kQ8_0>>(a, g.mode, r, stream);
    case kQ8_0S: return launch_rows_float<FloatPath<kQ8_0S>>(a, g.mode, r, stream);
    case kQ4_K: return launch_rows_float<FloatPath<kQ4_K>>(a, g.mode, r, stream);
    case kQ4_KS: return launch_rows_float<FloatPath<kQ4_KS>>(a, g.mode, r, stream);
    case kQ6_K: return launch_rows_float<FloatPath<kQ6_K>>(a, g.mode, r, stream);
    case kQ6_KS: return launch_rows_float<FloatPath<kQ6_KS>>(a, g.mode, r, stream);
  }
  throw Error("CUDA backend: no GEMV kernel for dtype id " + std::to_string(g.dtype));
}

void launch_embed(uint32_t dtype, const uint8_t* w, int64_t rows, int64_t n, int64_t nb,
                  const StepState* state, float* out, cudaStream_t stream) {
  const RowRef r{w, nb, 0, n};
  switch (dtype) {
    case kF32: return embed_one<kF32>(r, state, rows, out, stream);
    case kF16: return embed_one<kF16>(r, state, rows, out, stream);
    case kBF16: return embed_one<kBF16>(r, state, rows, out, stream);
    case kQ5_0: return embed_one<kQ5_0>(r, state, rows, out, stream);
    case kQ8_0: return embed_one<kQ8_0>(r, state, rows, out, stream);
    case kQ8_0S: return embed_one<kQ8_0S>(r, state, rows, out, stream);
    case kQ4_K: return embed_one<kQ4_K>(r, state, rows, out, stream);
    case kQ4_KS: return embed_one<kQ4_KS>(r, state, rows, out, stream);
    case kQ6_K: return embed_one<kQ6_K>(r, state, rows, out, stream);
    case kQ6_KS: return embed_one<kQ6_KS>(r, state, rows, out, stream);
  }
  throw Error("CUDA backend: no embedding kernel for dtype id " + std::to_string(dtype));
}

}  // namespace p64::cuda
