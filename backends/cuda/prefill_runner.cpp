#include "backends/cuda/prefill_runner.h"

#include <algorithm>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/prefill_kernels.h"
#include "engine/common/error.h"

namespace p64::cuda {
namespace {

int64_t pad64(int64_t v) { return (v + 63) / 64 * 64; }

void check_matrix(const DevMatrix& m, const char* what) {
  if (!prefill_gemm_supports(m.dtype))
    throw Error(std::string("CUDA batched prefill: ") + what + " has dtype " + std::to_string(m.dtype) +
                ", which the prefill GEMM does not read (use prefill=stepwise)");
}

}  // namespace

BatchedPrefill::BatchedPrefill(PrefillModel model, const PrefillOptions& opt, int device)
    : m_(std::move(model)), opt_(opt) {
  const HParams& hp = m_.hp;
  if (opt_.chunk < 1) throw Error("CUDA batched prefill: chunk of " + std::to_string(opt_.chunk) + " tokens");
  check_matrix(m_.weights.embd, "token_embd");
  check_matrix(m_.weights.output, "output");
  for (const DevLayer& L : m_.weights.layers)
    for (const DevMatrix* p : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down}) check_matrix(*p, "a layer matrix");
  P64_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  try {
    const size_t C = size_t(opt_.chunk);
    ld_e_ = pad64(hp.n_embd);
    ld_q_ = pad64(hp.q_dim());
    ld_f_ = pad64(hp.n_ff);
    qkv_w_ = int64_t(hp.q_dim()) + 2 * int64_t(hp.kv_dim());
    tokens_ = static_cast<int32_t*>(alloc(size_t(m_.kv.max_ctx) * sizeof(int32_t), "prefill tokens"));
    x_ = static_cast<float*>(alloc(C * hp.n_embd * sizeof(float), "prefill residual"));
    xh_ = alloc(C * ld_e_ * 2, "prefill normed activations");
    qkv_ = static_cast<float*>(alloc(C * qkv_w_ * sizeof(float), "prefill qkv"));
    attn_ = alloc(C * ld_q_ * 2, "prefill attention output");
    gate_up_ = static_cast<float*>(alloc(C * 2 * hp.n_ff * sizeof(float), "prefill gate/up"));
    hidden_ = alloc(C * ld_f_ * 2, "prefill ffn hidden");
    bool post_norms = false;
    for (const DevLayer& L : m_.weights.layers) post_norms = post_norms || L.post_attn_norm || L.post_ffn_norm;
    if (post_norms) post_ = static_cast<float*>(alloc(C * hp.n_embd * sizeof(float), "prefill post-norm input"));
    if (opt_.split_k) {
      // Split-K partial sums: room for 8 splits of the widest matrix group that splits in
      // practice (q/k/v or the residual's width); the GEMM splits less where it does not fit.
      ws_floats_ = int64_t(C) * std::max<int64_t>(qkv_w_, hp.n_embd) * 8;
      ws_ = static_cast<float*>(alloc(size_t(ws_floats_) * sizeof(float), "prefill split-K workspace"));
    }
    // The f16 GEMM inputs' pad columns must read as zeros; no kernel ever writes them.
    P64_CUDA_CHECK(cudaMemset(xh_, 0, C * ld_e_ * 2));
    P64_CUDA_CHECK(cudaMemset(attn_, 0, C * ld_q_ * 2));
    P64_CUDA_CHECK(cudaMemset(hidden_, 0, C * ld_f_ * 2));
  } catch (...) {
    for (void* p : allocations_) device_free(p);
    throw;
  }
}

BatchedPrefill::~BatchedPrefill() {
  for (void* p : allocations_) device_free(p);
}

void* BatchedPrefill::alloc(size_t bytes, const char* what) {
  void* p = device_alloc(bytes, what);
  allocations_.push_back(p);
  bytes_ += bytes;
  return p;
}

