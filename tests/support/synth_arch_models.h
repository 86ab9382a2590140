#pragma once
// The tiny synth models of each architecture (engine/format/synth.h presets such as tiny-qwen2
// and tiny-gemma3), written as GGUF and converted to P64, and the CPU reference the GPU
// backends' architecture tests hold them against.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

// Switches as "key=value key=value " ("defaults " for none), for the tests' messages.
std::string describe_switches(const std::map<std::string, std::string>& switches);

// `backend`'s greedy tokens from token 1 at position 0: [1, t1, ..., t_positions].
std::vector<int32_t> greedy_from_token_one(Backend& backend, int positions);

// What a backend leaves after prefilling `tokens` from position 0: the argmax it returns, its
// logits, and the logits of decoding `then` at the next position (its own argmax when -1; a
// comparison passes the reference's, so a near-tie does not change what comes after).
struct PrefillOutcome {
  int32_t next;
  std::vector<float> logits;
  std::vector<float> logits_after_next;
};
PrefillOutcome prefill_then_decode(Backend& backend, const std::vector<int32_t>& tokens, int32_t then = -1);

// Each architecture of the table that `gpu` (named `backend_name` in its messages) does not run
// is refused at load naming the file and the architecture; each it runs is one of the
// architectures the GPU suites decode (llama, qwen2, qwen3, phi3, gemma2, gemma3).
void expect_unrun_architectures_refused(Backend& gpu, const std::string& backend_name);

}  // namespace p64::test
