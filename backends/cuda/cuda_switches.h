#pragma once
// The CUDA backend's switches: the table `p64 switches` lists (names, values, defaults, status)
// and what one backend load reads from it.
#include <string>
#include <vector>

#include "engine/runtime/backend.h"

namespace p64::cuda {

// What parse_switches() reads from the table; every field is set there (the table owns the defaults).
struct Switches {
  bool graphs{};
  bool pdl{};
  int smem_carveout{};  // -1: the driver's choice
  bool fuse_norm{};
  bool l2_prefetch{};
  bool gemv_reg_cap{};
  int gemv_in_flight{};  // 0 = auto: 2 for Q8_0 matrices, 1 for the K-quants
  int gemv_gate_up_in_flight{};  // the gate/up GEMV's; 0 = as gemv_in_flight
  bool gemv_ring{};
  int act_bits{};  // act_quant: int16 | int8 | f32 (0)
  bool fused_gate_up{};
  bool qkv_fused{};
  int gemv_rows{};
  int gemv_fill{};  // blocks per multiprocessor a GEMV grid should reach; 0: rows per warp fixed
  int attn_chunk{};
  int attn_grid{};      // split blocks per kv head; 0: one per possible split
  int attn_splits{};    // splits in use per kv head at most; 0: attn_chunk positions each at any depth
  bool attn_lanes{};
  bool attn_stream{};
  int combine_batch{};  // splits the attention combine loads before merging them
  bool rms_batched{};
  int argmax_batch{};
  bool attn_early{};
  bool attn_tail_combine{};
  bool qkv_rope{};  // RoPE + KV write in the q/k/v GEMV epilogue
  bool gemv_tiles{};  // gemv_layout=tiles
  int gemv_split{};       // rows per block of the block-split GEMV; 0: a warp owns whole rows
  bool swiglu_quant{};  // the gate/up GEMV quantizes the down projection's input itself
  bool gemv_prologue{};  // each GEMV normalizes and quantizes its own input
  bool q5_0_int16{};     // Q5_0 matrices on the int16 dp2a path (else fp32 FMA)
  std::string kv_type{};
  bool batched_prefill{};  // prefill: batched | stepwise
  int prefill_chunk{};
  int prefill_batch_min{};  // shorter prompts go token by token through the decode step's graph
  bool prefill_splitk{};
  int prefill_attn_group{};
};

const std::vector<SwitchInfo>& switch_table();
// The switches `o` names, checked against the table (p64::Error on an unknown name or value).
Switches parse_switches(const BackendOptions& o);

}  // namespace p64::cuda
