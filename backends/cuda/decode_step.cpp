#include "backends/cuda/decode_step.h"

#include <algorithm>

#include "backends/cuda/arch_kernels.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rope_freqs.h"
#include "engine/quant/dtype.h"

namespace p64::cuda {
namespace {

// The GEMV epilogue that adds into the residual and leaves the next norm's input quantized
// (fuse_norm): `next_norm`'s weights applied, and the partial sums of squares in `ssq`.
GemvFusion residual_epilogue(const ActBuffers& out, const float* next_norm, float* ssq) {
  GemvFusion f;
  f.quantize_out = true;
  f.out = out;
  f.out_norm = next_norm;
  f.out_ssq = ssq;
  return f;
}

// A GEMV whose input is the residual's quantized form, to be scaled by its 1/rms (fuse_norm).
GemvFusion normed_input(const float* ssq, float eps) {
  GemvFusion f;
  f.in_ssq = ssq;
  f.in_eps = eps;
  return f;
}

}  // namespace

DecodeStep::DecodeStep(const HParams& hp, const Switches& sw, const ResidentWeights& weights, const KvCache& kv,
                       int multiprocessors, const DeviceAlloc& alloc)
    : hp_(hp), sw_(sw), w_(weights), kv_(kv), multiprocessors_(multiprocessors) {
  plan_.fuse_norm = sw_.fuse_norm && can_fuse_norm();
  plan_.prologue = sw_.gemv_prologue && can_use_prologue();
  // The GEMV's RoPE epilogue rotates adjacent pairs only; qkv_heads does the rest (arch_kernels.h).
  plan_.rope_in_qkv = sw_.qkv_rope && sw_.gemv_rows >= 2 && !w_.arch.qkv_heads;
  allocate_scratch(alloc);
  upload_rope_frequencies(alloc);
}

void DecodeStep::allocate_scratch(const DeviceAlloc& alloc) {
  const HParams& hp = hp_;
  auto floats = [&](size_t count, const std::string& what) {
    return static_cast<float*>(alloc(count * sizeof(float), what));
  };
  const size_t wide = align_up(std::max({size_t(hp.n_embd), size_t(hp.q_dim()), size_t(hp.n_ff)}), 256);
  auto activations = [&](ActBuffers& a, const char* which) {
    const std::string w(which);
    a.xf = floats(wide, "activations" + w);
    a.xq = alloc(wide * sizeof(int16_t), "integer activations" + w);
    a.bits = sw_.act_bits == 8 ? 8 : 16;
    a.xd = floats(wide / 32, "activation scales" + w);
    a.xs = floats(wide / 16, "activation sums" + w);
  };
  x_ = floats(hp.n_embd, "residual");
  activations(act_, "");
  if (plan_.fuse_norm || sw_.swiglu_quant) activations(act_alt_, " (second)");
  if (plan_.fuse_norm) {
    ssq_attn_ = floats(wide / 32, "norm partial sums");
    ssq_ffn_ = floats(wide / 32, "norm partial sums");
  }
  qkv_ = floats(hp.q_dim() + 2 * hp.kv_dim(), "qkv");
  hidden_ = floats(hp.n_ff, "ffn hidden");
  hidden2_ = floats(hp.n_ff, "ffn up");
  const size_t splits = size_t(attention_max_splits(kv_.max_ctx, sw_.attn_chunk));
  part_m_ = floats(hp.n_head * splits, "attention partial max");
  part_l_ = floats(hp.n_head * splits, "attention partial sum");
  part_acc_ = floats(hp.n_head * splits * hp.head_dim, "attention partial output");
  if (sw_.attn_tail_combine && hp.head_dim % 32 == 0) {
    attn_arrivals_ = static_cast<unsigned*>(alloc(size_t(hp.n_head_kv) * sizeof(unsigned), "attention arrivals"));
    P64_CUDA_CHECK(cudaMemset(attn_arrivals_, 0, size_t(hp.n_head_kv) * sizeof(unsigned)));
  }
  logits_ = floats(hp.n_vocab, "logits");
  post_ = w_.arch.post_norms ? floats(hp.n_embd, "post-norm input") : nullptr;
  state_ = static_cast<StepState*>(alloc(sizeof(StepState), "step state"));
}

void DecodeStep::upload_rope_frequencies(const DeviceAlloc& alloc) {
  auto upload = [&](const std::vector<float>& inv, const char* what) {
    auto* d = static_cast<float*>(alloc(std::max<size_t>(1, inv.size()) * sizeof(float), what));
    if (!inv.empty()) P64_CUDA_CHECK(cudaMemcpy(d, inv.data(), inv.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
  };
  inv_freq_ = upload(rope_inv_freq(hp_), "rope frequencies");
  if (hp_.rope_base_local > 0.f) {
    // Local layers with their own base rotate unscaled (gemma3), as the CPU backend's do.
    HParams local = hp_;
    local.rope_base = hp_.rope_base_local;
    local.rope_scaling = {};
    local.rope_freq_factors.clear();
    inv_freq_local_ = upload(rope_inv_freq(local), "local rope frequencies");
  }
}

int DecodeStep::matrix_act_bits(const DevMatrix& m) const {
  return m.dtype == uint32_t(DType::Q5_0) && !sw_.q5_0_int16 ? 0 : sw_.act_bits;
}

bool DecodeStep::int_path(const DevMatrix& m) const {
  return matrix_act_bits(m) != 0 && gemv_has_int_path(m.dtype, m.n, matrix_act_bits(m));
}

// Every matrix a decode step reads on an integer path (the o projection only `with_o`).
bool DecodeStep::all_on_int_path(bool with_o) const {
  auto ok = [&](const DevMatrix& m) { return gemv_has_int_path(m.dtype, m.n, matrix_act_bits(m)); };
  if (!ok(w_.output)) return false;
  for (const DevLayer& L : w_.layers)
    if (!ok(L.wq) || !ok(L.wk) || !ok(L.wv) || (with_o && !ok(L.wo)) || !ok(L.gate) || !ok(L.up) || !ok(L.down))
      return false;
  return true;
}

// fuse_norm needs every matrix on an integer path, 32-aligned widths (the epilogue quantizes
// blocks of 32 rows) and the fused gate-up (its epilogue quantizes the hidden vector).
bool DecodeStep::can_fuse_norm() const {
  const HParams& hp = hp_;
  if (w_.arch.any()) return false;  // the architecture's steps run between the unfused ops
  if (sw_.act_bits == 0 || !sw_.fused_gate_up || hp.n_embd % 32 || hp.n_ff % 32 || hp.head_dim % 32) return false;
  for (const DevLayer& L : w_.layers)
    if (L.gate.dtype != L.up.dtype) return false;
  return all_on_int_path(/*with_o=*/true);
}

// gemv_prologue needs every GEMV that follows a norm or the FFN quantization on the int16
// path at 2 rows per warp under the register cap (the kernel instances it has), and widths its
// shared memory holds.
bool DecodeStep::can_use_prologue() const {
  const HParams& hp = hp_;
  if (w_.arch.any()) return false;  // as can_fuse_norm
  if (sw_.act_bits != 16 || plan_.fuse_norm || sw_.swiglu_quant || sw_.gemv_rows != 2 || !sw_.gemv_reg_cap) return false;
  if (hp.n_embd % 32 || hp.n_ff % 32 || hp.n_embd > kGemvPrologueMaxN || hp.n_ff > kGemvPrologueMaxN) return false;
  return all_on_int_path(/*with_o=*/false);
}

void DecodeStep::prefetch_next(std::initializer_list<const DevMatrix*> next) {
  next_prefetch_ = L2Prefetch{};
  if (!sw_.l2_prefetch) return;
  uint64_t budget = uint64_t(32) << 20;  // about half the L2: the current matrix streams through the rest
  for (const DevMatrix* m : next) {
    if (!m || next_prefetch_.count == 3 || budget == 0) break;
    const uint64_t b = std::min(m->bytes, budget);
    next_prefetch_.ptr[next_prefetch_.count] = m->d;
    next_prefetch_.bytes[next_prefetch_.count] = b;
    ++next_prefetch_.count;
    budget -= b;
  }
}

GemvPrologue DecodeStep::own_input(const float* x, const float* norm) const {
  return plan_.prologue ? GemvPrologue{x, norm, hp_.rms_eps} : GemvPrologue{};
}

void DecodeStep::gemv(const DevMatrix* mats[], float* outs[], int count, GemvMode mode, const float* xf,
                      const ActBuffers& in, int64_t n, const GemvFusion& fuse, const GemvRope& rope,
                      const GemvPrologue& pro) {
  GemvLaunch g;
  g.nseg = count;
  g.dtype = mats[0]->dtype;
  g.n = n;
  for (int i = 0; i < count; ++i) g.seg[i] = GemvSegment{mats[i]->d, outs[i], mats[i]->rows, mats[i]->nb};
  g.xf = xf;
  g.xq = in.xq;
  g.xd = in.xd;
  g.xs = in.xs;
  g.fuse = fuse;
  g.prefetch = next_prefetch_;
  g.cap_registers = sw_.gemv_reg_cap;
  const bool q8 = g.dtype == uint32_t(DType::Q8_0) || g.dtype == uint32_t(DType::Q8_0_SOA);
  g.units_in_flight = sw_.gemv_in_flight != 0 ? sw_.gemv_in_flight : q8 ? 2 : 1;
  if (mode == GemvMode::SwiGLU && sw_.gemv_gate_up_in_flight != 0) g.units_in_flight = sw_.gemv_gate_up_in_flight;
  if (sw_.gemv_ring) {
    g.units_in_flight = 2;
    g.ring_refill = true;
  }
  next_prefetch_ = L2Prefetch{};
  g.mode = mode;
  g.act_bits = matrix_act_bits(*mats[0]);
  g.rows_per_warp = sw_.gemv_rows;
  g.fill_blocks = int64_t(sw_.gemv_fill) * multiprocessors_;
  g.rope = rope;
  g.split_rows = sw_.gemv_split;
  g.prologue = pro;
  launch_gemv(g, stream_);
}

// With fuse_norm the step's activations ping-pong: the residual's normalized form is in act_,
// the attention output and the FFN hidden vector in act_alt_ (a GEMV never reads and writes
// one buffer). Without it every input is in act_.
void DecodeStep::enqueue(cudaStream_t stream, OpTimer& timer) {
  stream_ = stream;
  timer_ = &timer;
  set_dependent_launch(sw_.pdl);
  set_smem_carveout(sw_.smem_carveout);
  embed();
  for (uint32_t li = 0; li < hp_.n_layer; ++li) {
    attention(li);
    feed_forward(li);
  }
  head();
}

void DecodeStep::embed() {
  timer_->op("embed", OpGroup::Other, -1, [&] {
    launch_embed(w_.embd.dtype, w_.embd.d, w_.embd.rows, w_.embd.n, w_.embd.nb, state_, x_, stream_);
    // embedding scaled by sqrt(n_embd) (gemma)
    if (w_.arch.embd_scale > 0.f) launch_scale(x_, hp_.n_embd, w_.arch.embd_scale, stream_);
  });
}

AttnLaunch DecodeStep::attention_launch(uint32_t li) const {
  AttnLaunch a{};
  a.q = qkv_;
  a.k_cache = kv_.k_layer(li);
  a.v_cache = kv_.v_layer(li);
  a.kv_f16 = kv_.f16;
  a.n_head = int(hp_.n_head);
  a.n_head_kv = int(hp_.n_head_kv);
  a.head_dim = int(hp_.head_dim);
  a.max_ctx = kv_.max_ctx;
  a.chunk = sw_.attn_chunk;
  a.grid_splits = sw_.attn_grid;
  a.max_splits = sw_.attn_splits;
  a.lanes = sw_.attn_lanes;
  a.stream_kv = sw_.attn_stream && attention_stream_supported(a);
  if (a.stream_kv && a.max_splits <= 0) a.max_splits = std::max(1, multiprocessors_ / a.n_head_kv);
  a.combine_batch = sw_.combine_batch;
  a.early = sw_.attn_early;
  a.part_m = part_m_;
  a.part_l = part_l_;
  a.part_acc = part_acc_;
  a.out = plan_.fuse_norm ? act_alt_ : act_;
  a.quantize_out = int_path(w_.layers[li].wo) && hp_.head_dim % 32 == 0;
  a.state = state_;
  a.tail_counter = attn_arrivals_;
  if (w_.arch.scored[li]) {
    // scale, soft-cap or sliding window (attention_scores.cu): the plain split geometry
    a.lanes = false;
    a.stream_kv = false;
    a.max_splits = 0;
    a.early = false;
    a.tail_counter = nullptr;
  }
  return a;
}

QkvHeads DecodeStep::qkv_heads_launch(uint32_t li) const {
  const DevLayer& L = w_.layers[li];
  QkvHeads h;
  h.qkv = qkv_;
  h.ld = int64_t(hp_.q_dim()) + 2 * int64_t(hp_.kv_dim());
  h.bias = L.qkv_bias;
  h.q_norm = L.q_norm;
  h.k_norm = L.k_norm;
  h.eps = hp_.rms_eps;
  h.inv_freq = inv_freq_local_ && hp_.layer_is_local(li) ? inv_freq_local_ : inv_freq_;
  h.n_head = int(hp_.n_head);
  h.n_head_kv = int(hp_.n_head_kv);
  h.head_dim = int(hp_.head_dim);
  h.rope_dim = int(hp_.rope_dim);
  h.halves = w_.arch.halves;
  h.rope_scale = w_.arch.rope_scale;
  h.k_cache = kv_.k_layer(li);
  h.v_cache = kv_.v_layer(li);
  h.kv_f16 = kv_.f16;
  h.max_ctx = kv_.max_ctx;
  h.state = state_;
  return h;
}

// rms_attn, qkv, RoPE and the KV write, attention, o (and gemma's post-attention norm).
void DecodeStep::attention(uint32_t li) {
  const HParams& hp = hp_;
  const DevLayer& L = w_.layers[li];
  const int l = int(li);
  const int64_t E = hp.n_embd, Q = hp.q_dim(), KV = hp.kv_dim();
  const bool fused = plan_.fuse_norm;
  const ActBuffers& mixed = fused ? act_alt_ : act_;
  if (!plan_.prologue && (!fused || li == 0))
    timer_->op("rms_attn", OpGroup::Rms, l,
               [&] { launch_rmsnorm_quant(x_, L.attn_norm, hp.rms_eps, E, act_, stream_, sw_.rms_batched); });
  timer_->op("qkv", OpGroup::Attn, l, [&] {
    const DevMatrix* m[3] = {&L.wq, &L.wk, &L.wv};
    float* o[3] = {qkv_, qkv_ + Q, qkv_ + Q + KV};
    const GemvFusion f = fused && li > 0 ? normed_input(ssq_attn_, hp.rms_eps) : GemvFusion{};
    const GemvRope r = plan_.rope_in_qkv ? GemvRope{inv_freq_, qkv_, int(Q), int(KV), int(hp.head_dim),
                                                    int(hp.rope_dim), kv_.max_ctx, kv_.f16, kv_.k_layer(li),
                                                    kv_.v_layer(li), state_}
                                         : GemvRope{};
    prefetch_next({&L.wo});
    // consecutive projections of one dtype share a launch
    int i = 0;
    while (i < 3) {
      int j = i + 1;
      while (sw_.qkv_fused && j < 3 && m[j]->dtype == m[i]->dtype) ++j;
      gemv(m + i, o + i, j - i, GemvMode::Store, act_.xf, act_, E, f, r, own_input(x_, L.attn_norm));
      i = j;
    }
  });
  if (w_.arch.qkv_heads) {
    // qkv bias (qwen2), q/k norm (qwen3, gemma3), RoPE over halves, kv_write
    timer_->op("qkv_heads", OpGroup::Attn, l, [&] { launch_qkv_heads(qkv_heads_launch(li), stream_); });
  } else if (!plan_.rope_in_qkv) {
    timer_->op("rope", OpGroup::Attn, l, [&] {  // rope + kv_write in one kernel
      launch_rope_kv_write(qkv_, inv_freq_, int(hp.n_head), int(hp.n_head_kv), int(hp.head_dim), int(hp.rope_dim),
                           kv_.k_layer(li), kv_.v_layer(li), kv_.f16, kv_.max_ctx, state_, stream_);
    });
  }
  const AttnLaunch a = attention_launch(li);
  const bool scored = w_.arch.scored[li];
  timer_->op("sdpa", OpGroup::Attn, l, [&] {
    if (scored) launch_attention_scored(a, w_.arch.scores[li], stream_);
    else launch_attention_decode(a, stream_);
  });
  if (!a.tail_counter) timer_->op("sdpa_combine", OpGroup::Attn, l, [&] { launch_attention_combine(a, stream_); });
  // gemma: the o product is stored, normed, then added to the residual (post_attn_norm)
  const bool post_attn = L.post_attn_norm != nullptr;
  timer_->op("o", OpGroup::Attn, l, [&] {
    const DevMatrix* m[1] = {&L.wo};
    float* o[1] = {post_attn ? post_ : x_};
    prefetch_next({&L.gate, &L.up});
    if (fused) {
      gemv(m, o, 1, GemvMode::AddTo, mixed.xf, mixed, Q, residual_epilogue(act_, L.ffn_norm, ssq_ffn_));
      return;
    }
    if (int_path(L.wo) && !a.quantize_out) {
      // head_dim not a multiple of 32: quantize the whole attention output instead
      launch_rmsnorm_quant(act_.xf, nullptr, 0.f, Q, act_, stream_);
    }
    gemv(m, o, 1, post_attn ? GemvMode::Store : GemvMode::AddTo, act_.xf, act_, Q);
  });
  if (post_attn)
    timer_->op("post_attn_norm", OpGroup::Rms, l,
               [&] { launch_post_norm_add(post_, L.post_attn_norm, hp.rms_eps, E, 1, x_, stream_); });
}

// rms_ffn, gate and up with their activation, down (and gemma's post-FFN norm).
void DecodeStep::feed_forward(uint32_t li) {
  const HParams& hp = hp_;
  const DevLayer& L = w_.layers[li];
  const int l = int(li);
  const int64_t E = hp.n_embd, F = hp.n_ff;
  const bool fused = plan_.fuse_norm, pro = plan_.prologue;
  const bool last = li + 1 == hp.n_layer;
  if (!fused && !pro)
    timer_->op("rms_ffn", OpGroup::Rms, l,
               [&] { launch_rmsnorm_quant(x_, L.ffn_norm, hp.rms_eps, E, act_, stream_, sw_.rms_batched); });
  // GeGLU (gemma) takes the unfused gate and up GEMVs: the fused epilogue is SwiGLU's
  const bool fuse = sw_.fused_gate_up && L.gate.dtype == L.up.dtype && !w_.arch.geglu;
  const bool down_int = int_path(L.down);
  // swiglu_quant: the SwiGLU epilogue writes down's input into act_alt_ (gate_up reads act_)
  const bool swiglu_quant = sw_.swiglu_quant && !fused && fuse && down_int && int_path(L.gate) && F % 32 == 0;
  timer_->op("gate_up", OpGroup::Ffn, l, [&] {
    const DevMatrix* m[2] = {&L.gate, &L.up};
    float* o[2] = {hidden_, hidden2_};
    prefetch_next({&L.down});
    if (fused || swiglu_quant) {
      GemvFusion f = fused ? normed_input(ssq_ffn_, hp.rms_eps) : GemvFusion{};
      f.quantize_out = true;
      f.out = act_alt_;
      gemv(m, o, 2, GemvMode::SwiGLU, act_.xf, act_, E, f);
    } else if (fuse) {
      gemv(m, o, 2, GemvMode::SwiGLU, act_.xf, act_, E, {}, {}, own_input(x_, L.ffn_norm));
    } else {
      if (L.gate.dtype == L.up.dtype) {
        gemv(m, o, 2, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(x_, L.ffn_norm));
      } else {
        gemv(m, o, 1, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(x_, L.ffn_norm));
        gemv(m + 1, o + 1, 1, GemvMode::Store, act_.xf, act_, E, {}, {}, own_input(x_, L.ffn_norm));
      }
      if (w_.arch.geglu) launch_geglu(hidden_, hidden2_, hidden_, F, stream_);
      else launch_swiglu(hidden_, hidden2_, hidden_, F, stream_);
    }
  });
  if (down_int && !fused && !swiglu_quant && !pro)
    timer_->op("ffn_quant", OpGroup::Ffn, l, [&] { launch_rmsnorm_quant(hidden_, nullptr, 0.f, F, act_, stream_); });
  const bool post_ffn = L.post_ffn_norm != nullptr;  // as post_attn, after the FFN (gemma)
  timer_->op("down", OpGroup::Ffn, l, [&] {
    const DevMatrix* m[1] = {&L.down};
    float* o[1] = {post_ffn ? post_ : x_};
    const GemvMode mode = post_ffn ? GemvMode::Store : GemvMode::AddTo;
    if (last) prefetch_next({&w_.output});
    else prefetch_next({&w_.layers[li + 1].wq, &w_.layers[li + 1].wk, &w_.layers[li + 1].wv});
    if (fused) {
      const float* next_norm = last ? w_.output_norm : w_.layers[li + 1].attn_norm;
      gemv(m, o, 1, GemvMode::AddTo, act_alt_.xf, act_alt_, F, residual_epilogue(act_, next_norm, ssq_attn_));
    } else if (swiglu_quant) {
      gemv(m, o, 1, mode, act_alt_.xf, act_alt_, F);
    } else {
      gemv(m, o, 1, mode, down_int ? act_.xf : hidden_, act_, F, {}, {}, own_input(hidden_, nullptr));
    }
  });
  if (post_ffn)
    timer_->op("post_ffn_norm", OpGroup::Rms, l,
               [&] { launch_post_norm_add(post_, L.post_ffn_norm, hp.rms_eps, E, 1, x_, stream_); });
}

// The final norm, the logits and their argmax.
void DecodeStep::head() {
  const bool fused = plan_.fuse_norm;
  if (!fused && !plan_.prologue)
    timer_->op("rms_final", OpGroup::Rms, -1, [&] {
      launch_rmsnorm_quant(x_, w_.output_norm, hp_.rms_eps, hp_.n_embd, act_, stream_, sw_.rms_batched);
    });
  timer_->op("logits", OpGroup::Logits, -1, [&] {
    const DevMatrix* m[1] = {&w_.output};
    float* o[1] = {logits_};
    gemv(m, o, 1, GemvMode::Store, act_.xf, act_, hp_.n_embd, fused ? normed_input(ssq_attn_, hp_.rms_eps) : GemvFusion{},
         {}, own_input(x_, w_.output_norm));
  });
  timer_->op("argmax", OpGroup::Sample, -1,
             [&] { launch_argmax(logits_, hp_.n_vocab, state_, stream_, sw_.argmax_batch); });
}

}  // namespace p64::cuda
