// safetensors reader: u64 header length, JSON header, tensor byte ranges.
#include "engine/common/error.h"
#include "engine/format/safetensors.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = p64::fuzz::write_scratch("model.safetensors", data, size);
  try {
    p64::SafetensorsFile f = p64::SafetensorsFile::open(path);
    const uint8_t* end = f.map()->data() + f.map()->size();
    for (const auto& t : f.tensors()) {
      if (t.data + t.bytes > end || t.data < f.map()->data()) std::abort();  // a view outside the map
    }
  } catch (const p64::Error&) {
  }
  return 0;
}
