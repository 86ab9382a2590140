#pragma once
// Small hostile model files (each at most 2 MB): counts that claim millions of layers or tokens,
// metadata arrays as long as the file, NaN weights, bad RoPE constants. Written by the model-limit
// regression tests and by scripts/hostile-limits.sh (through p64_hostile_models), which runs
// every command against them under a memory and a time limit.
#include <filesystem>
#include <string>
#include <vector>

namespace p64::test {

struct HostileModel {
  std::string name;       // e.g. "gguf-block-count-10M"
  std::string path;       // the model file or Hugging Face folder
  std::string tokenizer;  // a llama2.c checkpoint's tokenizer file, else ""
  // A piece of the refusal every command that reads the whole model must give (after the
  // path, which it must also name); "" for a file that is odd but fine and must load.
  std::string refusal;
  std::string prompt = "he";  // text the model's vocabulary can encode
};

// Writes every case into `dir` (created if missing) and returns them, the control first: a
// plain tiny model ("control-tiny") every command takes.
std::vector<HostileModel> write_hostile_models(const std::filesystem::path& dir);

}  // namespace p64::test
