#include "engine/format/p64_writer.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <tuple>

#include "engine/common/atomic_output.h"
#include "engine/common/error.h"
#include "engine/format/crc32c.h"
#include "engine/format/p64_certify.h"
#include "engine/format/model_limits.h"
#include "engine/format/p64_manifold.h"
#include "engine/format/p64_sections.h"

namespace p64 {

bool P64OrderKey::operator<(const P64OrderKey& o) const {
  return std::tie(group, layer, rank, name) < std::tie(o.group, o.layer, o.rank, o.name);
}

P64OrderKey p64_order_key(const std::string& name) {
  int32_t layer = p64io::layer_of_tensor(name);
  if (layer >= 0) {
    // The order decode reads them, over every architecture's block (architecture.h).
    static const char* const kOrder[] = {"attn_norm.weight",   "attn_qkv.weight",    "attn_q.weight",      "attn_q.bias",
                                         "attn_k.weight",      "attn_k.bias",        "attn_v.weight",
                                         "attn_v.bias",        "attn_q_norm.weight", "attn_k_norm.weight",
                                         "attn_output.weight", "post_attention_norm.weight", "ffn_norm.weight",
                                         "ffn_gate.weight",    "ffn_up.weight",      "ffn_down.weight",
                                         "post_ffw_norm.weight"};
    std::string suffix = name.substr(name.find('.', 4) + 1);
    int rank = 100;
    for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i)
      if (suffix == kOrder[i]) rank = i;
    return {1, layer, rank, name};
  }
  if (name == "token_embd.weight") return {0, 0, 0, name};
  if (name == "output_norm.weight") return {2, 0, 0, name};
  if (name == "output.weight") return {2, 0, 1, name};
  return {2, 0, 100, name};
}

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

