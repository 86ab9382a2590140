#include "engine/format/p64_certify.h"

#include <map>

#include "engine/common/error.h"

namespace p64 {

bool p64_decode_profile_dtype(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q8_0: case DType::Q5_0:
    case DType::Q4_K: case DType::Q6_K: case DType::Q8_0_SOA: case DType::Q4_K_SOA: case DType::Q6_K_SOA:
      return true;
    default:
      return false;
  }
}

std::string p64_certification_problem(const HParams& hp, const std::vector<P64TensorEntry>& tensors, uint64_t flags) {
  try {
    validate(hp, "hparams");
  } catch (const Error& e) {
    return e.what();
  }
  if (hp.rope_layout != RopeLayout::Adjacent) return "RoPE layout is not adjacent pairs";
  if (!(flags & p64_flags::kLayerMajor)) return "tensor data is not layer-major";
  // name -> (row length, rows, is a norm)
  struct Want { int64_t ne0, rows; bool norm; };
  std::map<std::string, Want> want;
  want["token_embd.weight"] = {hp.n_embd, hp.n_vocab, false};
  want["output_norm.weight"] = {hp.n_embd, 1, true};
  if (!hp.tied_output) want["output.weight"] = {hp.n_embd, hp.n_vocab, false};
  for (uint32_t i = 0; i < hp.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    want[p + "attn_norm.weight"] = {hp.n_embd, 1, true};
    want[p + "attn_q.weight"] = {hp.n_embd, hp.q_dim(), false};
    want[p + "attn_k.weight"] = {hp.n_embd, hp.kv_dim(), false};
    want[p + "attn_v.weight"] = {hp.n_embd, hp.kv_dim(), false};
    want[p + "attn_output.weight"] = {hp.q_dim(), hp.n_embd, false};
    want[p + "ffn_norm.weight"] = {hp.n_embd, 1, true};
    want[p + "ffn_gate.weight"] = {hp.n_embd, hp.n_ff, false};
    want[p + "ffn_up.weight"] = {hp.n_embd, hp.n_ff, false};
    want[p + "ffn_down.weight"] = {hp.n_ff, hp.n_embd, false};
  }
  size_t found = 0;
  for (const auto& t : tensors) {
    auto it = want.find(t.name);
    if (it == want.end()) return "tensor '" + t.name + "' is not part of the decode profile";
    ++found;
    const Want& w = it->second;
    if (t.ne[0] != w.ne0 || t.ne[1] * t.ne[2] * t.ne[3] != w.rows) return "tensor '" + t.name + "' has the wrong shape";
    if (w.norm && t.dtype != DType::F32) return "norm '" + t.name + "' is not F32";
    if (!p64_decode_profile_dtype(t.dtype)) return "tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) + " outside the decode profile";
  }
  if (found != want.size()) return "the Llama tensor set is incomplete";
  return "";
}

}  // namespace p64
