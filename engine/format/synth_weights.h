#pragma once
// Random weights written straight into quantized blocks: random codes under scales chosen so
// the decoded values have a trained model's spread, with no float tensor ever materialised.
#include <cstdint>

#include "engine/quant/dtype.h"

namespace p64::synth_detail {

// splitmix64: tiny, fast, and statistically fine for filling weights.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
};

// Seed of one row of one tensor: rows are filled independently, so the file's bytes depend on
// the seed only, not on how rows are split across threads.
uint64_t row_seed(uint64_t seed, uint64_t tensor_index, int64_t row);

// One row of n elements of `type` (F32, F16, Q8_0, Q5_0, Q4_K, Q6_K) whose values have mean
// about 0 and standard deviation about `std`. Throws p64::Error for other types.
void fill_random_row(DType type, uint8_t* dst, int64_t n, Rng& rng, float std);

}  // namespace p64::synth_detail
