#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/mapped_file.h"
#include "engine/model/hparams.h"
#include "engine/model/model.h"
#include "engine/model/vocab.h"

namespace p64 {

// A llama2.c legacy checkpoint (run.c's format): seven int32 (dim, hidden_dim, n_layers,
// n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size means the classifier is a
// separate matrix at the end), then float32 weights. The tensors are views into the map under
// GGUF names and shapes (w1 = ffn_gate, w3 = ffn_up, w2 = ffn_down; freq_cis is skipped).
// llama2.c rotates adjacent pairs, so no permutation is needed.
struct Llama2cCheckpoint {
  std::shared_ptr<const MappedFile> map;
  int32_t header[7] = {};
  bool shared_classifier = true;
  HParams hparams;
  std::vector<TensorView> tensors;  // F32, in file order
};

// Throws FormatError ("header" or "tensor data") for bad sizes or a file whose length is not
// exactly what the header implies.
Llama2cCheckpoint read_llama2c(const std::string& path);

// True when the first 28 bytes look like a plausible legacy llama2.c header and the file size
// matches it (used to tell a .bin checkpoint from other files).
bool is_llama2c_checkpoint(const MappedFile& map);

// A llama2.c tokenizer file (int32 max_token_length, then per token: f32 score, int32 length,
// bytes). Pieces are rewritten to GGUF's SentencePiece spelling: spaces become U+2581, the
// exporter's "\n<s>\n" / "\n</s>\n" become "<s>" / "</s>" (Control), "<unk>" is Unknown,
// "<0xNN>" pieces are Byte. bos 1, eos 2, unk 0, add_space_prefix true. n_vocab = 0 reads to
// the end of the file; otherwise exactly n_vocab tokens must be present.
Vocabulary read_llama2c_tokenizer(const std::string& path, uint32_t n_vocab);

}  // namespace p64
