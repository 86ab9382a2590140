#pragma once
// The floating-point work of a forward pass, counted from the model's shapes (one multiply-add
// is two FLOPs). The block projections (q, k, v, o, gate, up, down) run for every token; the
// attention scores and the weighted sum of values grow with the positions a token attends over;
// the classifier runs only where logits are asked for: every decode step, and the last token of
// a prefill (engine/runtime computes no logits for the other prompt tokens).
#include "engine/lab/store_types.h"

namespace p64 {
class Model;

struct ModelFlops {
  double block_params = 0;     // elements of every block's projection matrices, all layers
  double output_params = 0;    // the classifier's n_vocab × n_embd
  // Multiply-adds per attended position (for QKᵀ and again for ·V): q_dim summed over the layers
  // that attend over every position, and over the local (sliding-window) layers, which attend
  // over the last `sliding_window` positions at most.
  double attention_width = 0;
  double local_attention_width = 0;
  double sliding_window = 0;

  // One decode step attending over `positions` positions (the prompt, the tokens so far, itself).
  double decode_token(double positions) const;
  // A prefill of `prompt_tokens` tokens from position 0: token i attends over i + 1 positions.
  double prefill(int prompt_tokens) const;
};

// From the tensor directory (the shapes as stored).
ModelFlops model_flops(const Model& model);
// From the store's record of a model (its hyperparameters): for runs stored without FLOP counts.
// The record keeps no sliding window, so every layer counts as attending over every position.
// Throws p64::Error naming the missing field when the record lacks the shapes.
ModelFlops model_flops(const ModelRecord& model);

}  // namespace p64
