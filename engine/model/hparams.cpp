#include "engine/model/hparams.h"

#include <cmath>

#include "engine/common/error.h"
#include "engine/model/architecture.h"

namespace p64 {

void validate(const HParams& hp, const std::string& source) {
  auto fail = [&](const std::string& what) { throw Error(source + ": hyperparameters: " + what); };
  if (!find_architecture(hp.arch)) fail("architecture '" + hp.arch + "' is not supported (" + architecture_names() + ")");
  if (hp.n_embd == 0) fail("n_embd is 0");
  if (hp.n_layer == 0) fail("n_layer is 0");
  if (hp.n_head == 0) fail("n_head is 0");
  if (hp.n_head_kv == 0) fail("n_head_kv is 0");
  if (hp.n_head % hp.n_head_kv != 0)
    fail("n_head (" + std::to_string(hp.n_head) + ") is not a multiple of n_head_kv (" +
         std::to_string(hp.n_head_kv) + ")");
  if (hp.head_dim == 0 || hp.head_dim % 2 != 0) fail("head_dim must be even and > 0");
  if (hp.rope_dim == 0 || hp.rope_dim > hp.head_dim || hp.rope_dim % 2 != 0)
    fail("rope_dim must be even and in (0, head_dim]");
  if (hp.n_ff == 0) fail("n_ff is 0");
  if (hp.n_vocab == 0) fail("n_vocab is 0");
  if (!(hp.rms_eps > 0.0f)) fail("rms_eps must be > 0");
  if (!(hp.rope_base > 0.0f)) fail("rope_base must be > 0");
  if (!hp.rope_freq_factors.empty() && hp.rope_freq_factors.size() != hp.rope_dim / 2)
    fail("rope_freq_factors has " + std::to_string(hp.rope_freq_factors.size()) + " entries, expected " +
         std::to_string(hp.rope_dim / 2));
  if (!(std::isfinite(hp.rope_attn_factor) && hp.rope_attn_factor > 0.0f)) fail("rope_attn_factor must be finite and > 0 (1: none)");
  if (hp.rope_scaling.type == RopeScalingType::LongRope && hp.rope_freq_factors.empty())
    fail("longrope scaling without its short factors (rope_freq_factors)");
  // 0 means "none" for each; a negative or non-finite value means nothing.
  for (auto [name, v] : {std::pair{"rope_base_local", hp.rope_base_local}, {"attn_softcap", hp.attn_softcap},
                         {"final_softcap", hp.final_softcap}, {"query_pre_attn_scalar", hp.query_pre_attn_scalar}})
    if (!(std::isfinite(v) && v >= 0.0f)) fail(std::string(name) + " must be finite and >= 0 (0: none)");
}

float HParams::attn_scale() const {
  return 1.0f / std::sqrt(query_pre_attn_scalar > 0.0f ? query_pre_attn_scalar : static_cast<float>(head_dim));
}

}  // namespace p64
