// Dispatch of quant.h's row functions to the per-family block kernels.
#include "engine/quant/quant.h"

#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/quant/quant_internal.h"

namespace p64 {
namespace detail {
void soa_gather_blocks(DType aos_type, const void* tensor, int64_t total, int64_t first, int64_t count, void* dst);
}

namespace {

DTypeInfo checked_info(DType type, int64_t n, const char* what) {
  const auto info = dtype_info(type);
  if (!info) throw Error(std::string(what) + ": unknown dtype id " + std::to_string(static_cast<uint32_t>(type)));
  if (n < 0 || n % info->block_elems != 0)
    throw Error(std::string(what) + ": row of " + std::to_string(n) + " elements is not a whole number of " +
                std::string(info->name) + " blocks (" + std::to_string(info->block_elems) + " elements each)");
  return *info;
}

// A packed row gathered into its AoS blocks, then dequantized. The buffer is the call's own: a
// thread_local one crashed MinGW builds at worker-thread exit (docs/windows.md).
template <class Gather>
void dequantize_gathered(DType packed, int64_t n, float* dst, Gather gather) {
  const DTypeInfo info = *dtype_info(packed);
  std::vector<uint8_t> blocks(static_cast<size_t>(n / info.block_elems) * info.block_bytes);
  gather(blocks.data());
  dequantize_row(dtype_aos_of(packed), blocks.data(), dst, n);
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const DTypeInfo info = checked_info(type, n, "dequantize");
  const int64_t nb = n / info.block_elems;
  using namespace blocks;
  switch (type) {
    case DType::F32: {
      const auto* s = static_cast<const float*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
      return;
    }
    case DType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
      return;
    }
    case DType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
      return;
    }
    case DType::Q4_0: return detail::dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case DType::Q4_1: return detail::dequantize_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case DType::Q5_0: return detail::dequantize_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case DType::Q5_1: return detail::dequantize_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case DType::Q8_0: return detail::dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case DType::Q4_K: return detail::dequantize_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
    case DType::Q5_K: return detail::dequantize_q5_k(static_cast<const BlockQ5_K*>(src), dst, nb);
    case DType::Q6_K: return detail::dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
    default:
      throw Error("dequantize: " + std::string(dtype_name(type)) +
                  " rows are not contiguous (a packed form); use dequantize_tensor_row");
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  const DTypeInfo info = checked_info(type, n, "quantize");
  const int64_t nb = n / info.block_elems;
  using namespace blocks;
  switch (type) {
    case DType::F32: {
      auto* d = static_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = src[i];
      return;
    }
    case DType::F16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
      return;
    }
    case DType::Q4_0: return detail::quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), nb);
    case DType::Q4_1: return detail::quantize_q4_1(src, static_cast<BlockQ4_1*>(dst), nb);
    case DType::Q5_0: return detail::quantize_q5_0(src, static_cast<BlockQ5_0*>(dst), nb);
    case DType::Q5_1: return detail::quantize_q5_1(src, static_cast<BlockQ5_1*>(dst), nb);
    case DType::Q8_0: return detail::quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), nb);
    case DType::Q4_K: return detail::quantize_q4_k(src, static_cast<BlockQ4_K*>(dst), nb);
    case DType::Q5_K: return detail::quantize_q5_k(src, static_cast<BlockQ5_K*>(dst), nb);
    case DType::Q6_K: return detail::quantize_q6_k(src, static_cast<BlockQ6_K*>(dst), nb);
    default:
      throw Error("quantize: " + std::string(dtype_name(type)) +
                  " is a packed form; quantize to its AoS type and pack the tensor");
  }
}

void dequantize_tensor_row(DType type, const void* tensor, int64_t row, int64_t n, float* dst) {
  checked_info(type, n, "dequantize_tensor_row");
  if (row < 0) throw Error("dequantize_tensor_row: negative row " + std::to_string(row));
  if (dtype_is_interleaved(type))
    return dequantize_gathered(type, n, dst, [&](uint8_t* blocks) { interleaved_gather_row(type, tensor, row, n, blocks); });
  if (!dtype_is_soa(type)) {
    const auto* base = static_cast<const uint8_t*>(tensor) + static_cast<uint64_t>(row) * dtype_row_bytes(type, static_cast<uint64_t>(n));
    dequantize_row(type, base, dst, n);
    return;
  }
  // An SoA tensor's field arrays are sized by the whole tensor's block count, which this
  // signature does not carry.
  throw Error("dequantize_tensor_row: " + std::string(dtype_name(type)) +
              " is an SoA form; call the overload that takes the tensor's row count");
}

void dequantize_tensor_row(DType type, const void* tensor, int64_t n_rows, int64_t row, int64_t n, float* dst) {
  const DTypeInfo info = checked_info(type, n, "dequantize_tensor_row");
  if (row < 0 || row >= n_rows)
    throw Error("dequantize_tensor_row: row " + std::to_string(row) + " outside a tensor of " + std::to_string(n_rows) + " rows");
  if (!dtype_is_soa(type)) return dequantize_tensor_row(type, tensor, row, n, dst);
  const int64_t per_row = n / info.block_elems;
  dequantize_gathered(type, n, dst, [&](uint8_t* blocks) {
    detail::soa_gather_blocks(dtype_aos_of(type), tensor, n_rows * per_row, row * per_row, per_row, blocks);
  });
}

}  // namespace p64
