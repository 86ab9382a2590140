#pragma once
// One decode step on the device: the launches of a token through every layer into the argmax,
// on the resident weights and KV cache, with the step's own scratch. Which fusions the step uses
// (fuse_norm, gemv_prologue, RoPE in the qkv epilogue) is settled once, at construction, from
// the switches and what the model allows; each op then launches its one form.
#include <cuda_runtime.h>

#include <initializer_list>

#include "backends/cuda/cuda_switches.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/op_timer.h"
#include "backends/cuda/resident_model.h"
#include "engine/model/hparams.h"

namespace p64::cuda {

// What the step fuses, as the switches ask and the model allows.
struct StepPlan {
  bool fuse_norm = false;    // the GEMV epilogues normalize and quantize the next input (ping-pong buffers)
  bool prologue = false;     // gemv_prologue: the GEMVs after a norm make their own input
  bool rope_in_qkv = false;  // RoPE + KV write in the qkv GEMV epilogue
};

class DecodeStep {
 public:
  // Allocates the step's scratch through `alloc`; `weights` and `kv` must outlive the step.
  DecodeStep(const HParams& hp, const Switches& sw, const ResidentWeights& weights, const KvCache& kv,
             int multiprocessors, const DeviceAlloc& alloc);

  // Enqueues the step for the token and position in state() on `stream`, each op through `timer`.
  void enqueue(cudaStream_t stream, OpTimer& timer);

  const StepPlan& plan() const { return plan_; }
  StepState* state() const { return state_; }
  float* logits() const { return logits_; }
  const float* inv_freq() const { return inv_freq_; }
  const float* inv_freq_local() const { return inv_freq_local_; }  // null: the model has one RoPE base

 private:
  void allocate_scratch(const DeviceAlloc& alloc);
  void upload_rope_frequencies(const DeviceAlloc& alloc);
  bool all_on_int_path(bool with_o) const;
  bool can_fuse_norm() const;
  bool can_use_prologue() const;
  // The activation bits a GEMV of `m` reads: act_quant's, or 0 (fp32) for Q5_0 under q5_0_int16=0.
  int matrix_act_bits(const DevMatrix& m) const;
  bool int_path(const DevMatrix& m) const;

  void embed();
  void attention(uint32_t layer);
  void feed_forward(uint32_t layer);
  void head();
  AttnLaunch attention_launch(uint32_t layer) const;
  QkvHeads qkv_heads_launch(uint32_t layer) const;
  GemvPrologue own_input(const float* x, const float* norm) const;
  void gemv(const DevMatrix* mats[], float* outs[], int count, GemvMode mode, const float* xf, const ActBuffers& in,
            int64_t n, const GemvFusion& fuse = {}, const GemvRope& rope = {}, const GemvPrologue& pro = {});
  // The matrices the step's next GEMV reads: what a GEMV prefetches into L2 (l2_prefetch).
  void prefetch_next(std::initializer_list<const DevMatrix*> next);

  const HParams hp_;
  const Switches sw_;
  const ResidentWeights& w_;
  const KvCache& kv_;
  int multiprocessors_;
  StepPlan plan_;
  cudaStream_t stream_ = nullptr;  // while enqueue() runs
  OpTimer* timer_ = nullptr;
  L2Prefetch next_prefetch_{};

  float* x_ = nullptr;  // the residual stream
  ActBuffers act_{};
  ActBuffers act_alt_{};  // fuse_norm, swiglu_quant: the other side of the ping-pong (a GEMV reads one, writes the other)
  float* ssq_attn_ = nullptr;  // fuse_norm: partial sums of squares of the residual, per 32
  float* ssq_ffn_ = nullptr;
  float* qkv_ = nullptr;
  float* hidden_ = nullptr;
  float* hidden2_ = nullptr;
  float* part_m_ = nullptr;
  float* part_l_ = nullptr;
  float* part_acc_ = nullptr;
  unsigned* attn_arrivals_ = nullptr;  // attn_tail_combine: split blocks arrived, per kv head
  float* logits_ = nullptr;
  float* inv_freq_ = nullptr;
  float* inv_freq_local_ = nullptr;  // the local layers' own RoPE base (gemma3)
  float* post_ = nullptr;            // [n_embd]: the o / down product before its post-norm (gemma)
  StepState* state_ = nullptr;
};

}  // namespace p64::cuda
