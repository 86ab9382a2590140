#include "engine/format/synth_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "engine/common/error.h"
#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"

namespace p64::synth_detail {
using namespace blocks;

namespace {

// Approximately standard normal: Irwin-Hall sum of four uniforms (16 bits each of one draw),
// centred and scaled to unit variance.
float bell(Rng& rng) {
  const uint64_t r = rng.next();
  const float s = static_cast<float>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
  return (s * (1.0f / 65536.0f) - 2.0f) * 1.7320508f;
}

// Per-block scale jitter in [0.8, 1.2): real blocks do not all share one scale.
float jitter(Rng& rng) { return 0.8f + 0.4f * rng.uniform(); }

void random_bytes(uint8_t* dst, size_t n, Rng& rng) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t r = rng.next();
    std::memcpy(dst + i, &r, 8);
  }
  if (i < n) {
    const uint64_t r = rng.next();
    std::memcpy(dst + i, &r, n - i);
  }
}

// Sub-block scales drawn uniformly from [32, 63]: RMS scale sqrt(47.5^2 + 85.25) = 48.4.
constexpr float kScaleRms = 48.38f;
int draw_scale(Rng& rng) { return 32 + static_cast<int>(rng.next() & 31); }

// Standard deviations of the codes as decoded: uniform 4-bit (0..15) 4.61, uniform 6-bit
// minus 32: 18.47, uniform 5-bit minus 16: 9.23, the int8 average of two uniform bytes 52.2.
constexpr float kStdQ4 = 4.610f, kStdQ6 = 18.47f, kStdQ5 = 9.233f, kStdQ8 = 52.25f;

void fill_q4_k(BlockQ4_K* b, int64_t nb, Rng& rng, float std) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = std / (kStdQ4 * kScaleRms) * jitter(rng);
    const uint16_t dh = fp32_to_fp16(d);
    // dmin = 8 d lets each min cancel the codes' mean 7.5 * scale within one min step.
    const uint16_t dminh = fp32_to_fp16(8.0f * fp16_to_fp32(dh));
    const float ratio = fp16_to_fp32(dh) / fp16_to_fp32(dminh);
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = static_cast<uint8_t>(draw_scale(rng));
      mn[j] = static_cast<uint8_t>(std::clamp(static_cast<int>(std::lround(7.5f * sc[j] * ratio)), 0, 63));
    }
    b[i].d = dh;
    b[i].dmin = dminh;
    pack_scale_min_k4(sc, mn, b[i].scales);
    random_bytes(b[i].qs, sizeof b[i].qs, rng);
  }
}

void fill_q6_k(BlockQ6_K* b, int64_t nb, Rng& rng, float std) {
  for (int64_t i = 0; i < nb; ++i) {
    random_bytes(b[i].ql, sizeof b[i].ql, rng);
    random_bytes(b[i].qh, sizeof b[i].qh, rng);
    for (int j = 0; j < 16; ++j) b[i].scales[j] = static_cast<int8_t>(draw_scale(rng));
    b[i].d = fp32_to_fp16(std / (kStdQ6 * kScaleRms) * jitter(rng));
  }
}

void fill_q5_0(BlockQ5_0* b, int64_t nb, Rng& rng, float std) {
  for (int64_t i = 0; i < nb; ++i) {
    b[i].d = fp32_to_fp16(std / kStdQ5 * jitter(rng));
    random_bytes(b[i].qh, sizeof b[i].qh, rng);
    random_bytes(b[i].qs, sizeof b[i].qs, rng);
  }
}

void fill_q8_0(BlockQ8_0* b, int64_t nb, Rng& rng, float std) {
  for (int64_t i = 0; i < nb; ++i) {
    b[i].d = fp32_to_fp16(std / kStdQ8 * jitter(rng));
    uint8_t r[64];
    random_bytes(r, sizeof r, rng);
    for (int j = 0; j < 32; ++j) {
      const int v = (static_cast<int8_t>(r[2 * j]) + static_cast<int8_t>(r[2 * j + 1])) / 2;
      b[i].qs[j] = static_cast<int8_t>(std::max(v, -127));
    }
  }
}

}  // namespace

uint64_t row_seed(uint64_t seed, uint64_t tensor_index, int64_t row) {
  Rng r(seed ^ (tensor_index * 0xd1b54a32d192ed03ull) ^ (static_cast<uint64_t>(row) * 0x8cb92ba72f3d8dd7ull));
  r.next();
  return r.next();
}

void fill_random_row(DType type, uint8_t* dst, int64_t n, Rng& rng, float std) {
  switch (type) {
    case DType::F32: {
      auto* f = reinterpret_cast<float*>(dst);
      for (int64_t i = 0; i < n; ++i) f[i] = std * bell(rng);
      return;
    }
    case DType::F16: {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(std * bell(rng));
      return;
    }
    case DType::Q8_0: return fill_q8_0(reinterpret_cast<BlockQ8_0*>(dst), n / kQK, rng, std);
    case DType::Q5_0: return fill_q5_0(reinterpret_cast<BlockQ5_0*>(dst), n / kQK, rng, std);
    case DType::Q4_K: return fill_q4_k(reinterpret_cast<BlockQ4_K*>(dst), n / kQKK, rng, std);
    case DType::Q6_K: return fill_q6_k(reinterpret_cast<BlockQ6_K*>(dst), n / kQKK, rng, std);
    default: throw Error("synth: no random-block generator for " + std::string(dtype_name(type)));
  }
}

}  // namespace p64::synth_detail
