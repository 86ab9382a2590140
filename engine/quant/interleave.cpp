// AoS <-> row-interleaved repacking (Q8_0_R16, Q5_0_R16, Q4_K_R16, Q6_K_R16; layouts in quant.h). Each
// form says where the fields of one AoS block of one row (lane) of a group go inside a unit of
// 16 rows; packing and unpacking are that one map read in the two directions.
#include <cstring>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/interleaved_layout.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

constexpr int64_t kGroup = r16::kGroupRows;

struct Form {
  uint64_t unit_bytes;   // one unit: blocks_per_unit AoS blocks of each of the 16 rows
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

// A run of 32 quants as nibbles (256 bytes for 16 rows), granule k of row `lane` at
// r16::nibble_granule_at: low halves for k < 4, high halves for k >= 4. `v` holds four 4-bit values.
void put_granule(uint8_t* run, int k, int lane, uint32_t v) { or_word(run + r16::nibble_granule_at(k, lane), k < 4 ? v : v << 4); }
uint32_t get_granule(const uint8_t* run, int k, int lane) {
  const uint32_t w = word_at(run + r16::nibble_granule_at(k, lane));
  return (k < 4 ? w : w >> 4) & kLow4;
}

// Q8_0 units (two blocks; AoS d, qs[32]): each quant stored as q + 128.
using Q8 = r16::Q8_0;
void pack_q8_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + Q8::scales(j) + 2 * lane);
  for (int k = 0; k < 8; ++k) {
    const uint32_t w = word_at(aos + 2 + 4 * k) ^ 0x80808080u;
    std::memcpy(unit + Q8::quants(j) + r16::granule_at(k, lane), &w, 4);
  }
}
void unpack_q8_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + Q8::scales(j) + 2 * lane, aos);
  for (int k = 0; k < 8; ++k) {
    const uint32_t w = word_at(unit + Q8::quants(j) + r16::granule_at(k, lane)) ^ 0x80808080u;
    std::memcpy(aos + 2 + 4 * k, &w, 4);
  }
}

// Q5_0 units (two blocks; AoS d, qh[4], qs[16]): fifth-bit mask k holds the bits of quants
// 4k .. 4k + 3 of row `lane` at bits 4 lane .. 4 lane + 3. AoS quant i < 16 is the low nibble
// of qs[i], i >= 16 the high nibble of qs[i - 16].
using Q5 = r16::Q5_0;
void pack_q5_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + Q5::scales(j) + 2 * lane);
  const uint32_t qh = word_at(aos + 2);
  for (int k = 0; k < 8; ++k) {
    unit[Q5::masks(j) + 8 * k + lane / 2] |= static_cast<uint8_t>(((qh >> (4 * k)) & 0xF) << (4 * (lane % 2)));
    const uint32_t w = word_at(aos + 6 + 4 * (k % 4));
    put_granule(unit + Q5::nibbles(j), k, lane, (k < 4 ? w : w >> 4) & kLow4);
  }
}
void unpack_q5_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + Q5::scales(j) + 2 * lane, aos);
  uint32_t qh = 0;
  std::memset(aos + 6, 0, 16);
  for (int k = 0; k < 8; ++k) {
    qh |= static_cast<uint32_t>((unit[Q5::masks(j) + 8 * k + lane / 2] >> (4 * (lane % 2))) & 0xF) << (4 * k);
    const uint32_t v = get_granule(unit + Q5::nibbles(j), k, lane);
    or_word(aos + 6 + 4 * (k % 4), k < 4 ? v : v << 4);
  }
  std::memcpy(aos + 2, &qh, 4);
}

