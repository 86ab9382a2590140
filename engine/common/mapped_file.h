#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace p64 {

// A read-only memory map of a whole file (the platform layer: POSIX mmap or Windows
// CreateFileMapping). Model files are always opened read-only.
class MappedFile {
 public:
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* handle_ = nullptr;  // platform mapping handle (Windows); unused on POSIX
};

}  // namespace p64
