#pragma once
// The CUDA backend's batched prefill: the prompt runs through the layers as matrices of T
// tokens (tensor-core GEMMs on the resident weights, batched norm/rope/attention), in chunks
// of at most `chunk` tokens, writing the KV cache for every position and the last token's
// logits. It owns only its scratch; weights, KV cache, rope frequencies and the logits buffer
// are the backend's (the decode step reads the same cache and logits afterwards).
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backends/cuda/arch_kernels.h"
#include "backends/cuda/resident_model.h"
#include "engine/model/hparams.h"
#include "engine/runtime/timeline.h"

namespace p64::cuda {

// What the prefill reads of the backend's resident model; the backend owns all of it.
struct PrefillModel {
  HParams hp;
  ResidentWeights weights;
  KvCache kv;
  const float* inv_freq = nullptr;
  const float* inv_freq_local = nullptr;  // the local layers' RoPE (gemma3); null: inv_freq
  float* logits = nullptr;                // [n_vocab]
};

// The backend's prefill switches.
struct PrefillOptions {
  int chunk = 512;      // tokens per pass (prefill_chunk)
  bool split_k = false;  // split the k-tiles of GEMMs whose grid leaves SMs idle (prefill_splitk)
  int attn_group = 1;   // positions per online-softmax update in attention (prefill_attn_group)
};

// How the backend times an op (its timeline events); empty: launch directly.
using PrefillOpHook = std::function<void(const char* name, OpGroup group, int layer, const std::function<void()>&)>;

class BatchedPrefill {
 public:
  // Allocates the scratch for `opt.chunk` tokens; throws p64::Error for a dtype without a reader.
  BatchedPrefill(PrefillModel model, const PrefillOptions& opt, int device);
  ~BatchedPrefill();
  BatchedPrefill(const BatchedPrefill&) = delete;
  BatchedPrefill& operator=(const BatchedPrefill&) = delete;

  uint64_t device_bytes() const { return bytes_; }
  int chunk() const { return opt_.chunk; }
  // Enqueues tokens at positions [pos, pos + n) on `stream`; the last token's logits land in
  // the model's logits buffer. The caller checks the token ids and the position range.
  void enqueue(std::span<const int32_t> tokens, int pos, cudaStream_t stream, const PrefillOpHook& hook);

 private:
  void* alloc(size_t bytes, const char* what);
  void run_chunk(const int32_t* tokens, int T, int pos, bool last, cudaStream_t stream, const PrefillOpHook& hook);
  // Consecutive matrices of one dtype in one launch (q/k/v, gate/up).
  void gemm(const DevMatrix* const* mats, float* const* outs, int count, const void* x, int64_t ldx, int T,
            int64_t ldy, bool add, cudaStream_t stream);

  PrefillModel m_;
  PrefillOptions opt_;
  int sms_ = 1;
  uint64_t bytes_ = 0;
  std::vector<void*> allocations_;
  int64_t ld_e_ = 0, ld_q_ = 0, ld_f_ = 0, qkv_w_ = 0;
  int32_t* tokens_ = nullptr;  // [max_ctx]
  float* x_ = nullptr;         // residual [chunk][n_embd]
  void* xh_ = nullptr;         // f16 normed [chunk][ld_e]
  float* qkv_ = nullptr;       // [chunk][q + 2 kv]
  void* attn_ = nullptr;       // f16 [chunk][ld_q]
  float* gate_up_ = nullptr;   // [chunk][2 n_ff]: gate | up
  void* hidden_ = nullptr;     // f16 [chunk][ld_f]
  float* post_ = nullptr;      // [chunk][n_embd]: the o / down product before its post-norm (gemma)
  float* ws_ = nullptr;        // split-K partial sums
  int64_t ws_floats_ = 0;
};

}  // namespace p64::cuda
