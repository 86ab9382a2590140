#pragma once
#include <string>
#include <vector>

#include "engine/format/source_model.h"

namespace p64 {

// A Hugging Face folder of an architecture of engine/model/architecture.h (config.json
// model_type llama, qwen2, qwen3): config.json, model.safetensors or
// model.safetensors.index.json with its shards (F32/F16/BF16), tokenizer.json (read by
// engine/model's read_hf_tokenizer_json; `tokenizer_override` names another one). Tensors are
// renamed to GGUF names by the architecture's table and their shapes reversed to GGML order;
// 1-D norms and biases become F32. A Llama's Q and K projections' rows are permuted from HF's
// rotate-halves RoPE layout to adjacent pairs the way llama.cpp's converter does, so it is
// RopeLayout::Adjacent; qwen2 and qwen3 keep their rows and are Halves, as their GGUFs are.
// A config switch the architecture's forward does not implement (use_sliding_window,
// attention_bias where there is no bias tensor) is refused by name. A llama3 rope_scaling
// block becomes rope_freq_factors (llama.cpp's rope_freqs values). A vocab_size above the
// tokenizer's size is padded with Unused "[PADn]" tokens, as llama.cpp does.
SourceModel load_hf_directory(const std::string& dir, const std::string& tokenizer_override = "");

// The hyperparameters load_hf_directory takes from a config.json (validated), with its refusals.
HParams read_hf_config(const std::string& config_path);

// Row order that turns an HF q_proj/k_proj ([n_head * head_dim] rows) into adjacent-pair
// layout: new row r takes old row perm[r]. Within each head, new row 2i+s is old row s*half+i.
std::vector<int64_t> hf_rope_row_permutation(int64_t n_head, int64_t head_dim);

// llama.cpp's llama3 rope_freqs: per frequency pair, the divisor applied to the base frequency.
std::vector<float> llama3_rope_freq_factors(float rope_base, uint32_t rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, uint32_t original_context);

}  // namespace p64
