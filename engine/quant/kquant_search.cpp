#include "engine/quant/kquant_search.h"

#include <algorithm>
#include <cmath>

namespace p64::detail {

void search_scale_min(const float* x, int n, int nmax, float& scale, float& min) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  lo = std::min(lo, 0.0f);
  if (hi <= lo) {
    scale = 0.0f;
    min = -lo;
    return;
  }
  // Start from the plain grid spanning [lo, hi].
  float best_a = (hi - lo) / static_cast<float>(nmax), best_b = lo;
  auto error_of = [&](float a, float b) {
    double e = 0;
    for (int i = 0; i < n; ++i) {
      const int q = std::clamp(nearest_int((x[i] - b) / a), 0, nmax);
      const double r = x[i] - (a * static_cast<float>(q) + b);
      e += r * r;
    }
    return e;
  };
  double best_err = error_of(best_a, best_b);
  // Slightly finer or coarser grids, each refit by least squares on the codes they pick: this
  // trades the extremes' error for the bulk's, which lowers the total squared error.
  for (int step = -8; step <= 8; ++step) {
    const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / (hi - lo);
    double sq = 0, sx = 0, sqq = 0, sqx = 0;
    int q[256];
    for (int i = 0; i < n; ++i) {
      q[i] = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      sq += q[i];
      sx += x[i];
      sqq += static_cast<double>(q[i]) * q[i];
      sqx += static_cast<double>(q[i]) * x[i];
    }
    const double det = n * sqq - sq * sq;
    if (det <= 0) continue;
    double a = (n * sqx - sq * sx) / det;
    double b = (sqq * sx - sq * sqx) / det;
    if (b > 0) {  // the zero point must stay at or below 0: refit the scale alone with b = 0
      b = 0;
      a = sqx / sqq;
    }
    if (a <= 0) continue;
    const double e = error_of(static_cast<float>(a), static_cast<float>(b));
    if (e < best_err) {
      best_err = e;
      best_a = static_cast<float>(a);
      best_b = static_cast<float>(b);
    }
  }
  scale = best_a;
  min = -best_b;
}

float search_scale_symmetric(const float* x, int n, int nneg) {
  float amax = 0.0f, vmax = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      vmax = x[i];
    }
  if (amax == 0.0f) return 0.0f;
  auto error_of = [&](float s) {
    double e = 0;
    for (int i = 0; i < n; ++i) {
      const int q = std::clamp(nearest_int(x[i] / s), -nneg, nneg - 1);
      const double r = x[i] - s * static_cast<float>(q);
      e += r * r;
    }
    return e;
  };
  float best = vmax / static_cast<float>(-nneg);
  double best_err = error_of(best);
  for (int step = -8; step <= 8; ++step) {
    const float iscale = -(static_cast<float>(nneg) + 0.1f * static_cast<float>(step)) / vmax;
    double sqq = 0, sqx = 0;
    for (int i = 0; i < n; ++i) {
      const int q = std::clamp(nearest_int(iscale * x[i]), -nneg, nneg - 1);
      sqq += static_cast<double>(q) * q;
      sqx += static_cast<double>(q) * x[i];
    }
    if (sqq <= 0) continue;
    const float s = static_cast<float>(sqx / sqq);
    if (s == 0.0f) continue;
    const double e = error_of(s);
    if (e < best_err) {
      best_err = e;
      best = s;
    }
  }
  return best;
}

}  // namespace p64::detail
