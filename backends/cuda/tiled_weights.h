#pragma once
// The decode GEMV's tiled weight forms (the gemv_layout=tiles switch): Q4_K and Q6_K matrices
// repacked at upload so that one lane's 16-byte load holds all 32 quants of one sub-block, and
// that sub-block's scale facts sit in one aligned header shared by the 8 lanes of a super-block.
// The values are the source blocks' exactly (unpack_tiled gives the blocks back byte for byte).
//
// Q4_K tiled (nb super-blocks, sub-block t = 8 * block + s, s = 0..7):
//   [0, 128 nb)        sub-block t's 16 bytes at 16 t: byte i holds quant i (low nibble) and
//                      quant 16 + i (high nibble) of the sub-block
//   [128 nb, 144 nb)   block b's header at 128 nb + 16 b: d (f16), dmin (f16), then a 96-bit
//                      little-endian field: scale s at bit 6 s, min s at bit 48 + 6 s (6 bits each)
//   value = d * scale[s] * q - dmin * min[s]
// Q6_K tiled:
//   [0, 128 nb)        the low four bits of sub-block t as Q4_K tiled's quants
//   [128 nb, 192 nb)   the high two bits at 128 nb + 8 t: quant 16 h + 4 k + j in byte j of
//                      32-bit word h, bits 2 k and 2 k + 1
//   [192 nb, 208 nb)   block b's 16 int8 scales (one per 16 elements), as in the source block
//   [208 nb, 210 nb)   block b's d (f16)
//   value = d * scale[e / 16] * (q - 32)
// Both keep the source's size, and the field arrays start where the SoA forms' do, so two
// tensors of one shape differ by one byte distance in every field (the SwiGLU up rows).
#include <cstdint>

#include "engine/quant/dtype.h"

namespace p64::cuda {

// Device dtype ids of the tiled forms: they exist only on the device, never in a file.
constexpr uint32_t kTiledQ4_K = 1012;
constexpr uint32_t kTiledQ6_K = 1014;

// The tiled id for a plain (AoS) dtype and row length, or 0 where there is none.
uint32_t tiled_dtype_for(DType aos, int64_t n);
// rows x n elements from AoS blocks to the tiled form and back; lossless.
void pack_tiled(DType aos, const void* blocks, void* dst, int64_t rows, int64_t n);
void unpack_tiled(DType aos, const void* src, void* blocks, int64_t rows, int64_t n);

}  // namespace p64::cuda
