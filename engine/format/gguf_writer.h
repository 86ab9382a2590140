#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engine/common/atomic_output.h"
#include "engine/common/progress.h"
#include "engine/format/gguf_reader.h"
#include "engine/quant/dtype.h"

namespace p64 {

// Produces the bytes of rows [first_row, first_row + n_rows) of one tensor into dst (exactly
// n_rows * row_bytes bytes). Called from worker threads, possibly for several row ranges of
// the same tensor at once, so it must not share mutable state without locking.
using GgufFillFn = std::function<void(uint8_t* dst, int64_t first_row, int64_t n_rows)>;

struct GgufWriteOptions {
  int threads = 0;                   // workers filling tensors; 0 = hardware concurrency
  uint64_t chunk_bytes = 4u << 20;   // rows are handed out in chunks of about this size
  ProgressFn progress;               // fraction of tensor bytes written; false cancels
  bool sync = true;                  // fsync before the rename, so a crash never leaves a torn file
  OutputPolicy output;               // what the target may not be (atomic_output.h)
};

// An array value of `elem_type` holding `items` (each of that type), encoded as GGUF stores
// it: what GgufWriter::add_value and a reader's GgufValue::item take.
GgufValue gguf_array(GgufType elem_type, const std::vector<GgufValue>& items);

// A streaming GGUF v3 writer. Metadata is serialised as it is added (so a 280k-entry merges
// array costs its bytes once); tensors are declared with their shape and a fill callback, and
// write() lays the file out (header, metadata, tensor infos, aligned data), reserves the
// whole size on disk up front, fills the tensors in parallel in bounded chunks (no tensor is
// ever held whole in memory) and pwrite()s them through an AtomicOutput (atomic_output.h): on
// error or cancel the target is untouched.
class GgufWriter {
 public:
  explicit GgufWriter(uint32_t alignment = 32);  // non-default alignments are written as general.alignment

  void add_u8(std::string_view key, uint8_t v);
  void add_i8(std::string_view key, int8_t v);
  void add_u16(std::string_view key, uint16_t v);
  void add_i16(std::string_view key, int16_t v);
  void add_u32(std::string_view key, uint32_t v);
  void add_i32(std::string_view key, int32_t v);
  void add_u64(std::string_view key, uint64_t v);
  void add_i64(std::string_view key, int64_t v);
  void add_f32(std::string_view key, float v);
  void add_f64(std::string_view key, double v);
  void add_bool(std::string_view key, bool v);
  void add_string(std::string_view key, std::string_view v);
  void add_string_array(std::string_view key, const std::vector<std::string>& v);
  void add_f32_array(std::string_view key, const std::vector<float>& v);
  void add_i32_array(std::string_view key, const std::vector<int32_t>& v);
  void add_u32_array(std::string_view key, const std::vector<uint32_t>& v);
  // Any value the reader can represent, nested arrays included (elem_type ARRAY).
  void add_value(std::string_view key, const GgufValue& v);

  // ne[0] is the row length (innermost, contiguous); 1..4 dims; ne[0] a whole number of blocks.
  void add_tensor(std::string name, DType type, std::vector<int64_t> ne, GgufFillFn fill);

  uint32_t alignment() const { return alignment_; }
  size_t kv_count() const { return kv_count_; }
  size_t tensor_count() const { return tensors_.size(); }
  uint64_t data_offset() const;  // file offset of the tensor data section
  uint64_t file_size() const;    // exact size of the file write() produces

  void write(const std::string& path, const GgufWriteOptions& options = {}) const;

 private:
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
    uint64_t row_bytes;
    int64_t rows;
    uint64_t offset;  // relative to the data section, aligned
    uint64_t bytes;
    GgufFillFn fill;
  };
  void begin_kv(std::string_view key, GgufType type);
  std::vector<uint8_t> header_bytes() const;

  uint32_t alignment_;
  std::vector<uint8_t> kv_bytes_;
  size_t kv_count_ = 0;
  std::unordered_set<std::string> keys_;
  std::vector<Tensor> tensors_;
  std::unordered_set<std::string> tensor_names_;
  uint64_t data_bytes_ = 0;  // padded size of the data section
};

}  // namespace p64
