// The CPU backend's forward pass against a plain float64 re-implementation of the same
// layers (Llama's, and the named steps of qwen2, qwen3, phi3, gemma2 and gemma3, and a Llama's
// sliding window), written here with straightforward loops, on tiny models built in memory.
#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "engine/common/error.h"
#include "engine/runtime/backend.h"
#include "forward_tiny_model.h"

namespace p64 {
namespace {

using Vec = std::vector<double>;

// y[r] = sum_i W[r][i] x[i], W stored as [rows][n] floats.
Vec matvec(const std::vector<float>& W, const Vec& x, size_t rows) {
  const size_t n = x.size();
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < n; ++i) y[r] += static_cast<double>(W[r * n + i]) * x[i];
  return y;
}

Vec rmsnorm(const Vec& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = w[i] * x[i] * scale;
  return y;
}

// Frequencies of the llama3 rule, in double, from its definition in Meta's reference code
// (plain base^(-2i/d) where the model has no llama3 scaling).
std::vector<double> llama3_freqs(const HParams& hp) {
  std::vector<double> f(hp.rope_dim / 2);
  const RopeScaling& s = hp.rope_scaling;
  for (size_t i = 0; i < f.size(); ++i) {
    const double base = 1.0 / std::pow(static_cast<double>(hp.rope_base), 2.0 * i / hp.rope_dim);
    const double wavelen = 2 * M_PI / base;
    const double lo = s.original_context / s.low_freq_factor, hi = s.original_context / s.high_freq_factor;
    // LongRope (transformers' phi3): each frequency divided by its short factor
    if (s.type == RopeScalingType::LongRope) f[i] = base / hp.rope_freq_factors[i];
    else if (s.type != RopeScalingType::Llama3 || wavelen < hi) f[i] = base;
    else if (wavelen > lo) f[i] = base / s.factor;
    else {
      const double sm = (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f[i] = (1 - sm) * base / s.factor + sm * base;
    }
  }
  return f;
}

// Logits of every position for a token sequence, recomputing all of attention each time.
std::vector<Vec> reference_logits(const test::TinyForwardModel& tm, const std::vector<int32_t>& tokens) {
  const HParams& hp = tm.model->hparams();
  const size_t E = hp.n_embd, hd = hp.head_dim, H = hp.n_head, HK = hp.n_head_kv;
  const auto& W = tm.values;
  const bool gemma = hp.arch == "gemma2" || hp.arch == "gemma3";
  const std::vector<double> freqs = llama3_freqs(hp);
  // gemma3's local layers rotate with their own base, unscaled
  HParams local_hp = hp;
  local_hp.rope_base = hp.rope_base_local;
  local_hp.rope_scaling = {};
  const std::vector<double> local_freqs = hp.rope_base_local > 0 ? llama3_freqs(local_hp) : freqs;
  std::vector<std::vector<Vec>> keys(hp.n_layer), vals(hp.n_layer);
  std::vector<Vec> out;
  // gemma's soft-capping: c tanh(s / c)
  auto cap = [](double s, double c) { return c > 0 ? c * std::tanh(s / c) : s; };
  auto add_normed = [&](Vec& x, const Vec& y, const std::string& norm) {  // x += y, y first normed where the model says
    const Vec z = W.count(norm) ? rmsnorm(y, W.at(norm), hp.rms_eps) : y;
    for (size_t i = 0; i < x.size(); ++i) x[i] += z[i];
  };
  for (size_t p = 0; p < tokens.size(); ++p) {
    Vec x(E);
    for (size_t i = 0; i < E; ++i) x[i] = W.at("token_embd.weight")[tokens[p] * E + i];
    if (gemma)  // embedding times sqrt(width)
      for (double& v : x) v *= std::sqrt(static_cast<double>(E));
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      // a local layer: every one with a window, but every pattern-th (counting from 1)
      const bool local = hp.sliding_window > 0 && (hp.sliding_window_pattern == 0 || (l + 1) % hp.sliding_window_pattern != 0);
      Vec h = rmsnorm(x, W.at(b + "attn_norm.weight"), hp.rms_eps);
      Vec q, k, v;
      if (W.count(b + "attn_qkv.weight")) {
        // phi3: one projection whose outputs are q, then k, then v
        const Vec qkv = matvec(W.at(b + "attn_qkv.weight"), h, (H + 2 * HK) * hd);
        q.assign(qkv.begin(), qkv.begin() + H * hd);
        k.assign(qkv.begin() + H * hd, qkv.begin() + (H + HK) * hd);
        v.assign(qkv.begin() + (H + HK) * hd, qkv.end());
      } else {
        q = matvec(W.at(b + "attn_q.weight"), h, H * hd);
        k = matvec(W.at(b + "attn_k.weight"), h, HK * hd);
        v = matvec(W.at(b + "attn_v.weight"), h, HK * hd);
      }
      // qwen2: q, k and v projections with a bias
      if (W.count(b + "attn_q.bias"))
        for (auto [z, name] : {std::pair{&q, "attn_q.bias"}, {&k, "attn_k.bias"}, {&v, "attn_v.bias"}})
          for (size_t i = 0; i < z->size(); ++i) (*z)[i] += W.at(b + name)[i];
      // qwen3: each head of q and k RMS-normalised with its own weights, before RoPE
      if (W.count(b + "attn_q_norm.weight"))
        for (auto [z, name, heads] : {std::tuple{&q, "attn_q_norm.weight", H}, {&k, "attn_k_norm.weight", HK}})
          for (size_t hh = 0; hh < heads; ++hh) {
            const Vec head(z->begin() + hh * hd, z->begin() + (hh + 1) * hd);
            const Vec normed = rmsnorm(head, W.at(b + name), hp.rms_eps);
            std::copy(normed.begin(), normed.end(), z->begin() + hh * hd);
          }
      // RoPE pairs: adjacent (2i, 2i+1) for a Llama; halves (i, i + rope_dim/2) for qwen2/qwen3
      const bool halves = hp.rope_layout == RopeLayout::Halves;
      auto rotate = [&](Vec& z, size_t heads) {
        for (size_t hh = 0; hh < heads; ++hh)
          for (size_t i = 0; i < hp.rope_dim / 2; ++i) {
            const double a = static_cast<double>(p) * (local ? local_freqs : freqs)[i];
            double& z0 = z[hh * hd + (halves ? i : 2 * i)];
            double& z1 = z[hh * hd + (halves ? i + hp.rope_dim / 2 : 2 * i + 1)];
            // LongRope scales cos and sin by its attention factor (1 for the others)
            const double m = hp.rope_attn_factor;
            const double r0 = m * (z0 * std::cos(a) - z1 * std::sin(a)), r1 = m * (z0 * std::sin(a) + z1 * std::cos(a));
            z0 = r0;
            z1 = r1;
          }
      };
      rotate(q, H);
      rotate(k, HK);
      keys[l].push_back(k);
      vals[l].push_back(v);
      Vec att(H * hd, 0.0);
      // scores q.k / sqrt(query_pre_attn_scalar, else head_dim), soft-capped; a local layer's
      // query sees only the last sliding_window positions, its own included
      const double scalar = hp.query_pre_attn_scalar > 0 ? hp.query_pre_attn_scalar : static_cast<double>(hd);
      const size_t first = local && p + 1 > hp.sliding_window ? p + 1 - hp.sliding_window : 0;
      for (size_t hh = 0; hh < H; ++hh) {
        const size_t kvh = hh / (H / HK);
        Vec sc(p + 1);
        double mx = -1e300;
        for (size_t j = first; j <= p; ++j) {
          double s = 0;
          for (size_t i = 0; i < hd; ++i) s += q[hh * hd + i] * keys[l][j][kvh * hd + i];
          sc[j] = cap(s / std::sqrt(scalar), hp.attn_softcap);
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (size_t j = first; j <= p; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
        for (size_t j = first; j <= p; ++j)
          for (size_t i = 0; i < hd; ++i) att[hh * hd + i] += sc[j] / sum * vals[l][j][kvh * hd + i];
      }
      add_normed(x, matvec(W.at(b + "attn_output.weight"), att, E), b + "post_attention_norm.weight");
      h = rmsnorm(x, W.at(b + "ffn_norm.weight"), hp.rms_eps);
      Vec g, u;
      if (W.count(b + "ffn_gate.weight")) {
        g = matvec(W.at(b + "ffn_gate.weight"), h, hp.n_ff);
        u = matvec(W.at(b + "ffn_up.weight"), h, hp.n_ff);
      } else {
        // phi3: ffn_up is one projection whose outputs are the gate, then the up half
        const Vec gu = matvec(W.at(b + "ffn_up.weight"), h, 2 * hp.n_ff);
        g.assign(gu.begin(), gu.begin() + hp.n_ff);
        u.assign(gu.begin() + hp.n_ff, gu.end());
      }
      for (size_t i = 0; i < g.size(); ++i) {
        // SwiGLU; gemma's GeGLU with GELU's tanh form
        const double act = gemma ? 0.5 * g[i] * (1 + std::tanh(std::sqrt(2 / M_PI) * (g[i] + 0.044715 * std::pow(g[i], 3))))
                                 : g[i] / (1 + std::exp(-g[i]));
        g[i] = act * u[i];
      }
      add_normed(x, matvec(W.at(b + "ffn_down.weight"), g, E), b + "post_ffw_norm.weight");
    }
    Vec logits = matvec(W.at("output.weight"), rmsnorm(x, W.at("output_norm.weight"), hp.rms_eps), hp.n_vocab);
    for (double& v : logits) v = cap(v, hp.final_softcap);
    out.push_back(std::move(logits));
  }
  return out;
}

// max over positions and vocabulary of |got - ref| / max|ref| (per position).
double max_rel_error(const Vec& ref, std::span<const float> got) {
  double scale = 0, worst = 0;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref[i]));
  return worst / scale;
}

struct Case {
  DType dtype;
  bool int8;
  bool kv_f16;
  double bound;
  const char* arch = "llama";
  uint32_t sliding_window = 0;  // a Llama's (Mistral's) window over every layer; 0: none
};

class ForwardReference : public ::testing::TestWithParam<Case> {};

TEST_P(ForwardReference, DecodeLogitsMatchFloat64Reference) {
  const Case c = GetParam();
  HParams hp = test::tiny_hparams(c.arch);
  if (c.sliding_window) hp.sliding_window = c.sliding_window;
  const test::TinyForwardModel tm = test::make_tiny_model(hp, c.dtype);
  const std::vector<int32_t> tokens = {1, 17, 250, 3, 99, 42, 42, 7, 128, 5, 64, 200, 11, 12, 13, 14, 280, 0, 9, 33};
  const std::vector<Vec> ref = reference_logits(tm, tokens);
  auto be = make_cpu_backend();
  BackendOptions opt;
  opt.threads = 2;
  opt.switches["int8_activations"] = c.int8 ? "1" : "0";
  opt.switches["kv_f16"] = c.kv_f16 ? "1" : "0";
  be->load(tm.model, opt);
  double worst = 0;
  for (size_t p = 0; p < tokens.size(); ++p) {
    std::span<const float> got = be->decode_logits(tokens[p], static_cast<int32_t>(p));
    worst = std::max(worst, max_rel_error(ref[p], got));
  }
  std::printf("[ forward ] %s%s %s int8_activations=%d kv_f16=%d: max relative logit error %.3g (bound %.1g)\n", c.arch,
              c.sliding_window ? " (sliding window)" : "", std::string(dtype_name(c.dtype)).c_str(), c.int8, c.kv_f16,
              worst, c.bound);
  EXPECT_LT(worst, c.bound);
}

// One batched prefill gives the logits that position-by-position decode gives, and decode
// continues from a prefilled KV exactly as from a decoded one.
class ForwardPrefill : public ::testing::TestWithParam<const char*> {};

TEST_P(ForwardPrefill, PrefillLogitsEqualSequentialDecodeLogits) {
  const test::TinyForwardModel tm = test::make_tiny_model(test::tiny_hparams(GetParam()), DType::Q8_0, 5);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 45; ++i) tokens.push_back((i * 37 + 11) % 300);
  BackendOptions opt;
  opt.threads = 2;
  auto seq = make_cpu_backend(), bat = make_cpu_backend();
  seq->load(tm.model, opt);
  bat->load(tm.model, opt);
  std::vector<float> seq_logits;
  for (size_t p = 0; p < tokens.size(); ++p) {
    auto l = seq->decode_logits(tokens[p], static_cast<int32_t>(p));
    seq_logits.assign(l.begin(), l.end());
  }
  const int32_t top = bat->prefill(tokens, 0);
  std::span<const float> bl = bat->logits();
  double worst = 0, scale = 0;
  for (size_t i = 0; i < bl.size(); ++i)
    worst = std::max(worst, std::fabs(double(bl[i]) - seq_logits[i])), scale = std::max(scale, std::fabs(double(seq_logits[i])));
  std::printf("[ forward ] %s prefill(45) vs 45 decodes: max relative logit difference %.3g\n", GetParam(), worst / scale);
  EXPECT_LT(worst / scale, 1e-5);
  EXPECT_EQ(top, static_cast<int32_t>(std::max_element(seq_logits.begin(), seq_logits.end()) - seq_logits.begin()));
  // The next decode step agrees too, and decode_argmax equals the argmax of decode_logits.
  const int32_t a = bat->decode_argmax(7, 45);
  auto l2 = seq->decode_logits(7, 45);
  EXPECT_EQ(a, static_cast<int32_t>(std::max_element(l2.begin(), l2.end()) - l2.begin()));
  std::span<const float> lazy = bat->logits();  // computed on demand after decode_argmax
  for (size_t i = 0; i < lazy.size(); ++i) EXPECT_NEAR(lazy[i], l2[i], 1e-4 * scale);
}

