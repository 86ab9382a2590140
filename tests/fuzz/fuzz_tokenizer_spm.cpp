// SentencePiece tokenizer built from the real Llama 2 vocabulary; the input is the text.
// Every id must be in the vocabulary, and decoding (whole or streamed) must not trip.
#include <cstdlib>
#include <string_view>

#include "engine/model/tokenizer.h"
#include "engine/format/vocab_loader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto tok = p64::Tokenizer::create(p64::load_vocabulary(p64::fuzz::shared_model("ggml-vocab-llama-spm.gguf")));
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto ids = tok->encode(text, data[0] & 1, data[0] & 2);
  for (int32_t id : ids) {
    if (!tok->is_valid(id)) std::abort();
  }
  (void)tok->decode(ids);
  p64::StreamDecoder stream(*tok, true);
  for (int32_t id : ids) (void)stream.push(id);
  (void)stream.flush();
  return 0;
}