// Q4_K units (one super-block; AoS d, dmin, scales[12], qs[128]). AoS sub-block s: the low
// (s even) or high (s odd) nibbles of qs[32 (s / 2) ..].
using Q4K = r16::Q4_K;
void pack_q4_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos, unit + Q4K::kD + 2 * lane);
  copy_scale(aos + 2, unit + Q4K::kDmin + 2 * lane);
  for (int k = 0; k < 12; ++k) unit[Q4K::scale_byte(k) + lane] = aos[4 + k];
  for (int s = 0; s < 8; ++s)
    for (int k = 0; k < 8; ++k) {
      const uint32_t w = word_at(aos + 16 + 32 * (s / 2) + 4 * k);
      put_granule(unit + Q4K::nibbles(s), k, lane, (s % 2 == 0 ? w : w >> 4) & kLow4);
    }
}
void unpack_q4_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + Q4K::kD + 2 * lane, aos);
  copy_scale(unit + Q4K::kDmin + 2 * lane, aos + 2);
  for (int k = 0; k < 12; ++k) aos[4 + k] = unit[Q4K::scale_byte(k) + lane];
  std::memset(aos + 16, 0, 128);
  for (int s = 0; s < 8; ++s)
    for (int k = 0; k < 8; ++k) {
      const uint32_t v = get_granule(unit + Q4K::nibbles(s), k, lane);
      or_word(aos + 16 + 32 * (s / 2) + 4 * k, s % 2 == 0 ? v : v << 4);
    }
}

// Q6_K units (one super-block; AoS ql[128], qh[64], scales[16], d): granule k's high two bits
// at bits 2 (k % 4) of the granule in high-bit vector k / 4. AoS sub-block s = 4h + c (h: half
// of 128, c: 0..3): low bits in ql[64h + 32 (c & 1) ..] at nibble c / 2, high bits in qh[32h ..]
// at bits 2c.
using Q6K = r16::Q6_K;
void pack_q6_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos + 208, unit + Q6K::kD + 2 * lane);
  for (int g = 0; g < 16; ++g) unit[Q6K::scale(g) + lane] = aos[192 + g];
  for (int s = 0; s < 8; ++s) {
    const int h = s / 4, c = s % 4;
    for (int k = 0; k < 8; ++k) {
      put_granule(unit + Q6K::nibbles(s), k, lane, (word_at(aos + 64 * h + 32 * (c & 1) + 4 * k) >> (4 * (c / 2))) & kLow4);
      const uint32_t high = (word_at(aos + 128 + 32 * h + 4 * k) >> (2 * c)) & 0x03030303u;
      or_word(unit + Q6K::high(s) + r16::granule_at(k / 4, lane), high << (2 * (k % 4)));
    }
  }
}
void unpack_q6_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + Q6K::kD + 2 * lane, aos + 208);
  for (int g = 0; g < 16; ++g) aos[192 + g] = unit[Q6K::scale(g) + lane];
  std::memset(aos, 0, 192);
  for (int s = 0; s < 8; ++s) {
    const int h = s / 4, c = s % 4;
    for (int k = 0; k < 8; ++k) {
      or_word(aos + 64 * h + 32 * (c & 1) + 4 * k, get_granule(unit + Q6K::nibbles(s), k, lane) << (4 * (c / 2)));
      const uint32_t high = (word_at(unit + Q6K::high(s) + r16::granule_at(k / 4, lane)) >> (2 * (k % 4))) & 0x03030303u;
      or_word(aos + 128 + 32 * h + 4 * k, high << (2 * c));
    }
  }
}

Form form_of(DType packed) {
  switch (packed) {
    case DType::Q8_0_R16: return {Q8::kUnitBytes, Q8::kBlocks, pack_q8_0, unpack_q8_0};
    case DType::Q5_0_R16: return {Q5::kUnitBytes, Q5::kBlocks, pack_q5_0, unpack_q5_0};
    case DType::Q4_K_R16: return {Q4K::kUnitBytes, 1, pack_q4_k, unpack_q4_k};  // one super-block
    case DType::Q6_K_R16: return {Q6K::kUnitBytes, 1, pack_q6_k, unpack_q6_k};
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
  const DTypeInfo info = *dtype_info(aos_type);
  const int64_t nb = n / info.block_elems;
  std::memset(d, 0, static_cast<size_t>(rows * nb) * info.block_bytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b)
      f.pack(s + static_cast<uint64_t>(r * nb + b) * info.block_bytes, d + unit_of(f, nb, r, b),
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
  const DTypeInfo info = *dtype_info(packed);  // the AoS type's block size and bytes
  const int64_t nb = n / info.block_elems;
  for (int64_t b = 0; b < nb; ++b)
    f.unpack(t + unit_of(f, nb, row, b), static_cast<int>(b % f.blocks_per_unit), static_cast<int>(row % kGroup),
             static_cast<uint8_t*>(dst) + static_cast<uint64_t>(b) * info.block_bytes);
}

}  // namespace p64
