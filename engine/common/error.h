#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace p64 {

// Every error the engine raises for a user to read; the message says what to do or what is wrong.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file was refused. The message always names the file, the section and the byte offset,
// so a user can tell a truncated download from a corrupted header from an unsupported dtype.
class FormatError : public Error {
 public:
  FormatError(std::string file, std::string section, uint64_t offset, const std::string& problem)
      : Error(file + ": " + section + " at offset " + std::to_string(offset) + ": " + problem),
        file_(std::move(file)), section_(std::move(section)), offset_(offset) {}
  const std::string& file() const { return file_; }
  const std::string& section() const { return section_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string file_;
  std::string section_;
  uint64_t offset_;
};

// The device (GPU driver, device memory, device lost) refused; never retried silently.
class DeviceError : public Error {
 public:
  using Error::Error;
};

}  // namespace p64
