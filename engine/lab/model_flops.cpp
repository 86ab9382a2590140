#include "engine/lab/model_flops.h"

#include "engine/common/error.h"
#include "engine/model/model.h"

namespace p64 {

double ModelFlops::decode_token(double positions) const {
  return 2 * (block_params + output_params) + 4 * attention_width * positions;
}

double ModelFlops::prefill(int prompt_tokens) const {
  if (prompt_tokens <= 0) return 0;
  const double p = prompt_tokens;
  return 2 * p * block_params + 2 * output_params + 4 * attention_width * p * (p + 1) / 2;
}

ModelFlops model_flops(const Model& model) {
  ModelFlops f;
  for (const LayerWeights& l : model.layers())
    for (const TensorView* t : {l.wq, l.wk, l.wv, l.wo, l.w_gate, l.w_up, l.w_down, l.wqkv, l.w_gate_up})
      if (t) f.block_params += static_cast<double>(t->elements());
  f.output_params = static_cast<double>(model.output().elements());
  f.attention_width = static_cast<double>(model.hparams().n_layer) * model.hparams().q_dim();
  return f;
}

ModelFlops model_flops(const ModelRecord& m) {
  for (const auto& [field, value] : {std::pair{"n_layer", m.n_layer}, std::pair{"n_embd", m.n_embd},
                                     std::pair{"n_head", m.n_head}, std::pair{"n_head_kv", m.n_head_kv},
                                     std::pair{"n_ff", m.n_ff}, std::pair{"n_vocab", m.n_vocab}})
    if (value == 0)
      throw Error("model '" + (m.name.empty() ? m.path : m.name) + "': the store has no " + field +
                  ", so its FLOPs per token cannot be counted");
  // The store keeps no head_dim: Llama's n_embd / n_head (q_dim = n_embd).
  const double embd = m.n_embd, q_dim = m.n_embd, kv_dim = double(m.n_embd) / m.n_head * m.n_head_kv;
  ModelFlops f;
  f.block_params = m.n_layer * (embd * q_dim + 2 * embd * kv_dim + q_dim * embd + 3 * embd * m.n_ff);
  f.output_params = double(m.n_vocab) * embd;
  f.attention_width = m.n_layer * q_dim;
  return f;
}

}  // namespace p64
