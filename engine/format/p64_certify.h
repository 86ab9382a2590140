#pragma once
#include <string>
#include <vector>

#include "engine/format/p64_format.h"

namespace p64 {

// Why a file cannot carry CERTIFIED_DECODE_PROFILE, or "" when it can. The profile is what
// every decode backend is required to run without a fallback (docs/p64-container.md
// "Certification"): valid hparams with adjacent RoPE, exactly the Llama tensor set with the
// shapes Model needs, F32 norms, matrices in decode dtypes, layer-major data.
std::string p64_certification_problem(const HParams& hp, const std::vector<P64TensorEntry>& tensors, uint64_t flags);

// Dtypes a decode backend must support for matrices (the decode profile).
bool p64_decode_profile_dtype(DType t);

}  // namespace p64
