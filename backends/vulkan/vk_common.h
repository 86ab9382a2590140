#pragma once
// Small helpers the parts of the Vulkan backend share: sizes rounded up, and the shader-name
// suffix of a weight dtype.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "engine/quant/dtype.h"

namespace p64::vulkan {

inline uint32_t div_up(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
inline uint64_t align_up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
inline uint32_t float_bits(float f) {  // a float specialization constant's value
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
// Elements of one unit a GEMV thread reads: 4 floats, or one 32-element block.
inline uint32_t unit_elems(DType t) { return is_float(t) ? 4 : 32; }

// Shader-name suffix of a weight dtype ("q4_k" in mv_q4_k); nullopt when no shader reads it.
inline std::optional<std::string> dtype_suffix(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q8_0_SOA: return "q8_0_soa";
    case DType::Q5_0: return "q5_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q4_K_SOA: return "q4_k_soa";
    case DType::Q6_K: return "q6_k";
    case DType::Q6_K_SOA: return "q6_k_soa";
    default: return std::nullopt;
  }
}

}  // namespace p64::vulkan
