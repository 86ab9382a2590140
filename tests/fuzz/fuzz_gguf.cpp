// GGUF reader: header, metadata, tensor infos, then the hyperparameter and vocabulary views
// built over them, and a tokenizer built from whatever vocabulary the file claims.
#include "engine/common/error.h"
#include "engine/format/gguf_model.h"
#include "engine/format/gguf_reader.h"
#include "engine/model/tokenizer.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("input.gguf", data, size);
  try {
    p64::GgufFile f = p64::GgufFile::open(path);
    for (const auto& kv : f.metadata()) (void)kv.value.summary();
    for (const auto& t : f.tensors()) {
      if (t.data + t.bytes > f.map()->data() + f.map()->size()) std::abort();  // a view past the map
    }
    (void)p64::gguf_hparams(f);
    p64::Vocabulary v = p64::gguf_vocabulary(f);
    auto tok = p64::Tokenizer::create(v);
    (void)tok->decode(tok->encode("Hello <s> world", true, true));
  } catch (const p64::Error&) {
  }
  return 0;
}
