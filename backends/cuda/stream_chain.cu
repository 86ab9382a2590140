// The streamed GEMV chain (stream_chain.h). Per warp: a ring of `RING` rounds in shared memory
// filled from the warp's own stream, by cp.async (16 bytes a lane) or by one bulk copy per round
// (cp.async.bulk, the TMA unit: one lane issues 1152 bytes, an mbarrier per ring slot counts them
// in). RING - 1 rounds are always in flight ahead of the one being multiplied, whatever matrix
// they belong to, so the copies keep flowing while the warp waits at a barrier or has no rows in
// the current matrix. The arithmetic is the decode GEMV's (TiledQ4_K::dot on int16 activations),
// unit for unit in the same order.
#include <cuda_runtime.h>

#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/stream_chain.h"
#include "backends/cuda/stream_layout.h"
#include "backends/cuda/tiled_formats.cuh"
#include "backends/cuda/warp_reduce.cuh"

namespace p64::cuda {
namespace {

template <int N>
__device__ __forceinline__ void cp_async_wait_pending() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ uint4 lds16(const unsigned char* p) { return *reinterpret_cast<const uint4*>(p); }
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void mbar_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}
// One arrival that expects `bytes` of asynchronous copies, then the copy of `bytes` from global
// into shared memory that completes them.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the slot's earlier reads come first
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_again:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_again;\n"
      "}\n" ::"r"(smem_addr(bar)), "r"(parity) : "memory");
}

// Every block arrives, then waits until all have: generation k ends when the counter reaches
// k * gridDim.x. A wait past 2 s (a grid not co-resident) sets `fault` and lets the rest run.
// red: the arrival is a fire-and-forget release reduction (the block's writes, ordered before it
// by the __syncthreads, become visible with it) instead of a fence and an atomic that returns.
// probe: the %globaltimer when the block arrives and when it leaves, at probe[0] and probe[1].
__device__ void grid_barrier(unsigned* counter, unsigned generation, int* fault, bool red, uint64_t* probe) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (probe) probe[0] = global_ns();
    if (red) {
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
    } else {
      __threadfence();
      atomicAdd(counter, 1u);
    }
    const unsigned target = generation * gridDim.x;
    const uint64_t t0 = global_ns();
    while (ld_acquire(counter) < target) {
      if (*reinterpret_cast<volatile int*>(fault) || global_ns() - t0 > 2000000000ull) {
        atomicExch(fault, 1);
        break;
      }
    }
    if (probe) probe[1] = global_ns();
  }
  __syncthreads();
}

// The op's input copied into shared memory by the whole block (through L2: another block may
// have written it), so each round reads its 32 activations there instead of from L1/L2.
__device__ ActRef stage_activations(const StreamChainOp& op, unsigned char* smem) {
  uint4* xq = reinterpret_cast<uint4*>(smem);
  float* xd = reinterpret_cast<float*>(smem + op.n * 2);
  float* xs = xd + op.n / 32;
  __syncthreads();  // every warp is done with the previous op's input
  for (int64_t i = threadIdx.x; i < op.n / 8; i += blockDim.x) xq[i] = __ldcg(static_cast<const uint4*>(op.xq) + i);
  for (int64_t i = threadIdx.x; i < op.n / 32; i += blockDim.x) xd[i] = __ldcg(op.xd + i);
  for (int64_t i = threadIdx.x; i < op.n / 16; i += blockDim.x) xs[i] = __ldcg(op.xs + i);
  __syncthreads();
  return ActRef{nullptr, xq, xd, xs};
}

