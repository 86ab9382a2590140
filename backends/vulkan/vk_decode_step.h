#pragma once
// The decode step: the whole forward pass of one token as a pre-recorded command buffer, one
// per (timed, full logits, split attention), recorded on first use. The token and position live
// in the step buffer, so the same command buffer serves every position and a step is one submit.
#include <cstdint>
#include <memory>

#include "backends/vulkan/vk_step_ops.h"

namespace p64::vulkan {

class OpTimer;

// The choices of a decode step, made once from the tuning and the model: each op then records
// one form, and the unfused forms are their own dispatches.
struct DecodePlan {
  bool norm_in_gemv = true;     // fuse_norm: the GEMVs compute the RMS norm of their input
  bool gate_up_in_one = true;   // fused_gate_up: gate and up in one GEMV with SwiGLU in its epilogue
  bool qkv_heads = false;       // q and k stored plain and finished by qkv_heads.comp
  bool overlap = false;         // stages ordered by flag waits, not barriers
  uint32_t attn_splits = 1;     // decode attention workgroups per head from attn_split_from on
  uint32_t attn_split_from = 512;
  bool fence_poll = false;
};

class DecodeStep {
 public:
  DecodeStep(vk::Context& ctx, vk::Pipelines& pipes, VkBuffer dummy, StepOps& ops, const ResidentModel& model,
             Workspace& ws, const HParams& hp, const Tuning& tune);
  ~DecodeStep();
  DecodeStep(const DecodeStep&) = delete;
  DecodeStep& operator=(const DecodeStep&) = delete;

  // Records the untimed programs now, so that their pipelines are created during load().
  void record_untimed();
  // Runs the step for the token and position already checked; returns the argmax. With
  // want_logits the logits are in ws.readback afterwards. Spans go to `timer` when it is on.
  int32_t run(int32_t token, int32_t pos, bool want_logits, OpTimer& timer, bool prefill_step);

 private:
  struct Program {
    std::unique_ptr<vk::Recorder> rec;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
  };
  Program& program(bool timed, bool logits, bool long_ctx, VkQueryPool queries);
  void record(vk::Recorder& r, VkCommandBuffer cmd, bool copy_logits, VkQueryPool queries, uint32_t attn_splits);
  // The GEMVs' input for a layer's attention or FFN: x itself where they norm it in their
  // prologue, else xn after an rmsnorm dispatch.
  VkBuffer normed_input(vk::Recorder& r, StageChain& ch, const vk::Buffer& norm, const char* op, int32_t layer);
  void attention(vk::Recorder& r, StageChain& ch, uint32_t layer, uint32_t attn_splits);
  void ffn(vk::Recorder& r, StageChain& ch, uint32_t layer);
  void gate_up(vk::Recorder& r, StageChain& ch, const DeviceLayer& l, VkBuffer xin);
  // The o or down product into the residual stream x: added in its epilogue, or with a
  // post-norm (gemma) stored, normalised and added by rmsnorm_add.
  void residual_mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, VkBuffer in, const vk::Buffer& post_norm,
                   const OpMark& op, const char* norm_op);

  vk::Context& ctx_;
  vk::Pipelines& pipes_;
  VkBuffer dummy_;
  StepOps& ops_;
  Kernels& k_;
  const ResidentModel& model_;
  Workspace& ws_;
  const HParams& hp_;
  DecodePlan plan_;
  Program programs_[8];
};

}  // namespace p64::vulkan
