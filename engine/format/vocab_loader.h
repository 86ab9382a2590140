#pragma once
#include <string>

#include "engine/model/vocab.h"

namespace p64 {

// The vocabulary in any file a user may point `--model` at, chosen by content, not by name:
// a .p64 container, a GGUF (vocabulary-only ones too), a llama2.c tokenizer file, Meta's
// tiktoken .model, a Hugging Face tokenizer.json (or a folder that holds one).
// Throws p64::Error naming the file when it is none of these.
Vocabulary load_vocabulary(const std::string& path);

}  // namespace p64
