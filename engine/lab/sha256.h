#pragma once
// SHA-256 (FIPS 180-4) of a file or a buffer: the store keys models by their content, so a
// renamed or copied file keeps its history and a re-converted one starts a new one.
#include <cstddef>
#include <cstdint>
#include <string>

namespace p64 {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  std::string hex_digest();  // lowercase, 64 characters; ends the hash

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(const void* data, size_t bytes);
// Streams the file; throws p64::Error naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace p64
