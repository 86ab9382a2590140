#pragma once
// The compute pipelines of the Vulkan backend by role: which shader variant and which
// specialization constants a decode GEMV, a prefill GEMM or an attention dispatch gets for a
// matrix, given the tuning, the device's limits and the model.
#include <cstdint>

#include "backends/vulkan/vk_pipelines.h"
#include "backends/vulkan/vk_resident_model.h"
#include "backends/vulkan/vulkan_tuning.h"

namespace p64::vulkan {

// The epilogues of the GEMV and GEMM shaders.
constexpr uint32_t EPI_STORE = 0, EPI_ADD = 1, EPI_ROPE = 2, EPI_SWIGLU = 3, EPI_ARGMAX = 4;

class Kernels {
 public:
  Kernels(vk::Context& ctx, vk::Pipelines& pipes, const Tuning& tune, const HParams& hp, const ResidentModel& model)
      : ctx_(ctx), pipes_(pipes), tune_(tune), hp_(hp), model_(model) {}

  uint32_t mv_rows(const DeviceMatrix& m, uint32_t epi) const;  // rows per workgroup of a decode GEMV
  uint32_t mv_tpr(const DeviceMatrix& m, uint32_t epi) const;   // threads per row for this matrix
  VkPipeline mv_pipe(const DeviceMatrix& m, uint32_t epi, bool fuse_norm, uint32_t x_off, bool overlap);
  struct MmTile {
    uint32_t rows, tokens;  // per workgroup
  };
  MmTile mm_tile(uint32_t n) const;  // the prefill GEMM's tile for a chunk of n tokens
  VkPipeline mm_pipe(DType dtype, MmTile t, bool geglu = false);
  VkPipeline glu_pipe();  // silu_mul.comp, or its GeGLU form
  // A window > 0: a local layer's attention (sliding_window), 0: the whole context.
  uint32_t layer_window(uint32_t layer) const;
  VkPipeline attn_prefill_pipe(uint32_t window);
  VkPipeline embed_pipe();
  VkPipeline attn_pipe(bool overlap, uint32_t splits, uint32_t window);  // decode attention
  VkPipeline simple_pipe(const char* name);

 private:
  uint32_t base_rows(uint32_t epi) const;  // rows per workgroup of a decode GEMV with this epilogue
  // gemv_kernel=wide where the matrix and the input offset allow it (else the scalar kernel).
  bool mv_wide_fits(const DeviceMatrix& m, uint32_t epi, uint32_t x_off) const;

  vk::Context& ctx_;
  vk::Pipelines& pipes_;
  const Tuning& tune_;
  const HParams& hp_;
  const ResidentModel& model_;
};

}  // namespace p64::vulkan
