#pragma once
#include <string>

#include "engine/model/vocab.h"

namespace p64 {

// A Hugging Face tokenizer.json (model.type BPE): model.vocab, model.merges (either "a b"
// strings or ["a", "b"] pairs), added_tokens (special -> Control, else UserDefined), the
// pre_tokenizer mapped to a pre name (llama-bpe, qwen2, smollm, gpt-2, default). A BPE with
// byte_fallback and the U+2581 normalizer (Llama 2 / TinyLlama exports) becomes a
// SentencePiece vocabulary whose scores follow the merge ranks. bos/eos/add_bos_token and
// chat_template come from tokenizer_config.json beside it when present.
// Throws p64::FormatError naming the file and the field for what it cannot use.
Vocabulary read_hf_tokenizer_json(const std::string& path);

}  // namespace p64
