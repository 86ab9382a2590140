// load_vocabulary picks the reader by content (P64, GGUF, llama2.c tokenizer, tiktoken
// .model, tokenizer.json), so one target reaches the sniffing and the tiktoken reader.
#include "engine/common/error.h"
#include "engine/model/tokenizer.h"
#include "engine/format/vocab_loader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("vocab.input", data, size);
  try {
    p64::Vocabulary v = p64::load_vocabulary(path);
    auto tok = p64::Tokenizer::create(v);
    (void)tok->decode(tok->encode("Hello world", true, true));
  } catch (const p64::Error&) {
  }
  return 0;
}
