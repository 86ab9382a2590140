#include "engine/format/p64_sections.h"

#include <cmath>
#include <map>

#include "engine/common/error.h"
#include "engine/format/crc32c.h"
#include "engine/format/model_limits.h"

namespace p64 {

const char* const kManifoldCoordinateNames[10] = {
    "rms_attn_q", "rms_attn_k", "rms_attn_v",     "rms_attn_output", "rms_ffn_gate",
    "rms_ffn_up", "rms_ffn_down", "mean_attn_norm", "mean_ffn_norm",  "kurtosis",
};

std::string p64_flags_text(uint64_t flags) {
  std::string s;
  auto add = [&](uint64_t bit, const char* name) {
    if (flags & bit) s += (s.empty() ? "" : "|") + std::string(name);
  };
  add(p64_flags::kQ4kSoa, "Q4K_SOA");
  add(p64_flags::kLayerMajor, "LAYER_MAJOR");
  add(p64_flags::kCertifiedDecodeProfile, "CERTIFIED_DECODE_PROFILE");
  add(p64_flags::kQ6kSoa, "Q6K_SOA");
  add(p64_flags::kQ8_0Soa, "Q8_0_SOA");
  if (flags & ~p64_flags::kKnown) s += (s.empty() ? "" : "|") + std::string("UNKNOWN");
  return s.empty() ? "none" : s;
}

uint32_t p64_version_for(const HParams& hp) {
  // A version 1 reader takes every file for the plain Llama block and skips keys it does not
  // know, so a sliding window, soft-caps or an attention scale would be dropped silently.
  const bool plain_llama = hp.arch == "llama" && hp.sliding_window == 0 && hp.rope_base_local == 0.0f &&
                           hp.attn_softcap == 0.0f && hp.final_softcap == 0.0f && hp.query_pre_attn_scalar == 0.0f;
  return plain_llama ? kP64VersionLlama : kP64Version;
}

std::string_view p64_section_name(P64SectionKind k) {
  switch (k) {
    case P64SectionKind::HParams: return "hparams";
    case P64SectionKind::Tokenizer: return "tokenizer";
    case P64SectionKind::TensorDirectory: return "tensor directory";
    case P64SectionKind::LayerSchedule: return "layer schedule";
    case P64SectionKind::Manifold: return "manifold";
  }
  return "unknown section";
}

namespace p64io {

void ByteReader::fail(const std::string& problem) const { fail_at(offset(), problem); }
void ByteReader::fail_at(uint64_t abs_offset, const std::string& problem) const {
  throw FormatError(file_, section_, abs_offset, problem);
}
void ByteReader::need(uint64_t n, const char* what) const {
  if (n > remaining())
    fail(std::string("section ends inside ") + what + " (needs " + std::to_string(n) + " bytes, " +
         std::to_string(remaining()) + " left)");
}
std::string ByteReader::str(const char* what) {
  uint32_t n = get<uint32_t>(what);
  need(n, what);
  std::string s(reinterpret_cast<const char*>(base_ + pos_), n);
  pos_ += n;
  return s;
}

namespace {

enum ValueType : uint32_t { kU32 = 1, kF32 = 2, kString = 3, kF32Array = 4 };

struct KvWriter {
  ByteWriter w;
  uint32_t count = 0;
  void u32(const char* k, uint32_t v) { w.str(k); w.put<uint32_t>(kU32); w.put<uint32_t>(v); ++count; }
  void f32(const char* k, float v) { w.str(k); w.put<uint32_t>(kF32); w.put<float>(v); ++count; }
  void s(const char* k, const std::string& v) { w.str(k); w.put<uint32_t>(kString); w.str(v); ++count; }
  void fa(const char* k, const std::vector<float>& v) {
    w.str(k);
    w.put<uint32_t>(kF32Array);
    w.put<uint32_t>(static_cast<uint32_t>(v.size()));
    w.bytes(v.data(), v.size() * sizeof(float));
    ++count;
  }
};

}  // namespace

std::vector<uint8_t> encode_hparams(const HParams& hp, uint32_t* count) {
  KvWriter kv;
  kv.s("arch", hp.arch);
  kv.s("name", hp.name);
  kv.u32("n_embd", hp.n_embd);
  kv.u32("n_layer", hp.n_layer);
  kv.u32("n_head", hp.n_head);
  kv.u32("n_head_kv", hp.n_head_kv);
  kv.u32("head_dim", hp.head_dim);
  kv.u32("n_ff", hp.n_ff);
  kv.u32("n_vocab", hp.n_vocab);
  kv.u32("n_ctx_train", hp.n_ctx_train);
  kv.u32("rope_dim", hp.rope_dim);
  kv.f32("rope_base", hp.rope_base);
  kv.f32("rms_eps", hp.rms_eps);
  kv.u32("rope_scaling.type", static_cast<uint32_t>(hp.rope_scaling.type));
  kv.f32("rope_scaling.factor", hp.rope_scaling.factor);
  kv.f32("rope_scaling.low_freq_factor", hp.rope_scaling.low_freq_factor);
  kv.f32("rope_scaling.high_freq_factor", hp.rope_scaling.high_freq_factor);
  kv.u32("rope_scaling.original_context", hp.rope_scaling.original_context);
  kv.fa("rope_freq_factors", hp.rope_freq_factors);
  kv.u32("rope_layout", static_cast<uint32_t>(hp.rope_layout));
  kv.u32("tied_output", hp.tied_output ? 1 : 0);
  kv.u32("file_type", hp.file_type);
  // Version 2 keys, written where they say something, so a Llama's version 1 bytes stay as they were.
  if (hp.sliding_window) kv.u32("sliding_window", hp.sliding_window);
  if (hp.sliding_window_pattern) kv.u32("sliding_window_pattern", hp.sliding_window_pattern);
  if (hp.rope_base_local != 0.0f) kv.f32("rope_base_local", hp.rope_base_local);
  if (hp.attn_softcap != 0.0f) kv.f32("attn_softcap", hp.attn_softcap);
  if (hp.final_softcap != 0.0f) kv.f32("final_softcap", hp.final_softcap);
  if (hp.query_pre_attn_scalar != 0.0f) kv.f32("query_pre_attn_scalar", hp.query_pre_attn_scalar);
  if (hp.rope_attn_factor != 1.0f) kv.f32("rope_attn_factor", hp.rope_attn_factor);
  *count = kv.count;
  return std::move(kv.w.buffer());
}

HParams decode_hparams(ByteReader& r, uint32_t count) {
  HParams hp;
  std::map<std::string, bool> seen;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t at = r.offset();
    std::string key = r.str("a key");
    if (seen[key]) r.fail_at(at, "key '" + key + "' appears twice");
    seen[key] = true;
    uint32_t type = r.get<uint32_t>("a value type");
    uint32_t u = 0;
    float f = 0;
    std::string s;
    std::vector<float> fa;
    switch (type) {
      case kU32: u = r.get<uint32_t>("a u32 value"); break;
      case kF32: f = r.get<float>("an f32 value"); break;
      case kString: s = r.str("a string value"); break;
      case kF32Array: {
        uint32_t n = r.get<uint32_t>("an array length");
        r.need(uint64_t{n} * 4, "an f32 array");
        fa.resize(n);
        for (uint32_t j = 0; j < n; ++j) fa[j] = r.get<float>("an f32 array");
        break;
      }
      default: r.fail_at(at, "key '" + key + "' has unknown value type " + std::to_string(type));
    }
    auto want = [&](uint32_t t) {
      if (type != t) r.fail_at(at, "key '" + key + "' has value type " + std::to_string(type) + ", expected " + std::to_string(t));
    };
    auto u32_into = [&](uint32_t& dst) { want(kU32); dst = u; };
    auto f32_into = [&](float& dst) {
      want(kF32);
      if (!std::isfinite(f)) r.fail_at(at, "key '" + key + "' is not a finite number");
      dst = f;
    };
    if (key == "arch") { want(kString); hp.arch = s; }
    else if (key == "name") { want(kString); hp.name = s; }
    else if (key == "n_embd") u32_into(hp.n_embd);
    else if (key == "n_layer") u32_into(hp.n_layer);
    else if (key == "n_head") u32_into(hp.n_head);
    else if (key == "n_head_kv") u32_into(hp.n_head_kv);
    else if (key == "head_dim") u32_into(hp.head_dim);
    else if (key == "n_ff") u32_into(hp.n_ff);
    else if (key == "n_vocab") u32_into(hp.n_vocab);
    else if (key == "n_ctx_train") u32_into(hp.n_ctx_train);
    else if (key == "rope_dim") u32_into(hp.rope_dim);
    else if (key == "rope_base") f32_into(hp.rope_base);
    else if (key == "rms_eps") f32_into(hp.rms_eps);
    else if (key == "rope_scaling.type") {
      want(kU32);
      if (u > static_cast<uint32_t>(RopeScalingType::LongRope)) r.fail_at(at, "rope_scaling.type " + std::to_string(u) + " is unknown");
      hp.rope_scaling.type = static_cast<RopeScalingType>(u);
    } else if (key == "rope_scaling.factor") f32_into(hp.rope_scaling.factor);
    else if (key == "rope_scaling.low_freq_factor") f32_into(hp.rope_scaling.low_freq_factor);
    else if (key == "rope_scaling.high_freq_factor") f32_into(hp.rope_scaling.high_freq_factor);
    else if (key == "rope_scaling.original_context") u32_into(hp.rope_scaling.original_context);
    else if (key == "rope_freq_factors") { want(kF32Array); hp.rope_freq_factors = std::move(fa); }
    else if (key == "rope_layout") {
      want(kU32);
      if (u > 1) r.fail_at(at, "rope_layout " + std::to_string(u) + " is unknown");
      hp.rope_layout = static_cast<RopeLayout>(u);
    } else if (key == "tied_output") {
      want(kU32);
      if (u > 1) r.fail_at(at, "tied_output must be 0 or 1");
      hp.tied_output = u == 1;
    } else if (key == "file_type") u32_into(hp.file_type);
    else if (key == "sliding_window") u32_into(hp.sliding_window);
    else if (key == "sliding_window_pattern") u32_into(hp.sliding_window_pattern);
    else if (key == "rope_base_local") f32_into(hp.rope_base_local);
    else if (key == "attn_softcap") f32_into(hp.attn_softcap);
    else if (key == "final_softcap") f32_into(hp.final_softcap);
    else if (key == "query_pre_attn_scalar") f32_into(hp.query_pre_attn_scalar);
    else if (key == "rope_attn_factor") f32_into(hp.rope_attn_factor);
    // Keys this version does not know are skipped: they carry information, never layout.
  }
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " bytes follow the last key");
  for (const char* k : {"n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff", "n_vocab", "rope_dim", "rope_base", "rms_eps"})
    if (!seen[k]) r.fail(std::string("required key '") + k + "' is missing");
  try {
    validate(hp, r.file());
    check_hparams_bounds(hp, r.file(), hparams_fields("p64"));
  } catch (const FormatError&) {
    throw;
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.rfind(r.file() + ": ", 0) == 0) why.erase(0, r.file().size() + 2);  // the FormatError names the file
    r.fail(why);
  }
  return hp;
}

