#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/common/mapped_file.h"
#include "engine/common/progress.h"
#include "engine/format/p64_format.h"
#include "engine/model/model.h"

namespace p64 {

// Parses and checks the structure of a mapped P64 file: header (magic, version, flags,
// reserved bytes, header CRC), section table, every section's bounds and CRC-32C, the
// sections' contents, tensor bounds/order/overlap, the schedule against the directory, the
// manifold row ids, the SoA flags and a claimed certification. Tensor data CRCs are not
// checked here. Any failure is a FormatError naming the file, the section and the offset.
P64Contents parse_p64(const MappedFile& map);

// For `p64 inspect`: parse_p64 over a fresh map.
P64Contents inspect_p64(const std::string& path);

// Opens a P64 for decode: everything parse_p64 checks, plus every tensor's CRC-32C and the
// shapes Model needs, before anything is returned. The views point into the map, which the
// Model keeps alive. Nothing is half-loaded: it returns a whole Model or throws.
std::shared_ptr<const Model> open_p64(const std::string& path, const ProgressFn& progress = {});

struct P64VerifyReport {
  bool ok = false;
  std::vector<std::string> problems;  // each names the section (and tensor) that failed
  uint32_t tensors_checked = 0;
  uint64_t bytes_checked = 0;
  bool manifold_recomputed = false;
};

// Checks everything open_p64 does without stopping at the first bad tensor, plus that all
// padding is zero and that the manifold rows equal the ones recomputed from the weights.
// Only an unreadable file (cannot open/map) throws; a bad file returns ok = false.
P64VerifyReport verify_p64(const std::string& path, const ProgressFn& progress = {});

}  // namespace p64
