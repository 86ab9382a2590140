#pragma once
// Per-family block kernels behind quant.h's dispatchers (quant.cpp). Each takes whole blocks.
#include <cstdint>

#include "engine/quant/blocks.h"

namespace p64::detail {

void dequantize_q4_0(const blocks::BlockQ4_0* x, float* y, int64_t nblocks);
void dequantize_q4_1(const blocks::BlockQ4_1* x, float* y, int64_t nblocks);
void dequantize_q5_0(const blocks::BlockQ5_0* x, float* y, int64_t nblocks);
void dequantize_q5_1(const blocks::BlockQ5_1* x, float* y, int64_t nblocks);
void dequantize_q8_0(const blocks::BlockQ8_0* x, float* y, int64_t nblocks);
void dequantize_q4_k(const blocks::BlockQ4_K* x, float* y, int64_t nblocks);
void dequantize_q5_k(const blocks::BlockQ5_K* x, float* y, int64_t nblocks);
void dequantize_q6_k(const blocks::BlockQ6_K* x, float* y, int64_t nblocks);

void quantize_q4_0(const float* x, blocks::BlockQ4_0* y, int64_t nblocks);
void quantize_q4_1(const float* x, blocks::BlockQ4_1* y, int64_t nblocks);
void quantize_q5_0(const float* x, blocks::BlockQ5_0* y, int64_t nblocks);
void quantize_q5_1(const float* x, blocks::BlockQ5_1* y, int64_t nblocks);
void quantize_q8_0(const float* x, blocks::BlockQ8_0* y, int64_t nblocks);
void quantize_q4_k(const float* x, blocks::BlockQ4_K* y, int64_t nblocks);
void quantize_q5_k(const float* x, blocks::BlockQ5_K* y, int64_t nblocks);
void quantize_q6_k(const float* x, blocks::BlockQ6_K* y, int64_t nblocks);

}  // namespace p64::detail