std::vector<uint8_t> encode_tokenizer(const Vocabulary& v) {
  ByteWriter w;
  w.put<uint32_t>(static_cast<uint32_t>(v.kind));
  w.put<uint32_t>(static_cast<uint32_t>(v.tokens.size()));
  for (int32_t id : {v.bos_id, v.eos_id, v.eot_id, v.unk_id, v.pad_id}) w.put<int32_t>(id);
  w.put<uint32_t>((v.add_bos ? 1u : 0u) | (v.add_eos ? 2u : 0u) | (v.add_space_prefix ? 4u : 0u));
  w.str(v.pre);
  for (const auto& t : v.tokens) w.str(t);
  w.put<uint32_t>(static_cast<uint32_t>(v.scores.size()));
  w.bytes(v.scores.data(), v.scores.size() * sizeof(float));
  w.put<uint32_t>(static_cast<uint32_t>(v.types.size()));
  w.bytes(v.types.data(), v.types.size() * sizeof(int32_t));
  w.put<uint32_t>(static_cast<uint32_t>(v.merges.size()));
  for (const auto& m : v.merges) w.str(m);
  w.str(v.chat_template);
  return std::move(w.buffer());
}

Vocabulary decode_tokenizer(ByteReader& r) {
  Vocabulary v;
  uint64_t at = r.offset();
  uint32_t kind = r.get<uint32_t>("the tokenizer kind");
  if (kind > static_cast<uint32_t>(TokenizerKind::ByteLevelBPE)) r.fail_at(at, "tokenizer kind " + std::to_string(kind) + " is unknown");
  v.kind = static_cast<TokenizerKind>(kind);
  uint32_t n = r.get<uint32_t>("the token count");
  if (const std::string why = count_fits_problem("token count", n, 4, r.remaining()); !why.empty()) r.fail_at(at + 4, why);
  int32_t* ids[] = {&v.bos_id, &v.eos_id, &v.eot_id, &v.unk_id, &v.pad_id};
  const char* names[] = {"bos", "eos", "eot", "unk", "pad"};
  for (int i = 0; i < 5; ++i) {
    uint64_t id_at = r.offset();
    *ids[i] = r.get<int32_t>("a special token id");
    if (*ids[i] < -1 || *ids[i] >= static_cast<int64_t>(n))
      r.fail_at(id_at, std::string(names[i]) + " id " + std::to_string(*ids[i]) + " is outside the vocabulary");
  }
  uint64_t bits_at = r.offset();
  uint32_t bits = r.get<uint32_t>("the tokenizer flags");
  if (bits & ~7u) r.fail_at(bits_at, "unknown tokenizer flag bits");
  v.add_bos = bits & 1;
  v.add_eos = bits & 2;
  v.add_space_prefix = bits & 4;
  v.pre = r.str("the pre-tokenizer name");
  v.tokens.reserve(n);
  for (uint32_t i = 0; i < n; ++i) v.tokens.push_back(r.str("a token"));
  at = r.offset();
  uint32_t ns = r.get<uint32_t>("the score count");
  if (ns != 0 && ns != n) r.fail_at(at, "score count " + std::to_string(ns) + " is neither 0 nor the token count");
  r.need(uint64_t{ns} * 4, "the scores");
  v.scores.resize(ns);
  for (uint32_t i = 0; i < ns; ++i) v.scores[i] = r.get<float>("the scores");
  at = r.offset();
  uint32_t nt = r.get<uint32_t>("the token type count");
  if (nt != 0 && nt != n) r.fail_at(at, "token type count " + std::to_string(nt) + " is neither 0 nor the token count");
  r.need(uint64_t{nt} * 4, "the token types");
  v.types.resize(nt);
  for (uint32_t i = 0; i < nt; ++i) {
    v.types[i] = r.get<int32_t>("the token types");
    if (v.types[i] < 0 || v.types[i] > static_cast<int32_t>(TokenType::Byte))
      r.fail(std::string("token ") + std::to_string(i) + " has unknown type " + std::to_string(v.types[i]));
  }
  at = r.offset();
  uint32_t nm = r.get<uint32_t>("the merge count");
  if (const std::string why = count_fits_problem("merge count", nm, 4, r.remaining()); !why.empty()) r.fail_at(at, why);
  v.merges.reserve(nm);
  for (uint32_t i = 0; i < nm; ++i) v.merges.push_back(r.str("a merge"));
  v.chat_template = r.str("the chat template");
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " bytes follow the chat template");
  return v;
}

