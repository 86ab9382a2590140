#pragma once
// The tiny synth models of each architecture (engine/format/synth.h presets such as tiny-qwen2
// and tiny-gemma3), written as GGUF and converted to P64, and the CPU reference the GPU
// backends' architecture tests hold them against.
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

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

// `backend` with `model` loaded for 256 positions and `switches`: the GPU side of a comparison.
std::unique_ptr<Backend> loaded_for_comparison(std::unique_ptr<Backend> backend, const std::shared_ptr<const Model>& model,
                                               const std::map<std::string, std::string>& switches = {});

// One case of the GPU backends' architecture tests: a synth preset and its matrices' type, named
// "tiny_qwen2_Q8_0" in the test list.
struct ArchCase {
  const char* preset;
  SynthQuant quant;
};
std::string arch_case_name(const ::testing::TestParamInfo<ArchCase>& info);

}  // namespace p64::test
