// Hugging Face tokenizer.json import; an accepted vocabulary must build a tokenizer that
// encodes and decodes without tripping.
#include "engine/common/error.h"
#include "engine/format/hf_tokenizer_json.h"
#include "engine/model/tokenizer.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("tokenizer.json", data, size);
  try {
    p64::Vocabulary v = p64::read_hf_tokenizer_json(path);
    auto tok = p64::Tokenizer::create(v);
    (void)tok->decode(tok->encode("Hello world! 123 <|endoftext|>", true, true));
  } catch (const p64::Error&) {
  }
  return 0;
}
