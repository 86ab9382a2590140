#include "engine/lab/model_flops.h"

#include <algorithm>

#include "engine/common/error.h"
#include "engine/model/model.h"

namespace p64 {

namespace {

// Positions attended over by tokens 1..p of a prefill, each seeing at most `window` (0: all).
double attended_in_prefill(double p, double window) {
  if (window <= 0 || p <= window) return p * (p + 1) / 2;
  return window * (window + 1) / 2 + (p - window) * window;
}

}  // namespace

double ModelFlops::decode_token(double positions) const {
  const double local = sliding_window > 0 ? std::min(positions, sliding_window) : positions;
  return 2 * (block_params + output_params) + 4 * (attention_width * positions + local_attention_width * local);
}

double ModelFlops::prefill(int prompt_tokens) const {
  if (prompt_tokens <= 0) return 0;
  const double p = prompt_tokens;
  return 2 * p * block_params + 2 * output_params +
         4 * (attention_width * attended_in_prefill(p, 0) + local_attention_width * attended_in_prefill(p, sliding_window));
}

ModelFlops model_flops(const Model& model) {
  ModelFlops f;
  for (const LayerWeights& l : model.layers())
    for (const TensorView* t : {l.wq, l.wk, l.wv, l.wo, l.w_gate, l.w_up, l.w_down, l.wqkv, l.w_gate_up})
      if (t) f.block_params += static_cast<double>(t->elements());
  f.output_params = static_cast<double>(model.output().elements());
  const HParams& hp = model.hparams();
  for (uint32_t layer = 0; layer < hp.n_layer; ++layer)
    (hp.layer_is_local(layer) ? f.local_attention_width : f.attention_width) += hp.q_dim();
  f.sliding_window = hp.sliding_window;
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
