#pragma once
// The streamed GEMV chain (stream_chain.cu): one persistent grid, one block per multiprocessor,
// multiplies a chain of tiled-Q4_K matrices laid out by plan_stream. Each warp keeps `ring`
// rounds of its own weight stream in flight (cp.async or bulk copies into shared memory, no
// registers held),
// across matrix boundaries; with `barriers`, a grid-wide barrier separates one matrix from the
// next, as a decode step's data dependencies would. It is the measured design question behind a
// persistent decode kernel: can a grid stream a step's weights at the read ceiling while it
// still waits between matrices?
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/kernels.h"

namespace p64::cuda {

constexpr int kStreamWarps = 16;  // warps per block by default (32 is the other choice)

struct StreamChainOp {
  const void* xq;  // int16 activations [n], scales [n / 32], fp32 sums of 16 [n / 16] (ActBuffers)
  const float* xd;
  const float* xs;
  float* out;      // [rows]
  int64_t rows, n;
  int64_t round_base;  // the plan's round_base (interleaved order)
};

struct StreamChainLaunch {
  const StreamChainOp* ops = nullptr;  // device array [nops]
  int nops = 0;
  const uint8_t* stream = nullptr;     // plan_stream's bytes on the device
  const uint64_t* warp_begin = nullptr;  // device copy of the plan's offsets
  unsigned* barrier = nullptr;         // zeroed before every launch
  int* fault = nullptr;                // set to 1 when a barrier waited past its timeout
  int blocks = 0;                      // the plan's blocks: one per multiprocessor
  int ring = 8;                        // rounds in flight per warp: 4 or 8 (4 with 32 warps)
  int warps = kStreamWarps;            // warps per block, as the plan was made: 16 or 32
  bool barriers = true;
  bool bulk = false;                   // one bulk copy (TMA) per round instead of 16 bytes a lane
  bool weights = true;                 // false: only the barriers (their own cost)
  bool interleaved = false;            // the plan's order of rounds (stream_layout.h)
  bool balanced = false;               // the plan's balanced share: outputs must be zero before the launch
  bool stage_act = false;              // each op's input copied into shared memory by the block first
  int64_t max_n = 0;                   // with stage_act: the widest op's n
  bool red_arrive = false;             // barrier arrivals by release reductions (grid_barrier)
  uint64_t* probe = nullptr;           // [nops - 1][blocks][2]: each block's barrier arrival and leave (%globaltimer ns)
};

// Shared memory one block of `warps` warps needs for `ring` rounds per warp and an input of
// `staged_n` elements staged in shared memory (0: none).
size_t stream_chain_smem(int ring, int warps, int64_t staged_n);
void launch_stream_chain(const StreamChainLaunch& l, cudaStream_t stream);

}  // namespace p64::cuda
