#pragma once
// prefill=batched: the prompt as chunks of up to prefill_ubatch tokens, each recorded into one
// command buffer (tiled GEMMs that dequantize each weight tile once for the chunk's tokens, one
// causal attention dispatch per layer) and submitted; only the last token's argmax comes back.
#include <cstdint>
#include <memory>
#include <span>

#include "backends/vulkan/vk_step_ops.h"

namespace p64::vulkan {

class OpTimer;

class PrefillRunner {
 public:
  PrefillRunner(vk::Context& ctx, vk::Pipelines& pipes, VkBuffer dummy, StepOps& ops, const ResidentModel& model,
                Workspace& ws, const HParams& hp, const Tuning& tune);
  ~PrefillRunner();
  PrefillRunner(const PrefillRunner&) = delete;
  PrefillRunner& operator=(const PrefillRunner&) = delete;

  // Creates the pipelines a prefill may use (every chunk length's GEMM tile, each layer's
  // attention window) and the small ones either step may record, so that a warm start
  // compiles nothing later.
  void create_pipelines();
  // Tokens already checked, at positions [pos, pos + tokens.size()); returns the last one's argmax.
  int32_t run(std::span<const int32_t> tokens, int32_t pos, OpTimer& timer);

 private:
  struct Chunk {
    uint32_t n, pos0;     // tokens, position of the first
    Kernels::MmTile tile;
  };
  void record_chunk(const Chunk& c, bool last, VkQueryPool queries);
  void attention(vk::Recorder& r, const Chunk& c, uint32_t layer);
  void ffn(vk::Recorder& r, const Chunk& c, uint32_t layer);
  // y row y_row0 + t of token t: 0 for the chunk's buffers, pos0 for the KV cache. GEMMs running
  // at the same time (no barrier between them) take different split-K regions.
  void gemm(vk::Recorder& r, const Chunk& c, const DeviceMatrix& m, uint32_t epi, VkBuffer x, VkBuffer y, uint32_t ldy,
            uint32_t y_row0, uint32_t region);
  // The o or down product into the residual stream x: added in its epilogue, or with a
  // post-norm (gemma) stored and added by rmsnorm_add.
  void residual_gemm(vk::Recorder& r, const Chunk& c, const DeviceMatrix& m, VkBuffer in, const vk::Buffer& post_norm,
                     const OpMark& op, const char* norm_op);

  vk::Context& ctx_;
  StepOps& ops_;
  Kernels& k_;
  const ResidentModel& model_;
  Workspace& ws_;
  const HParams& hp_;
  const Tuning& tune_;
  std::unique_ptr<vk::Recorder> rec_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
};

}  // namespace p64::vulkan
