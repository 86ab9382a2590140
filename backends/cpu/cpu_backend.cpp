// The CPU reference backend. The forward pass reads top to bottom in forward(): each step of
// the Llama block is headed by its name, and the steps only some architectures have are named
// branches on the tensors the model has (qwen2's qkv bias, the q/k norm of qwen3 and gemma3,
// gemma's post-norms, phi3's fused qkv and gate_up), on its table (gemma's embedding scale and GeGLU) or on its
// hyperparameters (sliding windows, soft-caps, LongRope's attention factor); the kernels it calls (cpu_matmul, cpu_ops, the
// dot kernels) are where the speed comes from.
#include "backends/cpu/cpu_backend.h"
#include "engine/runtime/host_memory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/cpu/cpu_matmul.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/dot.h"
#include "engine/common/error.h"
#include "engine/model/architecture.h"
#include "engine/quant/quant.h"
#include "engine/runtime/host_bandwidth.h"
#include "engine/runtime/host_compute.h"
#include "engine/runtime/thread_pool.h"

namespace p64 {
namespace {

using Clock = std::chrono::steady_clock;

// Prefill runs in batches of at most this many tokens: each weight row is read from memory
// once per batch, and the batch's activations stay in the core's L2.
constexpr int32_t kMaxBatch = 64;

int largest_divisor_at_most(int n, int limit) {
  for (int d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Per-op spans: mark() closes the span that began at the previous mark, so consecutive ops
// cover the step's wall time with no gaps. With no sink it does nothing.
class StepTimer {
 public:
  void set_sink(TimelineSink* s) { sink_ = s; }
  bool on() const { return sink_ != nullptr; }
  void begin(bool prefill, int32_t step) {
    if (!sink_) return;
    prefill_ = prefill;
    step_ = step;
    spans_.clear();
    last_ = Clock::now();
    if (!have_origin_) origin_ = last_, have_origin_ = true;
  }
  void mark(const char* name, OpGroup group, int32_t layer = -1) {
    if (!sink_) return;
    const auto now = Clock::now();
    OpSpan s;
    s.name = name;
    s.group = group;
    s.layer = layer;
    s.prefill = prefill_;
    s.step = step_;
    s.start_us = std::chrono::duration<double, std::micro>(last_ - origin_).count();
    s.dur_us = std::chrono::duration<double, std::micro>(now - last_).count();
    spans_.push_back(std::move(s));
    last_ = now;
  }
  void end() {
    if (!sink_) return;
    for (const OpSpan& s : spans_) sink_->on_span(s);  // reported once the step's timings are known
    spans_.clear();
  }
  void reset_origin() { have_origin_ = false; }

 private:
  TimelineSink* sink_ = nullptr;
  std::vector<OpSpan> spans_;
  Clock::time_point origin_, last_;
  bool have_origin_ = false, prefill_ = false;
  int32_t step_ = 0;
};

// The KV cache is zeroed (touched) at load: left untouched, every new page faulted in during
// decode (SmolLM2-360M: kv_write 0.53 ms of a 19.7 ms step in a fresh timeline, 0.03 touched).
template <class T>
std::unique_ptr<T[]> zeroed(size_t n) {
  return std::unique_ptr<T[]>(new T[n]());
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }

  Passport passport() override {
    Passport p;
    p.host = collect_host_facts();
    p.build = collect_build_facts();
    DeviceFacts& d = p.device;
    d.backend = "cpu";
    d.name = p.host.cpu_model;
    d.vendor = p.host.cpu_id.rfind("AuthenticAMD", 0) == 0   ? "AMD"
               : p.host.cpu_id.rfind("GenuineIntel", 0) == 0 ? "Intel"
                                                             : "";
    d.device_type = "cpu";
    d.api_version = std::string(isa_name(isa_));
    d.multiprocessors = pool_ ? pool_->size() : p.host.logical_cores;
    d.memory_bytes = p.host.memory_bytes;
    d.l2_bytes = host_last_level_cache_bytes();
    d.subgroup_size = 1;
    p.measured = cached_bandwidth();
    p.compute = cached_compute(d.api_version, d.multiprocessors);
    return p;
  }

  std::vector<SwitchInfo> switches() const override { return cpu_switch_table(); }
  bool runs_architecture(std::string_view arch) const override { return find_architecture(arch) != nullptr; }
  bool runs_sliding_window() const override { return true; }

  void load(std::shared_ptr<const Model> model, const BackendOptions& options) override {
    const SwitchValues sw("cpu", cpu_switch_table(), options.switches);
    for (const TensorView& t : model->tensors()) {
      const bool matrix = t.n_dims >= 2;
      if (matrix && !dot::supported(t.dtype))
        throw Error(model->source() + ": tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
                    ", which the cpu backend has no kernel for");
    }
    const std::string& isa = sw.text("isa");
    isa_ = isa == "auto"     ? best_isa()
           : isa == "avx512" ? Isa::Avx512
           : isa == "avx2"   ? Isa::Avx2
                             : Isa::Scalar;
    if (!isa_supported(isa_)) throw Error("cpu backend: this CPU cannot run the " + isa + " kernels");
    kv_f16_ = sw.flag("kv_f16");

    model_ = std::move(model);
    hp_ = model_->hparams();
    if (hp_.rope_dim == 0) hp_.rope_dim = hp_.head_dim;
    n_ctx_ = options.max_context;
    if (hp_.n_ctx_train > 0) n_ctx_ = std::min(n_ctx_, hp_.n_ctx_train);
    if (n_ctx_ == 0) throw Error("cpu backend: max_context is 0");
    // LongRope: the short factors serve contexts up to original_context; beyond it llama.cpp and
    // transformers switch to the long factors, which this backend does not implement.
    if (hp_.rope_scaling.type == RopeScalingType::LongRope && n_ctx_ > hp_.rope_scaling.original_context) {
      const std::string why = "cpu backend: " + model_->source() + ": a context of " + std::to_string(n_ctx_) +
                              " positions is past the " + std::to_string(hp_.rope_scaling.original_context) +
                              " that this " + hp_.arch + " model's short LongRope factors serve, and its long factors "
                              "are not implemented; lower max_context (--ctx) to at most " +
                              std::to_string(hp_.rope_scaling.original_context);
      model_.reset(), n_ctx_ = 0;
      throw Error(why);
    }

    pool_ = std::make_unique<ThreadPool>(options.threads);
    matmul_ = std::make_unique<cpu::Matmul>(*pool_, isa_, sw.flag("int8_activations"));
    inv_freq_ = cpu::rope_inv_freq(hp_);
    // Local layers with their own RoPE base rotate unscaled (gemma3); else as global ones.
    HParams local = hp_;
    if (hp_.rope_base_local > 0.0f) {
      local.rope_base = hp_.rope_base_local;
      local.rope_scaling = {};
      local.rope_freq_factors.clear();
    }
    inv_freq_local_ = cpu::rope_inv_freq(local);

    // Norm weights, biases and q/k norms as floats (a few KiB; empty where the architecture has
    // none); matrices stay in place in the model's memory.
    auto floats = [&](const TensorView* t) {
      if (!t) return std::vector<float>();
      std::vector<float> v(static_cast<size_t>(t->ne[0]));
      dot::dequantize_row(cpu::weight_matrix(*t), 0, v.data());
      return v;
    };
    for (auto* v : {&attn_norm_, &ffn_norm_, &bq_, &bk_, &bv_, &q_norm_, &k_norm_, &post_attn_norm_, &post_ffn_norm_})
      v->clear();
    for (const LayerWeights& l : model_->layers()) {
      attn_norm_.push_back(floats(l.attn_norm));
      ffn_norm_.push_back(floats(l.ffn_norm));
      bq_.push_back(floats(l.bq));
      bk_.push_back(floats(l.bk));
      bv_.push_back(floats(l.bv));
      q_norm_.push_back(floats(l.q_norm));
      k_norm_.push_back(floats(l.k_norm));
      post_attn_norm_.push_back(floats(l.post_attn_norm));
      post_ffn_norm_.push_back(floats(l.post_ffn_norm));
    }
    out_norm_ = floats(&model_->output_norm());

    const size_t E = hp_.n_embd, Q = hp_.q_dim(), KV = hp_.kv_dim(), F = hp_.n_ff, B = kMaxBatch;
    // The allocations that grow with the context (the KV cache, each thread's attention scores)
    // are zeroed, which touches every page: one granted on overcommit would end in the OOM killer.
    const size_t kv_elems = static_cast<size_t>(hp_.n_layer) * n_ctx_ * KV;
    const uint64_t kv_need = 2 * uint64_t(kv_elems) * (kv_f16_ ? 2 : 4);
    const uint64_t scores_elems = uint64_t(pool_->size()) * cpu::kMaxAttentionQueries * n_ctx_;
    const uint64_t context_need = kv_need + scores_elems * sizeof(float);
    const std::string kv_what = "the KV cache and attention scores (" + std::to_string(context_need) + " bytes for " +
                                std::to_string(n_ctx_) + " positions)";
    k_f32_.reset(), v_f32_.reset(), k_f16_.reset(), v_f16_.reset();
    scores_ = {};
    // The weights count too: mapped from the model file, they are page cache that MemAvailable
    // reports as free, yet every decode step reads all of them.
    const uint64_t weights = model_->weight_bytes();
    const uint64_t avail = available_host_memory();
    if (const std::string why = host_memory_shortfall(context_need + weights, avail); !why.empty()) {
      const uint64_t usable = usable_host_memory(avail), per_position = context_need / n_ctx_ + 1;
      const uint64_t fit = usable > weights ? (usable - weights) / per_position : 0;
      model_.reset(), n_ctx_ = 0;  // no KV cache: the backend is unloaded, not half loaded
      throw DeviceError("cpu backend: " + kv_what + " with the model's " + std::to_string(weights) +
                        " bytes of weights " + why + "; lower max_context (--ctx) to at most " +
                        std::to_string(fit) + " positions");
    }
    x_.assign(B * E, 0);
    xb_.assign(B * std::max(E, Q), 0);
    q_.assign(B * Q, 0);
    k_.assign(B * KV, 0);
    v_.assign(B * KV, 0);
    att_.assign(B * Q, 0);
    hb_.assign(B * F, 0);
    hb2_.assign(B * F, 0);
    const bool fused = model_->architecture().has(ArchRole::Wqkv) || model_->architecture().has(ArchRole::GateUp);
    fused_.assign(fused ? B * std::max(Q + 2 * KV, 2 * F) : 0, 0);
    final_.assign(E, 0);
    logits_.assign(hp_.n_vocab, 0);
    matmul_->reserve(static_cast<int64_t>(std::max({E, Q, F})), kMaxBatch);
    try {
      scores_.assign(static_cast<size_t>(scores_elems), 0);
      if (kv_f16_) k_f16_ = zeroed<uint16_t>(kv_elems), v_f16_ = zeroed<uint16_t>(kv_elems);
      else k_f32_ = zeroed<float>(kv_elems), v_f32_ = zeroed<float>(kv_elems);
    } catch (const std::bad_alloc&) {
      model_.reset(), n_ctx_ = 0;
      throw DeviceError("cpu backend: cannot allocate " + kv_what + "; lower max_context");
    }
    kv_bytes_ = kv_need;
    logits_valid_ = false;
    timer_.reset_origin();
  }

  uint32_t max_context() const override { return n_ctx_; }

  int32_t prefill(std::span<const int32_t> tokens, int32_t pos) override {
    if (tokens.empty()) throw Error("cpu backend: prefill of zero tokens");
    int32_t top = -1;
    for (size_t i = 0; i < tokens.size(); i += kMaxBatch) {
      const size_t n = std::min<size_t>(kMaxBatch, tokens.size() - i);
      const bool last = i + n == tokens.size();
      top = forward(tokens.subspan(i, n), pos + static_cast<int32_t>(i), last ? Head::Logits : Head::None, true);
    }
    return top;
  }

  int32_t decode_argmax(int32_t token, int32_t pos) override {
    return forward(std::span<const int32_t>(&token, 1), pos, Head::Argmax, false);
  }

  std::span<const float> decode_logits(int32_t token, int32_t pos) override {
    forward(std::span<const int32_t>(&token, 1), pos, Head::Logits, false);
    return logits_;
  }

  std::span<const float> logits() override {
    if (!model_) throw Error("cpu backend: logits() before load()");
    if (!logits_valid_ && have_final_) {
      // decode_argmax kept only the id; the classifier runs again on the kept hidden state.
      matmul_->run({{&model_->output(), logits_.data(), 0}}, final_.data(), hp_.n_embd, hp_.n_embd, 1);
      if (hp_.final_softcap > 0.0f) cpu::softcap(logits_.data(), hp_.n_vocab, hp_.final_softcap);
      logits_valid_ = true;
    }
    return logits_;
  }

  void set_timeline(TimelineSink* sink) override { timer_.set_sink(sink); }

  uint64_t device_memory_peak() const override {
    if (!model_) return 0;
    const size_t floats = x_.size() + xb_.size() + q_.size() + k_.size() + v_.size() + att_.size() + hb_.size() +
                          hb2_.size() + fused_.size() + final_.size() + logits_.size() + scores_.size();
    return model_->weight_bytes() + kv_bytes_ + 4 * floats;
  }

  // The cache as allocated: K and V of every layer, fp32 unless kv_f16 is on.
  uint64_t kv_bytes_per_position() const override { return n_ctx_ ? kv_bytes_ / n_ctx_ : 0; }

 private:
  enum class Head { None, Logits, Argmax };  // what the step computes after the last block

  static MeasuredCompute cached_compute(const std::string& isa, uint32_t threads) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, uint32_t>, MeasuredCompute> measured;
    std::lock_guard lock(mutex);
    auto [it, fresh] = measured.try_emplace({isa, threads});
    if (fresh) it->second = measure_host_compute(isa, threads);
    return it->second;
  }

  static MeasuredBandwidth cached_bandwidth() {
    static std::once_flag once;
    static MeasuredBandwidth bw;
    std::call_once(once, [] { bw = measure_host_bandwidth(); });
    return bw;
  }

  // KV cache row of (layer, position).
  size_t kv_index(uint32_t layer, int32_t pos) const {
    return (static_cast<size_t>(layer) * n_ctx_ + static_cast<size_t>(pos)) * hp_.kv_dim();
  }

  int32_t forward(std::span<const int32_t> tokens, int32_t pos, Head head, bool is_prefill) {
    if (!model_) throw Error("cpu backend: forward before load()");
    const int32_t B = static_cast<int32_t>(tokens.size());
    if (pos < 0 || static_cast<int64_t>(pos) + B > n_ctx_)
      throw Error("cpu backend: positions " + std::to_string(pos) + ".." + std::to_string(pos + B - 1) +
                  " do not fit the KV cache of " + std::to_string(n_ctx_) + " positions (context full)");
    for (int32_t t : tokens)
      if (t < 0 || static_cast<uint32_t>(t) >= hp_.n_vocab)
        throw Error("cpu backend: token id " + std::to_string(t) + " is outside the vocabulary of " +
                    std::to_string(hp_.n_vocab));
    const int64_t E = hp_.n_embd, Q = hp_.q_dim(), KV = hp_.kv_dim(), F = hp_.n_ff;
    const int hd = static_cast<int>(hp_.head_dim), H = static_cast<int>(hp_.n_head);
    const int group = static_cast<int>(hp_.n_head / hp_.n_head_kv);  // query heads per KV head (GQA)
    // Attention jobs: the heads of one KV head (up to kMaxAttentionQueries, a divisor of the group)
    // for a block of tokens, so each pass over the K and V rows serves all of them.
    const int heads = largest_divisor_at_most(group, cpu::kMaxAttentionQueries);
    const int32_t token_block = std::max(1, cpu::kMaxAttentionQueries / heads);
    const int64_t head_chunks = H / heads, token_blocks = (B + token_block - 1) / token_block;
    cpu::Matmul& mm = *matmul_;
    ThreadPool& pool = *pool_;
    timer_.begin(is_prefill, pos);
    logits_valid_ = false;

    // token embedding lookup
    for (int32_t t = 0; t < B; ++t) dot::dequantize_row(cpu::weight_matrix(model_->token_embd()), tokens[t], &x_[t * E]);
    // embedding scaled by sqrt(n_embd) (gemma)
    if (model_->architecture().embd_scaled)
      for (int64_t i = 0; i < B * E; ++i) x_[i] *= std::sqrt(static_cast<float>(E));
    timer_.mark("embed", OpGroup::Other);

    for (uint32_t l = 0; l < hp_.n_layer; ++l) {
      const LayerWeights& w = model_->layers()[l];
      const int32_t L = static_cast<int32_t>(l);
      // A local (sliding-window) layer sees the last sliding_window positions and may have its
      // own RoPE base; the scores' scale and soft-cap are the model's.
      const bool local = hp_.layer_is_local(l);
      const std::vector<float>& inv_freq = local ? inv_freq_local_ : inv_freq_;
      const cpu::AttentionScores how{hp_.attn_scale(), hp_.attn_softcap, local ? static_cast<int32_t>(hp_.sliding_window) : 0};

      // attention rmsnorm
      for (int32_t t = 0; t < B; ++t) cpu::rmsnorm(&xb_[t * E], &x_[t * E], attn_norm_[l].data(), E, hp_.rms_eps);
      timer_.mark("rms_attn", OpGroup::Rms, L);

      // qkv matmuls
      if (!w.wqkv) {
        mm.run({{w.wq, q_.data(), Q}, {w.wk, k_.data(), KV}, {w.wv, v_.data(), KV}}, xb_.data(), E, E, B);
      } else {
        // fused qkv (phi3): one product whose rows are q, then k, then v
        mm.run({{w.wqkv, fused_.data(), Q + 2 * KV}}, xb_.data(), E, E, B);
        for (int32_t t = 0; t < B; ++t) {
          const float* row = &fused_[t * (Q + 2 * KV)];
          std::memcpy(&q_[t * Q], row, Q * 4);
          std::memcpy(&k_[t * KV], row + Q, KV * 4);
          std::memcpy(&v_[t * KV], row + Q + KV, KV * 4);
        }
      }

      // qkv bias (qwen2)
      if (w.bq)
        for (int32_t t = 0; t < B; ++t) {
          cpu::add_into(&q_[t * Q], bq_[l].data(), Q);
          cpu::add_into(&k_[t * KV], bk_[l].data(), KV);
          cpu::add_into(&v_[t * KV], bv_[l].data(), KV);
        }
      timer_.mark("qkv", OpGroup::Attn, L);

      // q and k rmsnorm per head, before RoPE (qwen3, gemma3)
      if (w.q_norm) {
        for (int32_t t = 0; t < B; ++t) {
          for (int h = 0; h < H; ++h) cpu::rmsnorm(&q_[t * Q + h * hd], &q_[t * Q + h * hd], q_norm_[l].data(), hd, hp_.rms_eps);
          for (int h = 0; h < static_cast<int>(hp_.n_head_kv); ++h)
            cpu::rmsnorm(&k_[t * KV + h * hd], &k_[t * KV + h * hd], k_norm_[l].data(), hd, hp_.rms_eps);
        }
        timer_.mark("qk_norm", OpGroup::Attn, L);
      }

      // RoPE: rotate q and k by their absolute positions; LongRope (phi3) also scales the
      // rotated dimensions by its attention factor (1 for the others)
      for (int32_t t = 0; t < B; ++t) {
        cpu::rope(&q_[t * Q], H, hd, static_cast<int>(hp_.rope_dim), hp_.rope_layout, inv_freq, pos + t,
                  hp_.rope_attn_factor);
        cpu::rope(&k_[t * KV], static_cast<int>(hp_.n_head_kv), hd, static_cast<int>(hp_.rope_dim), hp_.rope_layout,
                  inv_freq, pos + t, hp_.rope_attn_factor);
      }
      timer_.mark("rope", OpGroup::Attn, L);

      // KV write: this batch's keys and values at their positions
      for (int32_t t = 0; t < B; ++t) {
        const size_t at = kv_index(l, pos + t);
        if (kv_f16_) {
          for (int64_t i = 0; i < KV; ++i) k_f16_[at + i] = fp32_to_fp16(k_[t * KV + i]), v_f16_[at + i] = fp32_to_fp16(v_[t * KV + i]);
        } else {
          std::memcpy(&k_f32_[at], &k_[t * KV], KV * 4);
          std::memcpy(&v_f32_[at], &v_[t * KV], KV * 4);
        }
      }
      timer_.mark("kv_write", OpGroup::Attn, L);

      // GQA attention: query head h reads KV head h / group; token t sees positions <= pos + t
      // (the last sliding_window of them in a local layer).
      const size_t base = kv_index(l, 0);
      pool.run([&](unsigned ti, unsigned nt) {
        float* scores = &scores_[static_cast<size_t>(ti) * cpu::kMaxAttentionQueries * n_ctx_];
        for (int64_t job = ti; job < token_blocks * head_chunks; job += nt) {
          const int32_t t0 = static_cast<int32_t>(job / head_chunks) * token_block;
          const int h0 = static_cast<int>(job % head_chunks) * heads;
          const int64_t kv_off = static_cast<int64_t>(h0 / group) * hd;
          const float* qs[cpu::kMaxAttentionQueries];
          float* outs[cpu::kMaxAttentionQueries];
          int32_t n_pos[cpu::kMaxAttentionQueries];
          int nq = 0;
          for (int32_t t = t0; t < std::min<int32_t>(B, t0 + token_block); ++t)
            for (int h = h0; h < h0 + heads; ++h, ++nq) {
              qs[nq] = &q_[t * Q + h * hd];
              outs[nq] = &att_[t * Q + h * hd];
              n_pos[nq] = pos + t + 1;
            }
          if (isa_ == Isa::Avx512 &&
              (kv_f16_ ? cpu::attend_group_f16_avx512(qs, outs, n_pos, nq, &k_f16_[base], &v_f16_[base], KV, kv_off, hd,
                                                      how, scores, n_ctx_)
                       : cpu::attend_group_f32_avx512(qs, outs, n_pos, nq, &k_f32_[base], &v_f32_[base], KV, kv_off, hd,
                                                      how, scores, n_ctx_)))
            continue;
          for (int i = 0; i < nq; ++i) {
            if (kv_f16_)
              cpu::attend_head_f16(qs[i], &k_f16_[base], &v_f16_[base], KV, kv_off, hd, n_pos[i], how, scores, outs[i]);
            else
              cpu::attend_head_f32(qs[i], &k_f32_[base], &v_f32_[base], KV, kv_off, hd, n_pos[i], how, scores, outs[i]);
          }
        }
      });
      timer_.mark("sdpa", OpGroup::Attn, L);

      // attention output projection + residual (accumulated into x)
      if (!w.post_attn_norm) {
        mm.run({{w.wo, x_.data(), E, true}}, att_.data(), Q, Q, B);
      } else {
        // post-attention rmsnorm before the residual add (gemma)
        mm.run({{w.wo, xb_.data(), E}}, att_.data(), Q, Q, B);
        for (int32_t t = 0; t < B; ++t) {
          cpu::rmsnorm(&xb_[t * E], &xb_[t * E], post_attn_norm_[l].data(), E, hp_.rms_eps);
          cpu::add_into(&x_[t * E], &xb_[t * E], E);
        }
      }
      timer_.mark("o", OpGroup::Attn, L);

      // ffn rmsnorm
      for (int32_t t = 0; t < B; ++t) cpu::rmsnorm(&xb_[t * E], &x_[t * E], ffn_norm_[l].data(), E, hp_.rms_eps);
      timer_.mark("rms_ffn", OpGroup::Rms, L);

      // SwiGLU: silu(gate(x)) * up(x); GeGLU (gemma): gelu_tanh(gate(x)) * up(x)
      if (!w.w_gate_up) {
        mm.run({{w.w_gate, hb_.data(), F}, {w.w_up, hb2_.data(), F}}, xb_.data(), E, E, B);
      } else {
        // fused gate_up (phi3): one product whose rows are gate, then up
        mm.run({{w.w_gate_up, fused_.data(), 2 * F}}, xb_.data(), E, E, B);
        for (int32_t t = 0; t < B; ++t) {
          std::memcpy(&hb_[t * F], &fused_[t * 2 * F], F * 4);
          std::memcpy(&hb2_[t * F], &fused_[t * 2 * F + F], F * 4);
        }
      }
      // one exp or tanh per element: over the pool, in chunks of whole cache lines
      const bool geglu = model_->architecture().ffn_activation == FfnActivation::GeluTanh;
      pool.parallel_for(static_cast<int64_t>(B) * F, 256, [&](int64_t b, int64_t e) {
        geglu ? cpu::geglu_tanh(&hb_[b], &hb2_[b], e - b) : cpu::swiglu(&hb_[b], &hb2_[b], e - b);
      });
      timer_.mark("gate_up", OpGroup::Ffn, L);

      // down projection + residual
      if (!w.post_ffn_norm) {
        mm.run({{w.w_down, x_.data(), E, true}}, hb_.data(), F, F, B);
      } else {
        // post-FFN rmsnorm before the residual add (gemma)
        mm.run({{w.w_down, xb_.data(), E}}, hb_.data(), F, F, B);
        for (int32_t t = 0; t < B; ++t) {
          cpu::rmsnorm(&xb_[t * E], &xb_[t * E], post_ffn_norm_[l].data(), E, hp_.rms_eps);
          cpu::add_into(&x_[t * E], &xb_[t * E], E);
        }
      }
      timer_.mark("down", OpGroup::Ffn, L);
    }

    int32_t top = -1;
    have_final_ = false;
    if (head != Head::None) {
      // final rmsnorm (last token only: only its logits are asked for)
      cpu::rmsnorm(final_.data(), &x_[(B - 1) * E], out_norm_.data(), E, hp_.rms_eps);
      have_final_ = true;
      timer_.mark("rms_final", OpGroup::Rms);

      // classifier into logits; final soft-capping (gemma2), which leaves the argmax where it was
      if (head == Head::Logits) {
        mm.run({{&model_->output(), logits_.data(), 0}}, final_.data(), E, E, 1);
        if (hp_.final_softcap > 0.0f) cpu::softcap(logits_.data(), hp_.n_vocab, hp_.final_softcap);
        logits_valid_ = true;
        timer_.mark("logits", OpGroup::Logits);
        top = static_cast<int32_t>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
        timer_.mark("argmax", OpGroup::Sample);
      } else {
        top = mm.argmax(model_->output(), final_.data(), E);
        timer_.mark("logits_argmax", OpGroup::Logits);
      }
    }
    timer_.end();
    return top;
  }

  std::shared_ptr<const Model> model_;
  HParams hp_;
  uint32_t n_ctx_ = 0;
  Isa isa_ = best_isa();  // what load() picks by default, so a passport taken before load names it
  bool kv_f16_ = false;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<cpu::Matmul> matmul_;
  std::vector<float> inv_freq_, inv_freq_local_;
  std::vector<std::vector<float>> attn_norm_, ffn_norm_, bq_, bk_, bv_, q_norm_, k_norm_, post_attn_norm_, post_ffn_norm_;
  std::vector<float> out_norm_;
  // Scratch of one batch (run state): residual stream, normed input, q/k/v, attention
  // output, FFN hidden, a fused product's output before it is split (phi3), per-thread
  // attention scores, the last token's hidden and logits.
  std::vector<float> x_, xb_, q_, k_, v_, att_, hb_, hb2_, fused_, final_, logits_, scores_;
  std::unique_ptr<float[]> k_f32_, v_f32_;
  std::unique_ptr<uint16_t[]> k_f16_, v_f16_;
  uint64_t kv_bytes_ = 0;
  bool logits_valid_ = false, have_final_ = false;
  StepTimer timer_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

const std::vector<SwitchInfo>& cpu_switch_table() {
  static const std::vector<SwitchInfo> t = {
      bool_switch("int8_activations",
                  "quantize each matmul's activation row to int8 blocks (one scale per 32) and use integer dot "
                  "products against Q8_0/Q4_0/Q5_0/Q4_K/Q6_K weights",
                  true, "default"),
      bool_switch("kv_f16", "store the KV cache as fp16 instead of fp32 (half the KV bytes)", false, "opt-in"),
      enum_switch("isa", "SIMD kernels: auto picks the widest this CPU runs", "auto", {"auto", "avx512", "avx2", "scalar"},
                  "default"),
  };
  return t;
}

}  // namespace p64
