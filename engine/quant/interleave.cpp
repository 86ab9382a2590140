// AoS <-> row-interleaved repacking (Q8_0_R16, layout in quant.h): one function maps each
// byte of an AoS block to its place in the group, and every direction goes through it.
#include <cstring>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

constexpr int64_t kGroup = 16;
constexpr int64_t kUnitBytes = 1088;  // two blocks of 16 rows: 64 bytes of scales, 2 x 512 of quants

// Byte offsets of block b of row r inside a Q8_0_R16 tensor whose rows have nb blocks.
struct R16Block {
  uint64_t scale;                  // the block's fp16 d
  uint64_t quant(int i) const {    // its quant i (0..31), stored as q + 128
    return quants + 64 * static_cast<uint64_t>(i / 4) + static_cast<uint64_t>(i % 4);
  }
  uint64_t quants;
};

R16Block r16_block(int64_t nb, int64_t r, int64_t b) {
  const uint64_t unit = static_cast<uint64_t>((r / kGroup) * (nb / 2) + b / 2) * kUnitBytes;
  const uint64_t lane = static_cast<uint64_t>(r % kGroup), half = static_cast<uint64_t>(b % 2);
  return {unit + 32 * half + 2 * lane, unit + 64 + 512 * half + 4 * lane};
}

void check(DType aos, int64_t rows, int64_t n, const char* what) {
  if (aos != DType::Q8_0)
    throw Error(std::string(what) + ": no row-interleaved form for dtype " + std::string(dtype_name(aos)));
  if (const std::string why = dtype_shape_problem(DType::Q8_0_R16, n, rows); !why.empty())
    throw Error(std::string(what) + ": " + why);
}

// One AoS Q8_0 block (34 bytes: d, qs[32]) to or from its place in the interleaved tensor.
void pack_block(const uint8_t* aos, uint8_t* tensor, const R16Block& at) {
  std::memcpy(tensor + at.scale, aos, 2);
  for (int i = 0; i < 32; ++i) tensor[at.quant(i)] = static_cast<uint8_t>(aos[2 + i] ^ 0x80);
}
void unpack_block(const uint8_t* tensor, uint8_t* aos, const R16Block& at) {
  std::memcpy(aos, tensor + at.scale, 2);
  for (int i = 0; i < 32; ++i) aos[2 + i] = static_cast<uint8_t>(tensor[at.quant(i)] ^ 0x80);
}

}  // namespace

void interleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n) {
  check(aos_type, rows, n, "interleave_rows");
  const auto* s = static_cast<const uint8_t*>(src);
  const int64_t nb = n / 32;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) pack_block(s + (r * nb + b) * 34, static_cast<uint8_t*>(dst), r16_block(nb, r, b));
}

void deinterleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n) {
  check(aos_type, rows, n, "deinterleave_rows");
  for (int64_t r = 0; r < rows; ++r) interleaved_gather_row(DType::Q8_0_R16, src, r, n, static_cast<uint8_t*>(dst) + r * (n / 32) * 34);
}

void interleaved_gather_row(DType packed, const void* tensor, int64_t row, int64_t n, void* dst) {
  if (packed != DType::Q8_0_R16)
    throw Error("interleaved_gather_row: " + std::string(dtype_name(packed)) + " is not a row-interleaved dtype");
  const int64_t nb = n / 32;
  for (int64_t b = 0; b < nb; ++b)
    unpack_block(static_cast<const uint8_t*>(tensor), static_cast<uint8_t*>(dst) + b * 34, r16_block(nb, row, b));
}

}  // namespace p64
