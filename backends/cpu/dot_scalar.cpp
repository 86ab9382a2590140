// The reference kernels: plain loops over the block fields, integer dot products per block
// exactly as the SIMD sets compute them, so tests can compare the two closely.
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/dot.h"
#include "engine/common/error.h"
#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"

namespace p64::dot {
namespace {

uint16_t u16_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
float f16_at(const uint8_t* p) { return fp16_to_fp32(u16_at(p)); }

// The 5-bit quant of element j of a Q5_0 block (0..31; value = q - 16).
int q5_0_quant(const uint8_t* qs, uint32_t qh, int j) {
  const int lo = j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
  return lo | static_cast<int>(((qh >> j) & 1u) << 4);
}

// The 6-bit quant of element e of a Q6_K block (0..63; value = q - 32).
int q6_k_quant(const uint8_t* ql, const uint8_t* qh, int e) {
  const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
  const uint8_t qlb = ql[64 * h + l + (k & 1) * 32];
  const int nib = k < 2 ? (qlb & 0xF) : (qlb >> 4);
  const int hb = (qh[32 * h + l] >> (2 * k)) & 3;
  return nib | (hb << 4);
}

// The 4-bit quant of element e of a Q4_K block (sub-block e / 32).
int q4_k_quant(const uint8_t* qs, int e) {
  const int j = e / 32, l = e % 32;
  const uint8_t b = qs[32 * (j / 2) + l];
  return (j % 2 == 0) ? (b & 0xF) : (b >> 4);
}

float row_dot_int8(const WeightMatrix& w, const RowFields& F, const ActBatch& x, int t) {
  const int64_t n = x.n;
  const int8_t* q = x.q8 + t * n;
  const float* d8 = x.d8 + t * (n / 32);
  const float* xs = x.xs16 + t * (n / 16);
  double acc = 0;  // the order of float sums is the SIMD sets' business; the reference sums in double
  switch (w.dtype) {
    case DType::Q8_0:
    case DType::Q8_0_SOA:
      for (int64_t b = 0; b < n / 32; ++b) {
        const int8_t* wq = reinterpret_cast<const int8_t*>(F.at(0, b));
        int32_t s = 0;
        for (int i = 0; i < 32; ++i) s += wq[i] * q[32 * b + i];
        acc += static_cast<double>(f16_at(F.at(1, b)) * d8[b]) * s;
      }
      break;
    case DType::Q4_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* qs = F.at(0, b);
        int32_t s = 0;
        for (int i = 0; i < 32; ++i) s += (i < 16 ? (qs[i] & 0xF) : (qs[i - 16] >> 4)) * q[32 * b + i];
        const float dw = f16_at(F.at(1, b));
        acc += static_cast<double>(dw * d8[b]) * s - 8.0 * dw * (xs[2 * b] + xs[2 * b + 1]);
      }
      break;
    case DType::Q5_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* qs = F.at(0, b);
        uint32_t qh;
        std::memcpy(&qh, F.at(1, b), 4);
        int32_t s = 0;
        for (int i = 0; i < 32; ++i) s += q5_0_quant(qs, qh, i) * q[32 * b + i];
        const float dw = f16_at(F.at(2, b));
        acc += static_cast<double>(dw * d8[b]) * s - 16.0 * dw * (xs[2 * b] + xs[2 * b + 1]);
      }
      break;
    case DType::Q4_K:
    case DType::Q4_K_SOA:
      for (int64_t sb = 0; sb < n / 256; ++sb) {
        const uint8_t* qs = F.at(0, sb);
        const uint8_t* sc = F.at(1, sb);
        const float d = f16_at(F.at(2, sb)), dmin = f16_at(F.at(3, sb));
        for (int j = 0; j < 8; ++j) {
          uint8_t scale, mn;
          blocks::unpack_scale_min_k4(j, sc, scale, mn);
          const int64_t b = sb * 8 + j;  // 32-block index in the row
          int32_t s = 0;
          for (int l = 0; l < 32; ++l) s += q4_k_quant(qs, 32 * j + l) * q[32 * b + l];
          acc += static_cast<double>(d * scale * d8[b]) * s - static_cast<double>(dmin * mn) * (xs[2 * b] + xs[2 * b + 1]);
        }
      }
      break;
    case DType::Q6_K:
    case DType::Q6_K_SOA:
      for (int64_t sb = 0; sb < n / 256; ++sb) {
        const uint8_t* ql = F.at(0, sb);
        const uint8_t* qh = F.at(1, sb);
        const int8_t* sc = reinterpret_cast<const int8_t*>(F.at(2, sb));
        const float d = f16_at(F.at(3, sb));
        for (int g = 0; g < 16; ++g) {
          const int64_t g_row = sb * 16 + g;  // 16-group index in the row
          int32_t s = 0;
          for (int l = 0; l < 16; ++l) s += q6_k_quant(ql, qh, 16 * g + l) * q[16 * g_row + l];
          acc += static_cast<double>(d * sc[g] * d8[g_row / 2]) * s - 32.0 * d * sc[g] * xs[g_row];
        }
      }
      break;
    default:
      throw Error("CPU kernels: no int8 dot product for dtype " + std::string(dtype_name(w.dtype)));
  }
  return static_cast<float>(acc);
}

}  // namespace

