#include "engine/format/p64_reader.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "engine/common/error.h"
#include "engine/format/crc32c.h"
#include "engine/format/p64_certify.h"
#include "engine/format/model_limits.h"
#include "engine/format/p64_manifold.h"
#include "engine/format/p64_sections.h"

namespace p64 {
namespace {

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

TensorView view_of(const P64TensorEntry& e, const MappedFile& map) {
  TensorView v;
  v.name = e.name;
  v.dtype = e.dtype;
  v.n_dims = e.n_dims;
  for (int d = 0; d < 4; ++d) v.ne[d] = e.ne[d];
  v.data = map.data() + e.offset;
  v.bytes = e.bytes;
  v.crc32c = e.crc32c;
  return v;
}

// parse_p64 in the order a file is read: the header, the section table and the sections' CRCs,
// then each section's contents against the others, then the flags against the tensors. The first
// problem found is the one reported, so the order of the checks is part of the behaviour.
class P64Parser {
 public:
  explicit P64Parser(const MappedFile& map) : file_(map.path()), base_(map.data()), size_(map.size()) {
    c_.path = file_;
  }

  P64Contents parse() {
    header();
    section_table();
    hparams_and_tokenizer();
    tensor_directory();
    layer_schedule();
    manifold();
    flags_against_tensors();
    return std::move(c_);
  }

 private:
  [[noreturn]] void fail(const std::string& section, uint64_t off, const std::string& problem) const {
    throw FormatError(file_, section, off, problem);
  }

  void header() {
    if (size_ < kP64HeaderBytes)
      fail("header", size_, "file is " + std::to_string(size_) + " bytes, shorter than the " + std::to_string(kP64HeaderBytes) + "-byte header");
    if (std::memcmp(base_, kP64Magic, 4) != 0) fail("header", 0, "not a P64 file (magic is not \"p64\\0\")");
    P64Header& h = c_.header;
    h.header_crc32c = load<uint32_t>(base_ + kP64HeaderCrcOffset);
    const uint32_t crc = crc32c(base_, kP64HeaderCrcOffset);
    if (crc != h.header_crc32c)
      fail("header", kP64HeaderCrcOffset, "header CRC-32C mismatch (stored " + hex(h.header_crc32c) + ", computed " + hex(crc) + ")");
    h.version = load<uint32_t>(base_ + 4);
    if (h.version != kP64VersionLlama && h.version != kP64Version)
      fail("header", 4, "version " + std::to_string(h.version) + " is not supported (this build reads 1 and 2)");
    h.flags = load<uint64_t>(base_ + 8);
    if (h.flags & ~p64_flags::kKnown) fail("header", 8, "unknown flag bits " + std::to_string(h.flags & ~p64_flags::kKnown));
    h.file_size = load<uint64_t>(base_ + 16);
    h.data_offset = load<uint64_t>(base_ + 24);
    h.data_size = load<uint64_t>(base_ + 32);
    h.section_count = load<uint32_t>(base_ + 40);
    h.data_alignment = load<uint32_t>(base_ + 44);
    if (!all_zero(base_ + 48, 16)) fail("header", 48, "reserved header bytes are not zero");
    if (!all_zero(base_ + kP64SectionTableOffset + kP64MaxSections * kP64SectionEntryBytes, 60))
      fail("header", 448, "reserved header bytes are not zero");
    if (h.data_alignment != kP64DataAlignment) fail("header", 44, "data alignment " + std::to_string(h.data_alignment) + " is not 4096");
    if (h.data_offset % kP64DataAlignment != 0 || h.data_offset < kP64HeaderBytes)
      fail("header", 24, "tensor data offset " + std::to_string(h.data_offset) + " is not a 4 KiB boundary after the header");
    if (h.data_size > UINT64_MAX - h.data_offset || h.data_offset + h.data_size != h.file_size)
      fail("header", 32, "tensor data region does not end at the file size");
    if (h.section_count != 5) fail("header", 40, "section count " + std::to_string(h.section_count) + " is not 5");
  }

