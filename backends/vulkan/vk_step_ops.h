#pragma once
// The ops the decode step and the prefill runner both record: a decode GEMV, the embedding
// lookup, an RMS norm, the logits with their argmax, qkv_heads.comp and gemma's post-norm.
#include <cstdint>

#include "backends/vulkan/vk_kernels.h"
#include "backends/vulkan/vk_resident_model.h"
#include "backends/vulkan/vk_stage_chain.h"
#include "backends/vulkan/vk_workspace.h"

namespace p64::vulkan {

// A timeline mark: the op's name, group and layer.
struct OpMark {
  const char* name;
  OpGroup group;
  int32_t layer;
};

class StepOps {
 public:
  StepOps(Kernels& kernels, const ResidentModel& model, const Workspace& ws, const HParams& hp)
      : k_(kernels), model_(model), ws_(ws), hp_(hp) {}

  Kernels& kernels() { return k_; }

  // y = m . x (rows of x from x_off), the epilogue `epi` applied; with fuse_norm the RMS norm
  // of x by weights g is computed in the GEMV's prologue.
  void mv(vk::Recorder& r, StageChain& ch, const DeviceMatrix& m, uint32_t epi, bool fuse_norm, VkBuffer x,
          uint32_t x_off, VkBuffer g, VkBuffer y, uint32_t pos_stride);
  // The token embeddings of n tokens (ids in the step buffer from word tok_off) into x.
  void embed(vk::Recorder& r, uint32_t tok_off, uint32_t n);
  // y = rmsnorm(x) * w for n rows.
  void rmsnorm(vk::Recorder& r, VkBuffer x, VkBuffer w, VkBuffer y, uint32_t n);
  // The output norm, the logits GEMV of the row at x_off and their argmax into the step buffer.
  void logits(vk::Recorder& r, StageChain& ch, VkBuffer x, uint32_t x_off, bool fuse_norm);
  // qkv_heads.comp over the q/k/v products of n tokens (decode: the step's position).
  void qkv_heads(vk::Recorder& r, uint32_t layer, uint32_t n, uint32_t pos0, bool decode);
  // gemma's post-norm: x += rmsnorm(xn) * w for n tokens.
  void post_norm(vk::Recorder& r, const vk::Buffer& w, uint32_t n);

 private:
  Kernels& k_;
  const ResidentModel& model_;
  const Workspace& ws_;
  const HParams& hp_;
};

}  // namespace p64::vulkan
