// The whole CUDA backend on small synthetic models built in memory, teacher-forced against a
// plain double-precision forward pass written here from the dequantized weights (the CPU
// backend is the project's reference; this one needs nothing but quant.h). The comparison on
// real files against the CPU backend is the acceptance run in docs/cuda-backend.md.
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "backends/cuda/rope_freqs.h"
#include "cuda/cuda_test_support.h"
#include "engine/common/error.h"
#include "engine/model/model.h"
#include "engine/quant/quant.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

struct Storage {
  std::vector<std::vector<uint8_t>> blobs;
};

struct RefModel {
  HParams hp;
  std::vector<float> embd, out, out_norm;
  struct Layer { std::vector<float> an, fn, q, k, v, o, g, u, d; };
  std::vector<Layer> layers;
};

struct Built {
  std::shared_ptr<const Model> model;
  RefModel ref;
};

// One tensor: random values quantized to `t`; `deq` receives what the file really holds.
TensorView make_tensor(Storage& st, const std::string& name, DType t, int64_t n, int64_t rows, std::mt19937& rng,
                       std::vector<float>& deq, float sigma, float mean = 0.f) {
  std::normal_distribution<float> nd(mean, sigma);
  const DType aos = dtype_is_soa(t) ? dtype_aos_of(t) : t;
  const uint64_t rb = dtype_row_bytes(aos, uint64_t(n));
  std::vector<uint8_t> a(static_cast<size_t>(rb * rows));
  deq.assign(size_t(n * rows), 0.f);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng);
    if (aos == DType::F32) std::memcpy(a.data() + r * rb, row.data(), size_t(n) * 4);
    else quantize_row(aos, row.data(), a.data() + r * rb, n);
    dequantize_row(aos, a.data() + r * rb, deq.data() + r * n, n);
  }
  std::vector<uint8_t> bytes = a;
  if (dtype_is_soa(t)) soa_pack(aos, a.data(), bytes.data(), int64_t(n * rows / dtype_info(aos)->block_elems));
  st.blobs.push_back(std::move(bytes));
  TensorView v;
  v.name = name;
  v.dtype = t;
  v.n_dims = rows > 1 ? 2 : 1;
  v.ne[0] = n;
  v.ne[1] = rows;
  v.data = st.blobs.back().data();
  v.bytes = st.blobs.back().size();
  return v;
}

struct Mix {
  DType embd, out, q, k, v, o, gate, up, down;
};

Built build(const HParams& hp, const Mix& mix, uint32_t seed) {
  auto st = std::make_shared<Storage>();
  st->blobs.reserve(64);
  std::mt19937 rng(seed);
  Built b;
  b.ref.hp = hp;
  std::vector<TensorView> ts;
  const float s = 1.0f / std::sqrt(float(hp.n_embd));
  ts.push_back(make_tensor(*st, "token_embd.weight", mix.embd, hp.n_embd, hp.n_vocab, rng, b.ref.embd, 1.0f));
  ts.push_back(make_tensor(*st, "output_norm.weight", DType::F32, hp.n_embd, 1, rng, b.ref.out_norm, 0.1f, 1.f));
  ts.push_back(make_tensor(*st, "output.weight", mix.out, hp.n_embd, hp.n_vocab, rng, b.ref.out, 4 * s));
  b.ref.layers.resize(hp.n_layer);
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    auto& L = b.ref.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    ts.push_back(make_tensor(*st, p + "attn_norm.weight", DType::F32, hp.n_embd, 1, rng, L.an, 0.1f, 1.f));
    ts.push_back(make_tensor(*st, p + "attn_q.weight", mix.q, hp.n_embd, hp.q_dim(), rng, L.q, 2 * s));
    ts.push_back(make_tensor(*st, p + "attn_k.weight", mix.k, hp.n_embd, hp.kv_dim(), rng, L.k, 2 * s));
    ts.push_back(make_tensor(*st, p + "attn_v.weight", mix.v, hp.n_embd, hp.kv_dim(), rng, L.v, s));
    ts.push_back(make_tensor(*st, p + "attn_output.weight", mix.o, hp.q_dim(), hp.n_embd, rng, L.o, s));
    ts.push_back(make_tensor(*st, p + "ffn_norm.weight", DType::F32, hp.n_embd, 1, rng, L.fn, 0.1f, 1.f));
    ts.push_back(make_tensor(*st, p + "ffn_gate.weight", mix.gate, hp.n_embd, hp.n_ff, rng, L.g, s));
    ts.push_back(make_tensor(*st, p + "ffn_up.weight", mix.up, hp.n_embd, hp.n_ff, rng, L.u, s));
    ts.push_back(make_tensor(*st, p + "ffn_down.weight", mix.down, hp.n_ff, hp.n_embd, rng, L.d,
                             1.0f / std::sqrt(float(hp.n_ff))));
  }
  b.model = Model::from_parts("synthetic", hp, Vocabulary{}, std::move(ts), st);
  return b;
}

