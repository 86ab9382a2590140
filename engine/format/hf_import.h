#pragma once
#include <string>
#include <vector>

#include "engine/format/source_model.h"

namespace p64 {

// A Hugging Face Llama folder: config.json, model.safetensors or model.safetensors.index.json
// with its shards (F32/F16/BF16), tokenizer.json (read by engine/model's
// read_hf_tokenizer_json; `tokenizer_override` names another one). Tensors are renamed to
// GGUF names and their shapes reversed to GGML order; 1-D norms become F32; the Q and K
// projections' rows are permuted from HF's rotate-halves RoPE layout to adjacent pairs the way
// llama.cpp's converter does, so the result is RopeLayout::Adjacent. A llama3 rope_scaling
// block becomes rope_freq_factors (llama.cpp's rope_freqs values). A vocab_size above the
// tokenizer's size is padded with Unused "[PADn]" tokens, as llama.cpp does.
SourceModel load_hf_directory(const std::string& dir, const std::string& tokenizer_override = "");

// Row order that turns an HF q_proj/k_proj ([n_head * head_dim] rows) into adjacent-pair
// layout: new row r takes old row perm[r]. Within each head, new row 2i+s is old row s*half+i.
std::vector<int64_t> hf_rope_row_permutation(int64_t n_head, int64_t head_dim);

// llama.cpp's llama3 rope_freqs: per frequency pair, the divisor applied to the base frequency.
std::vector<float> llama3_rope_freq_factors(float rope_base, uint32_t rope_dim, float factor, float low_freq_factor,
                                            float high_freq_factor, uint32_t original_context);

}  // namespace p64
