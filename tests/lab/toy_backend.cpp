#include "lab/toy_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/common/error.h"
#include "engine/runtime/backend_registry.h"
#include "support/op_spans.h"

namespace p64::test {
namespace {

struct ToyStorage {
  std::vector<std::vector<float>> blobs;
};

const float* f32(const TensorView* t) { return reinterpret_cast<const float*>(t->data); }

// y[out] = W[out x in] x[in]; W stored row-major as GGML does (ne0 = in).
void matvec(const TensorView* w, const float* x, float* y) {
  const int64_t in = w->ne[0], out = w->rows();
  const float* m = f32(w);
  for (int64_t r = 0; r < out; ++r) {
    double s = 0;
    for (int64_t c = 0; c < in; ++c) s += static_cast<double>(m[r * in + c]) * x[c];
    y[r] = static_cast<float>(s);
  }
}

void rmsnorm(const float* x, const TensorView* w, float* y, int64_t n, float eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * f32(w)[i];
}

}  // namespace

std::shared_ptr<const Model> make_toy_model(const ToyShape& s) {
  HParams hp;
  hp.name = "toy";
  hp.n_embd = s.n_embd;
  hp.n_layer = s.n_layer;
  hp.n_head = s.n_head;
  hp.n_head_kv = s.n_head_kv;
  hp.head_dim = s.n_embd / s.n_head;
  hp.n_ff = s.n_ff;
  hp.n_vocab = s.n_vocab;
  hp.n_ctx_train = s.n_ctx;
  hp.rope_dim = hp.head_dim;
  hp.sliding_window = s.sliding_window;
  hp.sliding_window_pattern = s.sliding_window_pattern;
  Vocabulary vocab;
  for (uint32_t i = 0; i < s.n_vocab; ++i) vocab.tokens.push_back("t" + std::to_string(i));
  vocab.bos_id = 1;
  vocab.eos_id = 2;

  auto storage = std::make_shared<ToyStorage>();
  std::vector<TensorView> tensors;
  std::mt19937 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto add = [&](const std::string& name, int64_t ne0, int64_t ne1, bool ones) {
    std::vector<float> data(static_cast<size_t>(ne0 * ne1));
    const float scale = 1.0f / std::sqrt(static_cast<float>(ne0));
    for (float& v : data) v = ones ? 1.0f : normal(rng) * scale * (name == "token_embd.weight" ? 8.0f : 1.0f);
    storage->blobs.push_back(std::move(data));
    TensorView t;
    t.name = name;
    t.dtype = DType::F32;
    t.n_dims = ne1 > 1 ? 2 : 1;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.data = reinterpret_cast<const uint8_t*>(storage->blobs.back().data());
    t.bytes = static_cast<uint64_t>(ne0 * ne1) * sizeof(float);
    tensors.push_back(t);
  };
  add("token_embd.weight", s.n_embd, s.n_vocab, false);
  add("output_norm.weight", s.n_embd, 1, true);
  add("output.weight", s.n_embd, s.n_vocab, false);
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", s.n_embd, 1, true);
    add(p + "attn_q.weight", s.n_embd, hp.q_dim(), false);
    add(p + "attn_k.weight", s.n_embd, hp.kv_dim(), false);
    add(p + "attn_v.weight", s.n_embd, hp.kv_dim(), false);
    add(p + "attn_output.weight", hp.q_dim(), s.n_embd, false);
    add(p + "ffn_norm.weight", s.n_embd, 1, true);
    add(p + "ffn_gate.weight", s.n_embd, s.n_ff, false);
    add(p + "ffn_up.weight", s.n_embd, s.n_ff, false);
    add(p + "ffn_down.weight", s.n_ff, s.n_embd, false);
  }
  return Model::from_parts("toy:" + std::to_string(s.seed), hp, vocab, std::move(tensors), storage);
}

Passport ToyBackend::passport() {
  Passport p;
  p.host = collect_host_facts();
  p.build = collect_build_facts();
  p.device = device_;
  if (p.device.backend.empty()) p.device.backend = name_;
  if (p.device.name.empty()) p.device.name = "toy device";
  if (p.device.device_type.empty()) p.device.device_type = "cpu";
  p.measured.read_gbs = 10.0;  // fixed so the share-of-bandwidth arithmetic is checkable
  p.measured.copy_gbs = 8.0;
  return p;
}

