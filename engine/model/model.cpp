#include "engine/model/model.h"

#include "engine/common/error.h"
#include "engine/quant/quant.h"

namespace p64 {
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

  const Architecture& arch = p64::architecture(h.arch, m->source_);
  m->arch_ = &arch;
  std::vector<TensorShapeRef> shapes;
  for (const TensorView& t : m->tensors_) shapes.push_back({t.name, t.n_dims, t.ne});
  if (const std::string why = arch_tensors_problem(h, shapes); !why.empty()) throw Error(m->source_ + ": " + why);
  // Every tensor of the table is there with its shape; found by name, its dtype checked.
  auto need = [&](const std::string& name) -> const TensorView* {
    const TensorView* t = m->find(name);
    if (!dtype_info(t->dtype))
      throw Error(m->source_ + ": tensor '" + name + "' has unknown dtype " +
                  std::to_string(static_cast<uint32_t>(t->dtype)));
    return t;
  };
  for (const ArchTensor& t : arch.globals) {
    if (t.role == ArchRole::Output && (h.tied_output || !m->find(t.gguf))) {
      m->hparams_.tied_output = true;
      m->output_ = m->token_embd_;
      continue;
    }
    const TensorView* v = need(std::string(t.gguf));
    if (t.role == ArchRole::TokenEmbd) m->token_embd_ = v;
    else if (t.role == ArchRole::OutputNorm) m->output_norm_ = v;
    else m->output_ = v;
  }
  m->layers_.resize(h.n_layer);
  for (uint32_t i = 0; i < h.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = m->layers_[i];
    for (const ArchTensor& t : arch.block) {
      const TensorView* v = need(p + std::string(t.gguf));
      switch (t.role) {
        case ArchRole::AttnNorm: l.attn_norm = v; break;
        case ArchRole::Wq: l.wq = v; break;
        case ArchRole::Wk: l.wk = v; break;
        case ArchRole::Wv: l.wv = v; break;
        case ArchRole::Wo: l.wo = v; break;
        case ArchRole::FfnNorm: l.ffn_norm = v; break;
        case ArchRole::Gate: l.w_gate = v; break;
        case ArchRole::Up: l.w_up = v; break;
        case ArchRole::Down: l.w_down = v; break;
        case ArchRole::Bq: l.bq = v; break;
        case ArchRole::Bk: l.bk = v; break;
        case ArchRole::Bv: l.bv = v; break;
        case ArchRole::QNorm: l.q_norm = v; break;
        case ArchRole::KNorm: l.k_norm = v; break;
        case ArchRole::PostAttnNorm: l.post_attn_norm = v; break;
        case ArchRole::PostFfnNorm: l.post_ffn_norm = v; break;
        case ArchRole::Wqkv: l.wqkv = v; break;
        case ArchRole::GateUp: l.w_gate_up = v; break;
        default: throw Error(m->source_ + ": tensor '" + p + std::string(t.gguf) + "' is not a block tensor");
      }
    }
  }
  return m;
}

uint64_t Model::weight_bytes() const {
  uint64_t total = output_->bytes + output_norm_->bytes;
  for (const auto& l : layers_)
    for (const TensorView* t : {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.w_gate, l.w_up, l.w_down, l.bq, l.bk,
                                l.bv, l.q_norm, l.k_norm, l.post_attn_norm, l.post_ffn_norm, l.wqkv, l.w_gate_up})
      if (t) total += t->bytes;
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
