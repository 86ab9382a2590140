// Byte-level BPE tokenizers built from real vocabularies: GPT-2 (gpt-2 pre-tokenizer) and
// Llama 3 (tiktoken ranks, its Unicode-property regex); the first byte picks one and the
// flags, the rest is the text. Byte-level BPE is lossless: decoding must give the text back
// for any input that is valid UTF-8 when no special text is parsed.
#include <cstdlib>
#include <string_view>

#include "engine/model/tokenizer.h"
#include "engine/model/utf8.h"
#include "engine/format/vocab_loader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto gpt2 = p64::Tokenizer::create(p64::load_vocabulary(p64::fuzz::shared_model("ggml-vocab-gpt-2.gguf")));
  static const auto llama3 = p64::Tokenizer::create(p64::load_vocabulary(p64::fuzz::shared_model("llama3_tokenizer.model")));
  if (size < 1) return 0;
  const p64::Tokenizer& tok = (data[0] & 4) ? *llama3 : *gpt2;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool parse_special = data[0] & 2;
  const auto ids = tok.encode(text, data[0] & 1, parse_special);
  for (int32_t id : ids) {
    if (!tok.is_valid(id)) std::abort();
  }
  const std::string back = tok.decode(ids);
  const bool add_special = data[0] & 1;
  if (!add_special && !parse_special && p64::utf8::sanitize(text) == text && back != text) std::abort();
  p64::StreamDecoder stream(tok);
  for (int32_t id : ids) (void)stream.push(id);
  (void)stream.flush();
  return 0;
}
