#pragma once
#include <vector>

#include "engine/model/hparams.h"

namespace p64::cuda {

// Inverse frequencies of the rotated pairs (rope_dim / 2 of them), with the file's
// rope_freq_factors (divisors) or its rope_scaling (linear, llama3) folded in, in double
// precision then rounded once, so the kernel only multiplies by the position.
std::vector<float> rope_inv_freq(const HParams& hp);

}  // namespace p64::cuda
