#pragma once
// The tiny synth models of each architecture (engine/format/synth.h presets such as tiny-qwen2
// and tiny-gemma3), written as GGUF and converted to P64, and the CPU reference the GPU
// backends' architecture tests hold them against.
#include <memory>
#include <string>

#include "engine/format/synth.h"
#include "engine/model/model.h"
#include "engine/runtime/backend.h"
#include "support/shared_files.h"

namespace p64::test {

// A synth preset as P64 in `dir`, its matrices of `quant`, with weights spread enough that the
// blocks move the residual stream (else greedy text repeats one token whatever they compute).
std::shared_ptr<const Model> synth_arch_model(const TempDir& dir, const std::string& preset, SynthQuant quant);

// The CPU backend on `model` (256 positions) with float activations: on quantized weights it
// then reads the same values as the GPU kernels, and only summation order differs.
std::unique_ptr<Backend> cpu_float_reference(const std::shared_ptr<const Model>& model);

}  // namespace p64::test
