#pragma once
// Converted models kept for the next command. A GGUF, llama2.c checkpoint or Hugging Face
// folder opened for decode is converted once per (input files, tokenizer, layout): the .p64 is
// kept in <p64 cache folder>/converted under a name derived from the input's path and from the
// size and modification time of every file it was read from (and the p64 build that converts),
// so a changed input gets a new entry and an unchanged one is mapped again instead of converted. The folder keeps the most
// recently used entries up to P64_CONVERTED_CACHE_MB megabytes (default 8192; 0 keeps none).
#include <cstdint>
#include <filesystem>
#include <string>

namespace p64 {

// Where the conversion of `input` (with `tokenizer`, a llama2.c tokenizer file, or "") into
// matrix layout `layout` is kept; empty when they are not regular files (or folders of them)
// that can be read: such a conversion is not kept.
std::filesystem::path converted_cache_path(const std::string& input, const std::string& tokenizer, int layout);

// The cache's size budget in bytes (P64_CONVERTED_CACHE_MB; a bad value is an Error naming it).
uint64_t converted_cache_budget();

// Removes the least recently used converted models in `dir` until the rest fit `budget` bytes;
// `keep` (the entry in use) is never removed. Temporary files are left to temp_files.h.
void trim_converted_cache(const std::filesystem::path& dir, uint64_t budget, const std::filesystem::path& keep);

}  // namespace p64
