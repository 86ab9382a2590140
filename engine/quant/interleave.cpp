// AoS <-> row-interleaved repacking (Q8_0_R16, Q5_0_R16, Q4_K_R16, Q6_K_R16; layouts in quant.h). Each
// form says where the fields of one AoS block of one row (lane) of a group go inside a unit of
// 16 rows; packing and unpacking are that one map read in the two directions.
#include <cstring>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

constexpr int64_t kGroup = 16;

struct Form {
  uint64_t unit_bytes;   // one unit: blocks_per_unit blocks of each of the 16 rows
  uint64_t aos_bytes;    // one AoS block
  int blocks_per_unit;
  // Block j of the unit, row `lane`: AoS bytes to the unit (zeroed beforehand) and back.
  void (*pack)(const uint8_t* aos, uint8_t* unit, int j, int lane);
  void (*unpack)(const uint8_t* unit, int j, int lane, uint8_t* aos);
};

// Four consecutive bytes as one word: a granule (quants 4k .. 4k + 3 of one row) moves whole.
uint32_t word_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void or_word(uint8_t* p, uint32_t v) {
  const uint32_t w = word_at(p) | v;
  std::memcpy(p, &w, 4);
}
constexpr uint32_t kLow4 = 0x0F0F0F0F;
void copy_scale(const uint8_t* from, uint8_t* to) { std::memcpy(to, from, 2); }

// A run of 32 quants as nibbles (256 bytes for 16 rows): granule k of row `lane` in the word at
// 64 (k % 4) + 4 lane, low halves for k < 4, high halves for k >= 4. `v` holds four 4-bit values.
void put_granule(uint8_t* run, int k, int lane, uint32_t v) { or_word(run + 64 * (k % 4) + 4 * lane, k < 4 ? v : v << 4); }
uint32_t get_granule(const uint8_t* run, int k, int lane) {
  const uint32_t w = word_at(run + 64 * (k % 4) + 4 * lane);
  return (k < 4 ? w : w >> 4) & kLow4;
}

// Q8_0 units (two blocks): d of each at 32j + 2 lane; granule k of block j at
// 64 + 512j + 64k + 4 lane, each quant stored as q + 128.
void pack_q8_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + 32 * j + 2 * lane);
  for (int k = 0; k < 8; ++k) {
    const uint32_t w = word_at(aos + 2 + 4 * k) ^ 0x80808080u;
    std::memcpy(unit + 64 + 512 * j + 64 * k + 4 * lane, &w, 4);
  }
}
void unpack_q8_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + 32 * j + 2 * lane, aos);
  for (int k = 0; k < 8; ++k) {
    const uint32_t w = word_at(unit + 64 + 512 * j + 64 * k + 4 * lane) ^ 0x80808080u;
    std::memcpy(aos + 2 + 4 * k, &w, 4);
  }
}

// Q5_0 units (two blocks; AoS d, qh[4], qs[16]): d as Q8_0's; block j's half at 64 + 320j
// holds 8 fifth-bit masks (mask k, bits 4 lane .. 4 lane + 3: quants 4k .. 4k + 3), then a
// nibble run. AoS quant i < 16 is the low nibble of qs[i], i >= 16 the high nibble of qs[i - 16].
void pack_q5_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + 32 * j + 2 * lane);
  uint8_t* half = unit + 64 + 320 * j;
  const uint32_t qh = word_at(aos + 2);
  for (int k = 0; k < 8; ++k) {
    half[8 * k + lane / 2] |= static_cast<uint8_t>(((qh >> (4 * k)) & 0xF) << (4 * (lane % 2)));
    const uint32_t w = word_at(aos + 6 + 4 * (k % 4));
    put_granule(half + 64, k, lane, (k < 4 ? w : w >> 4) & kLow4);
  }
}
void unpack_q5_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + 32 * j + 2 * lane, aos);
  const uint8_t* half = unit + 64 + 320 * j;
  uint32_t qh = 0;
  std::memset(aos + 6, 0, 16);
  for (int k = 0; k < 8; ++k) {
    qh |= static_cast<uint32_t>((half[8 * k + lane / 2] >> (4 * (lane % 2))) & 0xF) << (4 * k);
    const uint32_t v = get_granule(half + 64, k, lane);
    or_word(aos + 6 + 4 * (k % 4), k < 4 ? v : v << 4);
  }
  std::memcpy(aos + 2, &qh, 4);
}

