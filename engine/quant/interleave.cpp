// AoS <-> row-interleaved repacking (Q8_0_R16, Q5_0_R16; layouts in quant.h). Each form names
// where a block's scale and each of its quants live inside a unit of two blocks of 16 rows;
// packing and unpacking both go through that one map.
#include <cstring>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

constexpr int64_t kGroup = 16;

// One form: bytes per unit (a pair of blocks of a group), bytes per AoS block, and how one AoS
// block is written to / read from its half of a unit for one row (lane) of the group.
struct Form {
  uint64_t unit_bytes;
  uint64_t aos_bytes;
  void (*pack)(const uint8_t* aos, uint8_t* half, uint8_t* scale, int lane);
  void (*unpack)(const uint8_t* half, const uint8_t* scale, uint8_t* aos, int lane);
};

// Q8_0: quant i of lane r at 64 * (i / 4) + 4r + i % 4, stored as q + 128.
void pack_q8_0(const uint8_t* aos, uint8_t* half, uint8_t* scale, int lane) {
  std::memcpy(scale, aos, 2);
  for (int i = 0; i < 32; ++i) half[64 * (i / 4) + 4 * lane + i % 4] = static_cast<uint8_t>(aos[2 + i] ^ 0x80);
}
void unpack_q8_0(const uint8_t* half, const uint8_t* scale, uint8_t* aos, int lane) {
  std::memcpy(aos, scale, 2);
  for (int i = 0; i < 32; ++i) aos[2 + i] = static_cast<uint8_t>(half[64 * (i / 4) + 4 * lane + i % 4] ^ 0x80);
}

// Q5_0 (AoS: d, qh[4], qs[16]): 8 fifth-bit masks of 64 bits, then 4 x 64 bytes of nibbles.
// Mask k, bit 4r + j: fifth bit of quant 4k + j. Nibble byte 64 * (k % 4) + 4r + j: low half
// quant 4k + j for k < 4, high half quant 4k + j for k >= 4.
int q5_low4(const uint8_t* aos, int i) { return i < 16 ? (aos[6 + i] & 0xF) : (aos[6 + i - 16] >> 4); }
void pack_q5_0(const uint8_t* aos, uint8_t* half, uint8_t* scale, int lane) {
  std::memcpy(scale, aos, 2);
  uint32_t qh;
  std::memcpy(&qh, aos + 2, 4);
  for (int i = 0; i < 32; ++i) {
    const int k = i / 4, bit = 4 * lane + i % 4;
    uint8_t& mask_byte = half[8 * k + bit / 8];
    mask_byte = static_cast<uint8_t>((mask_byte & ~(1u << (bit % 8))) | (((qh >> i) & 1u) << (bit % 8)));
    uint8_t& nib = half[64 + 64 * (k % 4) + 4 * lane + i % 4];
    nib = k < 4 ? static_cast<uint8_t>((nib & 0xF0) | q5_low4(aos, i)) : static_cast<uint8_t>((nib & 0x0F) | (q5_low4(aos, i) << 4));
  }
}
void unpack_q5_0(const uint8_t* half, const uint8_t* scale, uint8_t* aos, int lane) {
  std::memcpy(aos, scale, 2);
  uint32_t qh = 0;
  std::memset(aos + 6, 0, 16);
  for (int i = 0; i < 32; ++i) {
    const int k = i / 4, bit = 4 * lane + i % 4;
    qh |= static_cast<uint32_t>((half[8 * k + bit / 8] >> (bit % 8)) & 1u) << i;
    const uint8_t nib = half[64 + 64 * (k % 4) + 4 * lane + i % 4];
    const int low4 = k < 4 ? (nib & 0xF) : (nib >> 4);
    aos[6 + i % 16] = static_cast<uint8_t>(aos[6 + i % 16] | (i < 16 ? low4 : low4 << 4));
  }
  std::memcpy(aos + 2, &qh, 4);
}

Form form_of(DType packed) {
  switch (packed) {
    case DType::Q8_0_R16: return {1088, 34, pack_q8_0, unpack_q8_0};
    case DType::Q5_0_R16: return {704, 22, pack_q5_0, unpack_q5_0};
    default: throw Error("no row-interleaved form " + std::string(dtype_name(packed)));
  }
}

// Where block b of row r lives: its half of the unit and its scale.
struct Place {
  uint64_t half, scale;
  int lane;
};
Place place(const Form& f, int64_t nb, int64_t r, int64_t b) {
  const uint64_t unit = static_cast<uint64_t>((r / kGroup) * (nb / 2) + b / 2) * f.unit_bytes;
  const uint64_t h = static_cast<uint64_t>(b % 2);
  return {unit + 64 + h * (f.unit_bytes - 64) / 2, unit + 32 * h + 2 * static_cast<uint64_t>(r % kGroup),
          static_cast<int>(r % kGroup)};
}

DType checked_form(DType aos, int64_t rows, int64_t n, const char* what) {
  const DType packed = dtype_interleaved_of(aos);
  if (packed == aos) throw Error(std::string(what) + ": no row-interleaved form for dtype " + std::string(dtype_name(aos)));
  if (const std::string why = dtype_shape_problem(packed, n, rows); !why.empty()) throw Error(std::string(what) + ": " + why);
  return packed;
}

}  // namespace

void interleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n) {
  const Form f = form_of(checked_form(aos_type, rows, n, "interleave_rows"));
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  const int64_t nb = n / 32;
  std::memset(d, 0, static_cast<size_t>(rows * nb) * f.aos_bytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const Place p = place(f, nb, r, b);
      f.pack(s + static_cast<uint64_t>(r * nb + b) * f.aos_bytes, d + p.half, d + p.scale, p.lane);
    }
}

void deinterleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n) {
  const DType packed = checked_form(aos_type, rows, n, "deinterleave_rows");
  const uint64_t row_bytes = dtype_row_bytes(aos_type, static_cast<uint64_t>(n));
  for (int64_t r = 0; r < rows; ++r) interleaved_gather_row(packed, src, r, n, static_cast<uint8_t*>(dst) + r * row_bytes);
}

void interleaved_gather_row(DType packed, const void* tensor, int64_t row, int64_t n, void* dst) {
  if (!dtype_is_interleaved(packed))
    throw Error("interleaved_gather_row: " + std::string(dtype_name(packed)) + " is not a row-interleaved dtype");
  const Form f = form_of(packed);
  const auto* t = static_cast<const uint8_t*>(tensor);
  const int64_t nb = n / 32;
  for (int64_t b = 0; b < nb; ++b) {
    const Place p = place(f, nb, row, b);
    f.unpack(t + p.half, t + p.scale, static_cast<uint8_t*>(dst) + static_cast<uint64_t>(b) * f.aos_bytes, p.lane);
  }
}

}  // namespace p64
