// Decode GEMV (y = W x for one token) over every weight format, plus the embedding lookup.
// One warp owns `R` whole rows: lanes stride over the row's units, so each warp-wide load is
// 512 consecutive bytes of weights; the activation unit is loaded once and reused for the R
// rows, and U units per lane are loaded before any arithmetic so several loads are in flight.
// The sum is finished with warp shuffles. Epilogues fuse the residual add (AddTo) and the
// FFN's SwiGLU (gate and up rows computed by the same warp).
#include <cuda_fp16.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_prologue.cuh"
#include "backends/cuda/kernels.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/quantize_act.cuh"
#include "backends/cuda/tiled_formats.cuh"
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

// The float path reads fp32 activations and never quantizes its output.
template <class P>
constexpr bool kFloatPath = false;
template <uint32_t T>
constexpr bool kFloatPath<FloatPath<T>> = true;

// Warps per block, and passes per block: a block that quantizes its output covers 32 rows (one
// quantization block) in 32 / (W * R) passes of W warps: one pass of 16 warps at 2 rows per
// warp (8 at 4), so no warp loads its rows' weights in two rounds; 1 row per warp takes 2.
template <int R, bool QOUT>
constexpr int warps_per_block() { return QOUT ? (R == 1 ? 16 : 32 / R) : kWarps; }
template <int R, bool QOUT>
constexpr int passes_per_block() { return QOUT ? 32 / (warps_per_block<R, QOUT>() * R) : 1; }

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

