#include "engine/model/model.h"

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
namespace {

std::string shape_str(const TensorView& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "]";
}

}  // namespace

const TensorView* Model::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::shared_ptr<const Model> Model::from_parts(std::string source, HParams hp, Vocabulary vocab,
                                               std::vector<TensorView> tensors,
                                               std::shared_ptr<const void> keepalive) {
  validate(hp, source);
  std::shared_ptr<Model> m(new Model());
  m->source_ = std::move(source);
  m->hparams_ = std::move(hp);
  m->vocab_ = std::move(vocab);
  m->tensors_ = std::move(tensors);
  for (const TensorView& t : m->tensors_) m->by_name_.emplace(t.name, &t);  // the first of a repeated name, as a scan found
  m->keepalive_ = std::move(keepalive);
  const HParams& h = m->hparams_;

  auto need = [&](const std::string& name, int64_t ne0, int64_t ne1) -> const TensorView* {
    const TensorView* t = m->find(name);
    if (!t) throw Error(m->source_ + ": tensor '" + name + "' is missing");
    int64_t want1 = ne1 < 0 ? 1 : ne1;
    if (t->ne[0] != ne0 || t->rows() != want1)
      throw Error(m->source_ + ": tensor '" + name + "' has shape " + shape_str(*t) + ", expected [" +
                  std::to_string(ne0) + (ne1 < 0 ? "" : ", " + std::to_string(ne1)) + "]");
    if (!dtype_info(t->dtype))
      throw Error(m->source_ + ": tensor '" + name + "' has unknown dtype " +
                  std::to_string(static_cast<uint32_t>(t->dtype)));
    return t;
  };

  m->token_embd_ = need("token_embd.weight", h.n_embd, h.n_vocab);
  m->output_norm_ = need("output_norm.weight", h.n_embd, -1);
  if (h.tied_output || !m->find("output.weight")) {
    m->hparams_.tied_output = true;
    m->output_ = m->token_embd_;
  } else {
    m->output_ = need("output.weight", h.n_embd, h.n_vocab);
  }
  m->layers_.resize(h.n_layer);
  for (uint32_t i = 0; i < h.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = m->layers_[i];
    l.attn_norm = need(p + "attn_norm.weight", h.n_embd, -1);
    l.wq = need(p + "attn_q.weight", h.n_embd, h.q_dim());
    l.wk = need(p + "attn_k.weight", h.n_embd, h.kv_dim());
    l.wv = need(p + "attn_v.weight", h.n_embd, h.kv_dim());
    l.wo = need(p + "attn_output.weight", h.q_dim(), h.n_embd);
    l.ffn_norm = need(p + "ffn_norm.weight", h.n_embd, -1);
    l.w_gate = need(p + "ffn_gate.weight", h.n_embd, h.n_ff);
    l.w_up = need(p + "ffn_up.weight", h.n_embd, h.n_ff);
    l.w_down = need(p + "ffn_down.weight", h.n_ff, h.n_embd);
  }
  return m;
}

uint64_t Model::weight_bytes() const {
  uint64_t total = output_->bytes + output_norm_->bytes;
  for (const auto& l : layers_)
    for (const TensorView* t : {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.w_gate, l.w_up, l.w_down})
      total += t->bytes;
  return total;
}

TensorView plain_blocks(const TensorView& t, std::vector<uint8_t>& storage) {
  if (!dtype_is_interleaved(t.dtype)) return t;
  TensorView v = t;
  v.dtype = dtype_aos_of(t.dtype);
  storage.resize(static_cast<size_t>(t.bytes));
  unpack_tensor(t.dtype, t.data, storage.data(), t.rows(), t.row_length());
  v.data = storage.data();
  return v;
}

}  // namespace p64