void quantize_acts_scalar(const float* x, int64_t n, int8_t* q8, float* d8, float* xs16) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int32_t sum[2] = {0, 0};
    for (int i = 0; i < 32; ++i) {
      const int v = static_cast<int>(std::nearbyint(xb[i] * id));
      q8[32 * b + i] = static_cast<int8_t>(v);
      sum[i / 16] += v;
    }
    d8[b] = d;
    xs16[2 * b] = d * static_cast<float>(sum[0]);
    xs16[2 * b + 1] = d * static_cast<float>(sum[1]);
  }
}

void dequantize_row(const WeightMatrix& w, int64_t r, float* dst) {
  if (dtype_is_interleaved(w.dtype)) return dequantize_tensor_row(w.dtype, w.data, r, w.n, dst);
  const RowFields F = row_fields(w, r);
  const int64_t n = w.n;
  switch (w.dtype) {
    case DType::F32: std::memcpy(dst, F.f[0], static_cast<size_t>(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_at(F.f[0] + 2 * i);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(u16_at(F.f[0] + 2 * i));
      return;
    case DType::Q8_0:
    case DType::Q8_0_SOA:
      for (int64_t b = 0; b < n / 32; ++b) {
        const float d = f16_at(F.at(1, b));
        const int8_t* q = reinterpret_cast<const int8_t*>(F.at(0, b));
        for (int i = 0; i < 32; ++i) dst[32 * b + i] = d * q[i];
      }
      return;
    case DType::Q4_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        const float d = f16_at(F.at(1, b));
        const uint8_t* qs = F.at(0, b);
        for (int i = 0; i < 32; ++i) dst[32 * b + i] = d * ((i < 16 ? (qs[i] & 0xF) : (qs[i - 16] >> 4)) - 8);
      }
      return;
    case DType::Q5_0:
      for (int64_t b = 0; b < n / 32; ++b) {
        const float d = f16_at(F.at(2, b));
        uint32_t qh;
        std::memcpy(&qh, F.at(1, b), 4);
        for (int i = 0; i < 32; ++i) dst[32 * b + i] = d * (q5_0_quant(F.at(0, b), qh, i) - 16);
      }
      return;
    case DType::Q4_K:
    case DType::Q4_K_SOA:
      for (int64_t sb = 0; sb < n / 256; ++sb) {
        const float d = f16_at(F.at(2, sb)), dmin = f16_at(F.at(3, sb));
        for (int j = 0; j < 8; ++j) {
          uint8_t scale, mn;
          blocks::unpack_scale_min_k4(j, F.at(1, sb), scale, mn);
          for (int l = 0; l < 32; ++l)
            dst[256 * sb + 32 * j + l] = d * scale * q4_k_quant(F.at(0, sb), 32 * j + l) - dmin * mn;
        }
      }
      return;
    case DType::Q6_K:
    case DType::Q6_K_SOA:
      for (int64_t sb = 0; sb < n / 256; ++sb) {
        const float d = f16_at(F.at(3, sb));
        const int8_t* sc = reinterpret_cast<const int8_t*>(F.at(2, sb));
        for (int e = 0; e < 256; ++e)
          dst[256 * sb + e] = d * sc[e / 16] * (q6_k_quant(F.at(0, sb), F.at(1, sb), e) - 32);
      }
      return;
    default:
      throw Error("CPU kernels: cannot dequantize dtype " + std::string(dtype_name(w.dtype)));
  }
}

void matmul_scalar(const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
                   bool int8, bool accumulate) {
  std::vector<float> row(static_cast<size_t>(w.n));
  for (int64_t r = r0; r < r1; ++r) {
    const RowFields F = row_fields(w, r);
    if (!int8) dequantize_row(w, r, row.data());
    for (int t = 0; t < x.ntok; ++t) {
      float v;
      if (int8) {
        v = row_dot_int8(w, F, x, t);
      } else {
        const float* a = x.f32 + t * x.ld_f32;
        double acc = 0;
        for (int64_t i = 0; i < w.n; ++i) acc += static_cast<double>(row[static_cast<size_t>(i)]) * a[i];
        v = static_cast<float>(acc);
      }
      float& o = out[t * ldo + r];
      o = accumulate ? o + v : v;
    }
  }
}

}  // namespace p64::dot
