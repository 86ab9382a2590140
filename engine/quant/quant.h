#pragma once
#include <cstdint>

#include "engine/quant/dtype.h"

namespace p64 {

// Block formats as GGUF defines them (ggml's block_q4_K etc.), bit-exact. All functions work
// on whole rows: n is a multiple of the type's block size.
//
// SoA forms (P64 dtypes >= 100) hold the same blocks of a whole tensor split into one array
// per field, each array in (row, block) order, byte arrays first so every array is aligned:
//   Q4_K_SOA: qs[nb][128] | scales[nb][12] | d[nb] (f16) | dmin[nb] (f16)
//   Q6_K_SOA: ql[nb][128] | qh[nb][64] | scales[nb][16] (int8) | d[nb] (f16)
//   Q8_0_SOA: qs[nb][32] (int8) | d[nb] (f16)
// where nb is the number of blocks of the whole tensor (rows * row_length / block size).
// The total size equals the AoS size. A row of an SoA tensor is not contiguous, so the
// row functions below take AoS types only; SoA tensors go through soa_pack/soa_unpack or
// through kernels that index the arrays directly.

// dst[n] = values of one AoS row. Throws p64::Error for a type it cannot dequantize.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);
// dst = one AoS row quantized with the reference quantizer for `type`.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

// Row-interleaved forms (P64 dtypes 200-299) hold the same blocks with the rows of each group
// side by side, so that one 512-bit vector holds the same four bytes of sixteen rows and a
// VNNI dot product advances sixteen rows at once (backends/cpu/dot_avx512_interleaved.h):
//   Q8_0_R16: rows in groups of 16 (rows % 16 == 0), blocks in pairs (n % 64 == 0). Group g
//   holds units of 1088 bytes, one per pair of blocks (2p, 2p + 1), in block order:
//     [0, 32)      d of block 2p for rows 16g .. 16g + 15 (f16)
//     [32, 64)     d of block 2p + 1, likewise
//     [64, 576)    quants of block 2p: 8 granules of 64 bytes; granule k holds quants
//                  4k .. 4k + 3 of each of the 16 rows in row order, each stored as q + 128 (u8)
//     [576, 1088)  quants of block 2p + 1, likewise
//   Q5_0_R16: the same groups and pairs; units of 704 bytes:
//     [0, 64)      d of blocks 2p and 2p + 1 for the 16 rows, as above
//     [64, 384)    block 2p: 8 fifth-bit masks of 64 bits (mask k, bit 4r + j: the fifth bit of
//                  quant 4k + j of row r), then 4 x 64 bytes of nibbles (byte 64 * (k % 4) + 4r + j
//                  holds the low four bits of quant 4k + j of row r: low half for k < 4, high
//                  half for k >= 4); the value is (quant | fifth bit << 4) - 16, as in Q5_0
//     [384, 704)   block 2p + 1, likewise
//   Q4_K_R16: rows in groups of 16, n % 256 == 0; one unit of 2304 bytes per super-block:
//     [0, 32) d and [32, 64) dmin of the 16 rows (f16); [64, 256) the 12 scale bytes of the
//     K-quant format, byte k of row r at 64 + 16k + r; then sub-block s (elements 32s ..
//     32s + 31) at 256 + 256s as Q5_0_R16's nibbles (quant 4k + j of row r at 64 (k % 4) + 4r + j,
//     low half for k < 4, high half for k >= 4); value = d * sc[s] * q - dmin * m[s]
//   Q6_K_R16: rows in groups of 16, n % 256 == 0; one unit of 3360 bytes per super-block:
//     [0, 32) d of the 16 rows; [32, 288) the int8 scale of 16-group g of row r at 32 + 16g + r;
//     [288, 2336) sub-block s's low four bits at 288 + 256s as Q4_K_R16's nibbles; [2336, 3360)
//     the high two bits: element 4k + j of sub-block s, row r, at 2336 + 128s + 64 (k / 4) + 4r + j,
//     bits 2 (k % 4) and 2 (k % 4) + 1; value = d * sc[g] * (q - 32)
// The total size equals the AoS size; units are 64-byte aligned (Q6_K_R16: every other one)
// when the tensor is.
void interleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n);
void deinterleave_rows(DType aos_type, const void* src, void* dst, int64_t rows, int64_t n);
// Row `row` of a row-interleaved tensor (rows of n elements) as AoS blocks in dst.
void interleaved_gather_row(DType packed, const void* tensor, int64_t row, int64_t n, void* dst);

// A whole tensor of `rows` rows of n elements from its AoS blocks to a packed form (SoA or
// row-interleaved) and back; lossless.
void pack_tensor(DType packed, const void* aos, void* dst, int64_t rows, int64_t n);
void unpack_tensor(DType packed, const void* src, void* aos, int64_t rows, int64_t n);

// AoS blocks of a whole tensor (nblocks blocks) to the SoA form and back; lossless.
void soa_pack(DType aos_type, const void* src, void* dst, int64_t nblocks);
void soa_unpack(DType aos_type, const void* src, void* dst, int64_t nblocks);

// Dequantizes element range [row * n, row * n + n) of a tensor of an AoS or row-interleaved
// dtype (an SoA dtype throws: use the overload below).
void dequantize_tensor_row(DType type, const void* tensor, int64_t row, int64_t n, float* dst);
// The same for a tensor of n_rows rows of n elements; this form also reads SoA tensors (their
// field arrays are sized by the whole tensor, so the row count is needed to find them).
void dequantize_tensor_row(DType type, const void* tensor, int64_t n_rows, int64_t row, int64_t n, float* dst);

// Half-precision conversions shared by every format.
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

}  // namespace p64
