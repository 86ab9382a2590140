#pragma once
// Host-side launchers of the batched prefill (prefill_gemm.cu, prefill_attention.cu,
// prefill_ops.cu). Unlike the decode step these are not captured in a graph: the chunk's
// length and first position are plain kernel arguments. Activations that feed a GEMM are f16
// rows of a padded width (`ld*`, a multiple of 64 whose pad columns stay zero); the residual
// stream and the GEMM outputs are f32. Every launcher checks its launch.
#include <cuda_runtime.h>

#include <cstdint>

namespace p64::cuda {

// ---- prefill_gemm.cu: Y[T x rows] (=|+=) X[T x n] * W^T on tensor cores (mma.sync m16n8k16,
// f16 in, f32 accumulate), W dequantized to f16 tile by tile in shared memory.
struct PrefillGemmSeg {
  const uint8_t* w = nullptr;  // tensor base on the device
  int64_t nb = 0;              // blocks of the whole tensor (SoA addressing)
  int64_t rows = 0;
  float* out = nullptr;        // column 0 of this segment's output; row stride = PrefillGemm::ldy
};
enum class PrefillEpilogue : int { Store = 0, AddTo = 1 };
struct PrefillGemm {
  PrefillGemmSeg seg[3];       // up to three matrices of one dtype and row length, one launch
  int nseg = 1;
  uint32_t dtype = 0;          // p64::DType value
  int64_t n = 0;               // row length of W = columns of X used
  const void* x = nullptr;     // __half [T][ldx], ldx % 64 == 0, columns [n, ldx) zero
  int64_t ldx = 0;
  int64_t T = 0;               // rows of X and Y
  int64_t ldy = 0;
  PrefillEpilogue epilogue = PrefillEpilogue::Store;
  // Split-K: when the output tiles alone leave the device part idle, blocks split the k-tiles
  // and write partial sums to `ws` ([splits][T][sum of rows]); a second pass adds them in a
  // fixed order (deterministic) and applies the epilogue. No workspace: no split.
  float* ws = nullptr;
  int64_t ws_floats = 0;
  int splits = 0;              // 0: chosen from the grid and the device; > 0: forced (tests)
};
bool prefill_gemm_supports(uint32_t dtype);
// `sms`: the device's multiprocessor count (picks the token tile so the grid fills the chip).
void launch_prefill_gemm(const PrefillGemm& g, int sms, cudaStream_t stream);

// ---- prefill_ops.cu
// x[t][0..n) = row tokens[t] of the embedding matrix, dequantized (f32).
void launch_prefill_embed(uint32_t dtype, const uint8_t* w, int64_t nb, int64_t n, const int32_t* tokens, int T,
                          float* x, cudaStream_t stream);
// out[t] = f16(x[t] * rsqrt(mean(x[t]^2) + eps) * weight) for T rows of n.
void launch_prefill_rmsnorm(const float* x, int64_t ldx, const float* weight, float eps, int64_t n, int T,
                            void* out_f16, int64_t ldo, cudaStream_t stream);
// out[t] = f16(silu(gate[t]) * up[t]).
void launch_prefill_swiglu(const float* gate, const float* up, int64_t ld_in, int64_t n, int T, void* out_f16,
                           int64_t ldo, cudaStream_t stream);
// RoPE on the q and k heads of each row of qkv ([T][ld]: q heads, k heads, v heads) at
// position pos + t, and K, V of every row written to the layer's cache [kv_head][max_ctx][D].
void launch_prefill_rope_kv(float* qkv, int64_t ld, const float* inv_freq, int n_head, int n_head_kv, int head_dim,
                            int rope_dim, void* k_cache, void* v_cache, bool kv_f16, int max_ctx, int pos, int T,
                            cudaStream_t stream);

// ---- prefill_attention.cu: causal GQA attention of T queries (positions pos..pos+T-1) over
// the layer's cache (positions 0..own), output f16 [T][ldo] (the o projection's input).
struct PrefillAttn {
  const float* q = nullptr;    // rotated q heads, row t at q + t * ldq
  int64_t ldq = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  bool kv_f16 = true;
  int n_head = 0, n_head_kv = 0, head_dim = 0, max_ctx = 0;
  int pos = 0, T = 0;
  void* out = nullptr;         // __half [T][ldo]
  int64_t ldo = 0;
  int group = 1;               // positions per online-softmax update: 1 or 4
};
void launch_prefill_attention(const PrefillAttn& a, cudaStream_t stream);

}  // namespace p64::cuda