// One warp's R rows (with SwiGLU, R gate rows and their R up rows) from row0; returns the
// values written (lane i holds row i's). `first`: the block's first pass, which waits for the
// previous kernel once its first weights are in flight. PRO: the block (one pass of W warps)
// then makes its input in `smem` (gemv_prologue.cuh) and reads it from there.
// RING (gemv_ring): each unit's registers are refilled with the unit IF rounds ahead as soon as
// the unit is consumed, so IF - 1 units stay in flight while the warp does arithmetic; without
// it a lane's IF units are consumed together and the next IF requested after the last.
template <class P, int R, int MODE, int IF, bool PRO = false, int W = kWarps, bool RING = false>
__device__ __forceinline__ void warp_rows(const GemvArgs& a, int64_t row0, bool first, float res[R],
                                          unsigned char* smem = nullptr) {
  constexpr int NR = MODE == 2 ? 2 * R : R;
  constexpr int kUnitsInFlight = IF < P::kInFlight ? IF : P::kInFlight;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < R; ++i) res[i] = 0.f;
  if (row0 >= a.total_rows) {  // block 0 always has rows, so the grid still waits (launch.cuh)
    if (first) dependency_wait();
    if constexpr (PRO) gemv_prologue_input<W * 32>(a.pro, a.n, smem);
    return;
  }

  typename P::RowPtr ref[R];
  const int64_t up_bytes = MODE == 2 ? a.seg[1].w - a.seg[0].w : 0;
  float* out[R];
  bool valid[R];
  find_rows<P, R, MODE>(a, row0, ref, out, valid);

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
        load_unit_rows<P, R, MODE>(raw[k], ref, valid, up_bytes, u);
      }
    }
  };
  // The first round of weights does not depend on earlier kernels: with dependent launch it
  // is in flight while the previous kernel finishes.
  load_weights(lane);
  if (first) dependency_wait();
  ActRef act = a.act;
  if constexpr (PRO) act = gemv_prologue_input<W * 32>(a.pro, a.n, smem);
  for (int64_t base = lane; base < units;) {
    // one unit's activations at a time (L1 hits): registers go to weights in flight instead
#pragma unroll
    for (int k = 0; k < kUnitsInFlight; ++k) {
      const int64_t u = base + 32 * k;
      if (u < units) {
        typename P::X x;
        P::load_x(x, act, a.n, u);
#pragma unroll
        for (int i = 0; i < NR; ++i)
          if (valid[i % R]) acc[i] += P::dot(raw[k][i], x, u);
        if constexpr (RING) {
          const int64_t ahead = u + 32 * kUnitsInFlight;
          if (ahead < units) load_unit_rows<P, R, MODE>(raw[k], ref, valid, up_bytes, ahead);
        }
      }
    }
    base += 32 * kUnitsInFlight;
    if (!RING && base < units) load_weights(base);
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
template <class P, int R, int MODE, bool QOUT, int MINB, int IF, bool PRO, bool RING = false>
__global__ void __launch_bounds__(warps_per_block<R, QOUT>() * 32, MINB) gemv_kernel(const GemvArgs a) {
  extern __shared__ __align__(16) unsigned char prologue_smem[];
  constexpr int W = warps_per_block<R, QOUT>();
  constexpr int kPasses = passes_per_block<R, QOUT>();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int i = 0; i < a.prefetch.count; ++i) prefetch_l2_span(a.prefetch.ptr[i], a.prefetch.bytes[i]);
  float res[R];
  if constexpr (!QOUT) {
    const int64_t row0 = (int64_t(blockIdx.x) * W + warp) * R;
    warp_rows<P, R, MODE, IF, PRO, W, RING>(a, row0, true, res, prologue_smem);
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
template <class P, int R, int MODE, bool QOUT, int MINB = 1, bool PRO = false>
void launch_blocks(const GemvArgs& a, cudaStream_t stream) {
  constexpr int W = warps_per_block<R, QOUT>();
  const int64_t rows_per_block = int64_t(W) * R * passes_per_block<R, QOUT>();
  const int64_t blocks = (a.total_rows + rows_per_block - 1) / rows_per_block;
  const size_t smem = PRO ? size_t(gemv_prologue_bytes(a.n)) : 0;
  if (a.in_flight == 1 || P::kInFlight == 1)
    return launch_kernel("gemv_kernel", gemv_kernel<P, R, MODE, QOUT, MINB, 1, PRO>, dim3(unsigned(blocks)),
                         dim3(W * 32), smem, stream, a);
  // Ring instances only for the default launch shape (2 rows per warp under the register cap, an
  // integer path): each doubles a kernel's instances, and gemv.cu is the longest compile of the tree.
  if constexpr (!QOUT && !PRO && R == 2 && MINB > 1 && !kFloatPath<P>) {
    if (a.ring)
      return launch_kernel("gemv_kernel", gemv_kernel<P, R, MODE, QOUT, MINB, 2, PRO, true>, dim3(unsigned(blocks)),
                           dim3(W * 32), smem, stream, a);
  }
  launch_kernel("gemv_kernel", gemv_kernel<P, R, MODE, QOUT, MINB, 2, PRO>, dim3(unsigned(blocks)), dim3(W * 32), smem,
                stream, a);
}

template <class P, int R, int MODE>
void launch_one(const GemvArgs& a, cudaStream_t stream) {
  if constexpr (!kFloatPath<P> && MODE != 0) {
    if (a.fuse.quantize_out) {
      // under gemv_regs=cap, 16 warps per multiprocessor as the other GEMVs have
      constexpr int kQoutMinBlocks = 16 / warps_per_block<R, true>();
      if (a.cap_registers) return launch_blocks<P, R, MODE, true, kQoutMinBlocks>(a, stream);
      return launch_blocks<P, R, MODE, true>(a, stream);
    }
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

// gemv_prologue: the int16 readers at 2 rows per warp under the register cap (launch_gemv checks)
template <class P>
void launch_with_prologue(const GemvArgs& a, GemvMode mode, cudaStream_t stream) {
  constexpr int kMinBlocks = P64_CUDA_GEMV_MIN_BLOCKS;
  switch (mode) {
    case GemvMode::Store: return launch_blocks<P, 2, 0, false, kMinBlocks, true>(a, stream);
    case GemvMode::AddTo: return launch_blocks<P, 2, 1, false, kMinBlocks, true>(a, stream);
    case GemvMode::SwiGLU: return launch_blocks<P, 2, 2, false, kMinBlocks, true>(a, stream);
  }
}

// Calls f(ReaderTag<P>{}) with the int16-activation reader P of `dtype`; false where
// the dtype has none.
template <class P>
struct ReaderTag {
  using type = P;
};
template <class F>
bool visit_int16_reader(uint32_t dtype, F&& f) {
  switch (dtype) {
    case kQ4_K: f(ReaderTag<Dp2a<kQ4_K>>{}); return true;
    case kQ4_KS: f(ReaderTag<Dp2a<kQ4_KS>>{}); return true;
    case kQ6_K: f(ReaderTag<Dp2a<kQ6_K>>{}); return true;
    case kQ6_KS: f(ReaderTag<Dp2a<kQ6_KS>>{}); return true;
    case kQ8_0: f(ReaderTag<Dp2a<kQ8_0>>{}); return true;
    case kQ8_0S: f(ReaderTag<Dp2a<kQ8_0S>>{}); return true;
    case kQ5_0: f(ReaderTag<Dp2a<kQ5_0>>{}); return true;
    case kTiledQ4_K: f(ReaderTag<TiledQ4_K>{}); return true;
    case kTiledQ6_K: f(ReaderTag<TiledQ6_K>{}); return true;
  }
  return false;
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

}  // namespace

bool gemv_has_int_path(uint32_t dtype, int64_t n, int act_bits) {
  switch (dtype) {
    case kQ4_K: case kQ4_KS: case kQ6_K: case kQ6_KS: return n % 256 == 0;
    case kQ8_0: case kQ8_0S: return n % 32 == 0;
    case kQ5_0: return act_bits == 16 && n % 32 == 0;
    case kTiledQ4_K: case kTiledQ6_K: return n % 256 == 0;
    default: return false;
  }
}

void launch_gemv(const GemvLaunch& g, cudaStream_t stream) {
  GemvArgs a{};
  for (int i = 0; i < 3; ++i) a.seg[i] = g.seg[i];
  a.nseg = g.nseg;
  a.total_rows = 0;
  if (g.mode == GemvMode::SwiGLU) {
    a.total_rows = g.seg[0].rows;
  } else {
    for (int i = 0; i < g.nseg; ++i) a.total_rows += g.seg[i].rows;
  }
  a.n = g.n;
  a.act = ActRef{g.xf, g.xq, g.xd, g.xs};
  a.fuse = g.fuse;
  a.prefetch = g.prefetch;
  a.cap_registers = g.cap_registers;
  a.in_flight = g.units_in_flight;
  a.ring = g.ring_refill;
  a.rope = g.rope;
  a.pro = g.prologue;
  if (g.prologue.x && (g.act_bits != 16 || !gemv_has_int_path(g.dtype, g.n) || g.n % 32 != 0 ||
                       g.n > kGemvPrologueMaxN || g.fuse.quantize_out || g.fuse.in_ssq || g.rows_per_warp != 2 ||
                       !g.cap_registers))
    throw Error("CUDA backend: the GEMV prologue needs int16 activations on an integer path, n % 32 == 0, n <= " +
                std::to_string(kGemvPrologueMaxN) + ", no fuse_norm, 2 rows per warp and gemv_regs=cap");
  if (g.rope.inv_freq && (g.mode != GemvMode::Store || g.rows_per_warp < 2 || g.fuse.quantize_out ||
                          g.rope.head_dim % 2 != 0))
    throw Error("CUDA backend: the rope epilogue needs a Store GEMV of 2 or 4 rows per warp and an even head_dim");
  if (g.mode == GemvMode::SwiGLU && (g.nseg != 2 || g.seg[0].rows != g.seg[1].rows || g.seg[0].nb != g.seg[1].nb))
    throw Error("CUDA backend: a SwiGLU GEMV needs gate and up tensors of the same shape and type");
  if (g.fuse.quantize_out && (a.total_rows % 32 != 0 || (g.mode != GemvMode::AddTo && g.mode != GemvMode::SwiGLU) ||
                              (g.mode == GemvMode::AddTo && g.nseg != 1)))
    throw Error("CUDA backend: output quantization needs one AddTo/SwiGLU output of a multiple of 32 rows");
  if (g.split_rows > 0 && !g.prologue.x && g.act_bits == 16 && gemv_has_int_path(g.dtype, g.n) &&
      launch_gemv_split(a, g.dtype, g.mode, g.split_rows, stream))
    return;
  // gemv_fill: a matrix with few rows (o and down on the 3B: 3072) leaves block slots empty at
  // rows_per_warp; fewer rows per warp give it more blocks. The rope epilogue needs pairs.
  int r = g.rows_per_warp;
  while (!g.prologue.x && r > (g.rope.inv_freq ? 2 : 1) && a.total_rows / (int64_t(kWarps) * r) < g.fill_blocks) r /= 2;
  if (g.act_bits == 16 && gemv_has_int_path(g.dtype, g.n)) {
    const bool launched = visit_int16_reader(g.dtype, [&](auto reader) {
      using P = typename decltype(reader)::type;
      if (g.prologue.x) launch_with_prologue<P>(a, g.mode, stream);
      else launch_rows<P>(a, g.mode, r, stream);
    });
    if (launched) return;
  }
  if (g.dtype == kTiledQ4_K || g.dtype == kTiledQ6_K)
    throw Error("CUDA backend: the tiled weight forms are read on the int16 activation path only");
  if (g.act_bits == 8 && gemv_has_int_path(g.dtype, g.n, 8)) {
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
    case kTiledQ4_K: return embed_one<kTiledQ4_K>(r, state, rows, out, stream);
    case kTiledQ6_K: return embed_one<kTiledQ6_K>(r, state, rows, out, stream);
  }
  throw Error("CUDA backend: no embedding kernel for dtype id " + std::to_string(dtype));
}

}  // namespace p64::cuda
