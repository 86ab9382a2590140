#include "engine/quant/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "engine/quant/interleaved_layout.h"

namespace p64 {
namespace {

struct Entry {
  DType type;
  DTypeInfo info;
};

constexpr std::array<Entry, 18> kTypes{{
    {DType::F32, {"F32", 1, 4}},
    {DType::F16, {"F16", 1, 2}},
    {DType::BF16, {"BF16", 1, 2}},
    {DType::Q4_0, {"Q4_0", 32, 18}},
    {DType::Q4_1, {"Q4_1", 32, 20}},
    {DType::Q5_0, {"Q5_0", 32, 22}},
    {DType::Q5_1, {"Q5_1", 32, 24}},
    {DType::Q8_0, {"Q8_0", 32, 34}},
    {DType::Q4_K, {"Q4_K", 256, 144}},
    {DType::Q5_K, {"Q5_K", 256, 176}},
    {DType::Q6_K, {"Q6_K", 256, 210}},
    {DType::Q8_0_SOA, {"Q8_0_SOA", 32, 34}},
    {DType::Q4_K_SOA, {"Q4_K_SOA", 256, 144}},
    {DType::Q6_K_SOA, {"Q6_K_SOA", 256, 210}},
    {DType::Q5_0_R16, {"Q5_0_R16", 32, 22}},
    {DType::Q8_0_R16, {"Q8_0_R16", 32, 34}},
    {DType::Q4_K_R16, {"Q4_K_R16", 256, 144}},
    {DType::Q6_K_R16, {"Q6_K_R16", 256, 210}},
}};

}  // namespace

std::optional<DTypeInfo> dtype_info(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.info;
  return std::nullopt;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const auto& e : kTypes)
    if (e.info.name == upper) return e.type;
  return std::nullopt;
}

std::string_view dtype_name(DType t) {
  auto info = dtype_info(t);
  return info ? info->name : std::string_view("?");
}

uint64_t dtype_row_bytes(DType t, uint64_t n) {
  auto info = dtype_info(t);
  if (!info) return 0;
  return n / info->block_elems * info->block_bytes;
}

bool dtype_is_packed(DType t) { return static_cast<uint32_t>(t) >= 100; }
bool dtype_is_soa(DType t) { return static_cast<uint32_t>(t) >= 100 && static_cast<uint32_t>(t) < 200; }
bool dtype_is_interleaved(DType t) { return static_cast<uint32_t>(t) >= 200 && static_cast<uint32_t>(t) < 300; }

DType dtype_soa_of(DType aos) {
  switch (aos) {
    case DType::Q4_K: return DType::Q4_K_SOA;
    case DType::Q6_K: return DType::Q6_K_SOA;
    case DType::Q8_0: return DType::Q8_0_SOA;
    default: return aos;
  }
}

DType dtype_interleaved_of(DType aos) {
  switch (aos) {
    case DType::Q8_0: return DType::Q8_0_R16;
    case DType::Q5_0: return DType::Q5_0_R16;
    case DType::Q4_K: return DType::Q4_K_R16;
    case DType::Q6_K: return DType::Q6_K_R16;
    default: return aos;
  }
}

DType dtype_aos_of(DType packed) {
  switch (packed) {
    case DType::Q4_K_SOA: case DType::Q4_K_R16: return DType::Q4_K;
    case DType::Q6_K_SOA: case DType::Q6_K_R16: return DType::Q6_K;
    case DType::Q8_0_SOA: case DType::Q8_0_R16: return DType::Q8_0;
    case DType::Q5_0_R16: return DType::Q5_0;
    default: return packed;
  }
}

DType dtype_interleaved_for(DType t, int64_t n, int64_t rows) {
  const DType rows_form = dtype_interleaved_of(t);
  return dtype_shape_problem(rows_form, n, rows).empty() ? rows_form : t;
}

int64_t dtype_row_group(DType t) { return dtype_is_interleaved(t) ? r16::kGroupRows : 1; }

std::string dtype_shape_problem(DType t, int64_t n, int64_t rows) {
  const auto info = dtype_info(t);
  if (!info) return "unknown dtype " + std::to_string(static_cast<uint32_t>(t));
  const std::string name(info->name);
  if (n % info->block_elems != 0)
    return "row length " + std::to_string(n) + " is not a multiple of the " + name + " block size (" +
           std::to_string(info->block_elems) + ")";
  const int64_t group = dtype_row_group(t);
  const int64_t unit = std::max<int64_t>(64, info->block_elems);  // a pair of 32-blocks, or a super-block
  if (group > 1 && (rows % group != 0 || n % unit != 0))
    return name + " needs a multiple of " + std::to_string(group) + " rows and of " + std::to_string(unit) +
           " elements per row (got " + std::to_string(rows) + " rows of " + std::to_string(n) + ")";
  return "";
}

}  // namespace p64
