#pragma once
// Scale searches shared by the K-quant reference quantizers.
#include <cstdint>

namespace p64::detail {

// Best affine fit x ~= scale * q - min of n values with integer q in [0, nmax], scale >= 0 and
// min >= 0 (the zero point sits at or below 0, as Q4_K/Q5_K store it). Tries a spread of
// quantization grids, each followed by a least-squares refit, and keeps the lowest squared error.
void search_scale_min(const float* x, int n, int nmax, float& scale, float& min);

// Best symmetric fit x ~= scale * q with integer q in [-nneg, nneg - 1] (scale may be negative,
// which lets the largest-magnitude value take the extra negative code). Same search strategy.
float search_scale_symmetric(const float* x, int n, int nneg);

inline int nearest_int(float v) { return static_cast<int>(v + (v >= 0 ? 0.5f : -0.5f)); }

}  // namespace p64::detail
