#pragma once
// The P64 container's on-disk constants and the parsed forms of its parts. The normative
// definition is docs/p64-container.md; the numbers here must match it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/hparams.h"
#include "engine/model/vocab.h"
#include "engine/quant/dtype.h"

namespace p64 {

inline constexpr char kP64Magic[4] = {'p', '6', '4', '\0'};
// The newest version this build reads and writes. Version 2 adds architectures other than
// llama (hparams arch, with the tensors of its table); a llama file is still written as
// version 1, so that readers which predate version 2 open it, and refuse the others by their
// version rather than decode them as a Llama.
inline constexpr uint32_t kP64Version = 2;
inline constexpr uint32_t kP64VersionLlama = 1;
uint32_t p64_version_for(const HParams& hp);  // the lowest version that holds hp.arch
inline constexpr uint32_t kP64HeaderBytes = 512;
inline constexpr uint32_t kP64HeaderCrcOffset = 508;    // CRC-32C of bytes [0, 508)
inline constexpr uint32_t kP64SectionTableOffset = 64;
inline constexpr uint32_t kP64MaxSections = 12;         // 12 entries x 32 bytes = [64, 448)
inline constexpr uint32_t kP64SectionEntryBytes = 32;
inline constexpr uint32_t kP64DataAlignment = 4096;     // every tensor starts on a 4 KiB boundary
inline constexpr uint32_t kP64ManifoldRowBytes = 64;

// Header flags (u64 at offset 8). Bits not listed here must be zero.
namespace p64_flags {
inline constexpr uint64_t kQ4kSoa = 1u << 0;        // Q4_K matrices are stored as Q4_K_SOA (no AoS Q4_K left)
inline constexpr uint64_t kLayerMajor = 1u << 1;    // tensor data follows the layer schedule, contiguous per row
inline constexpr uint64_t kCertifiedDecodeProfile = 1u << 2;  // see docs/p64-container.md "Certification"
inline constexpr uint64_t kQ6kSoa = 1u << 3;        // Q6_K matrices are stored as Q6_K_SOA
inline constexpr uint64_t kQ8_0Soa = 1u << 4;       // Q8_0 matrices are stored as Q8_0_SOA
inline constexpr uint64_t kKnown = kQ4kSoa | kLayerMajor | kCertifiedDecodeProfile | kQ6kSoa | kQ8_0Soa;
}  // namespace p64_flags
std::string p64_flags_text(uint64_t flags);  // "Q4K_SOA|LAYER_MAJOR|..."

enum class P64SectionKind : uint32_t {
  HParams = 1,
  Tokenizer = 2,
  TensorDirectory = 3,
  LayerSchedule = 4,
  Manifold = 5,
};
std::string_view p64_section_name(P64SectionKind k);  // "hparams", "tokenizer", "tensor directory", ...

// Layer schedule rows: the embedding group (tensors used before block 0), one row per block,
// and the head group (final norm and output projection).
enum class P64GroupKind : uint32_t { Embedding = 0, Layer = 1, Head = 2 };

// One row of the D10 manifold section: ten float32 coordinates that summarise a layer's
// weights (docs/p64-container.md "D10 manifold" defines each one), 64 bytes on disk.
struct ManifoldCoordinate10D {
  uint32_t id = 0;       // layer index; kManifoldGlobalId for the global row
  uint32_t flags = 0;    // kManifoldGlobal, kManifoldTiedOutput
  float c[10] = {};
  uint32_t reserved[3] = {};  // zero
  uint32_t crc32c = 0;   // CRC-32C of the row's first 60 bytes
};
static_assert(sizeof(ManifoldCoordinate10D) == 64, "manifold rows are 64 bytes on disk");
inline constexpr uint32_t kManifoldGlobalId = 0xFFFFFFFFu;
inline constexpr uint32_t kManifoldGlobal = 1u << 0;
inline constexpr uint32_t kManifoldTiedOutput = 1u << 1;
// Index names of the ten coordinates, for inspect output and the GUI.
extern const char* const kManifoldCoordinateNames[10];

struct P64Header {
  uint32_t version = 0;
  uint64_t flags = 0;
  uint64_t file_size = 0;
  uint64_t data_offset = 0;  // first byte of the tensor data region
  uint64_t data_size = 0;
  uint32_t section_count = 0;
  uint32_t data_alignment = 0;
  uint32_t header_crc32c = 0;
};

struct P64SectionInfo {
  P64SectionKind kind = P64SectionKind::HParams;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t crc32c = 0;
  uint32_t count = 0;  // entries in the section (tensors, rows, keys, tokens)
};

struct P64TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t offset = 0;  // absolute file offset
  uint64_t bytes = 0;
  uint32_t crc32c = 0;
  int32_t layer = -1;   // block index, or -1 for embedding/head tensors
  uint64_t entry_offset = 0;  // file offset of this directory entry (for error messages)
};

struct P64ScheduleRow {
  P64GroupKind kind = P64GroupKind::Layer;
  uint32_t layer = 0;        // block index for Layer rows, 0 otherwise
  uint32_t first_tensor = 0; // index into the tensor directory
  uint32_t n_tensors = 0;
  uint64_t offset = 0;       // byte range of the group's tensors (padding between them included)
  uint64_t bytes = 0;
};

// Everything a P64 file says about itself, parsed and checked (every section CRC, bound,
// dtype, shape and order); tensor data CRCs are checked by open_p64 and verify_p64.
struct P64Contents {
  std::string path;
  P64Header header;
  std::vector<P64SectionInfo> sections;
  HParams hparams;
  Vocabulary vocab;
  std::vector<P64TensorEntry> tensors;
  std::vector<P64ScheduleRow> schedule;
  std::vector<ManifoldCoordinate10D> manifold;  // one per layer, then the global row
};

}  // namespace p64
