#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/atomic_output.h"
#include "engine/common/progress.h"
#include "engine/model/hparams.h"
#include "engine/model/vocab.h"
#include "engine/quant/dtype.h"

namespace p64 {

// Synthetic models: real shapes, random weights, written as GGUF v3 files llama.cpp loads.
// The work is split in two: a plan (tensor names, types, shapes, bytes: cheap, testable
// without writing gigabytes) and the writer that fills the planned tensors with random
// quantized blocks directly, in parallel.

// Names of the presets: llama-3.2-3b, llama-3.2-1b, llama-3.1-8b, smollm2-360m, smollm2-135m,
// qwen2.5-0.5b, qwen2.5-3b, qwen3-0.6b, qwen3-4b, tiny (64 wide: every matrix falls back to a
// 32-block type), tiny-k (256 wide with a 320 FFN, so a Q4_K_M mix holds Q4_K, Q6_K, Q5_0 and
// Q8_0 tensors), tiny-qwen2 and tiny-qwen3 (tiny's width in those architectures, untied;
// tiny-qwen3's head_dim is not n_embd / n_head), gemma-2-2b, gemma-3-1b, tiny-gemma2 and
// tiny-gemma3 (tiny's width, sliding windows of 8 positions), phi-3.5-mini and tiny-phi3
// (LongRope with synthetic factors, fused qkv and gate_up).
std::vector<std::string> synth_preset_names();
// Hyperparameters of a preset; throws p64::Error listing the known names.
HParams synth_preset(std::string_view name);

// Tensor-type mixes, named as llama.cpp names them. F32 is for comparisons with another engine
// on the exact float path (no activation is rounded to fit the weights' type).
enum class SynthQuant { Q4_K_M, Q8_0, F16, F32 };
SynthQuant synth_quant_from_name(std::string_view name);  // throws p64::Error listing the names
std::string_view synth_quant_name(SynthQuant q);
uint32_t synth_file_type(SynthQuant q);  // llama_ftype: Q4_K_M 15, Q8_0 7, F16 1, F32 0

enum class SynthRole {
  Matrix,     // random weights, std SynthOptions::weight_std
  Norm,       // F32 ones
  RopeFreqs,  // F32 llama3 frequency factors, or LongRope's short ones (HParams::rope_freq_factors)
  RopeFactorsLong,  // F32 LongRope long factors (synth_longrope_factors)
  Bias,       // F32 random, std 4 x weight_std: a forward pass without it decodes other tokens
  RandomNorm, // F32 random in [0.5, 1.5): norm weights (q/k norms, Gemma's) a kernel must not take for ones
};

struct SynthTensor {
  std::string name;  // GGUF name, e.g. "blk.3.ffn_down.weight"
  DType type;
  std::vector<int64_t> ne;  // ne[0] = row length
  uint64_t bytes;
  SynthRole role;
};

struct SynthPlan {
  HParams hp;
  SynthQuant quant;
  std::vector<SynthTensor> tensors;
  uint64_t tensor_bytes() const;  // sum of tensor bytes (without alignment padding)
};

// Type llama.cpp's quantizer picks for one matrix of the mix. `layer`/`n_layer` matter for
// attn_v and ffn_down under Q4_K_M; a row length that is not a multiple of 256 falls back
// Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0.
DType synth_matrix_type(SynthQuant q, std::string_view base_name, int layer, int n_layer, int64_t row_length,
                        bool is_output);

SynthPlan plan_synth(const HParams& hp, SynthQuant quant);

// llama3 rope frequency factors (rope_freqs.weight) as llama.cpp's converter computes them.
std::vector<float> llama3_rope_freq_factors(const HParams& hp);

// Synthetic LongRope factors of the shape published ones have (rising over the pairs; the
// long ones by up to n_ctx_train / original_context): short (false) or long (true).
std::vector<float> synth_longrope_factors(const HParams& hp, bool long_factors);

// A valid SentencePiece-style vocabulary of n tokens (n >= 259): <unk>, <s>, </s>, the 256
// byte tokens <0x00>..<0xFF>, then distinct pieces with decreasing scores.
Vocabulary synth_vocabulary(uint32_t n_vocab);

struct SynthOptions {
  uint64_t seed = 1;
  // Spread of the matrices' values: a trained Llama's by default. Comparisons of greedy text
  // with another implementation want 1 / sqrt(n_embd) (0.125 for the tiny presets): at 0.02 a
  // tiny model's blocks barely move the residual stream, and its greedy text repeats one token
  // whatever they compute.
  float weight_std = 0.02f;
  std::string vocab_path;  // llama3_tokenizer.model (tiktoken): write the real Llama 3 vocabulary
  int threads = 0;         // 0 = hardware concurrency
  ProgressFn progress;
  bool sync = true;        // fsync before the final rename
  OutputPolicy output;     // what the target may not be; vocab_path is added to its inputs
};

struct SynthResult {
  uint64_t file_bytes = 0;
  uint64_t tensor_bytes = 0;
  size_t tensors = 0;
};

// Exact size of the file write_synth would produce (builds the metadata, writes nothing).
uint64_t synth_file_size(const SynthPlan& plan, const SynthOptions& options = {});

// Writes the planned model to `path` (temp file + rename; nothing is left behind on error).
// With a vocabulary file, its size must equal the preset's vocab size.
SynthResult write_synth(const SynthPlan& plan, const std::string& path, const SynthOptions& options = {});

}  // namespace p64
