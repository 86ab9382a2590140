#pragma once
#include <optional>
#include <string>

#include "engine/common/progress.h"
#include "engine/format/p64_writer.h"
#include "engine/format/source_model.h"

namespace p64 {

struct ConvertOptions {
  std::string tokenizer_path;  // llama2.c tokenizer file (required for .bin checkpoints)
  // How block matrices are stored. Keep: as in the input (packed inputs stay packed unless
  // requantized to a type without that form). Plain: AoS, as GGUF has them. Soa: Q4_K / Q6_K /
  // Q8_0 in their SoA forms (what the GPU backends read coalesced). CpuRows: Q8_0, Q5_0, Q4_K
  // and Q6_K matrices of whole row groups and units as their row-interleaved forms (Q8_0_R16 ...,
  // what the CPU's AVX-512 kernel reads).
  enum class Layout { Keep, Plain, Soa, CpuRows };
  Layout layout = Layout::Keep;
  // Quantize float (F32/F16/BF16) matrices to this type; norms stay F32 and already
  // quantized matrices are kept. A matrix whose row length is not a whole number of blocks
  // falls back the way llama.cpp does (Q4_K -> Q5_0, Q6_K/Q5_K -> Q8_0), or stays as it is.
  std::optional<DType> quant;
  // What the output may not be (atomic_output.h); the input and the tokenizer are added to its
  // inputs by convert_to_p64, so a conversion never writes over what it reads.
  OutputPolicy output;
};

struct ConvertResult {
  std::string input_kind;
  size_t tensors = 0;
  size_t quantized = 0;  // matrices requantized
  size_t repacked = 0;   // matrices stored in a packed form (SoA or row-interleaved)
  P64WriteResult write;
};

// input: .gguf, llama2.c .bin (+ options.tokenizer_path), HF folder, or .p64 (re-layout).
ConvertResult convert_to_p64(const std::string& input, const std::string& output, const ConvertOptions& options,
                             const ProgressFn& progress = {});

// The conversion plan without writing: the image write_p64 would get (tensor sources wrap the
// input's). Exposed for tests and for the GUI's convert preview.
P64Image plan_conversion(const SourceModel& src, const ConvertOptions& options, ConvertResult* stats = nullptr);

// True for tensors that are matrices a quantizer may change (not norms, not 1-D).
bool is_quantizable_matrix(const P64TensorSource& t);

}  // namespace p64
