#include "backends/cuda/resident_model.h"

#include <algorithm>
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/tiled_weights.h"
#include "engine/common/error.h"
#include "engine/model/architecture.h"
#include "engine/quant/dtype.h"
#include "engine/quant/quant.h"

namespace p64::cuda {
namespace {

bool supported_dtype(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q5_0: case DType::Q8_0:
    case DType::Q8_0_SOA: case DType::Q4_K: case DType::Q4_K_SOA: case DType::Q6_K: case DType::Q6_K_SOA:
      return true;
    default:
      return false;
  }
}

// A fused matrix's rows [first, first + count) as a matrix of their own (phi3's qkv and gate_up).
// `t` holds plain blocks, whose rows lie end to end.
TensorView row_range(const TensorView& t, int64_t first, int64_t count, const char* part) {
  const uint64_t row_bytes = dtype_row_bytes(t.dtype, uint64_t(t.row_length()));
  TensorView v = t;
  v.name = t.name + " (" + part + " rows)";
  v.ne[1] = count;
  v.ne[2] = v.ne[3] = 1;
  v.data = t.data + uint64_t(first) * row_bytes;
  v.bytes = uint64_t(count) * row_bytes;
  return v;
}

// Copies tensors into one device allocation, each at a 256-byte boundary.
class WeightUploader {
 public:
  WeightUploader(const Model& model, bool tiles, uint8_t* cursor) : model_(model), tiles_(tiles), cursor_(cursor) {}

  DevMatrix matrix(const TensorView& stored);
  // A fused matrix (phi3's qkv, gate_up) as its parts, `rows[i]` rows each.
  template <size_t N>
  void parts(const TensorView& fused, const int64_t (&rows)[N], const char* const (&names)[N], DevMatrix* const (&out)[N]) {
    std::vector<uint8_t> plain;
    const TensorView t = plain_blocks(fused, plain);
    int64_t first = 0;
    for (size_t i = 0; i < N; ++i) {
      *out[i] = matrix(row_range(t, first, rows[i], names[i]));
      first += rows[i];
    }
  }
  // Vectors (norm weights, biases) end to end, as floats.
  const float* f32s(std::initializer_list<const TensorView*> parts);
  const float* f32(const TensorView& t) { return f32s({&t}); }