template <int RING, bool BULK, int W>
__global__ void __launch_bounds__(W * 32, 1) stream_chain_kernel(const StreamChainLaunch a) {
  extern __shared__ __align__(16) unsigned char ring_all[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t slots = int64_t(gridDim.x) * W;
  const int64_t slot = int64_t(warp) * gridDim.x + blockIdx.x;
  unsigned char* ring = ring_all + size_t(warp) * RING * kStreamRoundBytes;
  uint64_t* bars = reinterpret_cast<uint64_t*>(ring_all + size_t(W) * RING * kStreamRoundBytes) + warp * RING;
  const uint8_t* src = a.stream + (a.interleaved ? 0 : a.warp_begin[slot]);
  const int64_t total = a.weights ? int64_t(a.warp_begin[slot + 1] - a.warp_begin[slot]) / kStreamRoundBytes : 0;
  unsigned char* act_smem = ring_all + size_t(W) * RING * (kStreamRoundBytes + 8);
  int64_t issued = 0, consumed = 0;
  if constexpr (BULK) {
    if (lane == 0)
      for (int r = 0; r < RING; ++r) mbar_init(bars + r);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncwarp();
  }
  // Round `issued` into its ring slot (cp.async: an empty group past the end keeps the count uniform).
  int issue_op = 0;
  int64_t issue_t = 0;  // interleaved: the next round to issue is round issue_t of matrix issue_op
  auto issue = [&]() {
    unsigned char* dst = ring + (issued % RING) * kStreamRoundBytes;
    const uint8_t* from = src + issued * kStreamRoundBytes;
    if (a.interleaved && issued < total) {
      while (issue_t >= stream_slot_rounds(a.ops[issue_op].rows, a.ops[issue_op].n, slot, slots)) {
        ++issue_op;
        issue_t = 0;
      }
      from = a.stream + ((a.ops[issue_op].round_base + issue_t) * slots + slot) * kStreamRoundBytes;
      ++issue_t;
    }
    if constexpr (BULK) {
      if (lane == 0 && issued < total) bulk_copy(dst, from, kStreamRoundBytes, bars + issued % RING);
    } else {
      if (issued < total)
        for (int p = lane; p < kStreamRoundBytes / 16; p += 32) cp_async16(dst + 16 * p, from + 16 * p);
      cp_async_commit();
    }
    ++issued;
  };
#pragma unroll 1
  for (int r = 0; r < RING - 1; ++r) issue();

#pragma unroll 1
  for (int k = 0; k < a.nops; ++k) {
    const StreamChainOp op = a.ops[k];
    ActRef act{nullptr, op.xq, op.xd, op.xs};
    if (a.stage_act) act = stage_activations(op, act_smem);
    const int64_t count = a.weights ? stream_slot_rounds(op.rows, op.n, slot, slots, a.balanced) : 0;
    StreamRound rd = stream_first_round(op.rows, op.n, slot, slots, a.balanced);
    float acc[kStreamRows];
#pragma unroll
    for (int i = 0; i < kStreamRows; ++i) acc[i] = 0.f;
#pragma unroll 1
    for (int64_t t = 0; t < count; ++t, stream_next_round(rd, op.n, slots, a.balanced)) {
      if constexpr (BULK) mbar_wait(bars + consumed % RING, uint32_t(consumed / RING) & 1u);
      else cp_async_wait_pending<RING - 2>();  // this round landed (for this lane's copies)
      __syncwarp();                            // ... and every lane's; the previous slot is free
      const unsigned char* round = ring + (consumed % RING) * kStreamRoundBytes;
      ++consumed;
      issue();
      TileX x;
      load_tile_x(x, act, 32 * int(rd.j) + lane);
#pragma unroll
      for (int i = 0; i < kStreamRows; ++i) {
        TiledQ4_K::Raw raw;
        raw.q = lds16(round + 512 * i + 16 * lane);
        raw.h = lds16(round + 512 * kStreamRows + 64 * i + 16 * (lane >> 3));
        acc[i] += TiledQ4_K::dot(raw, x, lane);
      }
      if (rd.j + 1 == op.n / 1024 || t + 1 == count) {  // the group's last round, or the slot's
#pragma unroll
        for (int i = 0; i < kStreamRows; ++i) {
          const float v = warp_sum(acc[i]);
          float* out = op.out + rd.group * kStreamRows + i;
          if (lane == i) {
            if (a.balanced) atomicAdd(out, v);  // a group split between slots: each adds its part
            else *out = v;
          }
          acc[i] = 0.f;
        }
      }
    }
    if (a.barriers && k + 1 < a.nops)
      grid_barrier(a.barrier, unsigned(k + 1), a.fault, a.red_arrive,
                   a.probe ? a.probe + 2 * (int64_t(k) * gridDim.x + blockIdx.x) : nullptr);
  }
  if constexpr (!BULK) cp_async_wait_all();
}

}  // namespace

size_t stream_chain_smem(int ring, int warps, int64_t staged_n) {
  return size_t(ring) * (kStreamRoundBytes + 8) * warps + size_t(staged_n) * 2 + size_t(staged_n) / 32 * 4 +
         size_t(staged_n) / 16 * 4;
}

void launch_stream_chain(const StreamChainLaunch& l, cudaStream_t stream) {
  if (l.ring != 4 && l.ring != 8) throw Error("stream chain: ring must be 4 or 8 rounds (got " + std::to_string(l.ring) + ")");
  if (l.warps != 16 && !(l.warps == 32 && l.ring == 4))
    throw Error("stream chain: 16 warps per block, or 32 with a ring of 4 (got " + std::to_string(l.warps) + ")");
  void (*kernel)(StreamChainLaunch) =
      l.warps == 32 ? (l.bulk ? stream_chain_kernel<4, true, 32> : stream_chain_kernel<4, false, 32>)
      : l.ring == 4 ? (l.bulk ? stream_chain_kernel<4, true, 16> : stream_chain_kernel<4, false, 16>)
                    : (l.bulk ? stream_chain_kernel<8, true, 16> : stream_chain_kernel<8, false, 16>);
  const size_t smem = stream_chain_smem(l.ring, l.warps, l.stage_act ? l.max_n : 0);
  P64_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(l.blocks));
  cfg.blockDim = dim3(unsigned(l.warps) * 32);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;  // the barrier needs every block resident
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  P64_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, l));
}

}  // namespace p64::cuda
