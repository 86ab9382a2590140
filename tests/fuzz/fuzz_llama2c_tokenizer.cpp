// llama2.c tokenizer reader; the first byte picks "read to the end" or an expected count,
// and an accepted vocabulary must make a working SentencePiece tokenizer.
#include "engine/common/error.h"
#include "engine/format/llama2c_reader.h"
#include "engine/model/tokenizer.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string path = p64::fuzz::write_scratch("tokenizer.bin", data + 1, size - 1);
  try {
    p64::Vocabulary v = p64::read_llama2c_tokenizer(path, data[0] < 128 ? 0 : data[0]);
    auto tok = p64::Tokenizer::create(v);
    (void)tok->decode(tok->encode("Once upon a time", true, false));
  } catch (const p64::Error&) {
  }
  return 0;
}
