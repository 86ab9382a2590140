#pragma once
#include <cstdint>

#include "backends/vulkan/vk_stage_chain.h"

namespace p64::vulkan {

// Push-constant blocks, field for field as the shaders declare them.
struct MvPC {
  uint32_t M, wbase, wbase2, nb, x_off, y_off, pos_stride, head_dim, rope_dim;
  float eps;
  uint32_t pos;
  StageChain::Sync sync;
};
struct AttnPC {
  uint32_t head_dim, group, kv_dim, q_dim, pos0;
  float scale;
  StageChain::Sync sync;
};
struct MmPC { uint32_t M, N, wbase, wbase2, nb, ldy, y_row0, pos0, head_dim, rope_dim, K, epi, splits, part_off, arrived_off; };
struct AttnPrefillPC {
  uint32_t N, group, kv_dim, q_dim, pos0;
  float scale;
};
struct EmbedPC {
  uint32_t wbase, nb, tok_off, n_vocab;
  float scale;
};
struct QkvHeadsPC {
  uint32_t head_dim, rope_dim, n_head, n_head_kv, pos0, flags;
  float eps;
};
constexpr uint32_t kHeadsBias = 1, kHeadsNorm = 2, kHeadsHalves = 4, kHeadsStepPos = 8;  // qkv_heads.comp's flags
struct RmsPC { uint32_t K; float eps; };
struct CountPC { uint32_t n; };
struct ArgmaxPC {
  uint32_t n;
  StageChain::Sync sync;
};

}  // namespace p64::vulkan
