// Hugging Face folder import with a fuzzed config.json (and, after a 0xFF byte, a fuzzed
// model.safetensors.index.json) beside a fixed tiny model.safetensors and tokenizer.json:
// the hyperparameters are checked against real tensors, and shard names must never leave
// the folder.
#include <filesystem>
#include <string_view>

#include "engine/common/error.h"
#include "engine/format/hf_import.h"
#include "fuzz_samples.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool fixed = [] {
    p64::fuzz::write_scratch("model.safetensors", p64::fuzz::tiny_llama_safetensors());
    p64::fuzz::write_scratch("tokenizer.json", p64::fuzz::tiny_tokenizer_json());
    return true;
  }();
  (void)fixed;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find('\xFF');
  p64::fuzz::write_scratch("config.json", in.substr(0, cut));
  const std::string index = p64::fuzz::scratch_dir() + "/model.safetensors.index.json";
  if (cut != std::string_view::npos) {
    p64::fuzz::write_scratch("model.safetensors.index.json", in.substr(cut + 1));
  } else {
    std::error_code ec;
    std::filesystem::remove(index, ec);
  }
  try {
    (void)p64::load_hf_directory(p64::fuzz::scratch_dir());
  } catch (const p64::Error&) {
  }
  return 0;
}
