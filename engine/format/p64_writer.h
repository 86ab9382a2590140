#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/atomic_output.h"
#include "engine/common/progress.h"
#include "engine/format/p64_format.h"

namespace p64 {

// One tensor to write. Either `data` points at the exact bytes (e.g. into a mapped input
// file, streamed straight to the output) or `produce` fills a buffer of the tensor's size
// (used for conversions: dequantize/quantize/permute/SoA-pack one tensor at a time).
struct P64TensorSource {
  std::string name;  // GGUF names: token_embd.weight, blk.N.attn_q.weight, ...
  DType dtype = DType::F32;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  const uint8_t* data = nullptr;
  std::function<void(uint8_t* dst, uint64_t bytes)> produce;
};

struct P64Image {
  HParams hparams;
  Vocabulary vocab;
  std::vector<P64TensorSource> tensors;  // any order; the writer lays them out layer-major
  bool certify = true;  // set CERTIFIED_DECODE_PROFILE when the file qualifies
  std::string source;   // the file the tensors come from, named when one is refused ("": the output)
};

struct P64WriteResult {
  uint64_t file_size = 0;
  uint64_t flags = 0;
  std::string certification_problem;  // why the profile flag is absent ("" when it is set)
};

// Writes `image` to `path` through an AtomicOutput (atomic_output.h): on an error or a cancel
// (progress returning false: throws Cancelled) `path` is untouched, and `policy` says what
// `path` may not be. Refuses (p64::Error) inconsistent input: duplicate names, unknown dtypes,
// shapes that are not whole blocks, hparams that fail validate() or the bounds of
// model_limits.h, and a tensor holding NaN or infinite values.
P64WriteResult write_p64(const std::string& path, const P64Image& image, const ProgressFn& progress = {},
                         const OutputPolicy& policy = {});

// Layer-major order of tensor names: token_embd first, then per block the attention and FFN
// tensors in the order decode reads them, then output_norm and output, then anything else.
// Returns a sort key; smaller comes first.
struct P64OrderKey {
  int group;       // 0 embedding, 1 layer, 2 head
  int32_t layer;
  int rank;        // position within the group
  std::string name;
  bool operator<(const P64OrderKey& o) const;
};
P64OrderKey p64_order_key(const std::string& name);

}  // namespace p64