  // One entry per kind; all inside [header end, data start) and disjoint; then the file's size
  // against them and the header, then each section's CRC.
  void section_table() {
    const P64Header& h = c_.header;
    std::set<uint32_t> kinds;
    for (uint32_t i = 0; i < kP64MaxSections; ++i) {
      const uint8_t* e = base_ + kP64SectionTableOffset + i * kP64SectionEntryBytes;
      const uint64_t eoff = kP64SectionTableOffset + i * kP64SectionEntryBytes;
      if (i >= h.section_count) {
        if (!all_zero(e, kP64SectionEntryBytes)) fail("header", eoff, "unused section table entry is not zero");
        continue;
      }
      const uint32_t kind = load<uint32_t>(e);
      if (kind < 1 || kind > 5) fail("header", eoff, "section kind " + std::to_string(kind) + " is unknown");
      if (!kinds.insert(kind).second) fail("header", eoff, "section kind " + std::to_string(kind) + " appears twice");
      if (load<uint32_t>(e + 4) != 0) fail("header", eoff + 4, "reserved section entry bytes are not zero");
      P64SectionInfo s;
      s.kind = static_cast<P64SectionKind>(kind);
      s.offset = load<uint64_t>(e + 8);
      s.size = load<uint64_t>(e + 16);
      s.crc32c = load<uint32_t>(e + 24);
      s.count = load<uint32_t>(e + 28);
      const std::string name(p64_section_name(s.kind));
      if (s.offset < kP64HeaderBytes || s.size > h.data_offset || s.offset > h.data_offset - s.size)
        fail(name, s.offset, "section [" + std::to_string(s.offset) + ", +" + std::to_string(s.size) +
                                 ") is outside the metadata region [512, " + std::to_string(h.data_offset) + ")");
      c_.sections.push_back(s);
    }
    std::vector<P64SectionInfo> sorted = c_.sections;
    std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < sorted.size(); ++i)
      if (sorted[i - 1].offset + sorted[i - 1].size > sorted[i].offset)
        fail(std::string(p64_section_name(sorted[i].kind)), sorted[i].offset, "section overlaps the previous one");
    // A cut-short file is named by the first part it cuts into.
    for (const auto& s : sorted)
      if (s.offset + s.size > size_)
        fail(std::string(p64_section_name(s.kind)), s.offset,
             "file is truncated (" + std::to_string(size_) + " bytes; the section ends at " + std::to_string(s.offset + s.size) + ")");
    if (size_ < h.file_size)
      fail("tensor data", size_, "file is truncated (" + std::to_string(size_) + " bytes, the header says " + std::to_string(h.file_size) + ")");
    if (size_ > h.file_size)
      fail("header", 16, "file has " + std::to_string(size_ - h.file_size) + " bytes beyond the size the header records");
    for (const auto& s : c_.sections) {
      const uint32_t got = crc32c(base_ + s.offset, static_cast<size_t>(s.size));
      if (got != s.crc32c)
        fail(std::string(p64_section_name(s.kind)), s.offset,
             "section CRC-32C mismatch (stored " + hex(s.crc32c) + ", computed " + hex(got) + ")");
    }
  }

  const P64SectionInfo& section(P64SectionKind k) const {
    for (const auto& s : c_.sections)
      if (s.kind == k) return s;
    fail("header", 64, "section '" + std::string(p64_section_name(k)) + "' is missing");
  }
  p64io::ByteReader reader(P64SectionKind k) const {
    const P64SectionInfo& s = section(k);
    return p64io::ByteReader(file_, std::string(p64_section_name(k)), base_ + s.offset, s.offset, s.size);
  }

  void hparams_and_tokenizer() {
    {
      auto r = reader(P64SectionKind::HParams);
      c_.hparams = p64io::decode_hparams(r, section(P64SectionKind::HParams).count);
    }
    const HParams& hp = c_.hparams;
    // A version 1 reader decodes every file as a Llama, so only a Llama may claim version 1.
    if (c_.header.version < p64_version_for(hp))
      fail("hparams", section(P64SectionKind::HParams).offset,
           "architecture '" + hp.arch + "'" + (hp.arch == "llama" ? " with a sliding window" : "") + " needs format version " +
               std::to_string(p64_version_for(hp)) + ", the header says " + std::to_string(c_.header.version));
    auto r = reader(P64SectionKind::Tokenizer);
    c_.vocab = p64io::decode_tokenizer(r);
    const auto& s = section(P64SectionKind::Tokenizer);
    if (s.count != c_.vocab.size()) fail("tokenizer", s.offset, "section entry count disagrees with the token count");
    if (!c_.vocab.tokens.empty() && c_.vocab.size() != hp.n_vocab)
      fail("tokenizer", s.offset, std::to_string(c_.vocab.size()) + " tokens but hparams n_vocab is " + std::to_string(hp.n_vocab));
  }