 private:
  const Model& model_;
  bool tiles_;
  uint8_t* cursor_;
};

DevMatrix WeightUploader::matrix(const TensorView& stored) {
  std::vector<uint8_t> plain;  // a CPU-layout (row-interleaved) matrix goes up as its plain blocks
  const TensorView t = plain_blocks(stored, plain);
  if (!supported_dtype(t.dtype))
    throw Error("CUDA backend: " + model_.source() + ": tensor " + t.name + " has dtype " +
                std::string(dtype_name(t.dtype)) + ", which the CUDA kernels do not read");
  const auto info = dtype_info(t.dtype);
  const int64_t n = t.row_length();
  if (!info || n % info->block_elems != 0)
    throw Error("CUDA backend: tensor " + t.name + ": row length " + std::to_string(n) + " is not a multiple of the " +
                std::string(dtype_name(t.dtype)) + " block");
  const uint64_t expect = dtype_row_bytes(t.dtype, uint64_t(n)) * uint64_t(t.rows());
  if (t.bytes < expect)
    throw Error("CUDA backend: tensor " + t.name + " holds " + std::to_string(t.bytes) + " bytes, its shape needs " +
                std::to_string(expect));
  uint8_t* dst = cursor_;
  DevMatrix m;
  m.d = dst;
  m.dtype = static_cast<uint32_t>(t.dtype);
  m.n = n;
  m.rows = t.rows();
  m.nb = t.elements() / info->block_elems;
  m.bytes = expect;
  cursor_ += align_up(expect, 256);
  const uint32_t tiled = tiles_ ? tiled_dtype_for(dtype_aos_of(t.dtype), n) : 0;
  if (tiled) {  // gemv_layout=tiles: every kernel reads the tiled form
    std::vector<uint8_t> blocks;
    const void* src = t.data;
    if (dtype_is_packed(t.dtype)) {
      blocks.resize(expect);
      unpack_tensor(t.dtype, t.data, blocks.data(), m.rows, n);
      src = blocks.data();
    }
    std::vector<uint8_t> tiled_bytes(expect);
    pack_tiled(dtype_aos_of(t.dtype), src, tiled_bytes.data(), m.rows, n);
    P64_CUDA_CHECK(cudaMemcpy(dst, tiled_bytes.data(), expect, cudaMemcpyHostToDevice));
    m.dtype = tiled;
    return m;
  }
  // Straight from the mapped file to the device: no host copy is made (but for a CPU layout).
  P64_CUDA_CHECK(cudaMemcpy(dst, t.data, expect, cudaMemcpyHostToDevice));
  return m;
}

const float* WeightUploader::f32s(std::initializer_list<const TensorView*> parts) {
  const float* p = reinterpret_cast<const float*>(cursor_);
  uint64_t at = 0;
  for (const TensorView* t : parts) {
    if (t->dtype != DType::F32) throw Error("CUDA backend: norm or bias tensor " + t->name + " must be F32");
    P64_CUDA_CHECK(cudaMemcpy(cursor_ + at, t->data, t->elements() * sizeof(float), cudaMemcpyHostToDevice));
    at += uint64_t(t->elements()) * sizeof(float);
  }
  cursor_ += align_up(at, 256);
  return p;
}

// The bytes upload_weights() needs, each tensor at a 256-byte boundary.
size_t weight_bytes(const Model& model) {
  size_t bytes = 0;
  auto count = [&](const TensorView* t) {
    if (t) bytes += align_up(t->bytes, 256);
  };
  count(&model.token_embd());
  count(&model.output_norm());
  if (&model.output() != &model.token_embd()) count(&model.output());
  for (const auto& L : model.layers()) {
    const bool qkv = (L.wq && L.wk && L.wv) || L.wqkv, gate_up = (L.w_gate && L.w_up) || L.w_gate_up;
    if (!qkv || !gate_up || !L.attn_norm || !L.wo || !L.ffn_norm || !L.w_down)
      throw Error("CUDA backend: " + model.source() + ": a layer lacks one of its tensors");
    for (const TensorView* t : {L.attn_norm, L.wq, L.wk, L.wv, L.wo, L.ffn_norm, L.w_gate, L.w_up, L.w_down, L.bq, L.bk,
                                L.bv, L.q_norm, L.k_norm, L.post_attn_norm, L.post_ffn_norm, L.wqkv, L.w_gate_up})
      count(t);
    if (L.wqkv) bytes += 3 * 256;  // its q, k and v rows go up as three aligned matrices
    if (L.w_gate_up) bytes += 2 * 256;
  }
  return bytes;
}

DevLayer upload_layer(WeightUploader& up, const LayerWeights& L, const HParams& hp) {
  DevLayer d;
  d.attn_norm = up.f32(*L.attn_norm);
  if (L.wqkv) {
    up.parts(*L.wqkv, {int64_t(hp.q_dim()), int64_t(hp.kv_dim()), int64_t(hp.kv_dim())}, {"q", "k", "v"},
             {&d.wq, &d.wk, &d.wv});
  } else {
    d.wq = up.matrix(*L.wq);
    d.wk = up.matrix(*L.wk);
    d.wv = up.matrix(*L.wv);
  }
  d.wo = up.matrix(*L.wo);
  d.ffn_norm = up.f32(*L.ffn_norm);
  if (L.w_gate_up) {
    up.parts(*L.w_gate_up, {int64_t(hp.n_ff), int64_t(hp.n_ff)}, {"gate", "up"}, {&d.gate, &d.up});
  } else {
    d.gate = up.matrix(*L.w_gate);
    d.up = up.matrix(*L.w_up);
  }
  d.down = up.matrix(*L.w_down);
  if (L.bq) d.qkv_bias = up.f32s({L.bq, L.bk, L.bv});
  if (L.q_norm) d.q_norm = up.f32(*L.q_norm);
  if (L.k_norm) d.k_norm = up.f32(*L.k_norm);
  if (L.post_attn_norm) d.post_attn_norm = up.f32(*L.post_attn_norm);
  if (L.post_ffn_norm) d.post_ffn_norm = up.f32(*L.post_ffn_norm);
  return d;
}

// What the model adds to the Llama step: from its layers' tensors (as the CPU branches on them),
// its architecture's table and its hyperparameters.
ArchSteps resolve_arch_steps(const Model& model, const std::vector<DevLayer>& layers, uint32_t max_ctx) {
  const HParams& hp = model.hparams();
  const Architecture& table = model.architecture();
  ArchSteps s;
  s.halves = hp.rope_layout == RopeLayout::Halves;
  s.rope_scale = hp.rope_attn_factor;
  s.qkv_heads = s.halves || s.rope_scale != 1.f || hp.rope_base_local > 0.f;
  for (const DevLayer& L : layers) {
    s.qkv_heads = s.qkv_heads || L.qkv_bias || L.q_norm;
    s.post_norms = s.post_norms || L.post_attn_norm || L.post_ffn_norm;
  }
  s.geglu = table.ffn_activation == FfnActivation::GeluTanh;
  s.embd_scale = table.embd_scaled ? std::sqrt(float(hp.n_embd)) : 0.f;
  // A layer's attention leaves the Llama kernels where its scores differ from theirs: a scale
  // other than 1/sqrt(head_dim), a soft-cap, or a window this cache is long enough to cross.
  const float llama_scale = 1.0f / std::sqrt(float(hp.head_dim));
  for (uint32_t l = 0; l < hp.n_layer; ++l) {
    AttnScores sc;
    sc.scale = hp.attn_scale();
    sc.softcap = hp.attn_softcap;
    sc.window = hp.layer_is_local(l) ? int(hp.sliding_window) : 0;
    const bool crosses_window = sc.window > 0 && max_ctx > uint32_t(sc.window);
    s.scored.push_back(sc.softcap > 0.f || crosses_window || sc.scale != llama_scale);
    s.scores.push_back(sc);
  }
  return s;
}

}  // namespace

