#include "backends/cpu/cpu_ops.h"

#include <cmath>
#include <numbers>

#include "engine/quant/quant.h"

namespace p64::cpu {

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = w[i] * (scale * x[i]);
}

std::vector<float> rope_inv_freq(const HParams& hp) {
  const int pairs = static_cast<int>(hp.rope_dim / 2);
  std::vector<float> f(static_cast<size_t>(pairs));
  for (int i = 0; i < pairs; ++i)
    f[static_cast<size_t>(i)] = 1.0f / std::pow(hp.rope_base, static_cast<float>(2 * i) / static_cast<float>(hp.rope_dim));
  if (!hp.rope_freq_factors.empty()) {
    for (int i = 0; i < pairs && i < static_cast<int>(hp.rope_freq_factors.size()); ++i)
      f[static_cast<size_t>(i)] /= hp.rope_freq_factors[static_cast<size_t>(i)];
    return f;
  }
  const RopeScaling& s = hp.rope_scaling;
  if (s.type == RopeScalingType::Linear && s.factor > 0) {
    for (float& v : f) v /= s.factor;
  } else if (s.type == RopeScalingType::Llama3) {
    // Meta's rule: long wavelengths are slowed by `factor`, short ones kept, and the band in
    // between interpolated smoothly.
    const double old_ctx = s.original_context;
    const double low_wavelen = old_ctx / s.low_freq_factor, high_wavelen = old_ctx / s.high_freq_factor;
    for (float& v : f) {
      const double wavelen = 2.0 * std::numbers::pi / v;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        v = static_cast<float>(v / s.factor);
      } else {
        const double smooth = (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        v = static_cast<float>((1.0 - smooth) * v / s.factor + smooth * v);
      }
    }
  }
  return f;
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, RopeLayout layout, const std::vector<float>& inv_freq,
          int32_t pos, float scale) {
  const int pairs = rope_dim / 2;
  for (int i = 0; i < pairs; ++i) {
    const float angle = static_cast<float>(pos) * inv_freq[static_cast<size_t>(i)];
    const float c = std::cos(angle) * scale, s = std::sin(angle) * scale;
    const int a = layout == RopeLayout::Adjacent ? 2 * i : i;
    const int b = layout == RopeLayout::Adjacent ? 2 * i + 1 : i + pairs;
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + h * head_dim;
      const float v0 = v[a], v1 = v[b];
      v[a] = v0 * c - v1 * s;
      v[b] = v0 * s + v1 * c;
    }
  }
}

namespace {
// q . k over one head with 16 independent partial sums: a single running sum would make every
// add wait for the previous one (the dot of each cached position is on the decode path).
template <class LoadK>
float head_dot(const float* q, int head_dim, LoadK k) {
  constexpr int kLanes = 16;
  float part[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= head_dim; i += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += q[i + j] * k(i + j);
  float s = 0;
  for (; i < head_dim; ++i) s += q[i] * k(i);
  for (int j = 0; j < kLanes; ++j) s += part[j];
  return s;
}

}  // namespace

void softmax(float* x, int32_t n) {
  float mx = x[0];
  for (int32_t i = 1; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int32_t i = 0; i < n; ++i) x[i] *= inv;
}

void softcap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

namespace {

// The portable head over either cache type; `load` reads one cached element as a float.
template <class T, class Load>
void attend_head(const float* q, const T* k_cache, const T* v_cache, int64_t kv_dim, int64_t kv_off, int head_dim,
                 int32_t n_pos, const AttentionScores& how, float* scores, float* out, Load load) {
  const int32_t first = how.first(n_pos);
  for (int32_t p = first; p < n_pos; ++p) {
    const T* k = k_cache + p * kv_dim + kv_off;
    scores[p] = head_dot(q, head_dim, [k, load](int i) { return load(k[i]); }) * how.scale;
  }
  if (how.softcap > 0.0f) softcap(scores + first, n_pos - first, how.softcap);
  softmax(scores + first, n_pos - first);
  for (int i = 0; i < head_dim; ++i) out[i] = 0;
  for (int32_t p = first; p < n_pos; ++p) {
    const T* v = v_cache + p * kv_dim + kv_off;
    const float a = scores[p];
    for (int i = 0; i < head_dim; ++i) out[i] += a * load(v[i]);
  }
}

}  // namespace

void attend_head_f32(const float* q, const float* k_cache, const float* v_cache, int64_t kv_dim, int64_t kv_off,
                     int head_dim, int32_t n_pos, const AttentionScores& how, float* scores, float* out) {
  attend_head(q, k_cache, v_cache, kv_dim, kv_off, head_dim, n_pos, how, scores, out, [](float x) { return x; });
}

void attend_head_f16(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t kv_dim,
                     int64_t kv_off, int head_dim, int32_t n_pos, const AttentionScores& how, float* scores, float* out) {
  attend_head(q, k_cache, v_cache, kv_dim, kv_off, head_dim, n_pos, how, scores, out,
              [](uint16_t x) { return fp16_to_fp32(x); });
}

void add_into(float* x, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += b[i];
}

void swiglu(float* gate_inout, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate_inout[i];
    gate_inout[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void geglu_tanh(float* gate_inout, const float* up, int64_t n) {
  const float sqrt_2_over_pi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate_inout[i];
    gate_inout[i] = 0.5f * g * (1.0f + std::tanh(sqrt_2_over_pi * (g + 0.044715f * g * g * g))) * up[i];
  }
}

}  // namespace p64::cpu