std::vector<uint8_t> encode_directory(const std::vector<P64TensorEntry>& tensors) {
  ByteWriter w;
  for (const auto& t : tensors) {
    w.str(t.name);
    w.put<uint32_t>(static_cast<uint32_t>(t.dtype));
    w.put<uint32_t>(t.n_dims);
    for (int d = 0; d < 4; ++d) w.put<int64_t>(t.ne[d]);
    w.put<uint64_t>(t.offset);
    w.put<uint64_t>(t.bytes);
    w.put<uint32_t>(t.crc32c);
    w.put<int32_t>(t.layer);
  }
  return std::move(w.buffer());
}

std::vector<P64TensorEntry> decode_directory(ByteReader& r, uint32_t count) {
  // Each entry is at least 4 + 1 + 4 + 4 + 32 + 8 + 8 + 4 + 4 bytes.
  if (const std::string why = count_fits_problem("tensor count", count, 69, r.remaining()); !why.empty()) r.fail(why);
  std::vector<P64TensorEntry> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    P64TensorEntry t;
    t.entry_offset = r.offset();
    t.name = r.str("a tensor name");
    if (t.name.empty()) r.fail_at(t.entry_offset, "tensor " + std::to_string(i) + " has an empty name");
    uint64_t at = r.offset();
    uint32_t dt = r.get<uint32_t>("a dtype");
    t.dtype = static_cast<DType>(dt);
    auto info = dtype_info(t.dtype);
    if (!info) r.fail_at(at, "tensor '" + t.name + "' has unknown dtype " + std::to_string(dt));
    at = r.offset();
    t.n_dims = r.get<uint32_t>("a dimension count");
    if (t.n_dims == 0 || t.n_dims > 4) r.fail_at(at, "tensor '" + t.name + "' has " + std::to_string(t.n_dims) + " dimensions");
    uint64_t elements = 1;
    for (int d = 0; d < 4; ++d) {
      at = r.offset();
      t.ne[d] = r.get<int64_t>("a dimension");
      bool ok = d < static_cast<int>(t.n_dims) ? (t.ne[d] > 0 && t.ne[d] <= (int64_t{1} << 40)) : t.ne[d] == 1;
      if (!ok) r.fail_at(at, "tensor '" + t.name + "' has dimension " + std::to_string(d) + " = " + std::to_string(t.ne[d]));
      if (elements > (uint64_t{1} << 50) / static_cast<uint64_t>(t.ne[d])) r.fail_at(at, "tensor '" + t.name + "' is too large");
      elements *= static_cast<uint64_t>(t.ne[d]);
    }
    if (const std::string why = dtype_shape_problem(t.dtype, t.ne[0], t.ne[1] * t.ne[2] * t.ne[3]); !why.empty())
      r.fail_at(at, "tensor '" + t.name + "': " + why);
    at = r.offset();
    t.offset = r.get<uint64_t>("a data offset");
    if (t.offset % kP64DataAlignment != 0) r.fail_at(at, "tensor '" + t.name + "' data offset is not 4 KiB aligned");
    at = r.offset();
    t.bytes = r.get<uint64_t>("a byte size");
    uint64_t want = elements / info->block_elems * info->block_bytes;
    if (t.bytes != want)
      r.fail_at(at, "tensor '" + t.name + "' has " + std::to_string(t.bytes) + " bytes, its shape and dtype need " + std::to_string(want));
    t.crc32c = r.get<uint32_t>("a tensor CRC");
    at = r.offset();
    t.layer = r.get<int32_t>("a layer index");
    if (t.layer != layer_of_tensor(t.name))
      r.fail_at(at, "tensor '" + t.name + "' is filed under layer " + std::to_string(t.layer));
    out.push_back(std::move(t));
  }
  if (r.remaining() != 0) r.fail(std::to_string(r.remaining()) + " bytes follow the last tensor entry");
  return out;
}

