#pragma once
// The one place that bounds what a model file says about itself, before anything is allocated
// for it. Every count and size a reader takes from a file is held against what the file can
// hold and against the architectural limits below; every hyperparameter a reader fills is held
// against the same limits and against numbers that make sense (finite RoPE and norm constants).
// Readers pass the field as their format spells it, so a refusal reads
// "model.gguf: llama.block_count 10000000 exceeds the limit 4096 (layers)".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/hparams.h"

namespace p64 {

// What a limit bounds; model_limit() gives its value.
enum class ModelQuantity { Layers, Embedding, FeedForward, Heads, HeadDim, Vocab, Context };
uint64_t model_limit(ModelQuantity q);

// Throws p64::Error "file: field value exceeds the limit N (what)" when value > the limit.
void check_model_limit(const std::string& file, std::string_view field, uint64_t value, ModelQuantity q);

// "" when `count` entries of at least `min_bytes` each fit in the `bytes_left` bytes that follow
// the count, else the problem, for the reader to raise with its section and offset: a count is
// checked against what the file can hold before anything is allocated for it.
std::string count_fits_problem(std::string_view field, uint64_t count, uint64_t min_bytes, uint64_t bytes_left);

// How a format spells each hyperparameter, so a refusal names a key the user can find.
struct HParamsFields {
  std::string n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx_train, rope_base, rms_eps,
      rope_scaling, rope_original_context, rope_freq_factors;
  std::string sliding_window, rope_base_local, attn_softcap, final_softcap, query_pre_attn_scalar;
  std::string rope_attn_factor;
};
// format: "gguf" (keys under `arch.`), "hf" (config.json), "llama2c" (header), "p64" (hparams section).
HParamsFields hparams_fields(std::string_view format, std::string_view arch = "llama");

// Every count of `hp` against its limit, and the numbers a decode divides by, raises to a
// power or takes a logarithm of: finite, in range, ordered. Throws p64::Error naming `file`
// and the field. Called by every reader as soon as its hyperparameters are read.
void check_hparams_bounds(const HParams& hp, const std::string& file, const HParamsFields& fields);

// The layers the hyperparameters claim are the layers the tensors hold: each of 0..n_layer-1
// has tensors and none lies beyond. Throws p64::Error naming `file` and `field` (the layer count).
void check_layers_present(const std::string& file, std::string_view field, uint32_t n_layer,
                          const std::vector<std::string>& tensor_names);

// Why a tensor is refused when its elements are not all finite, or "" when they are. `sum2` is
// the sum of the squares of its elements in double, which is finite exactly when every element
// is (a float squared cannot overflow a double), so the writer and verify get the check from the
// moments they already compute.
std::string nonfinite_weights_problem(const std::string& tensor, double sum2);

}  // namespace p64
