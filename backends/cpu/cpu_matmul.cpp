#include "backends/cpu/cpu_matmul.h"

#include <algorithm>
#include <limits>

namespace p64::cpu {

dot::WeightMatrix weight_matrix(const TensorView& t) { return {t.dtype, t.data, t.ne[0], t.rows()}; }

void Matmul::reserve(int64_t max_n, int32_t max_tokens) {
  const size_t n = static_cast<size_t>(max_n) * static_cast<size_t>(max_tokens);
  q8_.resize(n);
  d8_.resize(n / 32 + 1);
  xs16_.resize(n / 16 + 1);
}

dot::ActBatch Matmul::prepare(const float* x, int64_t n, int64_t ldx, int32_t ntok, bool quantize) {
  dot::ActBatch a{n, ntok, x, ldx, nullptr, nullptr, nullptr};
  if (!quantize) return a;
  auto quant_rows = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      dot::quantize_acts(isa_, x + t * ldx, n, q8_.data() + t * n, d8_.data() + t * (n / 32),
                         xs16_.data() + t * (n / 16));
  };
  if (ntok <= 2) {
    quant_rows(0, ntok);  // a region costs more than quantizing one row
  } else {
    pool_.parallel_for(ntok, 1, quant_rows);
  }
  a.q8 = q8_.data();
  a.d8 = d8_.data();
  a.xs16 = xs16_.data();
  return a;
}

void Matmul::run(std::initializer_list<MatmulJob> jobs, const float* x, int64_t n, int64_t ldx, int32_t ntok) {
  bool quantize = false;
  int64_t total = 0;
  for (const MatmulJob& j : jobs) {
    quantize |= int8_ && dot::has_int8_kernel(j.w->dtype) && n % 32 == 0;
    total += j.w->rows();
  }
  const dot::ActBatch a = prepare(x, n, ldx, ntok, quantize);
  // The rows of all jobs, concatenated, split into contiguous per-thread ranges; a grain of 16
  // rows keeps two threads off the same output cache line.
  pool_.parallel_for(total, 16, [&](int64_t b, int64_t e) {
    int64_t base = 0;
    for (const MatmulJob& j : jobs) {
      const int64_t rows = j.w->rows();
      const int64_t r0 = std::max<int64_t>(b - base, 0), r1 = std::min<int64_t>(e - base, rows);
      if (r0 < r1)
        dot::matmul(isa_, weight_matrix(*j.w), a, r0, r1, j.out, j.ldo, quantize && dot::has_int8_kernel(j.w->dtype),
                    j.accumulate);
      base += rows;
    }
  });
}

int32_t Matmul::argmax(const TensorView& w, const float* x, int64_t n) {
  const bool quantize = int8_ && dot::has_int8_kernel(w.dtype) && n % 32 == 0;
  const dot::ActBatch a = prepare(x, n, n, 1, quantize);
  const dot::WeightMatrix wm = weight_matrix(w);
  const unsigned nt = pool_.size();
  std::vector<std::pair<float, int64_t>> best(nt, {-std::numeric_limits<float>::infinity(), -1});
  // The kernels write out[r] for absolute row r, so the scores live in one row-sized buffer
  // (a pointer shifted below a chunk buffer would be out of bounds, which UBSan rightly flags);
  // each thread still scans its chunk while it is in cache.
  argmax_rows_.resize(static_cast<size_t>(wm.rows));
  float* scores = argmax_rows_.data();
  pool_.run([&](unsigned i, unsigned nthreads) {
    const int64_t rows = wm.rows;
    // Chunk bounds on whole row groups, which row-interleaved kernels compute together.
    const int64_t group = dtype_row_group(wm.dtype);
    const int64_t b = rows * i / nthreads / group * group, e = i + 1 == nthreads ? rows : rows * (i + 1) / nthreads / group * group;
    constexpr int64_t kChunk = 256;
    for (int64_t r = b; r < e; r += kChunk) {
      const int64_t re = std::min(e, r + kChunk);
      dot::matmul(isa_, wm, a, r, re, scores, 0, quantize, false);
      for (int64_t k = r; k < re; ++k)
        if (scores[k] > best[i].first || best[i].second < 0) best[i] = {scores[k], k};
    }
  });
  std::pair<float, int64_t> top = best[0];
  for (unsigned i = 1; i < nt; ++i)
    if (best[i].second >= 0 && (top.second < 0 || best[i].first > top.first)) top = best[i];
  return static_cast<int32_t>(top.second);
}

}  // namespace p64::cpu