std::vector<uint8_t> encode_schedule(const std::vector<P64ScheduleRow>& rows) {
  ByteWriter w;
  for (const auto& s : rows) {
    w.put<uint32_t>(static_cast<uint32_t>(s.kind));
    w.put<uint32_t>(s.layer);
    w.put<uint32_t>(s.first_tensor);
    w.put<uint32_t>(s.n_tensors);
    w.put<uint64_t>(s.offset);
    w.put<uint64_t>(s.bytes);
  }
  return std::move(w.buffer());
}

std::vector<P64ScheduleRow> decode_schedule(ByteReader& r, uint32_t count) {
  if (uint64_t{count} * 32 != r.remaining())
    r.fail(std::to_string(count) + " rows need " + std::to_string(uint64_t{count} * 32) + " bytes, the section has " +
           std::to_string(r.remaining()));
  std::vector<P64ScheduleRow> out(count);
  for (auto& s : out) {
    uint64_t at = r.offset();
    uint32_t k = r.get<uint32_t>("a row kind");
    if (k > 2) r.fail_at(at, "schedule row kind " + std::to_string(k) + " is unknown");
    s.kind = static_cast<P64GroupKind>(k);
    s.layer = r.get<uint32_t>("a layer index");
    s.first_tensor = r.get<uint32_t>("a first tensor index");
    s.n_tensors = r.get<uint32_t>("a tensor count");
    s.offset = r.get<uint64_t>("a byte offset");
    s.bytes = r.get<uint64_t>("a byte count");
  }
  return out;
}

