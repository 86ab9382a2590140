#include "backends/cuda/rope_freqs.h"

#include <cmath>

namespace p64::cuda {

std::vector<float> rope_inv_freq(const HParams& hp) {
  const uint32_t d = hp.rope_dim ? hp.rope_dim : hp.head_dim;
  std::vector<float> out(d / 2);
  const RopeScaling& rs = hp.rope_scaling;
  for (uint32_t i = 0; i < d / 2; ++i) {
    double f = std::pow(double(hp.rope_base), -2.0 * double(i) / double(d));
    if (!hp.rope_freq_factors.empty()) {
      if (i < hp.rope_freq_factors.size()) f /= double(hp.rope_freq_factors[i]);
    } else if (rs.type == RopeScalingType::Linear && rs.factor > 0) {
      f /= double(rs.factor);
    } else if (rs.type == RopeScalingType::Llama3 && rs.factor > 0) {
      // Meta's apply_scaling: keep high frequencies, divide low ones by the factor, blend between.
      const double pi = 3.14159265358979323846;
      const double low_wavelen = double(rs.original_context) / double(rs.low_freq_factor);
      const double high_wavelen = double(rs.original_context) / double(rs.high_freq_factor);
      const double wavelen = 2.0 * pi / f;
      if (wavelen < high_wavelen) {
        // unchanged
      } else if (wavelen > low_wavelen) {
        f /= double(rs.factor);
      } else {
        const double smooth = (double(rs.original_context) / wavelen - double(rs.low_freq_factor)) /
                              (double(rs.high_freq_factor) - double(rs.low_freq_factor));
        f = (1.0 - smooth) * f / double(rs.factor) + smooth * f;
      }
    }
    out[i] = float(f);
  }
  return out;
}

}  // namespace p64::cuda
