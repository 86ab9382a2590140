#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/common/mapped_file.h"
#include "engine/quant/dtype.h"

namespace p64 {

// GGUF metadata value types (gguf_type in ggml's gguf.h); the numbers are the file's.
enum class GgufType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
std::string_view gguf_type_name(GgufType t);

// One metadata value. Integers are widened (unsigned into uint64_t, signed into int64_t)
// and floats into double, with `type` keeping what the file said. An array keeps its elements
// (which may themselves be arrays) as the file encodes them and decodes one when asked: a
// value object per element would cost about 72 bytes of memory per byte of a u8 array, so a
// small file of large arrays would take gigabytes.
struct GgufValue {
  GgufType type = GgufType::UINT8;
  GgufType elem_type = GgufType::UINT8;  // arrays only
  std::variant<std::monostate, uint64_t, int64_t, double, bool, std::string> scalar;
  uint64_t count = 0;             // arrays only: number of elements
  std::vector<uint8_t> encoded;   // arrays only: the elements in GGUF's encoding (gguf_array builds one)

  bool is_array() const { return type == GgufType::ARRAY; }
  size_t size() const { return static_cast<size_t>(count); }
  // Element i of an array (a walk from the start for strings and nested arrays).
  GgufValue item(size_t i) const;
  // Calls f on each element in order until f returns false.
  void for_each_item(const std::function<bool(const GgufValue&)>& f) const;
  bool is_string() const { return type == GgufType::STRING; }
  bool is_integer() const;
  bool is_float() const { return type == GgufType::FLOAT32 || type == GgufType::FLOAT64; }
  // Integer value if this is an integer type (any width, any sign), else nullopt.
  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;  // nullopt for negative values too
  std::optional<double> as_double() const;  // floats and integers
  const std::string* as_string() const;
  std::optional<bool> as_bool() const;
  // Short human form for `p64 inspect`: scalars in full, arrays as "[type x N]" plus a preview.
  std::string summary(size_t max_items = 4) const;
};

struct GgufKV {
  std::string key;
  GgufValue value;
  uint64_t offset = 0;  // file offset of the key, for error messages
};

struct GgufTensorInfo {
  std::string name;
  DType dtype = DType::F32;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t offset = 0;            // relative to the start of the tensor data section
  const uint8_t* data = nullptr;  // into the map
  uint64_t bytes = 0;
  uint64_t info_offset = 0;       // file offset of this tensor's info record

  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

// A GGUF file (v2 or v3, little-endian) opened over a read-only map. Every count, string,
// array, tensor shape, dtype, offset and size is checked against the file before it is
// used; any failure is a FormatError naming the file, the section ("header", "metadata",
// "tensor info", "tensor data") and the byte offset. Tensor data is not copied.
class GgufFile {
 public:
  static GgufFile open(const std::string& path);
  explicit GgufFile(std::shared_ptr<const MappedFile> map);

  const std::string& path() const { return map_->path(); }
  const std::shared_ptr<const MappedFile>& map() const { return map_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the tensor data section

  const std::vector<GgufKV>& metadata() const { return kv_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufKV* find_kv(std::string_view key) const;
  const GgufValue* find(std::string_view key) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;

  // Typed getters. The plain forms throw a FormatError ("metadata") when the key is missing
  // or has a type that cannot represent the value; the _opt forms return nullopt when the key
  // is missing and still throw on a wrong type (a wrong type is a broken file, not a default).
  std::string get_string(std::string_view key) const;
  std::optional<std::string> get_string_opt(std::string_view key) const;
  uint32_t get_u32(std::string_view key) const;  // any integer type whose value fits
  std::optional<uint32_t> get_u32_opt(std::string_view key) const;
  int32_t get_i32(std::string_view key) const;
  std::optional<int32_t> get_i32_opt(std::string_view key) const;
  float get_f32(std::string_view key) const;     // FLOAT32/FLOAT64 (integers accepted)
  std::optional<float> get_f32_opt(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  std::optional<bool> get_bool_opt(std::string_view key) const;
  const GgufValue& get_array(std::string_view key) const;
  const GgufValue* get_array_opt(std::string_view key) const;
  // Arrays with a checked element type; nullopt when the key is missing.
  std::optional<std::vector<std::string>> get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_f32_array(std::string_view key) const;
  std::optional<std::vector<int32_t>> get_i32_array(std::string_view key) const;

  [[noreturn]] void fail(const std::string& section, uint64_t offset, const std::string& problem) const;

 private:
  void parse();
  std::shared_ptr<const MappedFile> map_;
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKV> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace p64
