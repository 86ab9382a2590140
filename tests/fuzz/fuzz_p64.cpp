// P64 reader. Random bytes rarely get past the CRC-32Cs, so an input whose first byte is odd
// has its section and header CRCs recomputed first: the fuzzer then reaches the structure
// checks behind them (bounds, dtypes, shapes, schedule, manifold) as a hostile writer would.
#include <cstring>
#include <vector>

#include "engine/common/error.h"
#include "engine/format/crc32c.h"
#include "engine/format/p64_format.h"
#include "engine/format/p64_reader.h"
#include "fuzz_support.h"

namespace {

void reseal(std::vector<uint8_t>& b) {
  using namespace p64;
  if (b.size() < kP64HeaderBytes) return;
  for (uint32_t i = 0; i < kP64MaxSections; ++i) {
    uint8_t* e = b.data() + kP64SectionTableOffset + i * kP64SectionEntryBytes;
    uint64_t off, size;
    std::memcpy(&off, e + 8, 8);
    std::memcpy(&size, e + 16, 8);
    if (off > b.size() || size > b.size() - off) continue;
    const uint32_t crc = crc32c(b.data() + off, size);
    std::memcpy(e + 24, &crc, 4);
  }
  const uint32_t h = crc32c(b.data(), kP64HeaderCrcOffset);
  std::memcpy(b.data() + kP64HeaderCrcOffset, &h, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] & 1) reseal(bytes);
  const std::string path = p64::fuzz::write_scratch("input.p64", bytes.data(), bytes.size());
  try {
    (void)p64::inspect_p64(path);
    (void)p64::open_p64(path);
  } catch (const p64::Error&) {
  }
  // verify never throws for a readable file: every problem is in the report.
  (void)p64::verify_p64(path);
  return 0;
}
