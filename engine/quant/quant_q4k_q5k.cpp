// Q4_K and Q5_K: 256-element super-blocks of eight 32-element sub-blocks, each with a 6-bit
// scale and a 6-bit min under two fp16 super-scales. They differ only in the code width.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/quant/kquant_search.h"
#include "engine/quant/quant.h"
#include "engine/quant/quant_internal.h"

namespace p64::detail {
using namespace blocks;

namespace {

// Scales, mins and codes of one super-block with `nmax` the top code (15 or 31). The codes are
// chosen against the scales as stored (fp16 super-scale times the 6-bit factor), so rounding of
// the scales costs no more than it must.
void quantize_superblock(const float* x, int nmax, uint16_t& d_out, uint16_t& dmin_out, uint8_t packed[12],
                         uint8_t q[kQKK]) {
  float scale[8], min[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    search_scale_min(x + 32 * j, 32, nmax, scale[j], min[j]);
    max_scale = std::max(max_scale, scale[j]);
    max_min = std::max(max_min, min[j]);
  }
  d_out = fp32_to_fp16(max_scale / 63.0f);
  dmin_out = fp32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_fp32(d_out), dmin = fp16_to_fp32(dmin_out);
  uint8_t sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>(d > 0 ? std::clamp(nearest_int(scale[j] / d), 0, 63) : 0);
    mn[j] = static_cast<uint8_t>(dmin > 0 ? std::clamp(nearest_int(min[j] / dmin), 0, 63) : 0);
  }
  pack_scale_min_k4(sc, mn, packed);
  for (int j = 0; j < 8; ++j) {
    const float step = d * sc[j], zero = dmin * mn[j];
    for (int l = 0; l < 32; ++l) {
      const int v = step > 0 ? nearest_int((x[32 * j + l] + zero) / step) : 0;
      q[32 * j + l] = static_cast<uint8_t>(std::clamp(v, 0, nmax));
    }
  }
}

}  // namespace

void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
    const uint8_t* qs = x[i].qs;
    // Each 32 bytes of qs hold two sub-blocks: low nibbles the first, high nibbles the second.
    for (int c = 0; c < 4; ++c, qs += 32) {
      uint8_t sc, m;
      unpack_scale_min_k4(2 * c, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = dmin * m;
      unpack_scale_min_k4(2 * c + 1, x[i].scales, sc, m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(qs[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(qs[l] >> 4) - m2;
    }
  }
}

void dequantize_q5_k(const BlockQ5_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
    const uint8_t* qs = x[i].qs;
    // The fifth bit of element l of sub-block j is bit j of qh[l].
    for (int c = 0; c < 4; ++c, qs += 32) {
      uint8_t sc, m;
      unpack_scale_min_k4(2 * c, x[i].scales, sc, m);
      const float d1 = d * sc, m1 = dmin * m;
      unpack_scale_min_k4(2 * c + 1, x[i].scales, sc, m);
      const float d2 = d * sc, m2 = dmin * m;
      const uint8_t bit1 = static_cast<uint8_t>(1u << (2 * c)), bit2 = static_cast<uint8_t>(2u << (2 * c));
      for (int l = 0; l < 32; ++l)
        *y++ = d1 * static_cast<float>((qs[l] & 0xF) + ((x[i].qh[l] & bit1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l)
        *y++ = d2 * static_cast<float>((qs[l] >> 4) + ((x[i].qh[l] & bit2) ? 16 : 0)) - m2;
    }
  }
}

void quantize_q4_k(const float* x, BlockQ4_K* y, int64_t nb) {
  uint8_t q[kQKK];
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    quantize_superblock(x, 15, y[i].d, y[i].dmin, y[i].scales, q);
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) y[i].qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
  }
}

void quantize_q5_k(const float* x, BlockQ5_K* y, int64_t nb) {
  uint8_t q[kQKK];
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    quantize_superblock(x, 31, y[i].d, y[i].dmin, y[i].scales, q);
    std::memset(y[i].qh, 0, sizeof(y[i].qh));
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const int a = q[64 * c + l], b = q[64 * c + 32 + l];
        y[i].qs[32 * c + l] = static_cast<uint8_t>((a & 0xF) | ((b & 0xF) << 4));
        y[i].qh[l] = static_cast<uint8_t>(y[i].qh[l] | ((a >> 4) << (2 * c)) | ((b >> 4) << (2 * c + 1)));
      }
  }
}

}  // namespace p64::detail
