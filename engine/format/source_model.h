#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/format/p64_writer.h"

namespace p64 {

// A model as read from an input format, before conversion: hparams, vocabulary, and tensors
// under GGUF names whose bytes stream from the input's map (or are produced one tensor at a
// time, e.g. HF Q/K rows permuted). `keepalive` owns the maps the tensors point into.
struct SourceModel {
  std::string kind;  // "gguf", "llama2c", "hf", "p64"
  std::string path;
  HParams hparams;
  Vocabulary vocab;
  std::vector<P64TensorSource> tensors;
  std::vector<std::shared_ptr<const void>> keepalive;
};

// What a path holds, by content: "p64", "gguf", "llama2c", "hf" (a folder with config.json),
// or "" when it is none of them.
std::string detect_model_format(const std::string& path);

// Reads any supported input. llama2.c checkpoints carry no vocabulary: `tokenizer_path`
// names the llama2.c tokenizer file (required for them); for HF folders it may override
// tokenizer.json. Throws FormatError/Error naming the file.
SourceModel load_source_model(const std::string& path, const std::string& tokenizer_path = "");

}  // namespace p64
