#pragma once
// The Vulkan backend's working buffers: activations sized for a prefill chunk of tune.ubatch
// tokens (a decode step uses their first row), the step parameters the host writes, the logits
// and their readback, and the scratch of the switches that need it. Shared by the decode step
// and the prefill runner; allocated by load() after the model.
#include <cstdint>

#include "backends/vulkan/vk_context.h"
#include "backends/vulkan/vulkan_tuning.h"
#include "engine/model/hparams.h"

namespace p64::vulkan {

constexpr uint32_t kStepWords = 4;  // step buffer: token, pos, result, pad; prefill ids follow
// Prefill GEMM split-K: grids under kMmTargetGroups workgroups split their k-steps; a split keeps
// at least 2 of them; the scratch holds at most kMmPartFloats partial sums per region.
constexpr uint32_t kMmTargetGroups = 512, kMmRegions = 3;
constexpr uint64_t kMmPartFloats = 4ull << 20;

struct Workspace {
  explicit Workspace(vk::Context& ctx) : ctx_(ctx) {}
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  void allocate(const HParams& hp, const Tuning& tune);
  uint32_t* step_words() const { return static_cast<uint32_t*>(step.mapped); }

  vk::Buffer x, xn, q, att, g, up, logits, part, step, readback;
  vk::Buffer flags;                        // overlap=1: the stages' flags
  vk::Buffer attn_partial, attn_arrived;   // attn_splits > 1
  // Prefill GEMM split-K scratch: kMmRegions regions (the concurrent q, k, v GEMMs) of
  // mm_part_floats partial sums and mm_tiles arrival counters each.
  vk::Buffer mm_part, mm_arrived;
  uint64_t mm_part_floats = 0;
  uint32_t mm_tiles = 0;

 private:
  vk::Context& ctx_;
};

}  // namespace p64::vulkan
