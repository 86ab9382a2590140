#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace p64 {

// Tensor element types. Values below 100 are GGML's own type ids (so GGUF files map 1:1).
// Above them are P64's packed forms of the same blocks (docs/p64-container.md defines them):
// 100-199 structure-of-arrays, so that a GPU warp/subgroup reads each field coalesced;
// 200-299 rows interleaved in groups, so that one CPU vector holds the same bytes of many rows.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
  Q8_0_SOA = 108,
  Q4_K_SOA = 112,
  Q6_K_SOA = 114,
  Q5_0_R16 = 206,
  Q8_0_R16 = 208,
  Q4_K_R16 = 212,
  Q6_K_R16 = 214,
};

struct DTypeInfo {
  std::string_view name;
  uint32_t block_elems;  // elements per block (1 for plain float types)
  uint32_t block_bytes;  // bytes per block
};

// Facts for a known dtype; nullopt for an unknown id (callers turn that into a FormatError).
std::optional<DTypeInfo> dtype_info(DType t);
std::optional<DType> dtype_from_name(std::string_view name);  // "Q4_K", "q4_k_soa", "f16", ...
std::string_view dtype_name(DType t);                          // "?" for unknown ids

// Bytes of a row of n elements; n must be a multiple of the block size (checked by callers).
uint64_t dtype_row_bytes(DType t, uint64_t n);
bool dtype_is_packed(DType t);       // an SoA or row-interleaved form: rows are not contiguous
bool dtype_is_soa(DType t);
bool dtype_is_interleaved(DType t);  // rows interleaved in groups (Q8_0_R16, Q5_0_R16, Q4_K_R16, Q6_K_R16)
DType dtype_soa_of(DType aos);       // Q4_K -> Q4_K_SOA; a type without an SoA form maps to itself
DType dtype_interleaved_of(DType aos);  // Q8_0 -> Q8_0_R16 (Q5_0, Q4_K, Q6_K alike); others map to themselves
DType dtype_aos_of(DType packed);    // inverse of both
// dtype_interleaved_of(t) when a matrix of `rows` rows of n elements can take it, else t.
DType dtype_interleaved_for(DType t, int64_t n, int64_t rows);

// Rows per group of a row-interleaved dtype (1 for every other dtype).
int64_t dtype_row_group(DType t);
// Why a tensor of `rows` rows of n elements cannot be stored as `t` ("" when it can): rows
// must be whole blocks, and a row-interleaved form also needs whole row groups and whole units
// (pairs of 32-element blocks; one 256-element super-block).
std::string dtype_shape_problem(DType t, int64_t n, int64_t rows);

}  // namespace p64
