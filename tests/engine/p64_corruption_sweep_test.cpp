// Every byte of a small .p64's header and sections, flipped one at a time, and the file cut
// at every byte of its metadata (and often through the data): each case must be refused with
// a FormatError that names the file, the damaged section and an offset — never a crash and
// never a model that loads. The file is edited in place (write the flipped byte, open, put it
// back), so the sweep costs one open per case and not one file write.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "engine/common/error.h"
#include "engine/format/p64_reader.h"
#include "engine/format/p64_writer.h"
#include "p64_test_model.h"
#include "support/shared_files.h"

using namespace p64;

namespace {

// Opens the file for decode; returns the refusal, or fails the test when it loads.
FormatError refusal(const std::string& path, const std::string& what) {
  try {
    open_p64(path);
  } catch (const FormatError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": refused without a FormatError: " << e.what();
    return FormatError(path, "?", 0, "?");
  }
  ADD_FAILURE() << what << ": a damaged file was loaded";
  return FormatError(path, "?", 0, "?");
}

class P64File {
 public:
  // Each edit opens and closes the file: Windows refuses to open a file for reading while
  // another handle may write it, and the reader must open it between edits.
  explicit P64File(const std::string& path) : path_(path) {}
  uint8_t byte(uint64_t at) const {
    std::ifstream in(path_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(at));
    char b = 0;
    EXPECT_TRUE(in.get(b)) << "byte " << at;
    return static_cast<uint8_t>(b);
  }
  void set(uint64_t at, uint8_t b) {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    ASSERT_TRUE(f.put(static_cast<char>(b)).flush()) << "byte " << at;
  }
  void truncate(uint64_t size) {
    std::error_code ec;
    std::filesystem::resize_file(path_, size, ec);
    ASSERT_FALSE(ec) << ec.message();
  }

  // Flips `at` with `mask`, expects a refusal naming `section`, then restores the byte.
  void expect_flip_refused(uint64_t at, uint8_t mask, const std::string& section, const std::string& tensor = "") {
    const uint8_t old = byte(at);
    set(at, old ^ mask);
    const std::string what = "byte " + std::to_string(at) + " ^ " + std::to_string(mask);
    const FormatError e = refusal(path_, what);
    EXPECT_EQ(e.section(), section) << what << ": " << e.what();
    EXPECT_EQ(e.file(), path_) << what;
    EXPECT_NE(std::string(e.what()).find(" at offset "), std::string::npos) << e.what();
    if (!tensor.empty()) {
      EXPECT_NE(std::string(e.what()).find(tensor), std::string::npos) << what << ": " << e.what();
    }
    set(at, old);
  }

 private:
  std::string path_;
};

uint8_t mask_for(uint64_t i) {
  static const uint8_t kMasks[] = {0x01, 0x80, 0xFF, 0x5A, 0x10};
  return kMasks[i % 5];
}

}  // namespace

TEST(P64CorruptionSweep, EveryHeaderAndSectionByteFlippedIsRefusedNamingItsSection) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  const std::string path = (dir / "sweep.p64").string();
  write_p64(path, tiny.image);
  const P64Contents c = inspect_p64(path);
  P64File f(path);

  for (uint64_t i = 0; i < kP64HeaderBytes; ++i) f.expect_flip_refused(i, mask_for(i), "header");
  size_t section_bytes = 0;
  for (const auto& s : c.sections) {
    for (uint64_t i = 0; i < s.size; ++i) f.expect_flip_refused(s.offset + i, mask_for(i), std::string(p64_section_name(s.kind)));
    section_bytes += s.size;
  }
  EXPECT_GT(section_bytes, 1000u);  // the sweep really covered the metadata
  // Tensor data: first, last and 16 random bytes of every tensor; the error names the tensor.
  std::mt19937_64 rng(11);
  for (const auto& t : c.tensors) {
    std::vector<uint64_t> at = {0, t.bytes - 1};
    for (int k = 0; k < 16; ++k) at.push_back(rng() % t.bytes);
    for (uint64_t i : at) f.expect_flip_refused(t.offset + i, mask_for(i), "tensor data", "'" + t.name + "'");
  }
  // The file is whole again after the sweep.
  EXPECT_NO_THROW(open_p64(path));
}

TEST(P64CorruptionSweep, EveryCutThroughTheMetadataAndManyThroughTheDataAreRefused) {
  test::TempDir dir;
  test::TinyModel tiny = test::tiny_image();
  const std::string path = (dir / "cut.p64").string();
  write_p64(path, tiny.image);
  const P64Contents c = inspect_p64(path);
  const uint64_t size = std::filesystem::file_size(path);

  std::set<uint64_t> cuts;
  for (uint64_t i = 0; i < kP64HeaderBytes; ++i) cuts.insert(i);
  for (const auto& s : c.sections)
    for (uint64_t i = 0; i <= s.size; ++i) cuts.insert(s.offset + i);
  for (uint64_t i = 0; i < size; i += 61) cuts.insert(i);
  for (uint64_t i = size - std::min<uint64_t>(size, 64); i < size; ++i) cuts.insert(i);
  for (const auto& t : c.tensors) cuts.insert({t.offset, t.offset + 1, t.offset + t.bytes - 1});
  cuts.erase(size);

  // Cuts from the longest down, shrinking one file in place.
  P64File f(path);
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
    f.truncate(*it);
    const FormatError e = refusal(path, "cut at " + std::to_string(*it));
    EXPECT_NE(e.section(), "?") << *it;
    EXPECT_NE(std::string(e.what()).find(" at offset "), std::string::npos) << e.what();
  }
  EXPECT_GT(cuts.size(), 2000u);
}