// Plain forward pass in double over the dequantized weights; KV kept for every position.
class RefForward {
 public:
  explicit RefForward(const RefModel& m) : m_(m), inv_(cuda::rope_inv_freq(m.hp)) {
    kc_.resize(m.hp.n_layer);
    vc_.resize(m.hp.n_layer);
  }
  std::vector<double> step(int token, int pos) {
    const HParams& hp = m_.hp;
    const int E = int(hp.n_embd), D = int(hp.head_dim), H = int(hp.n_head), KVH = int(hp.n_head_kv);
    std::vector<double> x(E);
    for (int i = 0; i < E; ++i) x[i] = m_.embd[size_t(token) * E + i];
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
      const auto& L = m_.layers[l];
      auto xn = rms(x, L.an);
      auto q = matvec(L.q, xn, hp.q_dim()), k = matvec(L.k, xn, hp.kv_dim()), v = matvec(L.v, xn, hp.kv_dim());
      rope(q, H, pos);
      rope(k, KVH, pos);
      kc_[l].resize(size_t(pos + 1) * KVH * D);
      vc_[l].resize(kc_[l].size());
      for (int i = 0; i < KVH * D; ++i) {
        kc_[l][size_t(pos) * KVH * D + i] = k[i];
        vc_[l][size_t(pos) * KVH * D + i] = v[i];
      }
      std::vector<double> att(size_t(H) * D, 0.0);
      for (int h = 0; h < H; ++h) {
        const int kvh = h / (H / KVH);
        std::vector<double> sc(pos + 1);
        double mx = -1e300;
        for (int t = 0; t <= pos; ++t) {
          double s = 0;
          for (int d = 0; d < D; ++d) s += q[h * D + d] * kc_[l][(size_t(t) * KVH + kvh) * D + d];
          sc[t] = s / std::sqrt(double(D));
          mx = std::max(mx, sc[t]);
        }
        double den = 0;
        for (auto& s : sc) den += (s = std::exp(s - mx));
        for (int t = 0; t <= pos; ++t)
          for (int d = 0; d < D; ++d) att[h * D + d] += sc[t] / den * vc_[l][(size_t(t) * KVH + kvh) * D + d];
      }
      auto o = matvec(L.o, att, E);
      for (int i = 0; i < E; ++i) x[i] += o[i];
      auto xf = rms(x, L.fn);
      auto g = matvec(L.g, xf, hp.n_ff), u = matvec(L.u, xf, hp.n_ff);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      auto dn = matvec(L.d, g, E);
      for (int i = 0; i < E; ++i) x[i] += dn[i];
    }
    return matvec(m_.out, rms(x, m_.out_norm), hp.n_vocab);
  }

 private:
  std::vector<double> rms(const std::vector<double>& x, const std::vector<float>& w) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / double(x.size()) + double(m_.hp.rms_eps));
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
    return y;
  }
  static std::vector<double> matvec(const std::vector<float>& w, const std::vector<double>& x, size_t rows) {
    std::vector<double> y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = 0; i < x.size(); ++i) y[r] += double(w[r * x.size() + i]) * x[i];
    return y;
  }
  void rope(std::vector<double>& v, int heads, int pos) const {
    const int D = int(m_.hp.head_dim);
    for (int h = 0; h < heads; ++h)
      for (int i = 0; 2 * i < int(m_.hp.rope_dim); ++i) {
        const double th = double(pos) * inv_[i], c = std::cos(th), s = std::sin(th);
        const double a = v[h * D + 2 * i], b = v[h * D + 2 * i + 1];
        v[h * D + 2 * i] = a * c - b * s;
        v[h * D + 2 * i + 1] = a * s + b * c;
      }
  }
  const RefModel& m_;
  std::vector<float> inv_;
  std::vector<std::vector<double>> kc_, vc_;
};

