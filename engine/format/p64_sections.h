#pragma once
// Encoding and decoding of the P64 sections' bytes (shared by p64_writer and p64_reader).
// The byte layouts are defined in docs/p64-container.md.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/format/p64_format.h"

namespace p64::p64io {

// Appends little-endian fields to a section's bytes.
class ByteWriter {
 public:
  template <class T>
  void put(T v) {
    size_t at = b_.size();
    b_.resize(at + sizeof(T));
    std::memcpy(b_.data() + at, &v, sizeof(T));
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    b_.insert(b_.end(), s.begin(), s.end());
  }
  void bytes(const void* p, size_t n) {
    const uint8_t* u = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), u, u + n);
  }
  size_t size() const { return b_.size(); }
  uint8_t* data() { return b_.data(); }
  std::vector<uint8_t>& buffer() { return b_; }

 private:
  std::vector<uint8_t> b_;
};

// Reads fields of one section; any read past the section's end is a FormatError naming the
// file, the section and the absolute file offset.
class ByteReader {
 public:
  ByteReader(std::string file, std::string section, const uint8_t* base, uint64_t file_offset, uint64_t size)
      : file_(std::move(file)), section_(std::move(section)), base_(base), at_(file_offset), size_(size) {}
  uint64_t offset() const { return at_ + pos_; }  // absolute
  uint64_t remaining() const { return size_ - pos_; }
  [[noreturn]] void fail(const std::string& problem) const;
  [[noreturn]] void fail_at(uint64_t abs_offset, const std::string& problem) const;
  void need(uint64_t n, const char* what) const;
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str(const char* what);
  const std::string& section() const { return section_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::string section_;
  const uint8_t* base_;
  uint64_t at_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

std::vector<uint8_t> encode_hparams(const HParams& hp, uint32_t* count);
HParams decode_hparams(ByteReader& r, uint32_t count);

std::vector<uint8_t> encode_tokenizer(const Vocabulary& v);
Vocabulary decode_tokenizer(ByteReader& r);

std::vector<uint8_t> encode_directory(const std::vector<P64TensorEntry>& tensors);
std::vector<P64TensorEntry> decode_directory(ByteReader& r, uint32_t count);

std::vector<uint8_t> encode_schedule(const std::vector<P64ScheduleRow>& rows);
std::vector<P64ScheduleRow> decode_schedule(ByteReader& r, uint32_t count);

std::vector<uint8_t> encode_manifold(std::vector<ManifoldCoordinate10D> rows);  // fills each row's CRC
std::vector<ManifoldCoordinate10D> decode_manifold(ByteReader& r, uint32_t count);  // checks row CRCs

// The block index of "blk.N.xxx", or -1 for any other name.
int32_t layer_of_tensor(const std::string& name);

}  // namespace p64::p64io
