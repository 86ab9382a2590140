#include "engine/format/p64_certify.h"

#include <map>

#include "engine/common/error.h"
#include "engine/model/architecture.h"

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
  // The GPU backends run the Llama block only (docs/p64-container.md "Certification").
  if (hp.arch != "llama") return "architecture '" + hp.arch + "' is outside the decode profile (llama only)";
  if (p64_version_for(hp) != kP64VersionLlama) return "a sliding window is outside the decode profile";
  if (hp.rope_layout != RopeLayout::Adjacent) return "RoPE layout is not adjacent pairs";
  if (!(flags & p64_flags::kLayerMajor)) return "tensor data is not layer-major";
  // name -> (row length, rows, is a norm), from the architecture's table
  struct Want { int64_t ne0, rows; bool norm; };
  std::map<std::string, Want> want;
  const Architecture& arch = architecture(hp.arch, "hparams");
  auto add = [&](const ArchTensor& t, const std::string& name) {
    want[name] = {arch_dim(hp, t.ne0), arch_dim(hp, t.ne1), t.norm()};
  };
  for (const ArchTensor& t : arch.globals)
    if (!(t.role == ArchRole::Output && hp.tied_output)) add(t, std::string(t.gguf));
  for (uint32_t i = 0; i < hp.n_layer; ++i)
    for (const ArchTensor& t : arch.block) add(t, "blk." + std::to_string(i) + "." + std::string(t.gguf));
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
  if (found != want.size()) return "the " + hp.arch + " tensor set is incomplete";
  return "";
}

}  // namespace p64