struct Compare {
  double rel_rms;
  double top1;
};

Compare teacher_forced(Backend& be, const RefModel& ref, int steps, uint32_t seed) {
  RefForward rf(ref);
  std::mt19937 rng(seed);
  double e = 0, r = 0;
  int agree = 0;
  for (int pos = 0; pos < steps; ++pos) {
    const int tok = int(rng() % ref.hp.n_vocab);
    const auto want = rf.step(tok, pos);
    const auto got = be.decode_logits(tok, pos);
    EXPECT_EQ(got.size(), want.size());
    size_t bi = 0, ri = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      e += (got[i] - want[i]) * (got[i] - want[i]);
      r += want[i] * want[i];
      if (got[i] > got[bi]) bi = i;
      if (want[i] > want[ri]) ri = i;
    }
    agree += bi == ri;
  }
  return {std::sqrt(e / r), double(agree) / steps};
}

HParams tiny_llama() {
  HParams hp;
  hp.n_embd = 256;
  hp.n_layer = 2;
  hp.n_head = 8;
  hp.n_head_kv = 2;
  hp.head_dim = 32;
  hp.rope_dim = 32;
  hp.n_ff = 512;
  hp.n_vocab = 300;
  hp.n_ctx_train = 256;
  hp.rope_base = 500000.f;
  hp.rope_scaling.type = RopeScalingType::Llama3;
  hp.rope_scaling.factor = 32.f;
  hp.rope_scaling.original_context = 64;
  return hp;
}

HParams stories_shape() {  // stories260K's odd sizes: n_ff 172, head_dim 8
  HParams hp;
  hp.n_embd = 64;
  hp.n_layer = 5;
  hp.n_head = 8;
  hp.n_head_kv = 4;
  hp.head_dim = 8;
  hp.rope_dim = 8;
  hp.n_ff = 172;
  hp.n_vocab = 512;
  hp.n_ctx_train = 512;
  return hp;
}

TEST(CudaBackend, F32ModelMatchesTheDoubleReferenceTightly) {
  P64_REQUIRE_CUDA_DEVICE();
  const DType f = DType::F32;
  Built b = build(stories_shape(), {f, f, f, f, f, f, f, f, f}, 1);
  for (const char* graphs : {"0", "1"}) {
    SCOPED_TRACE(std::string("graphs=") + graphs);
    auto be = make_cuda_backend();
    BackendOptions o;
    o.switches["graphs"] = graphs;
    be->load(b.model, o);
    const Compare c = teacher_forced(*be, b.ref, 40, 77);
    EXPECT_LT(c.rel_rms, 1e-4);
    EXPECT_EQ(c.top1, 1.0);
  }
}

TEST(CudaBackend, QuantizedMixMatchesTheReferenceOnEverySwitchSetting) {
  P64_REQUIRE_CUDA_DEVICE();
  const Mix mix{DType::Q4_K_SOA, DType::Q6_K_SOA, DType::Q4_K_SOA, DType::Q4_K_SOA, DType::Q6_K,
                DType::Q8_0_SOA, DType::Q4_K, DType::Q4_K, DType::Q6_K_SOA};
  Built b = build(tiny_llama(), mix, 2);
  const std::vector<std::map<std::string, std::string>> configs = {
      {},
      {{"act_quant", "f32"}},
      {{"act_quant", "int8"}},
      {{"graphs", "0"}, {"fused_gate_up", "0"}, {"qkv_fused", "0"}},
      {{"gemv_rows", "1"}, {"attn_chunk", "16"}},
      {{"gemv_rows", "4"}, {"kv_type", "f32"}},
      {{"gemv_layout", "blocks"}},
      {{"gemv_layout", "tiles"}, {"gemv_split", "4"}, {"swiglu_quant", "1"}},
      {{"gemv_split", "2"}, {"swiglu_quant", "1"}, {"graphs", "0"}},
      {{"gemv_prologue", "1"}},
      {{"q5_0_int16", "0"}},
      {{"gemv_prologue", "1"}, {"graphs", "0"}, {"fused_gate_up", "0"}, {"gemv_layout", "blocks"}},
  };
  double int8_err = 0, int16_err = 0;
  for (const auto& sw : configs) {
    std::string label;
    for (const auto& [k, v] : sw) label += k + "=" + v + " ";
    SCOPED_TRACE(label);
    auto be = make_cuda_backend();
    BackendOptions o;
    o.switches = sw;
    be->load(b.model, o);
    const Compare c = teacher_forced(*be, b.ref, 48, 5);
    const bool int8 = sw.count("act_quant") && sw.at("act_quant") == "int8";
    if (int8) {
      // The opt-in int8 activations: their rounding noise compounds over the layers (measured
      // 3.6e-2 here); bounded so that a broken kernel still fails.
      int8_err = c.rel_rms;
      EXPECT_LT(c.rel_rms, 6e-2);
      EXPECT_GE(c.top1, 0.85);
    } else {
      if (sw.empty()) int16_err = c.rel_rms;
      EXPECT_LT(c.rel_rms, 1e-2);
      EXPECT_GE(c.top1, 0.95);
    }
  }
  // The default int16 activations are what keeps the quantized paths inside the quality gate.
  EXPECT_LT(int16_err * 10, int8_err);
}