  // Unique names, blocks within n_layer, data in file order without overlap up to the file's end.
  void tensor_directory() {
    const P64SectionInfo& dsec = section(P64SectionKind::TensorDirectory);
    {
      auto r = reader(P64SectionKind::TensorDirectory);
      c_.tensors = p64io::decode_directory(r, dsec.count);
    }
    const P64Header& h = c_.header;
    std::set<std::string> names;
    uint64_t prev_end = h.data_offset;
    for (const auto& t : c_.tensors) {
      if (!names.insert(t.name).second) fail("tensor directory", t.entry_offset, "tensor '" + t.name + "' appears twice");
      if (t.layer >= 0 && static_cast<uint32_t>(t.layer) >= c_.hparams.n_layer)
        fail("tensor directory", t.entry_offset,
             "tensor '" + t.name + "' names a block beyond n_layer " + std::to_string(c_.hparams.n_layer));
      if (t.offset < prev_end || t.offset > h.file_size || t.bytes > h.file_size - t.offset)
        fail("tensor directory", t.entry_offset,
             "tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" + std::to_string(t.bytes) +
                 ") is out of order, overlapping, or outside the tensor data region");
      prev_end = t.offset + t.bytes;
    }
    if (!c_.tensors.empty() && prev_end != h.file_size)
      fail("tensor directory", dsec.offset, "the last tensor does not end at the end of the file");
  }

  // Embedding, one row per block, head: each continuing the directory with its own tensors.
  void layer_schedule() {
    const auto& s = section(P64SectionKind::LayerSchedule);
    auto r = reader(P64SectionKind::LayerSchedule);
    c_.schedule = p64io::decode_schedule(r, s.count);
    const uint32_t n_layer = c_.hparams.n_layer;
    if (c_.schedule.size() != uint64_t{n_layer} + 2)
      fail("layer schedule", s.offset, std::to_string(c_.schedule.size()) + " rows, expected n_layer + 2 = " + std::to_string(n_layer + 2));
    uint32_t next = 0;
    for (size_t i = 0; i < c_.schedule.size(); ++i) {
      const P64ScheduleRow& row = c_.schedule[i];
      const uint64_t roff = s.offset + i * 32;
      const P64GroupKind want =
          i == 0 ? P64GroupKind::Embedding : (i + 1 == c_.schedule.size() ? P64GroupKind::Head : P64GroupKind::Layer);
      const uint32_t want_layer = want == P64GroupKind::Layer ? static_cast<uint32_t>(i - 1) : 0;
      if (row.kind != want || row.layer != want_layer) fail("layer schedule", roff, "row " + std::to_string(i) + " is not the expected group");
      if (row.first_tensor != next || row.n_tensors > c_.tensors.size() - next)
        fail("layer schedule", roff, "row " + std::to_string(i) + " does not continue the tensor directory in order");
      for (uint32_t k = row.first_tensor; k < row.first_tensor + row.n_tensors; ++k) {
        const P64TensorEntry& t = c_.tensors[k];
        const bool belongs = want == P64GroupKind::Layer
                                 ? t.layer == static_cast<int32_t>(want_layer)
                                 : t.layer < 0 && ((want == P64GroupKind::Embedding) == (t.name == "token_embd.weight"));
        if (!belongs) fail("layer schedule", roff, "tensor '" + t.name + "' is listed under row " + std::to_string(i));
      }
      const uint64_t lo = row.n_tensors ? c_.tensors[row.first_tensor].offset : 0;
      const uint64_t hi = row.n_tensors ? c_.tensors[row.first_tensor + row.n_tensors - 1].offset +
                                              c_.tensors[row.first_tensor + row.n_tensors - 1].bytes
                                        : 0;
      if (row.offset != lo || row.bytes != hi - lo)
        fail("layer schedule", roff, "row " + std::to_string(i) + " byte range does not match its tensors");
      next += row.n_tensors;
    }
    if (next != c_.tensors.size()) fail("layer schedule", s.offset, "rows do not cover every tensor");
    if (!(c_.header.flags & p64_flags::kLayerMajor)) fail("header", 8, "LAYER_MAJOR is not set; P64 files are always layer-major");
  }

