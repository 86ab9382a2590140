// AoS <-> SoA repacking of whole tensors (layouts documented in quant.h). Each block field is
// moved to its own array so a GPU warp/subgroup loads it coalesced.
#include <cstring>
#include <span>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

struct Field {
  uint32_t aos_offset;  // where the field sits inside one AoS block
  uint32_t size;        // bytes per block
};

struct SoaLayout {
  uint32_t block_bytes;
  std::span<const Field> fields;  // in SoA array order
};

constexpr Field kQ4KFields[] = {{16, 128}, {4, 12}, {0, 2}, {2, 2}};      // qs, scales, d, dmin
constexpr Field kQ6KFields[] = {{0, 128}, {128, 64}, {192, 16}, {208, 2}};  // ql, qh, scales, d
constexpr Field kQ8_0Fields[] = {{2, 32}, {0, 2}};                          // qs, d

SoaLayout layout_of(DType aos) {
  switch (aos) {
    case DType::Q4_K: return {144, kQ4KFields};
    case DType::Q6_K: return {210, kQ6KFields};
    case DType::Q8_0: return {34, kQ8_0Fields};
    default: throw Error("soa: no SoA form for dtype " + std::string(dtype_name(aos)));
  }
}

}  // namespace

void soa_pack(DType aos_type, const void* src, void* dst, int64_t nblocks) {
  const SoaLayout L = layout_of(aos_type);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  uint64_t array_base = 0;
  for (const Field& f : L.fields) {
    uint8_t* out = d + array_base;
    for (int64_t b = 0; b < nblocks; ++b)
      std::memcpy(out + static_cast<uint64_t>(b) * f.size, s + static_cast<uint64_t>(b) * L.block_bytes + f.aos_offset, f.size);
    array_base += static_cast<uint64_t>(nblocks) * f.size;
  }
}

void soa_unpack(DType aos_type, const void* src, void* dst, int64_t nblocks) {
  const SoaLayout L = layout_of(aos_type);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  uint64_t array_base = 0;
  for (const Field& f : L.fields) {
    const uint8_t* in = s + array_base;
    for (int64_t b = 0; b < nblocks; ++b)
      std::memcpy(d + static_cast<uint64_t>(b) * L.block_bytes + f.aos_offset, in + static_cast<uint64_t>(b) * f.size, f.size);
    array_base += static_cast<uint64_t>(nblocks) * f.size;
  }
}

namespace detail {
// Gathers blocks [first, first + count) of an SoA tensor of `total` blocks into AoS form.
void soa_gather_blocks(DType aos_type, const void* tensor, int64_t total, int64_t first, int64_t count, void* dst) {
  const SoaLayout L = layout_of(aos_type);
  const auto* s = static_cast<const uint8_t*>(tensor);
  auto* d = static_cast<uint8_t*>(dst);
  uint64_t array_base = 0;
  for (const Field& f : L.fields) {
    const uint8_t* in = s + array_base;
    for (int64_t b = 0; b < count; ++b)
      std::memcpy(d + static_cast<uint64_t>(b) * L.block_bytes + f.aos_offset,
                  in + static_cast<uint64_t>(first + b) * f.size, f.size);
    array_base += static_cast<uint64_t>(total) * f.size;
  }
}
}  // namespace detail

}  // namespace p64