bool ArchSteps::any() const {
  return qkv_heads || geglu || embd_scale > 0.f || post_norms || std::find(scored.begin(), scored.end(), true) != scored.end();
}

std::string arch_steps_problem(const Model& model, uint32_t max_ctx) {
  const HParams& hp = model.hparams();
  const std::string where = "CUDA backend: " + model.source() + ": a " + hp.arch + " model";
  // LongRope: the short factors serve contexts up to original_context; the long ones are not implemented.
  if (hp.rope_scaling.type == RopeScalingType::LongRope && max_ctx > hp.rope_scaling.original_context)
    return where + ": a context of " + std::to_string(max_ctx) + " positions is past the " +
           std::to_string(hp.rope_scaling.original_context) +
           " that its short LongRope factors serve, and its long factors are not implemented; lower max_context "
           "(--ctx) to at most " + std::to_string(hp.rope_scaling.original_context);
  for (const LayerWeights& L : model.layers())
    for (const TensorView* t : {L.wqkv, L.w_gate_up})
      if (t && dtype_is_soa(t->dtype))
        return where + ": its fused matrix " + t->name + " is " + std::string(dtype_name(t->dtype)) +
               ", whose rows the CUDA backend cannot split into their parts; convert it without SoA layouts";
  if ((model.architecture().has(ArchRole::QNorm) || model.architecture().has(ArchRole::Bq)) && hp.head_dim > 256)
    return where + ": head_dim " + std::to_string(hp.head_dim) + " is past the 256 of the q/k/v heads kernel";
  return "";
}

ResidentWeights upload_weights(const Model& model, bool tiles, uint32_t max_ctx, const DeviceAlloc& alloc) {
  WeightUploader up(model, tiles, static_cast<uint8_t*>(alloc(weight_bytes(model), "weights")));
  ResidentWeights w;
  w.embd = up.matrix(model.token_embd());
  w.output_norm = up.f32(model.output_norm());
  w.output = &model.output() == &model.token_embd() ? w.embd : up.matrix(model.output());
  for (const auto& L : model.layers()) w.layers.push_back(upload_layer(up, L, model.hparams()));
  w.arch = resolve_arch_steps(model, w.layers, max_ctx);
  return w;
}

KvCache allocate_kv_cache(const HParams& hp, int max_ctx, bool f16, const DeviceAlloc& alloc, cudaStream_t stream) {
  KvCache kv;
  kv.f16 = f16;
  kv.max_ctx = max_ctx;
  kv.layer_bytes = size_t(hp.n_head_kv) * size_t(max_ctx) * hp.head_dim * (f16 ? 2 : 4);
  kv.k = static_cast<uint8_t*>(alloc(kv.layer_bytes * hp.n_layer, "K cache"));
  kv.v = static_cast<uint8_t*>(alloc(kv.layer_bytes * hp.n_layer, "V cache"));
  P64_CUDA_CHECK(cudaMemsetAsync(kv.k, 0, kv.layer_bytes * hp.n_layer, stream));
  P64_CUDA_CHECK(cudaMemsetAsync(kv.v, 0, kv.layer_bytes * hp.n_layer, stream));
  return kv;
}

}  // namespace p64::cuda