  // One row per block and a global row last.
  void manifold() {
    const auto& s = section(P64SectionKind::Manifold);
    auto r = reader(P64SectionKind::Manifold);
    c_.manifold = p64io::decode_manifold(r, s.count);
    const uint32_t n_layer = c_.hparams.n_layer;
    if (c_.manifold.size() != uint64_t{n_layer} + 1)
      fail("manifold", s.offset, std::to_string(c_.manifold.size()) + " rows, expected n_layer + 1 = " + std::to_string(n_layer + 1));
    for (size_t i = 0; i < c_.manifold.size(); ++i) {
      const auto& m = c_.manifold[i];
      const bool global = i + 1 == c_.manifold.size();
      if (m.id != (global ? kManifoldGlobalId : static_cast<uint32_t>(i)) || ((m.flags & kManifoldGlobal) != 0) != global)
        fail("manifold", s.offset + i * 64, "row " + std::to_string(i) + " has id " + std::to_string(m.id));
    }
  }

  // The flags must say what the tensors are.
  void flags_against_tensors() const {
    const uint64_t flags = c_.header.flags;
    auto has = [&](DType t) { return std::any_of(c_.tensors.begin(), c_.tensors.end(), [t](auto& e) { return e.dtype == t; }); };
    struct SoaFlag { uint64_t bit; DType aos, soa; const char* name; };
    for (const SoaFlag& f : {SoaFlag{p64_flags::kQ4kSoa, DType::Q4_K, DType::Q4_K_SOA, "Q4K_SOA"},
                             SoaFlag{p64_flags::kQ6kSoa, DType::Q6_K, DType::Q6_K_SOA, "Q6K_SOA"},
                             SoaFlag{p64_flags::kQ8_0Soa, DType::Q8_0, DType::Q8_0_SOA, "Q8_0_SOA"}}) {
      const bool set = flags & f.bit;
      if (set != (has(f.soa) && !has(f.aos)))
        fail("header", 8, std::string(f.name) + " flag " + (set ? "is set" : "is clear") + " but the tensors " +
                              (set ? "are not all SoA" : "are SoA"));
    }
    if (flags & p64_flags::kCertifiedDecodeProfile) {
      const std::string why = p64_certification_problem(c_.hparams, c_.tensors, flags);
      if (!why.empty()) fail("header", 8, "CERTIFIED_DECODE_PROFILE is set but " + why);
    }
  }

  const std::string& file_;
  const uint8_t* base_;
  const uint64_t size_;
  P64Contents c_;
};

}  // namespace

P64Contents parse_p64(const MappedFile& map) { return P64Parser(map).parse(); }

P64Contents inspect_p64(const std::string& path) {
  auto map = MappedFile::open(path);
  return parse_p64(*map);
}

