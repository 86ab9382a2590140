// llama2.c legacy checkpoint reader (the seven-int header and the size it implies).
#include "engine/common/error.h"
#include "engine/format/llama2c_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("input.bin", data, size);
  try {
    p64::Llama2cCheckpoint c = p64::read_llama2c(path);
    const uint8_t* end = c.map->data() + c.map->size();
    for (const auto& t : c.tensors) {
      if (t.data + t.bytes > end) std::abort();  // a view past the map
    }
  } catch (const p64::Error&) {
  }
  return 0;
}
