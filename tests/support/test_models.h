#pragma once
// Small models for backend tests: random tiny models built in memory with any mix of weight
// types (and their dequantized twins), and the real stories260K from ../shared/models.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/model.h"

namespace p64::test {

// Per-role weight types of a tiny model (F32 norms always).
struct TinyTypes {
  DType embd = DType::Q8_0, q = DType::Q4_K, k = DType::Q5_0, v = DType::Q6_K, o = DType::Q8_0,
        gate_up = DType::Q4_K, down = DType::Q6_K, output = DType::Q6_K;
};
// A random 2-layer model (n_embd 256, n_ff 512, 4 heads / 2 KV heads of 64, vocab 384),
// weights quantized by the reference quantizers; SoA dtypes are packed with soa_pack and
// row-interleaved ones with interleave_rows.
// `dequantized_twin`: the same quantized values stored back as F32 (dequantize_row), so a
// float reference sees exactly the weights the quantized kernels read.
// `n_ctx_train` 0: no trained context to cap max_context by. `n_head` query heads share the 2 KV
// heads (6: groups of 3, as Llama 3.2 3B's, and queries wider than n_embd).
std::shared_ptr<const Model> make_tiny_model(const TinyTypes& types, uint64_t seed, bool tied = false,
                                             bool dequantized_twin = false, uint32_t n_ctx_train = 256,
                                             uint32_t n_head = 4);
TinyTypes all_types(DType t);
TinyTypes soa_mix();  // the mixed model with Q4_K/Q6_K/Q8_0 in their SoA forms
TinyTypes cpu_rows_mix();  // the mixed model with every type in its row-interleaved (CPU) form

// `n` token ids drawn uniformly from [0, vocab) by a seeded generator (same seed, same ids).
std::vector<int32_t> random_tokens(size_t n, uint32_t vocab, uint64_t seed);

// stories260K.bin + tok512.bin from ../shared/models; nullptr when the files are absent.
std::shared_ptr<const Model> load_stories260k();

}  // namespace p64::test
