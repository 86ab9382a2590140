#pragma once
#include <string>

#include "engine/model/vocab.h"

namespace p64 {

// Meta's Llama 3 tokenizer file (tiktoken BPE: one "base64(token) rank" per line, 128000
// lines). Returns the vocabulary the way llama.cpp's converter writes it into GGUF: kind
// ByteLevelBPE, pre "llama-bpe", token strings in GPT-2's byte-level alphabet, merges derived
// from the ranks (so the same BPE code serves GGUF gpt2 vocabularies), the 256 special tokens
// 128000..128255 (Control), bos 128000, eos 128001, eot 128009, and a Llama 3 chat template.
// Throws p64::FormatError naming the file and line for bad base64, ranks out of order, ...
Vocabulary read_tiktoken_model(const std::string& path);

// The Llama 3 special-token names for ids 128000 + i, i in [0, 256).
std::string llama3_special_token(int i);

}  // namespace p64
