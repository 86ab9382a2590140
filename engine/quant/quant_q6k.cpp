// Q6_K: 256-element super-blocks of sixteen 16-element sub-blocks with signed 8-bit scales under
// one fp16 super-scale; 6-bit codes stored as 4 low bits (ql) + 2 high bits (qh), offset by 32.
#include <algorithm>
#include <cmath>

#include "engine/quant/kquant_search.h"
#include "engine/quant/quant.h"
#include "engine/quant/quant_internal.h"

namespace p64::detail {
using namespace blocks;

void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    // Each 128-element half: ql[l] holds elements l (low nibble) and l+64 (high), ql[l+32]
    // holds l+32 and l+96; qh[l] holds the top two bits of all four.
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is + 0] * static_cast<float>(q1);
        y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
    }
  }
}

void quantize_q6_k(const float* x, BlockQ6_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    float scale[16];
    float max_abs = 0.0f;
    for (int j = 0; j < 16; ++j) {
      scale[j] = search_scale_symmetric(x + 16 * j, 16, 32);
      max_abs = std::max(max_abs, std::fabs(scale[j]));
    }
    y[i].d = fp32_to_fp16(max_abs / 127.0f);
    const float d = fp16_to_fp32(y[i].d);
    uint8_t q[kQKK];
    for (int j = 0; j < 16; ++j) {
      y[i].scales[j] = static_cast<int8_t>(d > 0 ? std::clamp(nearest_int(scale[j] / d), -127, 127) : 0);
      const float step = d * y[i].scales[j];
      for (int l = 0; l < 16; ++l) {
        const int v = step != 0.0f ? nearest_int(x[16 * j + l] / step) : 0;
        q[16 * j + l] = static_cast<uint8_t>(std::clamp(v, -32, 31) + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      uint8_t* ql = y[i].ql + 64 * half;
      uint8_t* qh = y[i].qh + 32 * half;
      const uint8_t* qq = q + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const int q1 = qq[l], q2 = qq[l + 32], q3 = qq[l + 64], q4 = qq[l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

}  // namespace p64::detail