void BatchedPrefill::gemm(const DevMatrix* const* mats, float* const* outs, int count, const void* x, int64_t ldx,
                          int T, int64_t ldy, bool add, cudaStream_t stream) {
  int i = 0;
  while (i < count) {
    PrefillGemm g;
    g.dtype = mats[i]->dtype;
    g.n = mats[i]->n;
    g.x = x;
    g.ldx = ldx;
    g.T = T;
    g.ldy = ldy;
    g.epilogue = add ? PrefillEpilogue::AddTo : PrefillEpilogue::Store;
    g.ws = ws_;
    g.ws_floats = ws_floats_;
    g.nseg = 0;
    while (i < count && g.nseg < 3 && mats[i]->dtype == g.dtype && mats[i]->n == g.n) {
      g.seg[g.nseg++] = PrefillGemmSeg{mats[i]->d, mats[i]->nb, mats[i]->rows, outs[i]};
      ++i;
    }
    launch_prefill_gemm(g, sms_, stream);
  }
}

void BatchedPrefill::enqueue(std::span<const int32_t> tokens, int pos, cudaStream_t stream, const PrefillOpHook& hook) {
  if (tokens.empty() || pos < 0 || int64_t(pos) + int64_t(tokens.size()) > m_.kv.max_ctx)
    throw Error("CUDA batched prefill: " + std::to_string(tokens.size()) + " tokens at position " +
                std::to_string(pos) + " do not fit the KV cache of " + std::to_string(m_.kv.max_ctx));
  // From pageable memory: the copy has read `tokens` when the call returns.
  P64_CUDA_CHECK(cudaMemcpyAsync(tokens_, tokens.data(), tokens.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
  const int n = int(tokens.size());
  for (int done = 0; done < n; done += opt_.chunk) {
    const int T = std::min(opt_.chunk, n - done);
    run_chunk(tokens_ + done, T, pos + done, done + T == n, stream, hook);
  }
}

void BatchedPrefill::run_chunk(const int32_t* tokens, int T, int pos, bool last, cudaStream_t stream,
                               const PrefillOpHook& hook) {
  const HParams& hp = m_.hp;
  const int64_t E = hp.n_embd, Q = hp.q_dim(), KV = hp.kv_dim(), F = hp.n_ff;
  auto op = [&](const char* name, OpGroup group, int layer, const std::function<void()>& f) {
    if (hook) hook(name, group, layer, f);
    else f();
  };
  const ArchSteps& arch = m_.weights.arch;
  op("embed", OpGroup::Other, -1, [&] {
    launch_prefill_embed(m_.weights.embd.dtype, m_.weights.embd.d, m_.weights.embd.nb, E, tokens, T, x_, stream);
    // embedding scaled by sqrt(n_embd) (gemma)
    if (arch.embd_scale > 0.f) launch_scale(x_, int64_t(T) * E, arch.embd_scale, stream);
  });
  for (size_t li = 0; li < m_.weights.layers.size(); ++li) {
    const DevLayer& L = m_.weights.layers[li];
    const int l = int(li);
    op("rms_attn", OpGroup::Rms, l,
       [&] { launch_prefill_rmsnorm(x_, E, L.attn_norm, hp.rms_eps, E, T, xh_, ld_e_, stream); });
    op("qkv", OpGroup::Attn, l, [&] {
      const DevMatrix* mats[3] = {&L.wq, &L.wk, &L.wv};
      float* outs[3] = {qkv_, qkv_ + Q, qkv_ + Q + KV};
      gemm(mats, outs, 3, xh_, ld_e_, T, qkv_w_, false, stream);
    });
    uint8_t* kc = m_.kv.k_layer(uint32_t(li));
    uint8_t* vc = m_.kv.v_layer(uint32_t(li));
    if (!arch.qkv_heads) {
      op("rope", OpGroup::Attn, l, [&] {
        launch_prefill_rope_kv(qkv_, qkv_w_, m_.inv_freq, int(hp.n_head), int(hp.n_head_kv), int(hp.head_dim),
                               int(hp.rope_dim), kc, vc, m_.kv.f16, m_.kv.max_ctx, pos, T, stream);
      });
    } else {
      // qkv bias, q/k norm, RoPE of the model's pairing and the KV write (arch_kernels.h)
      op("qkv_heads", OpGroup::Attn, l, [&] {
        QkvHeads h;
        h.qkv = qkv_;
        h.ld = qkv_w_;
        h.bias = L.qkv_bias;
        h.q_norm = L.q_norm;
        h.k_norm = L.k_norm;
        h.eps = hp.rms_eps;
        h.inv_freq = m_.inv_freq_local && hp.layer_is_local(uint32_t(li)) ? m_.inv_freq_local : m_.inv_freq;
        h.n_head = int(hp.n_head);
        h.n_head_kv = int(hp.n_head_kv);
        h.head_dim = int(hp.head_dim);
        h.rope_dim = int(hp.rope_dim);
        h.halves = arch.halves;
        h.rope_scale = arch.rope_scale;
        h.k_cache = kc;
        h.v_cache = vc;
        h.kv_f16 = m_.kv.f16;
        h.max_ctx = m_.kv.max_ctx;
        h.pos0 = pos;
        h.T = T;
        launch_qkv_heads(h, stream);
      });
    }
    op("sdpa", OpGroup::Attn, l, [&] {
      PrefillAttn a;
      a.q = qkv_;
      a.ldq = qkv_w_;
      a.k_cache = kc;
      a.v_cache = vc;
      a.kv_f16 = m_.kv.f16;
      a.n_head = int(hp.n_head);
      a.n_head_kv = int(hp.n_head_kv);
      a.head_dim = int(hp.head_dim);
      a.max_ctx = m_.kv.max_ctx;
      a.pos = pos;
      a.T = T;
      a.out = attn_;
      a.ldo = ld_q_;
      a.group = opt_.attn_group;
      if (!arch.scored.empty() && arch.scored[li]) launch_prefill_attention_scored(a, arch.scores[li], stream);
      else launch_prefill_attention(a, stream);
    });
    op("o", OpGroup::Attn, l, [&] {
      const DevMatrix* mats[1] = {&L.wo};
      float* outs[1] = {L.post_attn_norm ? post_ : x_};
      gemm(mats, outs, 1, attn_, ld_q_, T, E, !L.post_attn_norm, stream);
    });
    // post-attention rmsnorm before the residual add (gemma)
    if (L.post_attn_norm)
      op("post_attn_norm", OpGroup::Rms, l,
         [&] { launch_post_norm_add(post_, L.post_attn_norm, hp.rms_eps, E, T, x_, stream); });
    op("rms_ffn", OpGroup::Rms, l,
       [&] { launch_prefill_rmsnorm(x_, E, L.ffn_norm, hp.rms_eps, E, T, xh_, ld_e_, stream); });
    op("gate_up", OpGroup::Ffn, l, [&] {
      const DevMatrix* mats[2] = {&L.gate, &L.up};
      float* outs[2] = {gate_up_, gate_up_ + F};
      gemm(mats, outs, 2, xh_, ld_e_, T, 2 * F, false, stream);
    });
    if (!arch.geglu)
      op("swiglu", OpGroup::Ffn, l,
         [&] { launch_prefill_swiglu(gate_up_, gate_up_ + F, 2 * F, F, T, hidden_, ld_f_, stream); });
    else
      op("geglu", OpGroup::Ffn, l,
         [&] { launch_prefill_geglu(gate_up_, gate_up_ + F, 2 * F, F, T, hidden_, ld_f_, stream); });
    op("down", OpGroup::Ffn, l, [&] {
      const DevMatrix* mats[1] = {&L.down};
      float* outs[1] = {L.post_ffn_norm ? post_ : x_};
      gemm(mats, outs, 1, hidden_, ld_f_, T, E, !L.post_ffn_norm, stream);
    });
    // post-FFN rmsnorm before the residual add (gemma)
    if (L.post_ffn_norm)
      op("post_ffn_norm", OpGroup::Rms, l,
         [&] { launch_post_norm_add(post_, L.post_ffn_norm, hp.rms_eps, E, T, x_, stream); });
  }
  if (!last) return;
  // Only the last token's logits are kept: its residual row, normed, times the output matrix.
  op("rms_final", OpGroup::Rms, -1, [&] {
    launch_prefill_rmsnorm(x_ + int64_t(T - 1) * E, E, m_.weights.output_norm, hp.rms_eps, E, 1, xh_, ld_e_, stream);
  });
  op("logits", OpGroup::Logits, -1, [&] {
    const DevMatrix* mats[1] = {&m_.weights.output};
    float* outs[1] = {m_.logits};
    gemm(mats, outs, 1, xh_, ld_e_, 1, int64_t(hp.n_vocab), false, stream);
  });
}

}  // namespace p64::cuda
