#include "backends/cuda/cuda_switches.h"

#include <cuda_runtime.h>

#include "engine/common/error.h"
#include "engine/runtime/switch_table.h"

namespace p64::cuda {

// Long by design: one entry per switch with its description, a table rather than logic.
const std::vector<SwitchInfo>& switch_table() {
  static const std::vector<SwitchInfo> t = {
      bool_switch("graphs",
        "capture the decode step once as a CUDA graph and replay it per token (position and token "
        "come from device memory, no re-capture)",
        true, "default"),
      bool_switch("pdl",
        "programmatic dependent launch: each kernel of the step is scheduled while its predecessor "
        "finishes and loads its first weights before waiting for it",
        true, "default"),
      bool_switch("fuse_norm",
        "RMSNorm and the FFN activation quantization folded into the GEMVs: the residual add's "
        "epilogue writes the next norm's input quantized plus partial sums of squares, the "
        "consumer scales by 1/rms (integer paths only); rejected: its 32-row blocks "
        "serialize the rows' loads",
        false, "rejected"),
      bool_switch("l2_prefetch",
        "each GEMV's blocks issue bulk L2 prefetches of the next matrices' weights (up to 32 MiB) "
        "before waiting for their inputs, so weight streaming continues across kernel boundaries; "
        "rejected: the prefetch traffic competes with the live GEMV",
        false, "rejected"),
      enum_switch("smem_carveout",
        "shared-memory carveout of every decode kernel: 'driver' lets the driver size it per kernel, "
        "'shared' asks for the largest shared part everywhere, so a multiprocessor need not be "
        "reconfigured between the GEMVs (no shared memory) and the streamed attention (up to 135 KB)",
        "driver", {"driver", "shared"}, "opt-in"),
      enum_switch("gemv_regs",
        "decode GEMV register budget: 'free' lets the compiler take ~130-160 registers (3 blocks per "
        "SM), 'cap' limits them so 4 blocks fit (integer paths, 1-2 rows per warp)",
        "cap", {"free", "cap"}, "default"),
      enum_switch("gemv_in_flight",
        "decode GEMV (integer paths): 32-unit rounds per lane whose weight loads are issued before "
        "any arithmetic on them; 1 frees registers for more resident warps. auto: 2 for Q8_0 matrices, "
        "1 for the K-quants",
        "auto", {"auto", "1", "2"}, "default"),
      enum_switch("gemv_gate_up_in_flight",
        "gemv_in_flight for the gate/up GEMV alone (its SwiGLU form holds twice the rows' weights "
        "in registers); auto: as the other GEMVs",
        "auto", {"auto", "1", "2"}, "opt-in"),
      bool_switch("gemv_ring",
        "decode GEMV (warp kernel, integer paths): two units per lane in flight, and each unit's "
        "registers refilled with the unit two rounds ahead as soon as it is consumed, so loads stay "
        "in flight while the warp does arithmetic (overrides gemv_in_flight; integer paths at gemv_rows=2 "
        "and gemv_regs=cap, not for the GEMVs that quantize their output)",
        false, "opt-in"),
      enum_switch("act_quant",
        "GEMV activations for Q4_K/Q6_K/Q8_0: int16 per 32 with dp2a, int8 per 32 with dp4a "
        "(llama.cpp's mmvq idea; fails the quality gate on deep models), or f32 FMA on dequantized "
        "weights",
        "int16", {"int16", "int8", "f32"}, "default"),
      bool_switch("fused_gate_up",
        "gate and up rows in one GEMV launch with SwiGLU in its epilogue",
        true, "default"),
      bool_switch("qkv_fused",
        "q, k and v projections of one dtype in one GEMV launch",
        true, "default"),
      int_switch("gemv_rows",
        "matrix rows per warp in the decode GEMV (activation reuse vs. parallelism)",
        2, {1, 2, 4}, "default"),
      int_range_switch("gemv_fill",
        "decode GEMV: rows per warp halved (down to 1; 2 with the rope epilogue) for a matrix whose grid "
        "would have fewer than this many blocks per multiprocessor, e.g. the 3B's o and down (3072 rows: "
        "384 blocks of 8 rows for 528 slots); 0: gemv_rows everywhere",
        0, 0, 64, "opt-in"),
      int_switch("attn_chunk",
        "cached positions per flash-decoding split block",
        16, {16, 32, 64, 128, 256}, "default"),
      int_switch("attn_grid",
        "flash-decoding split blocks launched per kv head, each walking every n-th split in use; 0 "
        "launches one block per possible split of the context (most exit at once at short contexts)",
        0, {0, 16, 32, 64}, "opt-in"),
      int_range_switch("attn_splits",
        "flash-decoding splits in use per kv head at most: past attn_chunk x this many positions each "
        "split block takes a longer run of the cache, so a deep context is not cut into hundreds of "
        "partials for the combine to merge; 0: attn_chunk positions per split at any depth",
        0, 0, 1024, "opt-in"),
      bool_switch("attn_lanes",
        "flash-decoding split kernel with a lane per cached position: each lane dots a whole K row "
        "(16-byte loads) with every q head of its group, no shuffle per dot product; the V pass as before "
        "(f16 KV cache, head_dim 32/64/128/256; else the warp-row kernel)",
        false, "opt-in"),
      bool_switch("attn_stream",
        "flash-decoding split kernel that streams the KV cache through shared memory: each warp keeps two "
        "tiles of 32 cached positions (K and V rows) in flight by cp.async while it works on the oldest, and "
        "the grid is one block per split, attn_splits blocks per kv head (0: the multiprocessors shared "
        "among the kv heads) (f16 KV cache, head_dim 32/64/128; else the kernels above)",
        true, "default"),
      int_switch("combine_batch",
        "attention combine: the partials (max, sum, weighted V) of this many splits are loaded before "
        "any is merged, one online-softmax rescale per batch, so a batch costs one memory latency; 1: a "
        "pass for the max then one for the sums, split by split",
        8, {1, 8}, "default"),
      bool_switch("rms_batched",
        "RMSNorm kernels: each thread loads all its elements of the sum of squares (up to 16) before "
        "adding them, and its norm weight before waiting for the producer, so the pass costs one memory "
        "latency instead of a strided loop's",
        true, "default"),
      int_switch("argmax_batch",
        "device argmax (one block): logits each thread loads before comparing them, so the scan of a "
        "128k vocabulary needs 8 rounds of loads instead of 125 dependent ones",
        16, {1, 16}, "default"),
      bool_switch("attn_early",
        "decode attention: each split block loads its first round of cached K/V rows (all but the step's "
        "own position) and both attention kernels read the position before waiting for the q/k/v GEMV, "
        "so those loads overlap the GEMV's tail",
        true, "default"),
      bool_switch("attn_tail_combine",
        "decode attention: the last split block of each kv head to finish merges the splits of its q heads "
        "and writes the o projection's input, instead of a combine kernel: one launch fewer per layer "
        "(head_dim a multiple of 32; otherwise the combine kernel runs). Rejected: the merge waits in the "
        "split kernel's tail for its slowest block, which costs more than the launch it saves",
        false, "rejected"),
      bool_switch("qkv_rope",
        "RoPE and the k/v cache write in the q/k/v GEMV's epilogue (a warp's adjacent rows are a "
        "rotation pair) instead of a separate kernel; needs gemv_rows 2 or 4 (with 1 the rope kernel runs)",
        true, "default"),
      enum_switch("gemv_layout",
        "decode GEMV weight layout: 'blocks' reads the file's Q4_K/Q6_K blocks (AoS or SoA); 'tiles' "
        "repacks them at load (tiled_weights.h): one 16-byte load per 32-element sub-block, its scale facts "
        "in one header shared by 8 lanes; the prefill GEMMs and the embedding read the same copy; "
        "int16 activations only (act_quant=int8|f32 read the blocks)",
        "tiles", {"blocks", "tiles"}, "default"),
      int_switch("gemv_split",
        "decode GEMV (SoA and tiled integer forms): a block of 128 threads owns this many rows and its "
        "threads split the rows' units, so every weight load of a 3072-wide row is in flight at once "
        "(gemv_split.cu); 0: a warp owns whole rows and loads them in rounds",
        0, {0, 2, 4}, "opt-in"),
      bool_switch("q5_0_int16",
        "decode GEMV: Q5_0 matrices (the quantizer's fallback for Q4_K rows whose width is not a multiple "
        "of 256, e.g. SmolLM2's 960) read int16 activations with dp2a; 0: fp32 FMA on dequantized weights",
        true, "default"),
      bool_switch("swiglu_quant",
        "the fused gate/up GEMV's SwiGLU epilogue writes the down projection's int16 input (blocks "
        "of 32 rows, 16 warps) instead of a separate quantization kernel: one launch fewer per layer",
        false, "opt-in"),
      bool_switch("gemv_prologue",
        "each GEMV block makes its own int16 input in shared memory from the fp32 vector: RMSNorm before "
        "q/k/v, gate/up and the logits, the plain quantization before down (gemv_prologue.cuh); no rms_attn, "
        "rms_ffn, ffn_quant, rms_final launches. Needs int16 activations on integer paths, gemv_rows=2, "
        "gemv_regs=cap, no fuse_norm/swiglu_quant; otherwise the separate kernels run. Rejected: every "
        "block pays the prologue, more than the launch it saves",
        false, "rejected"),
      enum_switch("kv_type",
        "KV cache element type; auto = f32 for F32 models, f16 otherwise",
        "auto", {"auto", "f16", "f32"}, "default"),
      enum_switch("prefill",
        "batched: the prompt as T-token matrices on tensor cores (GEMMs dequantizing weight tiles to "
        "f16 in shared memory, batched causal attention); stepwise: token by token through the decode "
        "step",
        "batched", {"batched", "stepwise"}, "default"),
      int_switch("prefill_chunk",
        "tokens per batched-prefill pass (longer prompts run in chunks of this many)",
        512, {64, 128, 256, 512, 1024, 2048}, "default"),
      int_range_switch("prefill_batch_min",
        "prompts shorter than this many tokens skip the batched prefill and go token by token through the "
        "decode step's graph (the batched pass has a fixed cost of several decode steps); 1: every prompt "
        "batched",
        8, 1, 64, "default"),
      bool_switch("prefill_splitk",
        "batched prefill: GEMMs whose output tiles leave SMs idle (q/k/v, o, down at 512 tokens) "
        "split their k-tiles and add the partial sums in a second pass",
        false, "opt-in"),
      int_switch("prefill_attn_group",
        "batched prefill attention: cached positions per online-softmax update (4: the dot "
        "products of 4 positions reduced together, one rescale per group)",
        1, {1, 4}, "opt-in"),
  };
  return t;
}

Switches parse_switches(const BackendOptions& o) {
  const SwitchValues v("cuda", switch_table(), o.switches);
  Switches s;
  s.graphs = v.flag("graphs");
  s.pdl = v.flag("pdl");
  s.smem_carveout = v.text("smem_carveout") == "shared" ? int(cudaSharedmemCarveoutMaxShared) : -1;
  s.fuse_norm = v.flag("fuse_norm");
  s.l2_prefetch = v.flag("l2_prefetch");
  s.gemv_reg_cap = v.text("gemv_regs") == "cap";
  const std::string& in_flight = v.text("gemv_in_flight");
  s.gemv_in_flight = in_flight == "auto" ? 0 : in_flight == "1" ? 1 : 2;
  const std::string& gate_up_in_flight = v.text("gemv_gate_up_in_flight");
  s.gemv_gate_up_in_flight = gate_up_in_flight == "auto" ? 0 : gate_up_in_flight == "1" ? 1 : 2;
  s.gemv_ring = v.flag("gemv_ring");
  const std::string& act = v.text("act_quant");
  s.act_bits = act == "int16" ? 16 : act == "int8" ? 8 : 0;
  s.fused_gate_up = v.flag("fused_gate_up");
  s.qkv_fused = v.flag("qkv_fused");
  s.gemv_rows = v.integer("gemv_rows");
  s.gemv_fill = v.integer("gemv_fill");
  s.attn_chunk = v.integer("attn_chunk");
  s.attn_grid = v.integer("attn_grid");
  s.attn_splits = v.integer("attn_splits");
  s.attn_lanes = v.flag("attn_lanes");
  s.attn_stream = v.flag("attn_stream");
  s.qkv_rope = v.flag("qkv_rope");
  s.combine_batch = v.integer("combine_batch");
  s.rms_batched = v.flag("rms_batched");
  s.attn_early = v.flag("attn_early");
  s.attn_tail_combine = v.flag("attn_tail_combine");
  s.argmax_batch = v.integer("argmax_batch");
  s.kv_type = v.text("kv_type");
  s.gemv_tiles = v.text("gemv_layout") == "tiles";
  s.swiglu_quant = v.flag("swiglu_quant");
  s.gemv_prologue = v.flag("gemv_prologue");
  s.q5_0_int16 = v.flag("q5_0_int16");
  s.gemv_split = v.integer("gemv_split");
  if (s.gemv_tiles && s.act_bits != 16) {
    if (v.given("gemv_layout"))
      throw Error("CUDA backend: gemv_layout=tiles reads int16 activations only (act_quant=int16)");
    s.gemv_tiles = false;  // the default layout follows the activations
  }
  s.batched_prefill = v.text("prefill") == "batched";
  s.prefill_chunk = v.integer("prefill_chunk");
  s.prefill_batch_min = v.integer("prefill_batch_min");
  s.prefill_splitk = v.flag("prefill_splitk");
  s.prefill_attn_group = v.integer("prefill_attn_group");
  return s;
}

}  // namespace p64::cuda
