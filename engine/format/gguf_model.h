#pragma once
#include "engine/format/gguf_reader.h"
#include "engine/model/hparams.h"
#include "engine/model/vocab.h"

namespace p64 {

// Hyperparameters from a GGUF's `<arch>.*` keys as the architecture's table spells them
// (general.architecture, default "llama"; one the engine has no table for is a FormatError),
// the `rope_freqs` tensor and the presence of `output.weight`. Missing required keys
// (embedding_length, block_count, attention.head_count) are a FormatError ("metadata"); counts
// over the limits of model_limits.h and bad RoPE or norm constants are an Error naming the key.
// Otherwise the result is not validated (a vocabulary-only file may leave sizes at 0),
// Model::from_parts does.
HParams gguf_hparams(const GgufFile& f);

// The vocabulary block (tokenizer.ggml.*, tokenizer.chat_template). Works on vocabulary-only
// files. Arrays whose lengths disagree with tokens, or special ids outside the vocabulary, are
// a FormatError ("metadata") naming the key.
Vocabulary gguf_vocabulary(const GgufFile& f);

}  // namespace p64
