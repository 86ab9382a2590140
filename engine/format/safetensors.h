#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/common/mapped_file.h"
#include "engine/quant/dtype.h"

namespace p64 {

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;     // F32, F16 or BF16
  std::vector<int64_t> shape;   // row-major, outermost first (PyTorch order)
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
};

// A .safetensors file (u64 header length, JSON header, data) opened over a read-only map.
// Every tensor's dtype, shape and byte range is checked against the file; problems are a
// FormatError naming the file, the section ("header" or "tensor data"), the offset and the
// tensor. Only F32, F16 and BF16 tensors are accepted (what Llama checkpoints hold).
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  const std::string& path() const { return map_->path(); }
  const std::shared_ptr<const MappedFile>& map() const { return map_; }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* find(std::string_view name) const;

 private:
  std::shared_ptr<const MappedFile> map_;
  std::vector<SafetensorsTensor> tensors_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace p64