std::vector<SwitchInfo> ToyBackend::switches() const {
  return {int_range_switch("delay_us", "busy-wait per decode step (test variant)", 0, 0, 100000, "opt-in"),
          float_switch("logit_noise", "adds a fixed offset pattern to the logits (test variant)", 0, "opt-in"),
          bool_switch("fast", "skips the delay (test variant)", false, "candidate")};
}

void ToyBackend::load(std::shared_ptr<const Model> model, const BackendOptions& options) {
  const SwitchValues sw(name_, switches(), options.switches);
  model_ = std::move(model);
  const HParams& h = model_->hparams();
  ctx_ = std::min(options.max_context, h.n_ctx_train);
  delay_us_ = sw.flag("fast") ? 0 : sw.integer("delay_us");
  noise_ = static_cast<float>(sw.number("logit_noise"));
  k_cache_.assign(static_cast<size_t>(h.n_layer) * ctx_ * h.kv_dim(), 0.0f);
  v_cache_.assign(k_cache_.size(), 0.0f);
  x_.assign(h.n_embd, 0);
  xn_.assign(h.n_embd, 0);
  q_.assign(h.q_dim(), 0);
  k_.assign(h.kv_dim(), 0);
  v_.assign(h.kv_dim(), 0);
  att_.assign(ctx_, 0);
  o_.assign(h.q_dim(), 0);
  gate_.assign(h.n_ff, 0);
  up_.assign(h.n_ff, 0);
  logits_.assign(h.n_vocab, 0);
}

uint64_t ToyBackend::device_memory_peak() const {
  return model_ ? model_->weight_bytes() + (k_cache_.size() + v_cache_.size()) * sizeof(float) : 0;
}

double ToyBackend::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ToyBackend::span(const char* name, OpGroup g, int layer, bool prefill, int32_t step, double t0, double t1) {
  if (!sink_) return;
  if (epoch_us_ < 0) epoch_us_ = t0;
  sink_->on_span(op_span(name, g, layer, step, t0 - epoch_us_, t1 - t0, 0, prefill));
}

