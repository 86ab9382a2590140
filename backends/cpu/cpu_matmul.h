#pragma once
// Matrix products of the CPU backend over the thread pool: activations quantized once per
// product, rows of one or several weight matrices split across threads in one region.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "backends/cpu/dot.h"
#include "engine/model/model.h"
#include "engine/runtime/thread_pool.h"

namespace p64::cpu {

// One output of a fused product: out[t * ldo + r] (+)= W[r] . x[t].
struct MatmulJob {
  const TensorView* w;
  float* out;
  int64_t ldo;
  bool accumulate = false;  // add into out (the residual stream) instead of storing
};

class Matmul {
 public:
  Matmul(ThreadPool& pool, Isa isa, bool int8) : pool_(pool), isa_(isa), int8_(int8) {}

  // Room for int8 activations of ntok rows of up to n elements.
  void reserve(int64_t max_n, int32_t max_tokens);

  // Runs every job against the same activation rows x[ntok][n] (row stride ldx).
  void run(std::initializer_list<MatmulJob> jobs, const float* x, int64_t n, int64_t ldx, int32_t ntok);

  // Index of the largest of W[r] . x over all rows (lowest index on ties), without storing
  // the products: each thread keeps the best of its rows.
  int32_t argmax(const TensorView& w, const float* x, int64_t n);

  Isa isa() const { return isa_; }
  bool int8() const { return int8_; }

 private:
  dot::ActBatch prepare(const float* x, int64_t n, int64_t ldx, int32_t ntok, bool quantize);

  ThreadPool& pool_;
  Isa isa_;
  bool int8_;
  std::vector<int8_t> q8_;
  std::vector<float> d8_, xs16_;
  std::vector<float> argmax_rows_;  // argmax's scores, one per row (kernels index rows absolutely)
};

dot::WeightMatrix weight_matrix(const TensorView& t);

}  // namespace p64::cpu
