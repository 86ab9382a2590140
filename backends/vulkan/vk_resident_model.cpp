#include "backends/vulkan/vk_resident_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/vulkan/vk_common.h"
#include "engine/common/error.h"
#include "engine/model/architecture.h"
#include "engine/quant/quant.h"

namespace p64::vulkan {
namespace {

constexpr uint64_t kStagingBytes = 64ull << 20;

// Rows [first, first + count) of a matrix in plain blocks, where a row is contiguous (not in
// the SoA forms, whose fields lie in arrays over the whole matrix).
TensorView row_range(const TensorView& t, int64_t first, int64_t count, const std::string& source) {
  if (dtype_is_soa(t.dtype))
    throw Error(source + ": tensor '" + t.name + "' is a fused matrix in " + std::string(dtype_name(t.dtype)) +
                ", which the Vulkan backend cannot split into its parts; convert the model without SoA layouts");
  const uint64_t row_bytes = t.bytes / static_cast<uint64_t>(t.rows());
  TensorView v = t;
  v.ne[1] = count;
  v.ne[2] = v.ne[3] = 1;
  v.data = t.data + static_cast<uint64_t>(first) * row_bytes;
  v.bytes = static_cast<uint64_t>(count) * row_bytes;
  return v;
}
}  // namespace

ResidentModel::~ResidentModel() {
  for (auto& l : layers)
    for (vk::Buffer* b : {&l.attn_norm, &l.ffn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.gate_up, &l.down, &l.kc, &l.vc,
                          &l.qkv_bias, &l.qk_norm, &l.post_attn_norm, &l.post_ffn_norm})
      ctx_.destroy(*b);
  for (vk::Buffer* b : {&staging_, &embd_buf_, &out_norm, &output_buf_, &rope, &rope_local}) ctx_.destroy(*b);
}

void ResidentModel::upload(const Model& model, uint32_t max_ctx) {
  model_ = &model;
  hp_ = model.hparams();
  max_ctx_ = max_ctx;
  const Architecture& arch = model.architecture();
  qkv_heads = arch.has(ArchRole::Bq) || arch.has(ArchRole::QNorm) || hp_.rope_layout != RopeLayout::Adjacent;
  geglu = arch.ffn_activation == FfnActivation::GeluTanh;
  post_norms = arch.has(ArchRole::PostAttnNorm);
  embd_scale = arch.embd_scaled ? std::sqrt(static_cast<float>(hp_.n_embd)) : 1.0f;
  // Refuse early when the model plainly cannot fit, rather than half-way through the upload.
  const uint64_t kv_layer_bytes = 2ull * max_ctx_ * hp_.kv_dim() * 4;
  const uint64_t need = model.weight_bytes() + model.token_embd().bytes + hp_.n_layer * kv_layer_bytes;
  if (need > ctx_.device_local_bytes)
    throw DeviceError("Vulkan: the model needs about " + std::to_string(need >> 20) + " MiB (weights + KV cache for " +
                      std::to_string(max_ctx_) + " positions); device '" + ctx_.props.deviceName + "' has " +
                      std::to_string(ctx_.device_local_bytes >> 20) + " MiB");

  staging_ = ctx_.create_buffer(std::min<uint64_t>(kStagingBytes, std::max<uint64_t>(need, 1 << 20)), true, "staging");
  embd = upload_matrix(embd_buf_, model.token_embd(), nullptr, "token_embd");
  out_norm = upload_f32_vector(model.output_norm(), "output_norm");
  output = &model.output() == &model.token_embd() ? embd : upload_matrix(output_buf_, model.output(), nullptr, "output");
  layers.resize(hp_.n_layer);
  for (uint32_t i = 0; i < hp_.n_layer; ++i) upload_layer(i, model.layers()[i], kv_layer_bytes / 2);
  rope = build_rope_table(hp_, "RoPE table");
  if (hp_.rope_base_local > 0.0f) {
    // Local layers with their own base rotate unscaled (gemma3), as the CPU backend's do.
    HParams local = hp_;
    local.rope_base = hp_.rope_base_local;
    local.rope_scaling = {};
    local.rope_freq_factors.clear();
    rope_local = build_rope_table(local, "local layers' RoPE table");
  }
  ctx_.destroy(staging_);
  model_ = nullptr;
}

void ResidentModel::upload_layer(uint32_t i, const LayerWeights& w, uint64_t kv_cache_bytes) {
  DeviceLayer& d = layers[i];
  const std::string& source = model_->source();
  const std::string p = "blk." + std::to_string(i) + ".";
  d.attn_norm = upload_f32_vector(*w.attn_norm, p + "attn_norm");
  d.ffn_norm = upload_f32_vector(*w.ffn_norm, p + "ffn_norm");
  if (w.wqkv) {
    // fused qkv (phi3): q, k and v rows go up as three matrices
    std::vector<uint8_t> plain;
    const TensorView qkv = plain_blocks(*w.wqkv, plain);
    const int64_t Q = hp_.q_dim(), KV = hp_.kv_dim();
    d.q = upload_matrix(d.wq, row_range(qkv, 0, Q, source), nullptr, p + "attn_qkv (q)");
    d.k = upload_matrix(d.wk, row_range(qkv, Q, KV, source), nullptr, p + "attn_qkv (k)");
    d.v = upload_matrix(d.wv, row_range(qkv, Q + KV, KV, source), nullptr, p + "attn_qkv (v)");
  } else {
    d.q = upload_matrix(d.wq, *w.wq, nullptr, p + "attn_q");
    d.k = upload_matrix(d.wk, *w.wk, nullptr, p + "attn_k");
    d.v = upload_matrix(d.wv, *w.wv, nullptr, p + "attn_v");
  }
  d.o = upload_matrix(d.wo, *w.wo, nullptr, p + "attn_output");
  if (w.w_gate_up) {
    // fused gate_up (phi3): its gate rows and up rows are the pair the SwiGLU GEMV reads
    std::vector<uint8_t> plain;
    const TensorView gu = plain_blocks(*w.w_gate_up, plain);
    const TensorView up = row_range(gu, hp_.n_ff, hp_.n_ff, source);
    d.gu = upload_matrix(d.gate_up, row_range(gu, 0, hp_.n_ff, source), &up, p + "ffn_up (gate+up)");
  } else {
    d.gu = upload_matrix(d.gate_up, *w.w_gate, w.w_up, p + "ffn_gate+ffn_up");
  }
  d.dn = upload_matrix(d.down, *w.w_down, nullptr, p + "ffn_down");
  if (w.bq) d.qkv_bias = upload_f32_vectors({w.bq, w.bk, w.bv}, p + "attn_q/k/v.bias");
  if (w.q_norm) d.qk_norm = upload_f32_vectors({w.q_norm, w.k_norm}, p + "attn_q/k_norm");
  if (w.post_attn_norm) d.post_attn_norm = upload_f32_vector(*w.post_attn_norm, p + "post_attention_norm");
  if (w.post_ffn_norm) d.post_ffn_norm = upload_f32_vector(*w.post_ffn_norm, p + "post_ffw_norm");
  d.kc = ctx_.create_buffer(kv_cache_bytes, false, p + "K cache");
  d.vc = ctx_.create_buffer(kv_cache_bytes, false, p + "V cache");
}

void ResidentModel::copy_to_device(const vk::Buffer& dst, uint64_t dst_off, const uint8_t* src, uint64_t bytes) {
  // Chunks through one staging buffer: the mapped file is read once, never copied whole.
  if (!staging_.mapped) throw Error("vulkan backend: upload without a staging buffer (internal error)");
  VkCommandBuffer cmd = ctx_.allocate_command_buffer();
  try {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = std::min(bytes - done, staging_.size);
      std::memcpy(staging_.mapped, src + done, n);
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vk::check(vk::api().vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
      VkBufferCopy c{0, dst_off + done, n};
      vk::api().vkCmdCopyBuffer(cmd, staging_.buf, dst.buf, 1, &c);
      vk::check(vk::api().vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
      ctx_.submit_and_wait(cmd);
      done += n;
    }
  } catch (...) {
    ctx_.free_command_buffer(cmd);
    throw;
  }
  ctx_.free_command_buffer(cmd);
}

vk::Buffer ResidentModel::upload_f32_vectors(std::initializer_list<const TensorView*> parts, const std::string& what) {
  std::vector<float> v;
  for (const TensorView* t : parts) {
    const size_t at = v.size();
    v.resize(at + static_cast<size_t>(t->elements()));
    if (t->dtype == DType::F32) {
      std::memcpy(v.data() + at, t->data, (v.size() - at) * 4);
    } else if (t->dtype == DType::F16) {
      const auto* h = reinterpret_cast<const uint16_t*>(t->data);
      for (size_t i = at; i < v.size(); ++i) v[i] = fp16_to_fp32(h[i - at]);
    } else {
      throw Error(model_->source() + ": tensor '" + t->name + "' has dtype " + std::string(dtype_name(t->dtype)) +
                  "; the Vulkan backend reads norm weights and biases as F32 or F16");
    }
  }
  vk::Buffer b = ctx_.create_buffer(v.size() * 4, false, what);
  copy_to_device(b, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4);
  return b;
}

DeviceMatrix ResidentModel::upload_matrix(vk::Buffer& dst, const TensorView& stored_a, const TensorView* stored_b,
                                          const std::string& what) {
  // A CPU-layout (row-interleaved) matrix goes up as its plain blocks.
  std::vector<uint8_t> plain_a, plain_b;
  const TensorView a = plain_blocks(stored_a, plain_a);
  const TensorView plain_view_b = stored_b ? plain_blocks(*stored_b, plain_b) : TensorView{};
  const TensorView* b = stored_b ? &plain_view_b : nullptr;
  for (const TensorView* t : {&a, b}) {
    if (!t) continue;
    if (!dtype_suffix(t->dtype))
      throw Error(model_->source() + ": tensor '" + t->name + "' has dtype " + std::string(dtype_name(t->dtype)) +
                  "; the Vulkan backend reads F32, F16, BF16, Q8_0, Q5_0, Q4_K, Q6_K, their SoA and CPU forms");
    if (t->row_length() % unit_elems(t->dtype) != 0)
      throw Error(model_->source() + ": tensor '" + t->name + "' has rows of " + std::to_string(t->row_length()) +
                  " elements, not a multiple of " + std::to_string(unit_elems(t->dtype)));
  }
  if (b && (b->dtype != a.dtype || b->ne[0] != a.ne[0] || b->rows() != a.rows()))
    throw Error(model_->source() + ": '" + a.name + "' and '" + b->name + "' differ in dtype or shape");
  const uint64_t off2 = align_up(a.bytes, 256);
  const uint64_t total = b ? off2 + b->bytes : a.bytes;
  if (total > ctx_.props.limits.maxStorageBufferRange || total > 0xFFFFFFF0ull)
    throw DeviceError("Vulkan: " + what + " needs a " + std::to_string(total >> 20) +
                      " MiB storage buffer; device '" + ctx_.props.deviceName + "' allows " +
                      std::to_string(ctx_.props.limits.maxStorageBufferRange >> 20) + " MiB");
  // Padded to 16 bytes: the GEMVs read 2-byte-aligned 16-byte spans of AoS blocks as whole words.
  dst = ctx_.create_buffer(align_up(total, 16), false, what);
  copy_to_device(dst, 0, a.data, a.bytes);
  if (b) copy_to_device(dst, off2, b->data, b->bytes);
  DeviceMatrix m;
  m.buf = &dst;
  m.base = 0;
  m.base2 = b ? static_cast<uint32_t>(off2) : 0;
  m.dtype = a.dtype;
  m.K = static_cast<uint32_t>(a.row_length());
  m.M = static_cast<uint32_t>(a.rows());
  const auto info = dtype_info(a.dtype);
  m.nb = static_cast<uint32_t>(a.elements() / (info ? info->block_elems : 1));
  return m;
}

vk::Buffer ResidentModel::build_rope_table(const HParams& hp, const char* what) {
  const uint32_t half = hp.rope_dim / 2;
  std::vector<double> inv(half);
  for (uint32_t i = 0; i < half; ++i) {
    double f = std::pow(static_cast<double>(hp.rope_base), -2.0 * i / hp.rope_dim);
    if (!hp.rope_freq_factors.empty()) {
      f /= hp.rope_freq_factors[std::min<size_t>(i, hp.rope_freq_factors.size() - 1)];
    } else if (hp.rope_scaling.type == RopeScalingType::Linear) {
      f /= hp.rope_scaling.factor;
    } else if (hp.rope_scaling.type == RopeScalingType::Llama3) {
      const auto& s = hp.rope_scaling;
      const double lo_wl = s.original_context / s.low_freq_factor, hi_wl = s.original_context / s.high_freq_factor;
      const double wl = 2.0 * M_PI / f;
      if (wl > lo_wl) {
        f /= s.factor;
      } else if (wl >= hi_wl) {
        const double smooth = (s.original_context / wl - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  std::vector<float> t(static_cast<size_t>(max_ctx_) * half * 2);
  for (uint32_t p = 0; p < max_ctx_; ++p)
    for (uint32_t i = 0; i < half; ++i) {
      const double a = p * inv[i];
      // LongRope's attention factor scales the rotated dimensions (1 but for phi3).
      t[(static_cast<size_t>(p) * half + i) * 2] = static_cast<float>(std::cos(a) * hp.rope_attn_factor);
      t[(static_cast<size_t>(p) * half + i) * 2 + 1] = static_cast<float>(std::sin(a) * hp.rope_attn_factor);
    }
  vk::Buffer b = ctx_.create_buffer(std::max<size_t>(t.size() * 4, 16), false, what);
  if (!t.empty()) copy_to_device(b, 0, reinterpret_cast<const uint8_t*>(t.data()), t.size() * 4);
  return b;
}

}  // namespace p64::vulkan
