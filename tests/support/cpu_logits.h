#pragma once
// The CPU backend's logits at every position of `tokens`, teacher-forced, for a model file of any
// format p64 converts (GGUF, HF folder, llama2.c): converted to P64 in a temporary folder first.
#include <cstdint>
#include <string>
#include <vector>

namespace p64::test {

// max_context 0: the backend's default cache length.
std::vector<float> cpu_teacher_forced_logits(const std::string& model_path, const std::vector<int32_t>& tokens,
                                             uint32_t max_context = 0);

}  // namespace p64::test