std::shared_ptr<const Model> open_p64(const std::string& path, const ProgressFn& progress) {
  auto map = MappedFile::open(path);
  P64Contents c = parse_p64(*map);
  uint64_t total = 0, done = 0;
  for (const auto& t : c.tensors) total += t.bytes;
  std::vector<TensorView> views;
  views.reserve(c.tensors.size());
  for (const auto& t : c.tensors) {
    if (progress && !progress(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0, "checking " + t.name))
      throw Cancelled();
    uint32_t got = crc32c(map->data() + t.offset, static_cast<size_t>(t.bytes));
    if (got != t.crc32c)
      throw FormatError(path, "tensor data", t.offset,
                        "tensor '" + t.name + "' CRC-32C mismatch (stored " + hex(t.crc32c) + ", computed " + hex(got) + ")");
    views.push_back(view_of(t, *map));
    // Norms are scanned at every load: they are tiny, and one NaN in them ruins every token.
    // Matrices are scanned when written and by verify; at load that would cost seconds.
    if (t.n_dims == 1)
      if (const std::string why = nonfinite_weights_problem(t.name, tensor_moments(views.back()).sum2); !why.empty())
        throw FormatError(path, "tensor data", t.offset, why);
    done += t.bytes;
  }
  const P64SectionInfo* dsec = nullptr;
  for (const auto& s : c.sections)
    if (s.kind == P64SectionKind::TensorDirectory) dsec = &s;
  try {
    return Model::from_parts(path, std::move(c.hparams), std::move(c.vocab), std::move(views), map);
  } catch (const FormatError&) {
    throw;
  } catch (const Error& e) {
    throw FormatError(path, "tensor directory", dsec ? dsec->offset : 0, e.what());
  }
}

P64VerifyReport verify_p64(const std::string& path, const ProgressFn& progress) {
  P64VerifyReport rep;
  auto map = MappedFile::open(path);
  P64Contents c;
  try {
    c = parse_p64(*map);
  } catch (const FormatError& e) {
    rep.problems.push_back(e.what());
    return rep;
  }
  uint64_t total = 0, done = 0;
  for (const auto& t : c.tensors) total += t.bytes;
  auto report = [&](const std::string& section, uint64_t off, const std::string& problem) {
    rep.problems.push_back(FormatError(path, section, off, problem).what());
  };
  // Padding: the gaps between sections, before the data region and between tensors are zero.
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (const auto& s : c.sections) used.push_back({s.offset, s.offset + s.size});
  std::sort(used.begin(), used.end());
  uint64_t at = kP64HeaderBytes;
  for (auto [lo, hi] : used) {
    if (lo > at && !all_zero(map->data() + at, lo - at)) report("header", at, "padding between sections is not zero");
    at = hi;
  }
  if (c.header.data_offset > at && !all_zero(map->data() + at, c.header.data_offset - at))
    report("header", at, "padding before the tensor data is not zero");
  at = c.header.data_offset;
  std::vector<TensorView> views;
  ManifoldBuilder manifold(c.hparams);
  for (const auto& t : c.tensors) {
    if (progress && !progress(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0, "verifying " + t.name))
      throw Cancelled();
    if (t.offset > at && !all_zero(map->data() + at, t.offset - at))
      report("tensor data", at, "padding before tensor '" + t.name + "' is not zero");
    uint32_t got = crc32c(map->data() + t.offset, static_cast<size_t>(t.bytes));
    if (got != t.crc32c)
      report("tensor data", t.offset, "tensor '" + t.name + "' CRC-32C mismatch (stored " + hex(t.crc32c) + ", computed " + hex(got) + ")");
    TensorView v = view_of(t, *map);
    const TensorMoments moments = tensor_moments(v);
    if (const std::string why = nonfinite_weights_problem(t.name, moments.sum2); !why.empty()) report("tensor data", t.offset, why);
    manifold.add(t.name, moments);
    views.push_back(v);
    ++rep.tensors_checked;
    rep.bytes_checked += t.bytes;
    done += t.bytes;
    at = t.offset + t.bytes;
  }
  std::vector<ManifoldCoordinate10D> recomputed = manifold.rows();
  rep.manifold_recomputed = true;
  uint64_t moff = 0;
  for (const auto& s : c.sections)
    if (s.kind == P64SectionKind::Manifold) moff = s.offset;
  for (size_t i = 0; i < recomputed.size() && i < c.manifold.size(); ++i)
    if (std::memcmp(recomputed[i].c, c.manifold[i].c, sizeof recomputed[i].c) != 0 || recomputed[i].flags != c.manifold[i].flags)
      report("manifold", moff + i * 64, "row " + std::to_string(i) + " does not match the coordinates recomputed from the weights");
  try {
    Model::from_parts(path, c.hparams, c.vocab, views, nullptr);
  } catch (const Error& e) {
    report("tensor directory", 0, e.what());
  }
  rep.ok = rep.problems.empty();
  return rep;
}

}  // namespace p64