std::vector<uint8_t> encode_manifold(std::vector<ManifoldCoordinate10D> rows) {
  ByteWriter w;
  for (auto& m : rows) {
    m.crc32c = crc32c(&m, 60);
    w.bytes(&m, sizeof m);
  }
  return std::move(w.buffer());
}

std::vector<ManifoldCoordinate10D> decode_manifold(ByteReader& r, uint32_t count) {
  if (uint64_t{count} * kP64ManifoldRowBytes != r.remaining())
    r.fail(std::to_string(count) + " rows need " + std::to_string(uint64_t{count} * 64) + " bytes, the section has " +
           std::to_string(r.remaining()));
  std::vector<ManifoldCoordinate10D> out(count);
  for (auto& m : out) {
    uint64_t at = r.offset();
    m = r.get<ManifoldCoordinate10D>("a manifold row");
    if (crc32c(&m, 60) != m.crc32c) r.fail_at(at, "manifold row CRC-32C mismatch");
    if (m.reserved[0] || m.reserved[1] || m.reserved[2]) r.fail_at(at + 48, "reserved manifold bytes are not zero");
    if (m.flags & ~(kManifoldGlobal | kManifoldTiedOutput)) r.fail_at(at + 4, "unknown manifold row flags");
  }
  return out;
}

int32_t layer_of_tensor(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  size_t i = 4;
  int64_t v = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && v < (1 << 24)) v = v * 10 + (name[i++] - '0');
  if (i == 4 || i >= name.size() || name[i] != '.') return -1;
  return static_cast<int32_t>(v);
}

}  // namespace p64io
}  // namespace p64