void ToyBackend::forward(int32_t token, int32_t pos, bool prefill, bool want_logits) {
  if (!model_) throw Error("toy backend: load() was not called");
  const HParams& h = model_->hparams();
  if (token < 0 || static_cast<uint32_t>(token) >= h.n_vocab) throw Error("toy backend: token out of range");
  if (pos < 0 || static_cast<uint32_t>(pos) >= ctx_) throw Error("toy backend: position beyond the KV cache");
  const int64_t d = h.n_embd, kvd = h.kv_dim(), hd = h.head_dim;
  double t = now_us(), t1;
  auto mark = [&](const char* name, OpGroup g, int layer) {
    t1 = now_us();
    span(name, g, layer, prefill, pos, t, t1);
    t = t1;
  };
  std::memcpy(x_.data(), f32(&model_->token_embd()) + token * d, static_cast<size_t>(d) * sizeof(float));
  mark("embed", OpGroup::Other, -1);
  for (uint32_t l = 0; l < h.n_layer; ++l) {
    const LayerWeights& w = model_->layers()[l];
    const int li = static_cast<int>(l);
    rmsnorm(x_.data(), w.attn_norm, xn_.data(), d, h.rms_eps);
    mark("rms_attn", OpGroup::Rms, li);
    matvec(w.wq, xn_.data(), q_.data());
    matvec(w.wk, xn_.data(), k_.data());
    matvec(w.wv, xn_.data(), v_.data());
    mark("qkv", OpGroup::Attn, li);
    float* kc = k_cache_.data() + (static_cast<size_t>(l) * ctx_ + static_cast<size_t>(pos)) * kvd;
    float* vc = v_cache_.data() + (static_cast<size_t>(l) * ctx_ + static_cast<size_t>(pos)) * kvd;
    std::memcpy(kc, k_.data(), static_cast<size_t>(kvd) * sizeof(float));
    std::memcpy(vc, v_.data(), static_cast<size_t>(kvd) * sizeof(float));
    mark("kv_write", OpGroup::Attn, li);
    const uint32_t group = h.n_head / h.n_head_kv;
    for (uint32_t head = 0; head < h.n_head; ++head) {
      const float* qh = q_.data() + head * hd;
      const size_t kv_off = (head / group) * static_cast<size_t>(hd);
      float mx = -INFINITY;
      for (int32_t p = 0; p <= pos; ++p) {
        const float* kp = k_cache_.data() + (static_cast<size_t>(l) * ctx_ + static_cast<size_t>(p)) * kvd + kv_off;
        float s = 0;
        for (int64_t i = 0; i < hd; ++i) s += qh[i] * kp[i];
        att_[static_cast<size_t>(p)] = s / std::sqrt(static_cast<float>(hd));
        mx = std::max(mx, att_[static_cast<size_t>(p)]);
      }
      float sum = 0;
      for (int32_t p = 0; p <= pos; ++p) sum += att_[static_cast<size_t>(p)] = std::exp(att_[static_cast<size_t>(p)] - mx);
      float* oh = o_.data() + head * hd;
      std::fill(oh, oh + hd, 0.0f);
      for (int32_t p = 0; p <= pos; ++p) {
        const float* vp = v_cache_.data() + (static_cast<size_t>(l) * ctx_ + static_cast<size_t>(p)) * kvd + kv_off;
        for (int64_t i = 0; i < hd; ++i) oh[i] += att_[static_cast<size_t>(p)] / sum * vp[i];
      }
    }
    mark("sdpa", OpGroup::Attn, li);
    matvec(w.wo, o_.data(), xn_.data());
    for (int64_t i = 0; i < d; ++i) x_[static_cast<size_t>(i)] += xn_[static_cast<size_t>(i)];
    mark("o", OpGroup::Attn, li);
    rmsnorm(x_.data(), w.ffn_norm, xn_.data(), d, h.rms_eps);
    mark("rms_ffn", OpGroup::Rms, li);
    matvec(w.w_gate, xn_.data(), gate_.data());
    matvec(w.w_up, xn_.data(), up_.data());
    for (size_t i = 0; i < gate_.size(); ++i) gate_[i] = gate_[i] / (1.0f + std::exp(-gate_[i])) * up_[i];
    mark("gate_up", OpGroup::Ffn, li);
    matvec(w.w_down, gate_.data(), xn_.data());
    for (int64_t i = 0; i < d; ++i) x_[static_cast<size_t>(i)] += xn_[static_cast<size_t>(i)];
    mark("down", OpGroup::Ffn, li);
  }
  if (!want_logits) return;
  rmsnorm(x_.data(), &model_->output_norm(), xn_.data(), d, h.rms_eps);
  mark("rms_final", OpGroup::Rms, -1);
  matvec(&model_->output(), xn_.data(), logits_.data());
  if (noise_ != 0.0f)
    for (size_t i = 0; i < logits_.size(); ++i) logits_[i] += noise_ * static_cast<float>(((i * 2654435761u) % 97) / 48.0 - 1.0);
  if (!prefill && delay_us_ > 0) {
    const double until = now_us() + delay_us_;
    while (now_us() < until) {
    }
  }
  mark("logits", OpGroup::Logits, -1);
}

int32_t ToyBackend::prefill(std::span<const int32_t> tokens, int32_t pos) {
  if (tokens.empty()) throw Error("toy backend: empty prefill");
  for (size_t i = 0; i < tokens.size(); ++i)
    forward(tokens[i], pos + static_cast<int32_t>(i), true, i + 1 == tokens.size());
  return static_cast<int32_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
}

std::span<const float> ToyBackend::decode_logits(int32_t token, int32_t pos) {
  forward(token, pos, false, true);
  ++steps_;
  return logits_;
}

int32_t ToyBackend::decode_argmax(int32_t token, int32_t pos) {
  double t0 = now_us();
  decode_logits(token, pos);
  t0 = now_us();
  const auto id = static_cast<int32_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
  span("argmax", OpGroup::Sample, -1, false, pos, t0, now_us());
  return id;
}

void register_toy_backend(const std::string& name, const DeviceFacts& device) {
  register_backend(
      {name, -100, [](std::string*) { return true; }, [name, device] { return std::make_unique<ToyBackend>(name, device); }});
}

AbParams quick_ab_params(int quality_tokens) {
  AbParams p;
  p.runs = 2;
  p.warmup = 0;
  p.decode_tokens = 4;
  p.prompt_tokens = 4;
  p.quality_tokens = quality_tokens;
  return p;
}

}  // namespace p64::test