INSTANTIATE_TEST_SUITE_P(Architectures, ForwardPrefill, ::testing::Values("llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"));

TEST(ForwardErrors, ContextFullAndBadTokenAreErrors) {
  const test::TinyForwardModel tm = test::make_tiny_model(test::tiny_hparams(), DType::F32, 2);
  BackendOptions opt;
  opt.max_context = 8;
  auto be = make_cpu_backend();
  be->load(tm.model, opt);
  EXPECT_EQ(be->max_context(), 8u);
  EXPECT_THROW(be->decode_argmax(1, 8), Error);
  EXPECT_THROW(be->decode_argmax(300, 0), Error);
  EXPECT_THROW(be->prefill(std::vector<int32_t>(9, 1), 0), Error);
  opt.switches["no_such_switch"] = "1";
  EXPECT_THROW(be->load(tm.model, opt), Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ForwardReference,
                         ::testing::Values(Case{DType::F32, false, false, 1e-5}, Case{DType::F32, false, true, 5e-3},
                                           Case{DType::F16, false, false, 1e-5}, Case{DType::Q8_0, false, false, 1e-5},
                                           Case{DType::Q8_0, true, false, 6e-2}, Case{DType::Q4_K, false, false, 1e-5},
                                           Case{DType::Q4_K, true, false, 6e-2}, Case{DType::Q6_K, true, false, 6e-2},
                                           Case{DType::Q5_0, true, false, 6e-2}, Case{DType::Q8_0_R16, false, false, 1e-5},
                                           Case{DType::Q8_0_R16, true, false, 6e-2}, Case{DType::Q5_0_R16, true, false, 6e-2},
                                           Case{DType::Q4_K_R16, true, false, 6e-2}, Case{DType::Q6_K_R16, true, false, 6e-2}));

// The architectures' own steps (qkv bias, q/k norm, RoPE on halves, gemma's embedding scale,
// post-norms, GeGLU, soft-caps, query scalar, local layers with their window and RoPE base, a
// Llama's sliding window, phi3's fused projections, LongRope and partial rotation) against the same reference.
INSTANTIATE_TEST_SUITE_P(Architectures, ForwardReference,
                         ::testing::Values(Case{DType::F32, false, false, 1e-5, "qwen2"},
                                           Case{DType::F32, false, false, 1e-5, "qwen3"},
                                           Case{DType::Q8_0, true, false, 6e-2, "qwen2"},
                                           Case{DType::Q8_0_R16, true, false, 6e-2, "qwen3"},
                                           Case{DType::F32, false, false, 1e-5, "gemma2"},
                                           Case{DType::F32, false, false, 1e-5, "gemma3"},
                                           Case{DType::F32, false, true, 5e-3, "gemma2"},
                                           Case{DType::Q8_0, true, false, 6e-2, "gemma2"},
                                           Case{DType::Q8_0_R16, true, false, 6e-2, "gemma3"},
                                           Case{DType::F32, false, false, 1e-5, "phi3"},
                                           Case{DType::Q8_0, true, false, 6e-2, "phi3"},
                                           Case{DType::F32, false, false, 1e-5, "llama", 5}));

}  // namespace
}  // namespace p64
