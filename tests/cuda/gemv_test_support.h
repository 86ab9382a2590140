#pragma once
// Host references for the GEMV tests: random matrices in any weight format with their
// dequantized values, activations quantized on the device as the decode step does, and the
// relative RMS error the tests bound.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/kernels.h"
#include "cuda/cuda_test_support.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64::test {

struct HostMatrix {
  DType dtype;
  int64_t rows, n;
  std::vector<uint8_t> bytes;  // in `dtype`'s layout (SoA when dtype is an SoA id)
  std::vector<float> deq;      // what the reference multiplies by
  int64_t nb;
};

inline HostMatrix make_matrix(DType dtype, int64_t rows, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  HostMatrix m{dtype, rows, n, {}, std::vector<float>(size_t(rows * n)), 0};
  const DType aos = dtype_is_soa(dtype) ? dtype_aos_of(dtype) : dtype;
  const auto info = *dtype_info(aos);
  const uint64_t row_bytes = dtype_row_bytes(aos, uint64_t(n));
  std::vector<uint8_t> aos_bytes(static_cast<size_t>(row_bytes * rows));
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng) * 0.1f;
    uint8_t* dst = aos_bytes.data() + r * row_bytes;
    if (aos == DType::F32) std::memcpy(dst, row.data(), size_t(n) * 4);
    else if (aos == DType::F16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_fp16(row[size_t(i)]);
    else if (aos == DType::BF16)
      for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = fp32_to_bf16(row[size_t(i)]);
    else quantize_row(aos, row.data(), dst, n);
    dequantize_row(aos, dst, m.deq.data() + r * n, n);
  }
  m.nb = rows * n / info.block_elems;
  if (dtype_is_soa(dtype)) {
    m.bytes.resize(aos_bytes.size());
    soa_pack(aos, aos_bytes.data(), m.bytes.data(), m.nb);
  } else {
    m.bytes = std::move(aos_bytes);
  }
  return m;
}

// RMS(err) / RMS(ref) over all outputs.
inline double rel_rms(const std::vector<float>& got, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = double(got[i]) - ref[i];
    if (!std::isfinite(got[i])) return INFINITY;
    e += d * d;
    r += ref[i] * ref[i];
  }
  return std::sqrt(e / std::max(r, 1e-30));
}

struct ActOnDevice {
  DeviceVec<float> xf, xd, xs, x_in;
  DeviceVec<int16_t> xq;  // int8 or int16 values, as `bits` says
  ActOnDevice(const std::vector<float>& x, int bits)
      : xf(x.size()), xd(x.size() / 16 + 2), xs(x.size() / 16 + 2), x_in(x), xq(x.size() + 16) {
    // quantize exactly as the decode step does (norm.cu with no weight: no scaling)
    cuda::launch_rmsnorm_quant(x_in.get(), nullptr, 0.f, int64_t(x.size()),
                               cuda::ActBuffers{xf.get(), xq.get(), xd.get(), xs.get(), bits}, nullptr);
  }
};

}  // namespace p64::test