// Q4_K units (one super-block; AoS d, dmin, scales[12], qs[128]): d at 2 lane, dmin at
// 32 + 2 lane, scale byte k at 64 + 16k + lane, sub-block s as a nibble run at 256 + 256s.
// AoS sub-block s: the low (s even) or high (s odd) nibbles of qs[32 (s / 2) ..].
void pack_q4_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos, unit + 2 * lane);
  copy_scale(aos + 2, unit + 32 + 2 * lane);
  for (int k = 0; k < 12; ++k) unit[64 + 16 * k + lane] = aos[4 + k];
  for (int s = 0; s < 8; ++s)
    for (int k = 0; k < 8; ++k) {
      const uint32_t w = word_at(aos + 16 + 32 * (s / 2) + 4 * k);
      put_granule(unit + 256 + 256 * s, k, lane, (s % 2 == 0 ? w : w >> 4) & kLow4);
    }
}
void unpack_q4_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + 2 * lane, aos);
  copy_scale(unit + 32 + 2 * lane, aos + 2);
  for (int k = 0; k < 12; ++k) aos[4 + k] = unit[64 + 16 * k + lane];
  std::memset(aos + 16, 0, 128);
  for (int s = 0; s < 8; ++s)
    for (int k = 0; k < 8; ++k) {
      const uint32_t v = get_granule(unit + 256 + 256 * s, k, lane);
      or_word(aos + 16 + 32 * (s / 2) + 4 * k, s % 2 == 0 ? v : v << 4);
    }
}

// Q6_K units (one super-block; AoS ql[128], qh[64], scales[16], d): d at 2 lane, scale of
// 16-group g at 32 + 16g + lane, sub-block s's low four bits as a nibble run at 288 + 256s, its
// high two bits at 2336 + 128s + 64 (k / 4) + 4 lane, bits 2 (k % 4) of each byte (granule k).
// AoS sub-block s = 4h + c (h: half of 128, c: 0..3): low bits in ql[64h + 32 (c & 1) ..] at
// nibble c / 2, high bits in qh[32h ..] at bits 2c.
void pack_q6_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos + 208, unit + 2 * lane);
  for (int g = 0; g < 16; ++g) unit[32 + 16 * g + lane] = aos[192 + g];
  for (int s = 0; s < 8; ++s) {
    const int h = s / 4, c = s % 4;
    for (int k = 0; k < 8; ++k) {
      put_granule(unit + 288 + 256 * s, k, lane, (word_at(aos + 64 * h + 32 * (c & 1) + 4 * k) >> (4 * (c / 2))) & kLow4);
      const uint32_t high = (word_at(aos + 128 + 32 * h + 4 * k) >> (2 * c)) & 0x03030303u;
      or_word(unit + 2336 + 128 * s + 64 * (k / 4) + 4 * lane, high << (2 * (k % 4)));
    }
  }
}
void unpack_q6_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + 2 * lane, aos + 208);
  for (int g = 0; g < 16; ++g) aos[192 + g] = unit[32 + 16 * g + lane];
  std::memset(aos, 0, 192);
  for (int s = 0; s < 8; ++s) {
    const int h = s / 4, c = s % 4;
    for (int k = 0; k < 8; ++k) {
      or_word(aos + 64 * h + 32 * (c & 1) + 4 * k, get_granule(unit + 288 + 256 * s, k, lane) << (4 * (c / 2)));
      const uint32_t high = (word_at(unit + 2336 + 128 * s + 64 * (k / 4) + 4 * lane) >> (2 * (k % 4))) & 0x03030303u;
      or_word(aos + 128 + 32 * h + 4 * k, high << (2 * c));
    }
  }
}

Form form_of(DType packed) {
  switch (packed) {
    case DType::Q8_0_R16: return {1088, 34, 2, pack_q8_0, unpack_q8_0};
    case DType::Q5_0_R16: return {704, 22, 2, pack_q5_0, unpack_q5_0};
    case DType::Q4_K_R16: return {2304, 144, 1, pack_q4_k, unpack_q4_k};
    case DType::Q6_K_R16: return {3360, 210, 1, pack_q6_k, unpack_q6_k};
    default: throw Error("no row-interleaved form " + std::string(dtype_name(packed)));
  }
}

// The unit that holds block b of row r (rows of nb blocks), and b's index inside it.
uint64_t unit_of(const Form& f, int64_t nb, int64_t r, int64_t b) {
  return static_cast<uint64_t>((r / kGroup) * (nb / f.blocks_per_unit) + b / f.blocks_per_unit) * f.unit_bytes;
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
  const int64_t nb = n / dtype_info(aos_type)->block_elems;
  std::memset(d, 0, static_cast<size_t>(rows * nb) * f.aos_bytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b)
      f.pack(s + static_cast<uint64_t>(r * nb + b) * f.aos_bytes, d + unit_of(f, nb, r, b),
             static_cast<int>(b % f.blocks_per_unit), static_cast<int>(r % kGroup));
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
  const int64_t nb = n / dtype_info(packed)->block_elems;
  for (int64_t b = 0; b < nb; ++b)
    f.unpack(t + unit_of(f, nb, row, b), static_cast<int>(b % f.blocks_per_unit), static_cast<int>(row % kGroup),
             static_cast<uint8_t*>(dst) + static_cast<uint64_t>(b) * f.aos_bytes);
}

}  // namespace p64
