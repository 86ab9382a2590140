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

// Nibble byte of element 4k + i of a 32-quant run (k = 0..7) for row `lane`, inside 256 bytes:
// low half for k < 4, high half for k >= 4.
uint64_t nibble_at(int k, int i, int lane) { return 64 * static_cast<uint64_t>(k % 4) + 4 * static_cast<uint64_t>(lane) + static_cast<uint64_t>(i); }
void put_nibble(uint8_t* run, int e, int lane, int v) {
  uint8_t& b = run[nibble_at(e / 4 % 8, e % 4, lane)];
  b = e / 4 < 4 ? static_cast<uint8_t>((b & 0xF0) | v) : static_cast<uint8_t>((b & 0x0F) | (v << 4));
}
int get_nibble(const uint8_t* run, int e, int lane) {
  const uint8_t b = run[nibble_at(e / 4 % 8, e % 4, lane)];
  return e / 4 < 4 ? (b & 0xF) : (b >> 4);
}
void copy_scale(const uint8_t* from, uint8_t* to) { std::memcpy(to, from, 2); }

// Q8_0 units (two blocks): d of each at 32j + 2 lane; quant i of block j at
// 64 + 512j + 64 (i / 4) + 4 lane + i % 4, stored as q + 128.
void pack_q8_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + 32 * j + 2 * lane);
  for (int i = 0; i < 32; ++i) unit[64 + 512 * j + 64 * (i / 4) + 4 * lane + i % 4] = static_cast<uint8_t>(aos[2 + i] ^ 0x80);
}
void unpack_q8_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + 32 * j + 2 * lane, aos);
  for (int i = 0; i < 32; ++i) aos[2 + i] = static_cast<uint8_t>(unit[64 + 512 * j + 64 * (i / 4) + 4 * lane + i % 4] ^ 0x80);
}

// Q5_0 units (two blocks; AoS d, qh[4], qs[16]): d as Q8_0's; block j's half at 64 + 320j
// holds 8 fifth-bit masks (mask k, bit 4 lane + i: quant 4k + i), then 256 bytes of nibbles.
int q5_low4(const uint8_t* aos, int i) { return i < 16 ? (aos[6 + i] & 0xF) : (aos[6 + i - 16] >> 4); }
void pack_q5_0(const uint8_t* aos, uint8_t* unit, int j, int lane) {
  copy_scale(aos, unit + 32 * j + 2 * lane);
  uint8_t* half = unit + 64 + 320 * j;
  uint32_t qh;
  std::memcpy(&qh, aos + 2, 4);
  for (int i = 0; i < 32; ++i) {
    const int bit = 4 * lane + i % 4;
    if ((qh >> i) & 1u) half[8 * (i / 4) + bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
    put_nibble(half + 64, i, lane, q5_low4(aos, i));
  }
}
void unpack_q5_0(const uint8_t* unit, int j, int lane, uint8_t* aos) {
  copy_scale(unit + 32 * j + 2 * lane, aos);
  const uint8_t* half = unit + 64 + 320 * j;
  uint32_t qh = 0;
  std::memset(aos + 6, 0, 16);
  for (int i = 0; i < 32; ++i) {
    const int bit = 4 * lane + i % 4;
    qh |= static_cast<uint32_t>((half[8 * (i / 4) + bit / 8] >> (bit % 8)) & 1u) << i;
    const int low4 = get_nibble(half + 64, i, lane);
    aos[6 + i % 16] = static_cast<uint8_t>(aos[6 + i % 16] | (i < 16 ? low4 : low4 << 4));
  }
  std::memcpy(aos + 2, &qh, 4);
}

// Q4_K units (one super-block; AoS d, dmin, scales[12], qs[128]): d at 2 lane, dmin at
// 32 + 2 lane, scale byte k at 64 + 16k + lane, sub-block s's 32 quants at 256 + 256s as nibbles.
int q4_k_quant(const uint8_t* aos, int e) {
  const uint8_t b = aos[16 + 32 * (e / 64) + e % 32];
  return (e / 32) % 2 == 0 ? (b & 0xF) : (b >> 4);
}
void pack_q4_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos, unit + 2 * lane);
  copy_scale(aos + 2, unit + 32 + 2 * lane);
  for (int k = 0; k < 12; ++k) unit[64 + 16 * k + lane] = aos[4 + k];
  for (int e = 0; e < 256; ++e) put_nibble(unit + 256 + 256 * (e / 32), e % 32, lane, q4_k_quant(aos, e));
}
void unpack_q4_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + 2 * lane, aos);
  copy_scale(unit + 32 + 2 * lane, aos + 2);
  for (int k = 0; k < 12; ++k) aos[4 + k] = unit[64 + 16 * k + lane];
  std::memset(aos + 16, 0, 128);
  for (int e = 0; e < 256; ++e) {
    const int q = get_nibble(unit + 256 + 256 * (e / 32), e % 32, lane);
    uint8_t& b = aos[16 + 32 * (e / 64) + e % 32];
    b = static_cast<uint8_t>(b | ((e / 32) % 2 == 0 ? q : q << 4));
  }
}

// Q6_K units (one super-block; AoS ql[128], qh[64], scales[16], d): d at 2 lane, scale of
// 16-group g at 32 + 16g + lane, run s's low nibbles at 288 + 256s, its high two bits at
// 2336 + 128s + 64 (k / 4) + 4 lane + i % 4, bits 2 (k % 4) (k = i / 4, i = element in the run).
int q6_k_quant(const uint8_t* aos, int e) {
  const int h = e / 128, k = e % 128 / 32, l = e % 32;
  const int low4 = (aos[64 * h + l + 32 * (k & 1)] >> (4 * (k / 2))) & 0xF;
  return low4 | (((aos[128 + 32 * h + l] >> (2 * k)) & 3) << 4);
}
uint64_t q6_high_at(int e, int lane) {
  const int s = e / 32, i = e % 32, k = i / 4;
  return 2336 + 128 * static_cast<uint64_t>(s) + 64 * static_cast<uint64_t>(k / 4) + 4 * static_cast<uint64_t>(lane) +
         static_cast<uint64_t>(i % 4);
}
void pack_q6_k(const uint8_t* aos, uint8_t* unit, int, int lane) {
  copy_scale(aos + 208, unit + 2 * lane);
  for (int g = 0; g < 16; ++g) unit[32 + 16 * g + lane] = aos[192 + g];
  for (int e = 0; e < 256; ++e) {
    const int q = q6_k_quant(aos, e);
    put_nibble(unit + 288 + 256 * (e / 32), e % 32, lane, q & 0xF);
    unit[q6_high_at(e, lane)] |= static_cast<uint8_t>((q >> 4) << (2 * (e % 32 / 4 % 4)));
  }
}
void unpack_q6_k(const uint8_t* unit, int, int lane, uint8_t* aos) {
  copy_scale(unit + 2 * lane, aos + 208);
  for (int g = 0; g < 16; ++g) aos[192 + g] = unit[32 + 16 * g + lane];
  std::memset(aos, 0, 192);
  for (int e = 0; e < 256; ++e) {
    const int q = get_nibble(unit + 288 + 256 * (e / 32), e % 32, lane) |
                  (((unit[q6_high_at(e, lane)] >> (2 * (e % 32 / 4 % 4))) & 3) << 4);
    const int h = e / 128, k = e % 128 / 32, l = e % 32;
    aos[64 * h + l + 32 * (k & 1)] |= static_cast<uint8_t>((q & 0xF) << (4 * (k / 2)));
    aos[128 + 32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
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