TEST(CudaBackend, GreedyDecodeAndPrefillAgreeWithLogits) {
  P64_REQUIRE_CUDA_DEVICE();
  const DType f = DType::F32;
  Built b = build(stories_shape(), {f, f, f, f, f, f, f, f, f}, 3);
  auto be = make_cuda_backend();
  be->load(b.model, {});
  RefForward rf(b.ref);
  const std::vector<int32_t> prompt = {1, 17, 300, 5};
  int32_t tok = be->prefill(prompt, 0);
  std::vector<double> want;
  for (size_t i = 0; i < prompt.size(); ++i) want = rf.step(prompt[i], int(i));
  for (int pos = int(prompt.size()); pos < 60; ++pos) {
    const int32_t ref_tok = int32_t(std::max_element(want.begin(), want.end()) - want.begin());
    ASSERT_EQ(tok, ref_tok) << "greedy diverged at position " << pos;
    want = rf.step(tok, pos);
    tok = be->decode_argmax(tok, pos);
  }
}

TEST(CudaBackend, RefusesBadInputWithClearErrors) {
  P64_REQUIRE_CUDA_DEVICE();
  const DType f = DType::F32;
  Built b = build(stories_shape(), {f, f, f, f, f, f, f, f, f}, 4);
  auto be = make_cuda_backend();
  BackendOptions o;
  o.switches["no_such_switch"] = "1";
  EXPECT_THROW(be->load(b.model, o), Error);
  o.switches = {{"gemv_rows", "3"}};
  EXPECT_THROW(be->load(b.model, o), Error);
  be->load(b.model, {});
  EXPECT_THROW(be->decode_argmax(512, 0), Error);   // outside the vocabulary
  EXPECT_THROW(be->decode_argmax(1, 512), Error);   // outside the KV cache
  EXPECT_GT(be->device_memory_peak(), 0u);
}

// decode-proxy's KV bytes per token come from the backend: f32 K and V for an F32 model, f16 for
// a quantized one (kv_type=auto), and what kv_type asks for.
TEST(CudaBackend, StatesTheKvBytesOfEachPosition) {
  P64_REQUIRE_CUDA_DEVICE();
  const DType f = DType::F32;
  Built b = build(stories_shape(), {f, f, f, f, f, f, f, f, f}, 5);
  const HParams& hp = b.model->hparams();
  const uint64_t f32_bytes = 2ull * hp.n_layer * hp.kv_dim() * 4;
  auto be = make_cuda_backend();
  EXPECT_EQ(be->kv_bytes_per_position(), 0u) << "nothing loaded";
  be->load(b.model, {});
  EXPECT_EQ(be->kv_bytes_per_position(), f32_bytes);
  BackendOptions o;
  o.switches["kv_type"] = "f16";
  auto half = make_cuda_backend();
  half->load(b.model, o);
  EXPECT_EQ(half->kv_bytes_per_position(), f32_bytes / 2);
}

TEST(CudaBackend, RegistryOffersCudaWithRank100) {
  register_cuda_backend();
  bool found = false;
  for (const auto& f : backend_factories())
    if (f.name == "cuda") {
      found = true;
      EXPECT_EQ(f.rank, 100);
      std::string why;
      const bool ok = f.available(&why);
      if (!ok) EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace p64
