#include "backends/cpu/dot.h"

#include <string>
#include <vector>

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64::dot {

bool has_int8_kernel(DType t) {
  switch (t) {
    case DType::Q8_0: case DType::Q8_0_SOA: case DType::Q4_0: case DType::Q5_0:
    case DType::Q4_K: case DType::Q4_K_SOA: case DType::Q6_K: case DType::Q6_K_SOA: case DType::Q8_0_R16:
    case DType::Q5_0_R16: case DType::Q4_K_R16: case DType::Q6_K_R16:
      return true;
    default:
      return false;
  }
}

bool supported(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || has_int8_kernel(t); }

RowFields row_fields(const WeightMatrix& w, int64_t r) {
  RowFields rf;
  auto aos = [&](size_t block_bytes, int64_t block_elems, std::initializer_list<size_t> offsets) {
    const uint8_t* base = w.data + static_cast<size_t>(r * (w.n / block_elems)) * block_bytes;
    int i = 0;
    for (size_t off : offsets) {
      rf.f[i] = base + off;
      rf.stride[i] = block_bytes;
      ++i;
    }
  };
  // SoA: each field is one array over the whole tensor, fields back to back.
  auto soa = [&](int64_t block_elems, std::initializer_list<size_t> field_bytes) {
    const int64_t nbr = w.n / block_elems;
    const size_t nb_total = static_cast<size_t>(nbr * w.rows);
    size_t start = 0;
    int i = 0;
    for (size_t fb : field_bytes) {
      rf.f[i] = w.data + start + static_cast<size_t>(r * nbr) * fb;
      rf.stride[i] = fb;
      start += nb_total * fb;
      ++i;
    }
  };
  switch (w.dtype) {
    case DType::F32: rf.f[0] = w.data + static_cast<size_t>(r * w.n) * 4; break;
    case DType::F16:
    case DType::BF16: rf.f[0] = w.data + static_cast<size_t>(r * w.n) * 2; break;
    case DType::Q8_0: aos(34, 32, {2, 0}); break;
    case DType::Q4_0: aos(18, 32, {2, 0}); break;
    case DType::Q5_0: aos(22, 32, {6, 2, 0}); break;
    case DType::Q4_K: aos(144, 256, {16, 4, 0, 2}); break;
    case DType::Q6_K: aos(210, 256, {0, 128, 192, 208}); break;
    case DType::Q8_0_SOA: soa(32, {32, 2}); break;
    case DType::Q4_K_SOA: soa(256, {128, 12, 2, 2}); break;
    case DType::Q6_K_SOA: soa(256, {128, 64, 16, 2}); break;
    default:
      throw Error("CPU kernels: no dot product for dtype " + std::string(dtype_name(w.dtype)));
  }
  return rf;
}

void quantize_acts(Isa isa, const float* x, int64_t n, int8_t* q8, float* d8, float* xs16) {
  switch (isa) {
    case Isa::Avx512: quantize_acts_avx512(x, n, q8, d8, xs16); return;
    case Isa::Avx2: quantize_acts_avx2(x, n, q8, d8, xs16); return;
    case Isa::Scalar: quantize_acts_scalar(x, n, q8, d8, xs16); return;
  }
}

namespace {
// Row-interleaved matrices have a kernel of their own only in the AVX-512 int8 set; the other
// sets gather each row back to its AoS blocks and run that type's kernel on it.
void matmul_gathered_rows(Isa isa, const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out,
                          int64_t ldo, bool int8, bool accumulate) {
  const DType aos = dtype_aos_of(w.dtype);
  std::vector<uint8_t> row(dtype_row_bytes(aos, static_cast<uint64_t>(w.n)));
  for (int64_t r = r0; r < r1; ++r) {
    interleaved_gather_row(w.dtype, w.data, r, w.n, row.data());
    matmul(isa, WeightMatrix{aos, row.data(), w.n, 1}, x, 0, 1, out + r, ldo, int8, accumulate);
  }
}
}  // namespace

void matmul(Isa isa, const WeightMatrix& w, const ActBatch& x, int64_t r0, int64_t r1, float* out, int64_t ldo,
            bool int8, bool accumulate) {
  if (int8 && !has_int8_kernel(w.dtype)) int8 = false;
  if (dtype_is_interleaved(w.dtype) && !(isa == Isa::Avx512 && int8))
    return matmul_gathered_rows(isa, w, x, r0, r1, out, ldo, int8, accumulate);
  switch (isa) {
    case Isa::Avx512: matmul_avx512(w, x, r0, r1, out, ldo, int8, accumulate); return;
    case Isa::Avx2: matmul_avx2(w, x, r0, r1, out, ldo, int8, accumulate); return;
    case Isa::Scalar: matmul_scalar(w, x, r0, r1, out, ldo, int8, accumulate); return;
  }
}

}  // namespace p64::dot