P64WriteResult write_p64(const std::string& path, const P64Image& image, const ProgressFn& progress,
                         const OutputPolicy& policy) {
  const HParams& hp = image.hparams;
  validate(hp, path);
  check_hparams_bounds(hp, path, hparams_fields("p64"));
  if (!image.vocab.tokens.empty() && image.vocab.tokens.size() != hp.n_vocab)
    throw Error(path + ": vocabulary has " + std::to_string(image.vocab.tokens.size()) + " tokens but n_vocab is " +
                std::to_string(hp.n_vocab));

  // Lay out the tensors layer-major and check each one.
  std::vector<size_t> order(image.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<P64OrderKey> keys;
  for (const auto& t : image.tensors) keys.push_back(p64_order_key(t.name));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::set<std::string> names;
  std::vector<P64TensorEntry> dir;
  uint64_t total_bytes = 0;
  for (size_t i : order) {
    const P64TensorSource& s = image.tensors[i];
    if (!names.insert(s.name).second) throw Error(path + ": tensor '" + s.name + "' is given twice");
    auto info = dtype_info(s.dtype);
    if (!info) throw Error(path + ": tensor '" + s.name + "' has unknown dtype " + std::to_string(static_cast<uint32_t>(s.dtype)));
    if (s.n_dims == 0 || s.n_dims > 4) throw Error(path + ": tensor '" + s.name + "' has " + std::to_string(s.n_dims) + " dimensions");
    P64TensorEntry e;
    e.name = s.name;
    e.dtype = s.dtype;
    e.n_dims = s.n_dims;
    uint64_t elements = 1;
    for (int d = 0; d < 4; ++d) {
      e.ne[d] = d < static_cast<int>(s.n_dims) ? s.ne[d] : 1;
      if (e.ne[d] <= 0) throw Error(path + ": tensor '" + s.name + "' has a dimension <= 0");
      elements *= static_cast<uint64_t>(e.ne[d]);
    }
    if (const std::string why = dtype_shape_problem(e.dtype, e.ne[0], e.ne[1] * e.ne[2] * e.ne[3]); !why.empty())
      throw Error(path + ": tensor '" + s.name + "': " + why);
    if (!s.data && !s.produce) throw Error(path + ": tensor '" + s.name + "' has no data source");
    e.bytes = elements / info->block_elems * info->block_bytes;
    e.layer = p64io::layer_of_tensor(s.name);
    if (e.layer >= 0 && static_cast<uint32_t>(e.layer) >= hp.n_layer)
      throw Error(path + ": tensor '" + s.name + "' names a block beyond n_layer " + std::to_string(hp.n_layer));
    total_bytes += e.bytes;
    dir.push_back(std::move(e));
  }

  uint64_t flags = p64_flags::kLayerMajor;
  bool any_q4k = false, any_q6k = false, any_q80 = false, soa_q4k = false, soa_q6k = false, soa_q80 = false;
  for (const auto& e : dir) {
    any_q4k |= e.dtype == DType::Q4_K;
    any_q6k |= e.dtype == DType::Q6_K;
    any_q80 |= e.dtype == DType::Q8_0;
    soa_q4k |= e.dtype == DType::Q4_K_SOA;
    soa_q6k |= e.dtype == DType::Q6_K_SOA;
    soa_q80 |= e.dtype == DType::Q8_0_SOA;
  }
  // A flag says "this block type is stored as SoA", so it needs SoA tensors and no AoS ones.
  if (soa_q4k && !any_q4k) flags |= p64_flags::kQ4kSoa;
  if (soa_q6k && !any_q6k) flags |= p64_flags::kQ6kSoa;
  if (soa_q80 && !any_q80) flags |= p64_flags::kQ8_0Soa;
  if ((soa_q4k && any_q4k) || (soa_q6k && any_q6k) || (soa_q80 && any_q80))
    throw Error(path + ": a block type is stored both as AoS and as SoA; pack all or none");

  // Schedule rows: embedding group, one per block, head group (filled once offsets exist).
  std::vector<uint8_t> hparams_bytes;
  uint32_t hparams_count = 0;
  hparams_bytes = p64io::encode_hparams(hp, &hparams_count);
  std::vector<uint8_t> tokenizer_bytes = p64io::encode_tokenizer(image.vocab);
  const uint64_t dir_size = p64io::encode_directory(dir).size();  // CRC and offset fields are fixed-width
  const uint64_t sched_count = uint64_t{hp.n_layer} + 2, manifold_count = uint64_t{hp.n_layer} + 1;

  struct Placed { P64SectionKind kind; uint64_t offset, size; uint32_t count; };
  std::vector<Placed> sections = {
      {P64SectionKind::HParams, 0, hparams_bytes.size(), hparams_count},
      {P64SectionKind::Tokenizer, 0, tokenizer_bytes.size(), static_cast<uint32_t>(image.vocab.tokens.size())},
      {P64SectionKind::TensorDirectory, 0, dir_size, static_cast<uint32_t>(dir.size())},
      {P64SectionKind::LayerSchedule, 0, sched_count * 32, static_cast<uint32_t>(sched_count)},
      {P64SectionKind::Manifold, 0, manifold_count * kP64ManifoldRowBytes, static_cast<uint32_t>(manifold_count)},
  };
  uint64_t at = kP64HeaderBytes;
  for (auto& s : sections) {
    s.offset = at;
    at = align_up(at + s.size, 8);
  }
  const uint64_t data_offset = align_up(at, kP64DataAlignment);
  uint64_t end = data_offset;
  for (auto& e : dir) {
    e.offset = align_up(end, kP64DataAlignment);
    end = e.offset + e.bytes;
  }
  const uint64_t file_size = dir.empty() ? data_offset : end;

  AtomicOutput out(path, policy);
  out.reserve(file_size);  // a full disk fails here, before any tensor is produced
  // Stream tensor data, checksumming and measuring each tensor as it goes.
  ManifoldBuilder manifold(hp);
  std::vector<uint8_t> buffer;
  std::vector<uint8_t> zeros(kP64DataAlignment, 0);
  uint64_t written = 0, cursor = kP64HeaderBytes;
  // Zero-fill everything below the data region first, so gaps between sections are zero.
  for (uint64_t z = cursor; z < data_offset; z += zeros.size())
    out.write_at(z, zeros.data(), static_cast<size_t>(std::min<uint64_t>(zeros.size(), data_offset - z)));
  cursor = data_offset;
  for (size_t k = 0; k < dir.size(); ++k) {
    P64TensorEntry& e = dir[k];
    const P64TensorSource& s = image.tensors[order[k]];
    if (progress && !progress(total_bytes ? static_cast<double>(written) / static_cast<double>(total_bytes) : 0.0, "writing " + e.name))
      throw Cancelled();
    if (e.offset > cursor) out.write_at(cursor, zeros.data(), static_cast<size_t>(e.offset - cursor));
    const uint8_t* bytes = s.data;
    if (!bytes) {
      buffer.assign(static_cast<size_t>(e.bytes), 0);
      s.produce(buffer.data(), e.bytes);
      bytes = buffer.data();
    }
    e.crc32c = crc32c(bytes, static_cast<size_t>(e.bytes));
    out.write_at(e.offset, bytes, e.bytes, e.name);
    TensorView view;
    view.name = e.name;
    view.dtype = e.dtype;
    view.n_dims = e.n_dims;
    for (int d = 0; d < 4; ++d) view.ne[d] = e.ne[d];
    view.data = bytes;
    view.bytes = e.bytes;
    const TensorMoments moments = tensor_moments(view);
    if (const std::string why = nonfinite_weights_problem(e.name, moments.sum2); !why.empty())
      throw Error((image.source.empty() ? path : image.source) + ": " + why);
    manifold.add(e.name, moments);
    cursor = e.offset + e.bytes;
    written += e.bytes;
  }
  std::vector<uint8_t>().swap(buffer);

  std::vector<P64ScheduleRow> schedule;
  auto group_row = [&](P64GroupKind kind, uint32_t layer, auto belongs) {
    P64ScheduleRow row;
    row.kind = kind;
    row.layer = layer;
    bool first = true;
    for (uint32_t i = 0; i < dir.size(); ++i) {
      if (!belongs(dir[i])) continue;
      if (first) {
        row.first_tensor = i;
        row.offset = dir[i].offset;
        first = false;
      }
      ++row.n_tensors;
      row.bytes = dir[i].offset + dir[i].bytes - row.offset;
    }
    if (first) row.first_tensor = static_cast<uint32_t>(schedule.empty() ? 0 : schedule.back().first_tensor + schedule.back().n_tensors);
    schedule.push_back(row);
  };
  group_row(P64GroupKind::Embedding, 0, [](const P64TensorEntry& e) { return p64_order_key(e.name).group == 0; });
  for (uint32_t l = 0; l < hp.n_layer; ++l)
    group_row(P64GroupKind::Layer, l, [l](const P64TensorEntry& e) { return e.layer == static_cast<int32_t>(l); });
  group_row(P64GroupKind::Head, 0, [](const P64TensorEntry& e) { return p64_order_key(e.name).group == 2; });

  P64WriteResult result;
  result.certification_problem = image.certify ? p64_certification_problem(hp, dir, flags) : "not requested";
  if (result.certification_problem.empty()) flags |= p64_flags::kCertifiedDecodeProfile;

  std::vector<std::vector<uint8_t>> bodies = {hparams_bytes, tokenizer_bytes, p64io::encode_directory(dir),
                                              p64io::encode_schedule(schedule), p64io::encode_manifold(manifold.rows())};
  std::vector<uint8_t> header(kP64HeaderBytes, 0);
  auto put = [&](size_t off, const void* p, size_t n) { std::memcpy(header.data() + off, p, n); };
  put(0, kP64Magic, 4);
  const uint32_t version = p64_version_for(hp);
  put(4, &version, 4);
  put(8, &flags, 8);
  put(16, &file_size, 8);
  put(24, &data_offset, 8);
  const uint64_t data_size = file_size - data_offset;
  put(32, &data_size, 8);
  const uint32_t n_sections = static_cast<uint32_t>(sections.size());
  put(40, &n_sections, 4);
  put(44, &kP64DataAlignment, 4);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (bodies[i].size() != sections[i].size) throw Error(path + ": internal error: section size changed while writing");
    size_t e = kP64SectionTableOffset + i * kP64SectionEntryBytes;
    uint32_t kind = static_cast<uint32_t>(sections[i].kind), zero = 0;
    uint32_t crc = crc32c(bodies[i].data(), bodies[i].size());
    put(e + 0, &kind, 4);
    put(e + 4, &zero, 4);
    put(e + 8, &sections[i].offset, 8);
    put(e + 16, &sections[i].size, 8);
    put(e + 24, &crc, 4);
    put(e + 28, &sections[i].count, 4);
    out.write_at(sections[i].offset, bodies[i].data(), bodies[i].size());
  }
  uint32_t header_crc = crc32c(header.data(), kP64HeaderCrcOffset);
  put(kP64HeaderCrcOffset, &header_crc, 4);
  out.write_at(0, header.data(), header.size());
  if (progress && !progress(1.0, "finishing")) throw Cancelled();
  out.commit();
  result.file_size = file_size;
  result.flags = flags;
  return result;
}

}  // namespace p64
