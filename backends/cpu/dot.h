#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/common/cpu_isa.h"
#include "engine/quant/dtype.h"

// Row-times-activation kernels of the CPU backend: out[t][r] = dot(weight row r, activation t)
// for every weight dtype, AoS and SoA, in three instruction sets chosen at run time. The
// scalar set is the reference the SIMD sets are tested against (the sets: engine/common/cpu_isa.h).
namespace p64::dot {

// Elements per activation quantization block: activations are quantized once per matmul to
// int8 with one float scale per 32 elements, as fast CPU engines do (llama.cpp's Q8_0/Q8_K).
constexpr int kActBlock = 32;

// A batch of activation rows as the kernels read them. The float rows are always present;
// the int8 form is present when the matmul runs with int8 activations.
struct ActBatch {
  int64_t n = 0;             // row length (a multiple of 32 when q8 is set)
  int32_t ntok = 0;          // rows in the batch
  const float* f32 = nullptr;  // [ntok][ld_f32]
  int64_t ld_f32 = 0;
  const int8_t* q8 = nullptr;   // [ntok][n]
  const float* d8 = nullptr;    // [ntok][n / 32] scale of each 32-block
  const float* xs16 = nullptr;  // [ntok][n / 16] d8 * (sum of the 16 int8 values of the group)
};

// Quantizes one float row of n elements (multiple of 32) to the int8 form of ActBatch.
void quantize_acts(Isa isa, const float* x, int64_t n, int8_t* q8, float* d8, float* xs16);

// A weight matrix in place: `rows` rows of `n` elements of `dtype` (SoA: the whole tensor's
// arrays, row r's blocks found by index).
struct WeightMatrix {
  DType dtype = DType::F32;
  const uint8_t* data = nullptr;
  int64_t n = 0;
  int64_t rows = 0;
};

// True when the dtype has an int8-activation kernel (Q8_0, Q4_0, Q5_0, Q4_K, Q6_K, their SoA
// forms and the row-interleaved Q8_0_R16 / Q5_0_R16).
bool has_int8_kernel(DType t);
// True when matmul() handles the dtype at all (F32, F16, BF16 and every type above).
bool supported(DType t);

// out[t * ldo + r] (+)= dot(row r, activation t) for r in [r0, r1), t in [0, x.ntok).
// int8 = use x.q8 (the dtype must have an int8 kernel); otherwise x.f32 against the weights
// dequantized on the fly. accumulate = add to out instead of storing (a fused residual).
void matmul(Isa isa, const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
            bool int8, bool accumulate);

// Row r of any supported dtype as floats (embedding lookup, tests).
void dequantize_row(const WeightMatrix& w, int64_t r, float* dst);

// The fields of one row's blocks: block b of field i starts at f[i] + b * stride[i]. AoS and
// SoA tensors differ only in these pointers and strides, so one kernel serves both.
//   Q8_0: qs, d        Q4_0: qs, d        Q5_0: qs, qh, d
//   Q4_K: qs, scales, d, dmin             Q6_K: ql, qh, scales, d
struct RowFields {
  const uint8_t* f[4] = {nullptr, nullptr, nullptr, nullptr};
  size_t stride[4] = {0, 0, 0, 0};
  const uint8_t* at(int i, int64_t b) const { return f[i] + static_cast<size_t>(b) * stride[i]; }
};
RowFields row_fields(const WeightMatrix& w, int64_t r);

// Per-ISA entry points (dot_scalar.cpp, dot_avx2.cpp, dot_avx512.cpp); use matmul() instead.
void matmul_scalar(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                   bool int8, bool accumulate);
void matmul_avx2(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                 bool int8, bool accumulate);
void matmul_avx512(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                   bool int8, bool accumulate);
void quantize_acts_scalar(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16);
void quantize_acts_avx2(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16);
void quantize_acts_avx512(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16);

}  // namespace p64::dot
