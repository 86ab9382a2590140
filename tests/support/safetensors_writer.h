#pragma once
// A .safetensors file from named tensors given as raw bytes: the tests that turn a GGUF into an
// HF folder write their model.safetensors with it.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace p64::test {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;           // "F32", "F16", ...
  std::vector<int64_t> shape;  // PyTorch order (outermost first)
  std::string bytes;
};

void write_safetensors(const std::filesystem::path& out, const std::vector<SafetensorsEntry>& tensors);

}  // namespace p64::test
